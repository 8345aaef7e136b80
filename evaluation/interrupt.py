"""Ctrl-C while cleaning up: clean-up that a second Ctrl-C cut short could leave worker processes
running or a half-written folder behind, so it runs with SIGINT ignored for its (short) duration."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


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
