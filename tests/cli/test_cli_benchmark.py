"""``goboom benchmark`` end to end on a tiny task list (a few seconds of games): the folder and its report (version,
commit, model hashes), ``--combine`` of two folders, ``goboom leaderboard`` on a benchmark folder, bad input refused
before any game with one line, and Ctrl-C leaving nothing half written."""

from __future__ import annotations

import csv
import json
import sys

import pytest
from helpers import ROOT, ctrl_c_once_started, goboom

from goboom_env.cli import benchmark as command
from goboom_env.cli import leaderboard
from goboom_env.evaluation import benchmark
from goboom_env.evaluation.benchmark import Task

TINY = (
    Task("tiny-classic-2p", {"variant": "classic", "num_players": 2}, "classic-tricks", "ppo:classic-2p", 11,
         matches=2),
    Task("tiny-jokers-3p", {"variant": "jokers", "num_players": 3, "rounds": 1}, "jokers-boom", None, 11, matches=3),
)


@pytest.fixture
def tiny_suite(monkeypatch: pytest.MonkeyPatch) -> tuple[Task, ...]:
    """The suite replaced by two tiny tasks, with references of their own (the library's tests play real ones)."""
    monkeypatch.setattr(benchmark, "TASKS", TINY)
    monkeypatch.setattr(benchmark, "_FROZEN", {t.name: t for t in TINY})
    monkeypatch.setattr(benchmark, "REFERENCES", {t.name: {spec: (0.2, 0.6) for spec in t.panel} for t in TINY})
    return TINY


def test_a_tiny_benchmark_end_to_end(tiny_suite, tmp_path, capsys):
    """Every file of the folder, the report's provenance, a task the agent cannot play named, the aggregate of two
    folders, and the leaderboard of a benchmark folder."""
    out = tmp_path / "bench"
    assert command.main(["--agent", "ppo:classic-2p", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "iqm" in printed and f"report written to {out / 'report.md'}" in printed
    names = {p.name for p in out.iterdir() if not p.name.startswith(".")}  # and the output marker
    assert names == {"report.md", "benchmark.json", "tasks.csv", "scores.csv", "aggregate.csv", "scores.png",
                     "profile.png", "tasks"}
    data = json.loads((out / "benchmark.json").read_text())
    [run] = data["runs"]
    assert data["version"] == "goboom-bench-v1" and run["agent"] == "ppo:classic-2p"
    assert [s["task"] for s in run["scores"]] == ["tiny-classic-2p"] and "tiny-jokers-3p" in run["skipped"]
    rows = list(csv.DictReader((out / "tasks.csv").open()))
    assert [r["opponent"] for r in rows] == ["random", "classic-tricks", "ppo:classic-2p"]
    assert all(int(r["games"]) == 2 for r in rows) and {r["random"] for r in rows} == {"0.2"}
    assert sorted(p.name for p in (out / "tasks" / "tiny-classic-2p").iterdir()) == [
        "classic-tricks", "ppo-classic-2p", "random"]
    report = (out / "report.md").read_text()
    model = next(r for r in run["provenance"]["agents"] if r["spec"] == "ppo:classic-2p")
    assert len(model["sha256"]) == 64 and model["sha256"] in report
    assert "goboom-env " in report and "git commit:" in report and "## Tasks not played" in report
    other = tmp_path / "bench-random"
    assert command.main(["--agent", "random", "--tasks", "tiny-jokers-3p", "--out", str(other), "--no-progress"]) == 0
    both = tmp_path / "combined"
    assert command.main(["--combine", str(out), str(other), "--out", str(both)]) == 0
    combined = json.loads((both / "benchmark.json").read_text())
    assert [r["agent"] for r in combined["runs"]] == ["ppo:classic-2p", "random"]
    assert combined["aggregate"]["runs"] == 2 and combined["aggregate"]["tasks"] == 2
    board = tmp_path / "board"
    assert leaderboard.main([str(out), "--out", str(board)]) == 0
    groups = json.loads((board / "leaderboard.json").read_text())["groups"]
    assert len(groups) == 1 and {r["agent"] for r in groups[0]["rows"]} == {"ppo:classic-2p", "random",
                                                                              "classic-tricks"}


@pytest.mark.parametrize("argv, problem", [
    (["--out", "X"], "either --agent SPEC"),
    (["--agent", "random", "--combine", "Y", "--out", "X"], "either --agent SPEC"),
    (["--agent", "random", "--tasks", "classic-5p", "--out", "X"], "unknown task 'classic-5p'"),
    (["--agent", "random", "--processes", "0", "--out", "X"], "--processes"),
    (["--agent", "no-such-agent", "--out", "X"], "unknown agent 'no-such-agent'"),
    (["--combine", "missing-folder", "--out", "X"], "missing-folder is not a benchmark folder"),
])
def test_bad_input_is_one_line_and_no_game(tmp_path, capsys, argv, problem):
    argv = [str(tmp_path / a) if a in ("X", "missing-folder") else a for a in argv]
    assert command.main(argv) == 2
    stderr = capsys.readouterr().err
    assert problem in stderr and len(stderr.strip().splitlines()) == 1, stderr
    assert not (tmp_path / "X").exists()


def test_the_command_is_registered():
    done = goboom("benchmark", "--tasks", "nope", "--agent", "random", timeout=120)
    assert done.returncode == 2 and "unknown task 'nope'" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups")
def test_ctrl_c_leaves_nothing_half_written(tmp_path):
    """Interrupted during its games, the command exits 130 and leaves neither the folder nor its staging copy."""
    out = tmp_path / "bench"
    returncode, stderr = ctrl_c_once_started(  # one second into the games, once the staging folder appears
        ["benchmark", "--agent", "random", "--tasks", "classic-12p", "--no-progress", "--out", str(out)],
        lambda: any(tmp_path.glob(".bench.*.partial")), cwd=ROOT, settle=1.0)
    assert returncode == 130, stderr
    assert list(tmp_path.iterdir()) == []


def test_a_settings_file_may_not_name_a_python_file(tmp_path, capsys):
    """The agent of --config is never a Python file (only the command line runs one)."""
    (tmp_path / "bench.toml").write_text('agent = "evil.py:Agent"\n')
    assert command.main(["--config", str(tmp_path / "bench.toml"), "--out", str(tmp_path / "X")]) == 2
    assert "names a Python file" in capsys.readouterr().err and not (tmp_path / "X").exists()
