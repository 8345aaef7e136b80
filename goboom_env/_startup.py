"""The first tenths of a second of the ``goboom`` command: Ctrl-C or SIGTERM while Python imports the package.

The console script imports this package (numpy, PettingZoo, Gymnasium: a few tenths of a second) before its
``main`` installs the run's signal handling (:mod:`goboom_env.evaluation.interrupt`). When the process is that
command, :func:`guard_startup`, the package's first statement, ends it at once on SIGINT or SIGTERM with the
command's one line and 130 or 143: nothing has started yet, so there is nothing to clean up. ``main`` then
replaces these handlers with its own. Any other process (a script that imports the library) is left alone.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType

PROGRAM = "goboom"
"""The console script's name (``[project.scripts]`` in pyproject.toml)."""


def _prog() -> str:
    """``goboom`` and its command (``goboom evaluate``), as the run's own line names it."""
    argv = sys.argv
    return f"{PROGRAM} {argv[1]}" if len(argv) > 1 and argv[1].isidentifier() else PROGRAM


def _end(signum: int, _frame: FrameType | None) -> None:
    """Print the one line and exit with 128 + the signal, as a shell reports a signal's end."""
    how = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
    os.write(2, f"{_prog()}: interrupted{how}\n".encode())
    os._exit(128 + signum)


def guard_startup() -> None:
    """In the ``goboom`` process only (its ``sys.argv[0]``), end the start-up at once on SIGINT or SIGTERM."""
    if sys.argv and os.path.basename(sys.argv[0]) == PROGRAM and threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _end)
