"""Ctrl-C (SIGINT) and SIGTERM stop a ``goboom`` command at any moment of its run: start-up, the worker pool
starting, the games, the results being written, and after they are in place. Each time the command ends with exit
code 130 (143 for SIGTERM) and one line on stderr, no process it started is left, and a results folder is either
complete or absent (goboom_env.process).

What is checked is what happened, never how long it took: the command's own bound (1.5 s of clean-up before a
forced exit, ``process.GRACE_S``) is the mechanism's, and :data:`HANG_GUARD_S` only tells a hang from a slow
machine. The measured times are printed (``pytest -s``); unloaded they are about 0.1 s.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from helpers import EARLIER_RUN, GOBOOM, ROOT, earlier_run, needs_extra_of
from helpers.processes import alive, descendants, group_members, proc_file

from goboom_env import process

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the processes from /proc")

HANG_GUARD_S = 60.0
"""How long a command may run on after a signal before the test calls it a hang (see the module docstring)."""
EVALUATE = ["evaluate", "--processes", "2", "--no-progress"]
LONG = ["--games", "1000000"]  # far more than any test waits for
SHORT = ["--games", "40", "--episode", "hand"]  # played in a moment: the results are written next


# -- processes, read from /proc ------------------------------------------------------------------------


def _handlers_installed(pid: int) -> bool:
    """Whether goboom's handlers are in force in ``pid``: it catches SIGTERM (Python alone does not)."""
    status = proc_file(pid, "status")
    if status is None:
        return False
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


class Command:
    """``goboom ARGS`` (or ``PROGRAM ARGS``) in its own process group (as a terminal runs a foreground job); every
    process it starts is noted while the test waits, so that none can hide once the command has exited."""

    def __init__(self, *args: str, ignore_sigint: bool = False, program: Sequence[str] = tuple(GOBOOM)) -> None:
        preexec = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
        self.started = time.monotonic()
        self.proc = subprocess.Popen([*program, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True, preexec_fn=preexec)
        self.seen: dict[int, str] = {}
        self.output = ""
        """What the command printed on stdout after :meth:`send` (once it has ended)."""

    def watch(self) -> None:
        self.seen |= descendants(self.proc.pid)

    def wait_until(self, condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        """Poll ``condition`` (every few milliseconds, noting the processes) until it holds; fails when the
        command ends first or after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not condition():
            self.watch()
            if self.proc.poll() is not None:
                self.kill()
                pytest.fail(f"the command ended before {what}: {self.proc.communicate()}")
            if time.monotonic() > deadline:
                self.kill()
                pytest.fail(f"no {what} after {timeout} s")
            time.sleep(0.003)
        self.watch()

    def workers(self) -> int:
        return len(descendants(self.proc.pid))

    def send(self, signum: int = signal.SIGINT, *, whole_group: bool = True) -> str:
        """Send ``signum`` (to the process group, as a terminal's Ctrl-C, or to the command alone); the
        command's stderr once it has ended (the seconds it took are printed, not checked). Fails if it still runs
        :data:`HANG_GUARD_S` seconds later."""
        self.watch()
        sent = time.monotonic()
        (os.killpg if whole_group else os.kill)(self.proc.pid, signum)
        try:
            self.output, err = self.proc.communicate(timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"still running {HANG_GUARD_S:g} s after {signal.Signals(signum).name}")
        seconds = time.monotonic() - sent
        print(f"stopped {seconds:.2f} s after {signal.Signals(signum).name}, {sent - self.started:.2f} s "
              f"after the start")
        return err

    def kill(self) -> None:
        for pid in [self.proc.pid, *self.seen]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def assert_stopped(self, err: str, signum: int = signal.SIGINT) -> None:
        """Stopped with the status of ``signum``, a single line on stderr, no process left."""
        assert self.proc.returncode == 128 + signum, err
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
        assert [pid for pid, started in self.seen.items() if alive(pid, started)] == []
        assert group_members(self.proc.pid) == []


def _staging(parent: Path) -> list[Path]:
    """The hidden folders in which the results are written before being renamed into place."""
    return [p for p in parent.iterdir() if p.name.endswith(".partial")]


def _assert_complete_or_absent(out: Path) -> None:
    """The results folder is absent, or it holds complete results; no staging folder is left."""
    if out.exists():
        assert json.loads((out / "results.json").read_text())["summary"]["games"] > 0
        assert (out / "report.md").is_file()
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".")] == []


# -- goboom evaluate --------------------------------------------------------------------------------------


@pytest.mark.slow  # whole goboom processes, interrupted at each moment of their run
@pytest.mark.parametrize("moment", ["0.5 s after the start", "as soon as goboom runs"])
def test_an_interrupt_at_start_up(tmp_path: Path, moment: str) -> None:
    out = tmp_path / "results"
    command = Command(*EVALUATE, *LONG, "--out", str(out))
    if moment == "0.5 s after the start":
        time.sleep(max(0.0, command.started + 0.5 - time.monotonic()))
    # "As soon as goboom runs": the first statement of the package (goboom_env.process) handles the signals of the
    # goboom process while the imports run, before main's own handling; only the interpreter's start before it
    # (hundredths of a second) keeps Python's default, so the signal waits for the first handler.
    command.wait_until(lambda: _handlers_installed(command.proc.pid), "goboom handlers")
    err = command.send()
    command.assert_stopped(err)
    assert err == "goboom evaluate: interrupted\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # whole goboom processes, interrupted at each moment of their run
@pytest.mark.parametrize("signum, whole_group", [(signal.SIGINT, True), (signal.SIGTERM, False)],
                         ids=["ctrl-c", "sigterm"])
def test_an_interrupt_while_the_pool_starts(tmp_path: Path, signum: int, whole_group: bool) -> None:
    out = tmp_path / "results"
    command = Command(*EVALUATE, *LONG, "--out", str(out))
    command.wait_until(lambda: command.workers() >= 1, "worker process")  # the first one forked, the pool starting
    err = command.send(signum, whole_group=whole_group)
    command.assert_stopped(err, signum)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # whole goboom processes, interrupted at each moment of their run
@pytest.mark.parametrize("signum, whole_group, ignore_sigint", [
    (signal.SIGINT, True, False), (signal.SIGINT, False, False), (signal.SIGINT, False, True),
    (signal.SIGTERM, True, False),
], ids=["ctrl-c", "sigint-to-the-parent-only", "sigint-inherited-ignored", "sigterm-to-the-group"])
def test_an_interrupt_mid_run(tmp_path: Path, signum: int, whole_group: bool, ignore_sigint: bool) -> None:
    # sigint-inherited-ignored: a script's `goboom evaluate ... &` starts with SIGINT ignored; kill -INT still stops it
    out = tmp_path / "results"
    command = Command(*EVALUATE, *LONG, "--out", str(out), ignore_sigint=ignore_sigint)
    command.wait_until(lambda: command.workers() >= 2 and bool(_staging(tmp_path)), "games")
    time.sleep(1.0)  # the workers are playing
    err = command.send(signum, whole_group=whole_group)
    command.assert_stopped(err, signum)
    assert err == ("goboom evaluate: interrupted by SIGTERM\n" if signum == signal.SIGTERM
                   else "goboom evaluate: interrupted\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # whole goboom processes, interrupted at each moment of their run
def test_an_interrupt_while_the_results_are_written(tmp_path: Path) -> None:
    out = earlier_run(tmp_path / "results")  # which --force would replace
    command = Command(*EVALUATE, *SHORT, "--out", str(out), "--force")
    # results.json is the first file written; the CSV, the plots and report.md follow (most of a second)
    command.wait_until(lambda: any((p / "results.json").exists() for p in _staging(tmp_path)), "results being written")
    err = command.send()
    command.assert_stopped(err)
    assert err == "goboom evaluate: interrupted\n"
    assert (out / "report.md").read_text() == EARLIER_RUN and len(list(out.iterdir())) == 2  # the earlier run kept
    assert [p.name for p in tmp_path.iterdir()] == ["results"]  # no staging folder left


@pytest.mark.slow  # whole goboom processes, interrupted at each moment of their run
def test_an_interrupt_once_the_results_are_in_place(tmp_path: Path) -> None:
    out = tmp_path / "results"
    command = Command(*EVALUATE, *SHORT, "--out", str(out))
    # renamed into place: the tables are printed next, then the interpreter shuts down
    command.wait_until(out.exists, "results folder")
    err = command.send()
    _assert_complete_or_absent(out)
    assert out.exists()
    if command.proc.returncode == -signal.SIGINT:
        # The command had returned: the signal landed in the interpreter's final teardown, where Python restores
        # the default handling and the process ends by the signal (a shell reports 130 all the same), silently.
        assert err == "" and group_members(command.proc.pid) == [], err
        return
    command.assert_stopped(err)
    assert err == f"goboom evaluate: interrupted; kept the complete results in {out}\n"


@pytest.mark.slow  # a whole goboom process
def test_a_second_ctrl_c_during_the_clean_up_ends_the_command_at_once(tmp_path: Path) -> None:
    out = tmp_path / "results"
    command = Command(*EVALUATE, *LONG, "--out", str(out))
    command.wait_until(lambda: command.workers() >= 2 and bool(_staging(tmp_path)), "games")
    os.killpg(command.proc.pid, signal.SIGINT)
    err = command.send()
    command.assert_stopped(err)
    assert err == "goboom evaluate: interrupted\n" and list(tmp_path.iterdir()) == []


# -- goboom train-fast -------------------------------------------------------------------------------------


@pytest.mark.slow  # a whole training process, interrupted while it starts
def test_train_fast_interrupted_while_it_starts(tmp_path: Path) -> None:
    needs_extra_of("train-fast")
    out = tmp_path / "run"
    command = Command("train-fast", "--timesteps", "100000000", "--num-envs", "16", "--num-steps", "16",
                      "--minibatch-size", "128", "--eval-every", "-1", "--bc-games", "0", "--threads", "1",
                      "--no-progress", "--out", str(out))
    command.wait_until(lambda: _handlers_installed(command.proc.pid), "goboom handlers")
    time.sleep(0.5)  # importing torch and the trainer: no training step has run
    err = command.send()
    command.assert_stopped(err)
    *phases, last = err.splitlines()  # the interrupt's one line, after any phase line the run printed
    assert last == "goboom train-fast: interrupted"
    assert not [line for line in phases if "interrupted" in line or "Traceback" in line], err
    assert not (out / "progress.csv").exists() and not list(out.glob("checkpoints/*"))


# -- the mechanism ----------------------------------------------------------------------------------------

STUCK_CLEAN_UP = """
import subprocess, sys, time
from pathlib import Path
from goboom_env import process

with process.handled("goboom stuck", entry=True) as handling:
    staged = Path(sys.argv[1])
    staged.mkdir()
    (staged / "results.json").write_text("{")  # half written
    process.staging(staged)
    child = subprocess.Popen(["sleep", "60"])
    try:
        print("ready", flush=True)
        time.sleep(60)
    except KeyboardInterrupt:
        print("cleaning up", flush=True)
        time.sleep(60)  # a clean-up that never ends
"""


@pytest.mark.slow  # a whole Python process
def test_a_clean_up_that_does_not_end_is_cut_short(tmp_path: Path) -> None:
    staged = tmp_path / ".results.x.partial"
    command = Command("-c", STUCK_CLEAN_UP, str(staged), program=[sys.executable])
    assert command.proc.stdout is not None and command.proc.stdout.readline() == "ready\n"
    err = command.send(signal.SIGTERM, whole_group=False)
    command.assert_stopped(err, signal.SIGTERM)
    assert err == "goboom stuck: interrupted by SIGTERM\n"
    assert command.output == "cleaning up\n"  # the clean-up had begun: the forced exit cut it short
    assert len(command.seen) == 1 and list(tmp_path.iterdir()) == []  # the child killed, the staging folder removed


# -- the mechanism, in this process ------------------------------------------------------------------------


def test_sigterm_raises_an_interrupt_that_exits_143() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with process.handled("goboom test") as handling:
        with pytest.raises(KeyboardInterrupt) as raised:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)  # the handler runs at once
        assert isinstance(raised.value, process.Interrupted) and raised.value.signum == signal.SIGTERM
        assert handling.message() == "goboom test: interrupted by SIGTERM" and handling.status() == 143
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_signal_inside_an_uninterrupted_block_takes_effect_when_it_ends() -> None:
    steps = []
    with process.handled("goboom test"), pytest.raises(process.Interrupted):
        with process.uninterrupted():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            steps.append("the block ran to its end")
        steps.append("after the block")
    assert steps == ["the block ran to its end"]


def test_what_was_kept_is_named() -> None:
    with process.handled("goboom test") as handling:
        process.kept("the results in out/")
        assert handling.message() == "goboom test: interrupted; kept the results in out/"
    process.kept("nothing: no command runs")  # outside handled(): ignored


def test_the_start_up_guard_is_for_the_goboom_command_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A script that imports the library keeps its own signal handling; the goboom process ends on a signal."""
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        monkeypatch.setattr(sys, "argv", ["my_script.py", "evaluate"])
        process.guard_startup()
        assert {s: signal.getsignal(s) for s in before} == before
        monkeypatch.setattr(sys, "argv", ["/venv/bin/goboom", "evaluate", "--games", "4"])
        process.guard_startup()
        assert signal.getsignal(signal.SIGINT) is process._end and signal.getsignal(signal.SIGTERM) is process._end
        assert process._prog() == "goboom evaluate"
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def test_an_interrupt_another_error_wraps_is_still_an_interrupt() -> None:
    """A signal that lands in an extension module's import comes back as ``ImportError`` raised from it."""
    try:
        try:
            raise process.Interrupted(signal.SIGINT)
        except process.Interrupted as exc:
            raise ImportError("initialization failed") from exc
    except ImportError as wrapped:
        assert process.interrupted_by(wrapped)
    assert not process.interrupted_by(ImportError("initialization failed"))
    assert not process.interrupted_by(KeyboardInterrupt())
