"""The trained agents shipped inside the package, and the lookup that lets ``ppo:NAME`` name them.

Each shipped model is a play-only ``NAME.zip`` in this folder (``README.md`` here says how each was
trained and evaluated). ``ppo:classic-4p-hands`` loads ``classic-4p-hands.zip`` from the installed package,
wherever it is installed; any other spec is a file path, as before (``ppo:runs/x/model.zip``). To load a local
file that happens to share a shipped model's name, write it as a path (``ppo:./classic-4p-hands``).

A model's name says the episode unit it was trained on: ``classic-4p`` whole matches, ``classic-4p-hands``
single hands.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["model_path", "shipped_models"]


def _folder() -> Path:
    """This folder on disk (pip installs the package as plain files, so the models are files next to this one)."""
    return Path(__file__).resolve().parent


def shipped_models() -> list[str]:
    """The names of the shipped models, sorted (``["classic-2p", ..., "jokers-4p-hands"]``)."""
    return sorted(p.stem for p in _folder().glob("*.zip"))


def model_path(spec: str) -> Path:
    """The model file a ``ppo:`` spec names: a shipped model's file for a shipped name, else ``spec`` as a path.

    Raises ValueError for a bare name (no folder, no suffix) that is neither a shipped model nor a file, listing the
    shipped names, so a typo such as ``ppo:clasic-4p`` says what exists."""
    shipped = shipped_models()
    if spec in shipped:
        return _folder() / f"{spec}.zip"
    path = Path(spec)
    if not path.exists() and path.parent == Path() and not path.suffix:
        raise ValueError(f"no model {spec!r}: not a file, and the shipped models are {', '.join(shipped)} "
                         f"(write a file as a path, e.g. ppo:runs/x/model.zip)")
    return path
