"""The trained agents shipped inside the package, found by name: ``ppo:classic-4p-hands`` loads
``classic-4p-hands.zip`` here (``README.md`` says how each was trained); any other spec is a path (a local file of a
shipped model's name: ``ppo:./classic-4p-hands``). ``classic-4p`` plays whole matches, ``classic-4p-hands`` hands.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["model_path", "shipped_models"]

FOLDER = Path(__file__).resolve().parent
"""This folder on disk (pip installs the models as plain files)."""


def shipped_models() -> list[str]:
    """The names of the shipped models, sorted (``["classic-2p", ..., "jokers-4p-hands"]``)."""
    return sorted(p.stem for p in FOLDER.glob("*.zip"))


def model_path(spec: str) -> Path:
    """The model file a ``ppo:`` spec names: a shipped model's for a shipped name, else ``spec`` as a path;
    ValueError listing the shipped names for a bare name that is neither (``ppo:clasic-4p``)."""
    shipped = shipped_models()
    if spec in shipped:
        return FOLDER / f"{spec}.zip"
    path = Path(spec)
    if not path.exists() and path.parent == Path() and not path.suffix:
        raise ValueError(f"no model {spec!r}: not a file, and the shipped models are {', '.join(shipped)} "
                         f"(write a file as a path, e.g. ppo:runs/x/model.zip)")
    return path
