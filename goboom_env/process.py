"""What every long command shares with the process it runs in: signals, worker processes and progress display.

* **Start-up** (:func:`guard_startup`): while the ``goboom`` command imports the package, Ctrl-C or SIGTERM end it
  at once with the command's one line (130 or 143): nothing has started, so there is nothing to clean up.
* **Interruptions** (:func:`handled`, the first thing :func:`goboom_env.cli.main` does): SIGINT and SIGTERM raise
  :class:`Interrupted`, a :class:`KeyboardInterrupt`, in the main thread, so every ``except KeyboardInterrupt``
  clean-up runs (workers stopped, a staged results folder removed, a checkpoint saved); the command prints one line
  and exits 128 + the signal. Inside :func:`uninterrupted` a signal waits for the end of the block. A second signal,
  or a clean-up still running :data:`GRACE_S` seconds later, ends the process at once: its children are killed and
  the staging folders it registered (:func:`staging`) removed. Forked workers ignore SIGINT (only the parent
  decides) and, with :func:`end_with`, end when their parent does, however it ends.
* **Progress** (:func:`say`, :func:`bar`): one status line per phase and a tqdm bar over it, drawn only when the
  command asks for bars and standard error is a terminal or a notebook (:func:`bars_shown`).
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
from typing import Any, TypeVar

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


GRACE_S = 1.5
"""Seconds the clean-up after a first signal may take before the process is ended at once (with the forced
exit's own few hundredths of a second, the 2 s a command has to stop)."""
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class WorkerLostError(RuntimeError):
    """A worker process ended without finishing its games (killed, e.g. for lack of memory)."""


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM received (``signum``) while :func:`handled` was in force."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def exit_status(signum: int) -> int:
    """The exit status after signal ``signum``, as a shell reports it: 128 + the signal number."""
    return 128 + signum


class Handling:
    """The signal handling of one command (:func:`handled`)."""

    def __init__(self, prog: str, entry: bool) -> None:
        self.prog = prog
        self.entry = entry
        """The process entry point: the handling stays in force after the command returns (interpreter
        shutdown included), instead of the previous handlers being restored."""
        self.pid = os.getpid()
        self.signum = 0
        """The first signal received (0: none yet)."""
        self.pending = False
        """The first signal arrived inside :func:`uninterrupted`: raised when the block ends."""
        self.forced = False
        """A second signal arrived inside :func:`uninterrupted`: the forced exit happens when the block ends."""
        self.returned = False
        self.disarmed = False
        self.kept: list[str] = []
        self.staged: list[Path] = []
        self.deadline = 0.0
        self.line = _thread.allocate_lock()
        """Taken by whoever prints the one line (the main thread's report or a forced exit), never released."""
        self.previous: dict[int, Any] = {}

    def message(self) -> str:
        """``PROG: interrupted`` (``... by SIGTERM``), then what was kept, if anything."""
        text = f"{self.prog}: interrupted"
        if self.signum == signal.SIGTERM:
            text += " by SIGTERM"
        if self.kept:
            text += "; kept " + "; ".join(self.kept)
        return text

    def status(self) -> int:
        """128 + the signal received; 130 for a KeyboardInterrupt raised without one."""
        return exit_status(self.signum or signal.SIGINT)

    def report(self) -> int:
        """After the command was interrupted and its clean-up ran: the one line on stderr; the exit status."""
        if self.line.acquire(blocking=False):
            print(self.message(), file=sys.stderr, flush=True)
        return self.status()

    def exit(self, status: int) -> None:
        """In the process entry, once a signal's clean-up has run: exit with ``status`` now. The output is
        flushed and the ``atexit`` functions run (multiprocessing's, logging's, temporary files'), but the
        interpreter's own teardown, which takes most of a second once torch is loaded, is skipped."""
        if not (self.entry and self.signum):
            return
        for stream in (sys.stdout, sys.stderr):
            with suppress(Exception):
                stream.flush()
        run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
        if run_exit_functions is not None:
            with suppress(BaseException):
                run_exit_functions()
        os._exit(status)


_current: Handling | None = None
_depth = 0
"""How many :func:`uninterrupted` blocks the main thread is in."""


@contextmanager
def handled(prog: str, *, entry: bool = False) -> Iterator[Handling]:
    """SIGINT and SIGTERM handled as the module docstring says while the block runs (main thread only; elsewhere
    the block simply runs). With ``entry`` (the process's own entry point) the handling stays in force after
    the block, through the interpreter's shutdown; without it the previous handlers come back."""
    global _current
    handling = Handling(prog, entry)
    if threading.current_thread() is not threading.main_thread():
        yield handling
        return
    outer = _current
    handling.previous = {s: signal.signal(s, _on_signal) for s in SIGNALS}
    _current = handling
    try:
        yield handling
    finally:
        handling.returned = True
        if not entry:
            handling.disarmed = True
            for s, previous in handling.previous.items():
                signal.signal(s, previous)
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
    """Run the block whole: a signal received inside it takes effect when it ends (the first one raises
    :class:`Interrupted` there, a second one exits). Outside :func:`handled` (a library call) SIGINT is
    ignored inside the block. Main thread only: elsewhere Python delivers no signal and the block simply runs."""
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


def _on_signal(signum: int, frame: FrameType | None) -> None:
    handling = _current
    if handling is None or handling.pid != os.getpid():  # a forked child that kept the parent's handler
        _as_child(signum)
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
    handling.deadline = time.monotonic() + GRACE_S
    # a bare thread: threading's own locks may be held by the code this handler interrupted
    _thread.start_new_thread(_watchdog, (handling,))
    if _depth:
        handling.pending = True
        return
    raise Interrupted(signum)


def _as_child(signum: int) -> None:
    """In a child process: ignore SIGINT (the parent decides), die of SIGTERM."""
    if signum == signal.SIGTERM:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)


def _after_fork_in_child() -> None:
    """A process forked while :func:`handled` is in force: SIGINT ignored, SIGTERM as by default."""
    global _current, _depth
    if _current is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _current, _depth = None, 0


os.register_at_fork(after_in_child=_after_fork_in_child)


PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal this process gets when the thread that forked it ends."""
PARENT_POLL_S = 0.5
"""How often a worker without Linux's parent-death signal checks that its parent still runs."""


def end_with(parent: int) -> None:
    """In a worker process of ``parent``: end this process when ``parent`` ends, however it ends, so that no worker
    outlives the command that started it. On Linux, when ``parent`` forked it, the kernel sends SIGKILL at the
    parent's end (checked once more after setting it: the parent may have ended already); otherwise (a parent
    that ended before this call, a fork server, another system) a daemon thread checks every
    :data:`PARENT_POLL_S` seconds."""
    if sys.platform.startswith("linux") and os.getppid() == parent:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == parent:
            return
    threading.Thread(target=_watch_parent, args=(parent,), name="goboom-parent-watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    """Exit this process once ``parent`` no longer runs."""
    while _running(parent):
        time.sleep(PARENT_POLL_S)
    os._exit(1)


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie, ended but not yet reaped, has)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return True  # no /proc here: existing is all that can be known
    return stat[stat.rindex(b")") + 2:][:1] != b"Z"


def _watchdog(handling: Handling) -> None:
    """Ends the process once the clean-up has run past its deadline (a short ``uninterrupted`` block is let
    finish, up to a quarter of a second)."""
    time.sleep(max(0.0, handling.deadline - time.monotonic()))
    finish = time.monotonic() + 0.25
    while _depth and time.monotonic() < finish:
        time.sleep(0.01)
    if not handling.disarmed:
        _exit_now(handling)


def _exit_now(handling: Handling) -> None:
    """The forced exit: kill the child processes, remove the registered staging folders, print the line
    (unless printed already) and exit with the status of the first signal, without further clean-up."""
    _kill_children()
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


def _kill_children() -> None:
    """SIGKILL every live descendant of this process."""
    for pid in _descendants(os.getpid()):
        _signal(pid, signal.SIGKILL)


def _descendants(root: int) -> list[int]:
    """The live (not zombie) descendants of process ``root``, read from /proc (elsewhere: multiprocessing's
    children, when it was imported)."""
    if not os.path.isdir("/proc"):
        multiprocessing = sys.modules.get("multiprocessing")  # never imported here: another thread may be importing
        children = multiprocessing.active_children() if multiprocessing is not None else []
        return [p.pid for p in children if p.pid is not None]
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2:].split()
        if fields[0] != b"Z":
            parents.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def stop_children(timeout: float = 0.5) -> None:
    """After an interruption: SIGTERM every child process still alive (one that some library started and left
    behind), then SIGKILL those still there after ``timeout`` seconds."""
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
