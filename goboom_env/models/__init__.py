"""The trained agents shipped inside the package, and the lookup that lets ``ppo:NAME`` name them.

Each shipped model is a play-only ``NAME.zip`` in this folder (``README.md`` here says how each was
trained and evaluated). ``ppo:classic-4p-hands`` loads ``classic-4p-hands.zip`` from the installed package,
wherever it is installed; any other spec is a file path, as before (``ppo:runs/x/model.zip``). To load a local
file that happens to share a shipped model's name, write it as a path (``ppo:./classic-4p-hands``).

A model's name says the episode unit it was trained on: ``classic-4p`` whole matches, ``classic-4p-hands``
single hands. The former names of the hand-trained models (:data:`RENAMED`: ``classic4``, ``jokers4``) still
load, with a :class:`RenamedModelWarning` (a DeprecationWarning) naming the new name.
"""

from __future__ import annotations

import warnings
from pathlib import Path

__all__ = ["RENAMED", "RenamedModelWarning", "model_path", "shipped_models"]

RENAMED = {"classic4": "classic-4p-hands", "jokers4": "jokers-4p-hands"}
"""Former names of shipped models and their names now: a former name still loads, with a warning."""


class RenamedModelWarning(DeprecationWarning):
    """A shipped model was named by its former name (:data:`RENAMED`); the message names the new one."""


def _folder() -> Path:
    """This folder on disk (pip installs the package as plain files, so the models are files next to this one)."""
    return Path(__file__).resolve().parent


def shipped_models() -> list[str]:
    """The names of the shipped models, sorted (``["classic-2p", ..., "jokers-4p-hands"]``; not the former names)."""
    return sorted(p.stem for p in _folder().glob("*.zip"))


def model_path(spec: str) -> Path:
    """The model file a ``ppo:`` spec names: a shipped model's file for a shipped name, else ``spec`` as a path.

    A former name (:data:`RENAMED`) gives the renamed model's file, with a :class:`RenamedModelWarning`. Raises
    ValueError for a bare name (no folder, no suffix) that is neither a shipped model nor a file, listing the
    shipped names, so a typo such as ``ppo:clasic-4p`` says what exists."""
    shipped = shipped_models()
    if spec in RENAMED and spec not in shipped:
        new = RENAMED[spec]
        warnings.warn(f"the shipped model {spec!r} is now named {new!r}: write ppo:{new} (the old name still loads, "
                      "but is deprecated)", RenamedModelWarning, stacklevel=2)
        spec = new
    if spec in shipped:
        return _folder() / f"{spec}.zip"
    path = Path(spec)
    if not path.exists() and path.parent == Path() and not path.suffix:
        raise ValueError(f"no model {spec!r}: not a file, and the shipped models are {', '.join(shipped)} "
                         f"(write a file as a path, e.g. ppo:runs/x/model.zip)")
    return path
