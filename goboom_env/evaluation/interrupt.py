"""Runs cut short: by Ctrl-C, whose clean-up a second Ctrl-C must not cut short in turn (it could leave
worker processes running or a half-written folder behind), or by a worker process that was killed."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class WorkerLostError(RuntimeError):
    """A worker process ended without finishing its games (killed, e.g. for lack of memory)."""


@contextmanager
def ctrl_c_ignored() -> Iterator[None]:
    """Ignore SIGINT inside the block, then restore the previous handler (main thread only: elsewhere
    Python delivers no SIGINT and cannot change its handler, so the block simply runs)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
