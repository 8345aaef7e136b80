"""The module paths that training's modules had before they moved: each old module forwards its names.

An old module (``goboom_env.training.config``, ``vector_ppo``, ``rllib_policy``, ...) is three lines that call
:func:`forward`; a module that stays, such as ``exploit``, forwards the names that left it. A name imported from
it is looked up in the modules that now hold it, imported on first use (so that an old path imports no more than
the new one), and comes with a :class:`DeprecationWarning` naming the new path.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any


def forward(old: str, *new: str, names: tuple[str, ...] | None = None
            ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the module ``old``: a name (any, or one of ``names``) resolves in the first
    module of ``new`` that has it, with a DeprecationWarning; AttributeError when none has it. List a module before
    those that import names from it, so that the warning names the module that defines the name."""

    def forwarded(name: str) -> Any:
        if not name.startswith("__") and (names is None or name in names):
            for target in new:
                module = importlib.import_module(target)
                if hasattr(module, name):
                    warnings.warn(f"{old}.{name} is deprecated: import {name} from {target}", DeprecationWarning,
                                  stacklevel=2)
                    return getattr(module, name)
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    def listing() -> list[str]:
        return sorted({n for target in new for n in dir(importlib.import_module(target)) if not n.startswith("_")})

    return forwarded, listing
