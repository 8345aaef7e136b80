"""The ``goboom`` commands under stress: Ctrl-C, unusable output folders, a full disk, a closed pipe and
missing optional dependencies all end with one clear line and a documented exit code, never a traceback,
a hang, a stray worker process or a half-written results folder."""

from __future__ import annotations

import errno
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import EARLIER_RUN, GOBOOM, ROOT, earlier_run, needs_extra_of
from helpers.processes import group_members

import goboom_env.evaluation.report
import goboom_env.evaluation.tournament
from goboom_env.cli import SUBCOMMANDS, main
from goboom_env.hints import EXTRAS, INCLUDES, extra_modules
from goboom_env.outdir import MARKER, mark

CHECKOUT = {**os.environ, "PYTHONPATH": str(ROOT)}
"""The environment of a command run outside the checkout: it still runs this checkout's code."""
LONG = ["--games", "1000000", "--no-progress"]  # far more than any test waits for


def start(*args: str, cwd: Path = ROOT, **kwargs: object) -> subprocess.Popen:
    """``goboom ARGS`` in its own process group (as a terminal runs a foreground job)."""
    return subprocess.Popen([*GOBOOM, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, **kwargs)  # type: ignore[call-overload]


def wait_until_started(proc: subprocess.Popen, started: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Until ``started()`` while ``proc`` runs, then a moment so that ``what`` gets going; fails after
    ``timeout`` seconds or when ``proc`` ends first."""
    deadline = time.monotonic() + timeout
    while not started():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{what} did not start"
        time.sleep(0.05)
    time.sleep(0.5)


def wait_for_workers(proc: subprocess.Popen, count: int) -> None:
    """Until ``count`` worker processes exist besides ``proc``, then a moment so that they play."""
    wait_until_started(proc, lambda: len(group_members(proc.pid)) >= 1 + count, "the workers")


def wait_for_games(proc: subprocess.Popen, folder: Path) -> None:
    """Until the staging folder of the results exists in ``folder`` (the games start next), then a moment."""
    wait_until_started(proc, lambda: any(p.name.endswith(".partial") for p in folder.iterdir()), "the games")


def interrupt(proc: subprocess.Popen, times: int = 1, *, whole_group: bool = True) -> str:
    """Send Ctrl-C (SIGINT to the process group, as a terminal does, or to the parent only); the stderr of the
    process once it has ended."""
    for _ in range(times):
        if whole_group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, signal.SIGINT)
        time.sleep(0.05)
    return stderr_once_ended(proc, "Ctrl-C")


HANG_GUARD_S = 60.0
"""How long a command may run on after the event that stops it before the test calls it a hang (it takes well under
a second; the guard only tells a hang from a slow machine)."""


def stderr_once_ended(proc: subprocess.Popen, cause: str, seconds: float = HANG_GUARD_S) -> str:
    """The stderr of ``proc`` once it ends; the test fails (the process group killed) when it still runs
    ``seconds`` after ``cause``: a hang."""
    try:
        _, err = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"still running {seconds} s after {cause}")
    return err


def leftovers(folder: Path) -> list[str]:
    """Staging folders (``.NAME.*.partial`` / ``.old``) left next to the results."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# -- Ctrl-C -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("times, whole_group", [(1, True), (2, True), (1, False)],
                         ids=["ctrl-c", "ctrl-c-twice", "sigint-to-parent-only"])
def test_ctrl_c_stops_a_parallel_evaluation_at_once(tmp_path: Path, times: int, whole_group: bool) -> None:
    out = earlier_run(tmp_path / "results")  # which --force would replace
    proc = start("evaluate", "--processes", "2", *LONG, "--out", str(out), "--force")
    wait_for_games(proc, tmp_path)
    wait_for_workers(proc, 2)
    err = interrupt(proc, times, whole_group=whole_group)
    assert proc.returncode == 130
    assert err.splitlines() == ["goboom evaluate: interrupted"]
    assert group_members(proc.pid) == []  # no worker outlives the command
    assert (out / "report.md").read_text() == EARLIER_RUN and sorted(p.name for p in out.iterdir()) == [
        MARKER, "report.md"]
    assert leftovers(tmp_path) == []


def test_ctrl_c_in_a_single_process_evaluation(tmp_path: Path) -> None:
    proc = start("evaluate", "--processes", "1", *LONG, "--out", str(tmp_path / "results"))
    wait_for_games(proc, tmp_path)
    err = interrupt(proc)
    assert proc.returncode == 130
    assert err.splitlines() == ["goboom evaluate: interrupted"]
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_at_the_play_prompt() -> None:
    proc = subprocess.Popen([*GOBOOM, "play", "--preset", "classic", "--seed", "1"], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None and proc.stdin is not None
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    shown, deadline = b"", time.monotonic() + 30
    while b"your move> " not in shown:  # stdin stays open: the game waits for a move
        assert time.monotonic() < deadline, shown
        if selector.select(timeout=1):
            chunk = os.read(proc.stdout.fileno(), 4096)
            assert chunk, shown
            shown += chunk
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=5)
    proc.stdin.close()
    assert proc.returncode == 130
    assert err.decode().splitlines() == ["goboom play: interrupted"]


def test_an_agent_error_in_a_worker_stops_the_whole_run(tmp_path: Path) -> None:
    # an agent that fails on its 300th move; the run would take many minutes if it went on to the end
    helper = tmp_path / "failing.py"
    helper.write_text(
        "import sys\n"
        "from goboom_env.agents import RandomAgent, register_agent\n"
        "from goboom_env.cli import main\n"
        "class Failing(RandomAgent):\n"
        "    moves = 0\n"
        "    def act(self, observation, view=None):\n"
        "        Failing.moves += 1\n"
        "        if Failing.moves == 300:\n"
        "            raise ValueError('agent failed on its 300th move')\n"
        "        return super().act(observation, view)\n"
        "register_agent('failing', Failing)\n"
        "sys.exit(main(sys.argv[1:]))\n")
    proc = subprocess.Popen([sys.executable, str(helper), "evaluate", "--agents", "failing", "random",
                             "--processes", "2", *LONG, "--out", str(tmp_path / "results")],
                            cwd=tmp_path, env=CHECKOUT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    err = stderr_once_ended(proc, "the start")
    assert proc.returncode == 2 and "agent failed on its 300th move" in err and "Traceback" not in err
    assert group_members(proc.pid) == []
    assert not (tmp_path / "results").exists() and leftovers(tmp_path) == []


def test_a_killed_worker_stops_the_run_instead_of_hanging(tmp_path: Path) -> None:
    proc = start("evaluate", "--processes", "2", *LONG, "--out", str(tmp_path / "results"))
    wait_for_games(proc, tmp_path)
    wait_for_workers(proc, 2)
    worker = next(pid for pid in group_members(proc.pid) if pid != proc.pid)
    os.kill(worker, signal.SIGKILL)  # as the out-of-memory killer would
    err = stderr_once_ended(proc, "a worker was killed")
    assert proc.returncode == 1 and "Traceback" not in err
    assert err.splitlines() == ["goboom evaluate: error: a worker process ended with exit code -9 (killed, e.g. for "
                                "lack of memory?) before finishing its games; the tournament was stopped"]
    assert group_members(proc.pid) == [] and list(tmp_path.iterdir()) == []


# -- output folders -------------------------------------------------------------------------------------


def _unusable(tmp_path: Path, case: str) -> tuple[Path, str]:
    """An --out that cannot take results and the error that must name it."""
    (tmp_path / "file").write_text("x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "report.md").write_text("earlier run")
    return {"existing file": (tmp_path / "file", "is a file, not a folder"),
            "under a file": (tmp_path / "file" / "results", "which is a file"),
            "non-empty folder": (tmp_path / "full", "already exists and is not empty; pass --force")}[case]


@pytest.mark.parametrize("case", ["existing file", "under a file", "non-empty folder"])
def test_an_unusable_out_fails_before_any_game(tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out, message = _unusable(tmp_path, case)
    played: list[object] = []  # no tournament starts, so no game is played and no worker process starts
    monkeypatch.setattr(goboom_env.evaluation.tournament, "run_tournament", lambda *a, **k: played.append(a))
    assert main(["evaluate", *LONG, "--processes", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert played == [] and leftovers(tmp_path) == []
    assert (tmp_path / "file").read_text() == "x" and (tmp_path / "full" / "report.md").read_text() == "earlier run"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_out_fails_before_any_game(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        for out in (locked, locked / "results"):
            done = subprocess.run([*GOBOOM, "evaluate", *LONG, "--out", str(out)], cwd=ROOT, capture_output=True,
                                  text=True, timeout=10)
            assert done.returncode == 2 and ("not writable" in done.stderr or "Permission denied" in done.stderr)
    finally:
        locked.chmod(0o755)


def test_a_folder_that_refuses_the_staging_copy_fails_before_any_game(tmp_path: Path, monkeypatch, capsys) -> None:
    mkdir = os.mkdir

    def refuse(path: str | os.PathLike, *args: object, **kwargs: object) -> None:
        if str(path).endswith(".partial"):  # as in a folder without write permission (root ignores those)
            raise PermissionError(errno.EACCES, "Permission denied")
        mkdir(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", refuse)
    monkeypatch.setattr("goboom_env.evaluation.tournament.run_tournament",
                        lambda *a, **k: pytest.fail("games were played"))
    code = main(["evaluate", "--games", "10", "--out", str(tmp_path / "results")])
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"goboom evaluate: error: cannot write --out {tmp_path / 'results'}: Permission denied\n"


def test_a_full_disk_is_one_line_and_leaves_no_half_written_folder(tmp_path: Path, monkeypatch, capsys) -> None:
    def write_some_then_fail(out: Path, *args: object, **kwargs: object) -> Path:
        (Path(out) / "results.json").write_text("{")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(goboom_env.evaluation.report, "write_report", write_some_then_fail)
    out = tmp_path / "new" / "results"  # its parent is made for it, and removed again
    code = main(["evaluate", "--games", "4", "--no-progress", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 1 and "Results" not in captured.out
    assert captured.err == f"goboom evaluate: error: cannot write the results to {out}: No space left on device\n"
    assert list(tmp_path.iterdir()) == []


def test_force_replaces_the_whole_folder(tmp_path: Path, capsys) -> None:
    out = earlier_run(tmp_path / "results", "stale.txt")
    (tmp_path / "plain").mkdir()
    assert main(["evaluate", "--games", "4", "--no-progress", "--out", str(out), "--force"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "distributions.png", "report.md", "results.csv",
                                                     "results.json", "win_rates.png"]
    assert out.stat().st_mode == (tmp_path / "plain").stat().st_mode  # the permissions of a plain new folder
    assert json.loads((out / "results.json").read_text())["summary"]["games"] == 4
    assert leftovers(tmp_path) == [] and f"report written to {out / 'report.md'}" in capsys.readouterr().out


@pytest.mark.slow  # several goboom processes
def test_without_out_every_run_gets_a_new_folder(tmp_path: Path) -> None:
    for _ in range(2):
        done = subprocess.run([*GOBOOM, "evaluate", "--games", "4", "--no-progress"], cwd=tmp_path, env=CHECKOUT,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    runs = sorted((tmp_path / "results").iterdir())
    assert len(runs) == 2 and all(re.fullmatch(r"eval-\d{8}-\d{6}(-\d+)?", p.name) for p in runs)
    assert all((p / "report.md").is_file() for p in runs)


def help_words(text: str) -> str:
    """A ``--help`` text as one line of words, without the frames drawn around its option groups."""
    return " ".join(re.sub("[│╭╮╰╯─]", " ", text).split())


def test_evaluate_help_states_the_folder_rule() -> None:
    done = subprocess.run([*GOBOOM, "evaluate", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    text = help_words(done.stdout)
    assert "an existing non-empty one is refused unless --force" in text and "--force" in text


TINY_TRAIN = ["--timesteps", "256", "--bc-games", "0", "--num-envs", "2", "--num-steps", "128",
              "--minibatch-size", "128", "--n-epochs", "1", "--net-arch", "16", "--eval-every", "-1", "--no-progress"]


@pytest.mark.slow  # several short training processes
def test_train_follows_the_same_folder_rule(tmp_path: Path) -> None:
    needs_extra_of("train")
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("not a run, but not empty")

    def train(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*GOBOOM, "train", "--out", str(out), *TINY_TRAIN, *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)

    refused = train()
    assert refused.returncode == 2 and "already exists and is not empty; pass --resume" in refused.stderr
    both = train("--force", "--resume")
    assert both.returncode == 2 and "give one of them" in both.stderr
    not_ours = train("--force")
    assert not_ours.returncode == 2 and "was not written by goboom" in not_ours.stderr
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    mark(out)  # as if an earlier run had written it
    replaced = train("--force")
    assert replaced.returncode == 0, replaced.stderr
    assert not (out / "notes.txt").exists() and (out / "model.zip").is_file()
    shown = subprocess.run([*GOBOOM, "train", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "Replace an existing --out that goboom wrote" in help_words(shown.stdout)


def test_a_closed_pipe_still_saves_the_results(tmp_path: Path) -> None:
    out = tmp_path / "results"
    proc = start("evaluate", "--games", "4", "--no-progress", "--out", str(out))
    assert proc.stdout is not None
    proc.stdout.close()  # like `| head -0`: every write to stdout fails
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and err == ""
    assert json.loads((out / "results.json").read_text())["summary"]["games"] == 4


# -- optional dependencies ------------------------------------------------------------------------------


def _without(*modules: str) -> str:
    """Python code after which importing any of ``modules`` fails as if it were not installed: a finder that
    refuses them, so that they are absent from ``sys.modules`` too (tyro looks there for torch)."""
    return ("import sys, importlib.abc\n"
            "class Blocked(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            f"        if name.partition('.')[0] in {modules!r}:\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "sys.meta_path.insert(0, Blocked())\n")


def _blocked(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``goboom ARGS`` in a Python where importing ``module`` fails as if it were not installed."""
    code = f"import sys; sys.modules[{module!r}] = None; from goboom_env.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=CHECKOUT, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("command, module, extra", [
    ("evaluate", "matplotlib", "eval"),
    ("evaluate", "openskill", "eval"),
    ("train", "torch", "train"),
    ("train", "sb3_contrib", "train"),
    ("demo", "torch", "fast"),  # the demo needs the fast trainer only
    ("train-fast", "tensorboard", "fast"),
    ("train-rllib", "ray", "rllib"),
    ("train", "matplotlib", "train"),  # the command's extra, which includes the eval extra
])
def test_a_missing_extra_names_the_install_command(tmp_path: Path, command: str, module: str, extra: str) -> None:
    needs_extra_of(command)  # the rest of the command's extra is there: only the blocked module is missing
    done = _blocked(module, command, "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == (f"goboom {command}: error: this command needs the optional dependency {module!r}, "
                           f'which is not installed; install it with: pip install "goboom-env[{extra}]"\n')
    assert list(tmp_path.iterdir()) == []  # nothing was started


def test_play_needs_no_extra(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _without("matplotlib", "torch") +
                           "from goboom_env.cli import main; sys.exit(main(sys.argv[1:]))", "play", "--seed", "1"],
                          cwd=tmp_path, env=CHECKOUT, capture_output=True, text=True, input="quit\n", timeout=60)
    assert done.returncode == 0 and "game abandoned." in done.stdout


def test_the_command_list_needs_no_extra(tmp_path: Path) -> None:
    blocked = "; ".join(f"sys.modules[{m!r}] = None" for m in extra_modules("rllib"))
    done = subprocess.run([sys.executable, "-c", f"import sys; {blocked}; from goboom_env.cli import main; "
                           "sys.exit(main(sys.argv[1:]))", "--help"], cwd=tmp_path, env=CHECKOUT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert all(name in done.stdout for name in SUBCOMMANDS)


def test_an_optional_module_imported_late_is_reported_too(monkeypatch, capsys) -> None:
    def late(*args: object) -> int:
        raise ModuleNotFoundError("No module named 'ray.rllib'", name="ray.rllib")

    monkeypatch.setattr("goboom_env.cli.evaluate.run", late)
    assert main(["evaluate"]) == 2
    assert 'pip install "goboom-env[rllib]"' in capsys.readouterr().err

    def broken(*args: object) -> int:
        raise ModuleNotFoundError("No module named 'nosuch'", name="nosuch")

    monkeypatch.setattr("goboom_env.cli.evaluate.run", broken)
    with pytest.raises(ModuleNotFoundError):  # not an optional dependency: a real bug, shown as such
        main(["evaluate"])


def test_the_extras_table_matches_pyproject() -> None:
    """The extras each extra includes (its modules are checked in tests/project/test_extras.py)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra in EXTRAS:
        included = set()
        for requirement in declared[extra]:
            if re.match(r"[A-Za-z0-9_.-]+", requirement).group() == "goboom-env":  # type: ignore[union-attr]
                included |= set(re.search(r"\[(.*)\]", requirement).group(1).split(","))  # type: ignore[union-attr]
        assert included == set(INCLUDES.get(extra, ())), extra
    assert {extra for _, _, extra in SUBCOMMANDS.values()} - {None} <= set(EXTRAS)
    assert extra_modules("rllib")[-1] == "ray" and "matplotlib" in extra_modules("rllib")
