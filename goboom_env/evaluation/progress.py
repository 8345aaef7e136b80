"""What the commands show while they work: one status line per phase and a progress bar over it.

Every ``goboom`` command reports a phase that takes more than about a second (a warm start's games and its fit, the
training steps, an evaluation's tournaments) with one line (:func:`say`) and a tqdm bar (:func:`bar`). Whether bars
are drawn is decided here only (:func:`bars_shown`): when the command asks for them (``--progress``, the default of
every command that has the option; ``--no-progress`` turns them off) and standard error is a terminal (or a Jupyter
kernel, which draws tqdm's widget). A log piped to a file or another program gets the status lines alone, never the
carriage-return frames of a bar.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any, TypeVar

T = TypeVar("T")


def bars_shown(enabled: bool = True) -> bool:
    """Whether to draw progress bars: ``enabled`` (the command's ``--progress``) and standard error is a terminal
    or a notebook's output."""
    if not enabled:
        return False
    try:
        return bool(sys.stderr.isatty()) or _in_notebook()
    except (AttributeError, ValueError, OSError):  # no stderr, or a closed one
        return False


def bar(iterable: Iterable[T] | None = None, *, total: int | None = None, desc: str | None = None,
        enabled: bool = True, **kwargs: Any) -> Any:
    """A tqdm bar on standard error over ``iterable`` (or ``total`` items), drawn only where :func:`bars_shown`
    says (an undrawn bar ignores its updates: keep a count elsewhere). ``kwargs`` go to tqdm (``unit``,
    ``initial``, ``leave`` ...)."""
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, disable=not bars_shown(enabled), dynamic_ncols=True,
                file=sys.stderr, **kwargs)


def say(message: str) -> None:
    """One status line on standard error, printed above any bar being drawn (tqdm moves the bars below it)."""
    from tqdm import tqdm

    tqdm.write(message, file=sys.stderr)
    sys.stderr.flush()


def _in_notebook() -> bool:
    """A Jupyter kernel runs this process (its stderr is no terminal but shows tqdm's notebook bars)."""
    ipython = sys.modules.get("IPython")
    try:
        shell = ipython.get_ipython() if ipython is not None else None
        return shell is not None and "IPKernelApp" in shell.config
    except (AttributeError, TypeError):
        return False
