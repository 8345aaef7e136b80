"""The worker processes of a parallel tournament: at most one per game and one per CPU (``goboom evaluate`` notes when
it starts fewer than asked), ``--processes`` checked before any game, and no worker outliving its parent, however
the parent ends (a SIGKILL included, or an end before the worker had started)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT
from helpers.processes import alive, children, proc_file

from goboom_env import GameConfig
from goboom_env.cli import main
from goboom_env.evaluation import tournament
from goboom_env.evaluation.tournament import available_cpus, run_tournament

CLASSIC4 = GameConfig(variant="classic", num_players=4)
HANG_GUARD_S = 60.0
"""Only against a hang: a worker ends within a second of its parent (a poll every half second at worst)."""


@pytest.fixture
def pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every worker pool started (``multiprocessing.Pool``), in order."""
    started: list[int] = []
    real = tournament.multiprocessing.Pool

    def pool(processes: int, *args: Any, **kwargs: Any) -> Any:
        started.append(processes)
        return real(processes, *args, **kwargs)

    monkeypatch.setattr(tournament.multiprocessing, "Pool", pool)
    return started


def test_processes_are_capped_at_the_games_and_the_cpus(pools: list[int]) -> None:
    result = run_tournament(CLASSIC4, ["random"], 2, processes=300, progress=False)
    used = min(2, available_cpus())
    assert result.processes == used and pools == ([used] if used > 1 else [])
    assert len(result.games) == 2


def test_evaluate_notes_the_processes_it_does_not_start(tmp_path: Path, pools: list[int],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert main(["evaluate", "--processes", "300", "--games", "2", "--episode", "hand", "--no-progress",
                 "--out", str(out)]) == 0
    used, cpus = min(2, available_cpus()), available_cpus()
    assert capsys.readouterr().err.splitlines() == [
        f"note: --processes 300 lowered to {used}: at most one worker per game (2) and per CPU ({cpus})"]
    assert max(pools, default=1) <= used and (out / "results.json").is_file()


@pytest.mark.parametrize("value", ["0", "-3"])
def test_processes_below_one_are_refused_before_any_game(value: str, tmp_path: Path, pools: list[int],
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    played: list[object] = []
    monkeypatch.setattr(tournament, "run_tournament", lambda *args, **kwargs: played.append(args))
    assert main(["evaluate", "--processes", value, "--games", "2", "--no-progress",
                 "--out", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"goboom evaluate: error: --processes must be a positive integer, got {value}"]
    assert played == [] and pools == [] and list(tmp_path.iterdir()) == []


# -- no worker outlives its parent --------------------------------------------------------------------------------

LONG_TOURNAMENT = """
import sys
import time
from multiprocessing.pool import Pool

from goboom_env import GameConfig
from goboom_env.evaluation.tournament import run_tournament

if sys.argv[1] == "before any work":  # the parent stops between starting its workers and handing them games
    Pool.imap_unordered = lambda *args, **kwargs: time.sleep(600)
run_tournament(GameConfig(), ["random"], 10_000_000, processes=2, progress=False)
"""
"""A parent playing a long tournament on two workers, stopped ``before any work`` or not (``while playing``)."""


def _waiting_in(pid: int) -> str:
    """The kernel function process ``pid`` sleeps in (``/proc/PID/wchan``), "" when unknown."""
    return proc_file(pid, "wchan") or ""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the processes from /proc")
@pytest.mark.skipif(available_cpus() < 2, reason="two workers need two CPUs")
@pytest.mark.parametrize("moment", ["before any work", "while playing"])
def test_no_worker_outlives_a_parent_killed_outright(moment: str) -> None:
    """The parent is killed with SIGKILL (no clean-up of its own runs). ``before any work``: as a forced exit during
    the pool's start-up leaves it, the idle worker that holds the task queue's lock (it waits in the pipe's read; the
    other one waits for the lock) is killed first: the other one then waits for that lock forever, unless it ends
    with its parent."""
    parent = subprocess.Popen([sys.executable, "-c", LONG_TOURNAMENT, moment], cwd=ROOT, start_new_session=True)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + HANG_GUARD_S
        while len(workers := children(parent.pid)) < 2 or (
                moment == "before any work" and not any("pipe" in _waiting_in(pid) for pid in workers)):
            assert parent.poll() is None and time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.05)
        if moment == "before any work":  # as the forced exit does: the workers it sees first, then itself
            os.kill(next(pid for pid in workers if "pipe" in _waiting_in(pid)), signal.SIGKILL)
        parent.kill()
        parent.wait()
        while left := [pid for pid in workers if alive(pid)]:
            assert time.monotonic() < deadline + HANG_GUARD_S, f"workers {left} outlived their parent"
            time.sleep(0.05)
    finally:
        parent.kill()
        for pid in workers:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_a_worker_whose_parent_ended_before_it_started_ends_too() -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    code = (f"import time; from goboom_env.process import become_worker; become_worker({gone.pid}); "
            "time.sleep(600)")
    worker = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    try:
        assert worker.wait(timeout=HANG_GUARD_S) == 1
    finally:
        worker.kill()
