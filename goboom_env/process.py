"""What every long command shares with the process it runs in: signals, worker processes and progress display.

Under :func:`handled` SIGINT and SIGTERM raise :class:`Interrupted` (a :class:`KeyboardInterrupt`) in the main thread,
so every clean-up runs, then the command prints one line and exits 128 + the signal; inside :func:`uninterrupted` a
signal waits for the end of the block. A second signal, or a clean-up still running :data:`GRACE_S` seconds later,
ends the process at once: its children killed, its staging folders (:func:`staging`) removed. Workers ignore SIGINT
and end with their parent (:func:`become_worker`). Progress: :func:`say` prints a status line, :func:`bar` a tqdm bar.
"""

from __future__ import annotations

import _thread
import atexit
import os
import shutil
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import Any

PROGRAM = "goboom"
SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _prog() -> str:
    """``goboom`` and its command (``goboom evaluate``), as the run's own line names it."""
    argv = sys.argv
    return f"{PROGRAM} {argv[1]}" if len(argv) > 1 and argv[1].isidentifier() else PROGRAM


def _end(signum: int, _frame: FrameType | None) -> None:
    """Print the one line and exit with 128 + the signal, as a shell reports a signal's end (no child process or
    module is touched: the signal may have interrupted an import)."""
    how = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
    os.write(2, f"{_prog()}: interrupted{how}\n".encode())
    os._exit(128 + signum)


def guard_startup() -> None:
    """In the ``goboom`` process only, end the start-up (nothing to clean up yet) at once on SIGINT or SIGTERM."""
    if sys.argv and os.path.basename(sys.argv[0]) == PROGRAM and threading.current_thread() is threading.main_thread():
        for signum in SIGNALS:
            signal.signal(signum, _end)


GRACE_S = 1.5
"""Seconds the clean-up after a first signal may take before the process is ended at once (within 2 s in all)."""


class WorkerLostError(RuntimeError):
    """A worker process ended without finishing its games (killed, e.g. for lack of memory)."""


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM (``signum``) received under :func:`handled`."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class Handling:
    """The signal handling of one command (:func:`handled`)."""

    def __init__(self, prog: str, entry: bool) -> None:
        self.prog = prog
        self.entry = entry  # the process entry point: the handling stays in force after the command returns
        self.pid = os.getpid()
        self.signum = 0  # the first signal received
        self.pending = False  # it arrived inside uninterrupted(): raised when the block ends
        self.forced = False  # a second one arrived there: the forced exit happens when the block ends
        self.returned = False
        self.disarmed = False
        self.kept: list[str] = []
        self.staged: list[Path] = []
        self.line = _thread.allocate_lock()  # taken, never released, by whoever prints the one line

    def message(self) -> str:
        """``PROG: interrupted`` (``by SIGTERM``), then what was kept."""
        how = " by SIGTERM" if self.signum == signal.SIGTERM else ""
        kept = "; kept " + "; ".join(self.kept) if self.kept else ""
        return f"{self.prog}: interrupted{how}{kept}"

    def status(self) -> int:
        """128 + the signal received; 130 for a KeyboardInterrupt raised without one."""
        return 128 + (self.signum or signal.SIGINT)

    def report(self) -> int:
        """Print the one line (once the clean-up ran) and return the exit status."""
        if self.line.acquire(blocking=False):
            print(self.message(), file=sys.stderr, flush=True)
        return self.status()

    def exit(self, status: int) -> None:
        """In the process entry, once a signal's clean-up has run: exit now, the output flushed and the ``atexit``
        functions run, without the interpreter's teardown (most of a second once torch is loaded)."""
        if not (self.entry and self.signum):
            return
        for stream in (sys.stdout, sys.stderr):
            with suppress(Exception):
                stream.flush()
        with suppress(BaseException):  # an AttributeError too, where atexit lacks CPython's private function
            atexit._run_exitfuncs()
        os._exit(status)


_current: Handling | None = None
_depth = 0  # the uninterrupted() blocks the main thread is in


@contextmanager
def handled(prog: str, *, entry: bool = False) -> Iterator[Handling]:
    """SIGINT and SIGTERM handled as the module docstring says while the block runs (main thread only); with
    ``entry`` the handling stays in force after it, through the interpreter's shutdown."""
    global _current
    handling = Handling(prog, entry)
    if threading.current_thread() is not threading.main_thread():
        yield handling
        return
    outer = _current
    previous = {s: signal.signal(s, _on_signal) for s in SIGNALS}
    _current = handling
    try:
        yield handling
    finally:
        handling.returned = True
        if not entry:
            handling.disarmed = True
            for s, handler in previous.items():
                signal.signal(s, handler)
            _current = outer


def kept(what: str) -> None:
    """Note something a run has completed and kept (``the results in PATH``): an interruption names it."""
    if _current is not None:
        _current.kept.append(what)


def staging(path: Path, *, done: bool = False) -> None:
    """Register the staging folder ``path`` (removed by a forced exit), or with ``done`` unregister it."""
    if _current is None:
        return
    if done:
        _current.staged = [p for p in _current.staged if p != path]
    else:
        _current.staged.append(path)


@contextmanager
def uninterrupted() -> Iterator[None]:
    """Run the block whole: a signal received inside it takes effect when it ends (outside :func:`handled`,
    SIGINT is ignored in it). Main thread only: elsewhere no signal is delivered."""
    global _depth
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _current is None:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)
        return
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        handling = _current
        if _depth == 0 and handling is not None:
            if handling.forced:
                _exit_now(handling)
            if handling.pending:
                handling.pending = False
                raise Interrupted(handling.signum)


def interrupted_by(exc: BaseException) -> bool:
    """Whether ``exc`` is or was caused by :class:`Interrupted`: a signal that reached code which turned it into
    another error (an extension module interrupted as it is imported answers ``ImportError``)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, Interrupted):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _on_signal(signum: int, frame: FrameType | None) -> None:
    handling = _current
    if handling is None or handling.pid != os.getpid():  # a forked child that kept the parent's handler
        if signum == signal.SIGTERM:  # SIGINT is ignored: the parent decides
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
        return
    if handling.returned and not handling.disarmed:  # the command is over: nothing left to clean up
        handling.signum = handling.signum or signum
        _exit_now(handling)
    if handling.signum:  # a second signal: stop now
        if _depth:
            handling.forced = True
            return
        _exit_now(handling)
    handling.signum = signum
    # a bare thread: threading's own locks may be held by the code this handler interrupted
    _thread.start_new_thread(_watchdog, (handling, time.monotonic() + GRACE_S))
    if _depth:
        handling.pending = True
        return
    raise Interrupted(signum)


def _after_fork_in_child() -> None:
    """A process forked under :func:`handled`: SIGINT ignored, SIGTERM as by default."""
    global _current, _depth
    if _current is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _current, _depth = None, 0


os.register_at_fork(after_in_child=_after_fork_in_child)


PR_SET_PDEATHSIG = 1  # Linux prctl: the signal this process gets when the thread that forked it ends
PARENT_POLL_S = 0.5  # how often a worker without it checks that its parent runs


def become_worker(parent: int) -> None:
    """Make this process a worker of ``parent`` (a pool's initializer): Ctrl-C is the parent's to act on, SIGTERM ends
    it at once, and it ends when ``parent`` ends, however it ends (on Linux, when ``parent`` forked it, by the
    kernel's SIGKILL; otherwise a daemon thread checks every :data:`PARENT_POLL_S` seconds)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux") and os.getppid() == parent:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == parent:
            return
    threading.Thread(target=_watch_parent, args=(parent,), name="goboom-parent-watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    while _running(parent):
        time.sleep(PARENT_POLL_S)
    os._exit(1)


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie has)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    fields = _proc_stat(pid)
    return fields is None or fields[0] != b"Z"  # no /proc here: existing is all that can be known


def _proc_stat(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command name (the state, then the parent), None if unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(b")") + 2:].split()


def _watchdog(handling: Handling, deadline: float) -> None:
    """End the process once the clean-up has run past ``deadline`` (a short ``uninterrupted`` block may finish)."""
    time.sleep(max(0.0, deadline - time.monotonic()))
    finish = time.monotonic() + 0.25
    while _depth and time.monotonic() < finish:
        time.sleep(0.01)
    if not handling.disarmed:
        _exit_now(handling)


def _exit_now(handling: Handling) -> None:
    """The forced exit: kill the children, remove the staging folders, print the line unless printed, exit."""
    for pid in _descendants(os.getpid()):
        _signal(pid, signal.SIGKILL)
    for path in list(handling.staged):
        try:  # renamed first: a write still under way in another thread no longer lands in it
            gone = path.with_name(f"{path.name}.{uuid.uuid4().hex[:6]}.gone")
            os.rename(path, gone)
            shutil.rmtree(gone, ignore_errors=True)
        except OSError:
            pass
    if handling.line.acquire(blocking=False):
        with suppress(OSError):
            os.write(2, (handling.message() + "\n").encode())
    else:
        time.sleep(0.05)  # the main thread is printing it
    os._exit(handling.status())


def _descendants(root: int) -> list[int]:
    """The live descendants of process ``root`` from /proc (elsewhere: multiprocessing's children)."""
    if not os.path.isdir("/proc"):
        multiprocessing = sys.modules.get("multiprocessing")  # never imported here: another thread may be importing
        children = multiprocessing.active_children() if multiprocessing is not None else []
        return [p.pid for p in children if p.pid is not None]
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        fields = _proc_stat(entry) if entry.isdigit() else None
        if fields is not None and fields[0] != b"Z":
            parents.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def stop_children(timeout: float = 0.5) -> None:
    """After an interruption: SIGTERM every child still alive (a library's), SIGKILL after ``timeout`` seconds."""
    pids = _descendants(os.getpid())
    for pid in pids:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pids and time.monotonic() < deadline:
        time.sleep(0.02)
        pids = [p for p in _descendants(os.getpid()) if p in pids]
    for pid in pids:
        _signal(pid, signal.SIGKILL)


def _signal(pid: int, signum: int) -> None:
    with suppress(OSError):  # ended meanwhile
        os.kill(pid, signum)


def bars_shown(enabled: bool = True) -> bool:
    """Whether to draw progress bars: ``enabled`` (``--progress``) and stderr is a terminal or a notebook's (a
    Jupyter kernel runs this process: its stderr shows tqdm's notebook bars)."""
    if not enabled:
        return False
    ipython = sys.modules.get("IPython")
    try:
        if sys.stderr.isatty():
            return True
        shell = ipython.get_ipython() if ipython is not None else None
        return shell is not None and "IPKernelApp" in shell.config
    except (AttributeError, TypeError, ValueError, OSError):  # no stderr, a closed one, or an IPython without a shell
        return False


def bar(iterable: Iterable[Any] | None = None, *, total: int | None = None, desc: str | None = None,
        enabled: bool = True, **kwargs: Any) -> Any:
    """A tqdm bar on stderr over ``iterable`` (or ``total`` items), drawn where :func:`bars_shown` says so."""
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, disable=not bars_shown(enabled), dynamic_ncols=True,
                file=sys.stderr, **kwargs)


def say(message: str) -> None:
    """One status line on stderr, above any bar being drawn."""
    from tqdm import tqdm

    tqdm.write(message, file=sys.stderr)
    sys.stderr.flush()
