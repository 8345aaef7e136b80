"""What the commands print: a line and a bar for every phase of ``goboom train`` and ``goboom train-fast`` (the
warm start's games and fit, the first compile of the batched engine, the training steps, the evaluation), a step bar
that ends at its total, the final evaluation's table at the end, bars only on a terminal, rich tables that wrap long
names instead of cutting them, and win counts as integers when they are whole."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import ROOT, needs_extra_of
from rich.console import Console

from goboom_env.cli import SUBCOMMANDS
from goboom_env.config import GameConfig
from goboom_env.evaluation.leaderboard import Group
from goboom_env.evaluation.leaderboard import rich_tables as leaderboard_tables
from goboom_env.evaluation.report import format_cell, markdown_table, print_tables, rich_table, rich_tables
from goboom_env.evaluation.tournament import run_tournament
from goboom_env.process import bars_shown
from goboom_env.training.artifacts.run_folder import StepBar


class Terminal(io.StringIO):
    """A standard error that says it is a terminal (what a user watching the command has)."""

    def isatty(self) -> bool:
        return True


def run_main(main: Callable[[Sequence[str]], int], argv: Sequence[str]) -> tuple[str, str]:
    """``main(argv)`` in this process with a terminal as standard error; its stdout and stderr (exit code 0)."""
    out, err = io.StringIO(), Terminal()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(argv) == 0, err.getvalue()
    return out.getvalue(), err.getvalue()


def lines(stderr: str) -> list[str]:
    """The status lines of a command's stderr: the text between newlines that is no bar frame."""
    return [part for line in stderr.split("\n") for part in [line.rpartition("\r")[2]] if part and "|" not in part]


def last_count(stderr: str, desc: str) -> tuple[int, int]:
    """``(n, total)`` of the last frame the bar ``desc`` drew."""
    counts = re.findall(rf"{re.escape(desc)}:[^\r\n]*?\| *(\d+)/(\d+) ", stderr)
    assert counts, f"no frame of the {desc} bar in {stderr!r}"
    n, total = counts[-1]
    return int(n), int(total)


# Every trainer's run below: 600 steps asked, whole rollouts of 256 (2 x 128; 16 x 16), so 768 are taken.
TINY_RUNS = {
    "train-fast": ["--num-envs", "16", "--num-steps", "16"],
    "train": ["--num-envs", "2", "--num-steps", "128", "--minibatch-size", "128", "--n-epochs", "1",
              "--opponents", "random=1"],
}
"""Each trainer's own options of its tiny run."""
WARM = ["--bc-games", "20", "--eval-every", "0", "--eval-games", "8", "--net-arch", "32"]
PHASES = {
    "train-fast": ["setting up", "compiling the batched engine (first run only, ~15 s)...",
                   "warm start: playing 20 games", "warm start: fitting the network", "warm start done",
                   "training: 600 learner steps", "evaluating at 768 steps: 8 games against each of random, heuristic"],
    "train": ["setting up", "warm start: playing 20 games", "warm start: fitting the network", "warm start done",
              "training: 768 steps; --timesteps 600 rounded up to whole rollouts of 256", "evaluating at 768 steps"],
}
"""The status lines each trainer starts its phases with, in order."""
STEP_BAR = {"train-fast": "fast PPO", "train": "PPO"}
"""The name of each trainer's bar of the training steps."""


@dataclass
class Run:
    """A finished run of a trainer: its command, what it printed and its run folder."""

    command: str
    stdout: str
    stderr: str
    out: Path


@pytest.fixture(scope="module", params=list(TINY_RUNS))
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """A tiny ``goboom train-fast`` (its engine taken for uncompiled) and ``goboom train``, on a terminal."""
    command = request.param
    needs_extra_of(command)
    main = importlib.import_module(SUBCOMMANDS[command][0]).main
    out = tmp_path_factory.mktemp(command) / "run"
    with pytest.MonkeyPatch.context() as patch:
        if command == "train-fast":
            patch.setattr("goboom_env.vector.compile_pending", lambda: True)
        stdout, stderr = run_main(main, ["--timesteps", "600", *TINY_RUNS[command], *WARM, "--out", str(out)])
    return Run(command, stdout, stderr, out)


def test_training_says_each_phase_with_a_bar(run: Run) -> None:
    said = lines(run.stderr)
    found = [next((i for i, line in enumerate(said) if line.startswith(start)), None) for start in PHASES[run.command]]
    assert None not in found and found == sorted(found), said
    for desc in ("warm start: games", "warm start: fit", STEP_BAR[run.command], "classic 4p: ppo:"):
        assert desc in run.stderr


def test_the_step_bar_ends_at_its_total_the_steps_taken(run: Run) -> None:
    assert last_count(run.stderr, STEP_BAR[run.command]) == (768, 768)


def test_training_ends_with_the_evaluation_table(run: Run) -> None:
    table, _, paths = run.stdout.partition("model: ")
    assert "Evaluation at 768 steps, one hand a game" in table and "95% Wilson CI" in table
    import csv

    (row,) = csv.DictReader((run.out / "eval.csv").open())
    for baseline in ("random", "heuristic"):
        cells = [c.strip() for c in next(line for line in table.splitlines() if f" {baseline} " in line).split("│")]
        assert cells[1:5] == [baseline, *(format_cell(float(row[f"{k}/{baseline}"])) for k in
                                          ("win_rate", "ci_low", "ci_high"))]
    assert paths.startswith(str(run.out / "model.zip"))


def test_the_compile_is_announced_when_numba_has_not_cached_the_engine(tmp_path: Path) -> None:
    """An empty NUMBA_CACHE_DIR is a cold cache (a fresh install); here, once the engine ran, there is nothing to
    compile."""
    pytest.importorskip("numba")
    import numpy as np

    from goboom_env.vector import VectorGame, compile_pending, random_legal_actions

    code = "from goboom_env.vector import compile_pending; print(compile_pending())"
    cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert cold.stdout.strip() == "True", cold.stderr
    game = VectorGame(GameConfig(), num_envs=2)
    _, mask, _ = game.reset()
    game.step(random_legal_actions(mask, np.random.default_rng(0)))
    assert compile_pending() is False


def test_bars_are_drawn_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A log piped to a file gets no carriage-return frames; --no-progress turns the bars off on a terminal too."""
    config = GameConfig(num_players=2)
    for stream, drawn in ((io.StringIO(), False), (Terminal(), True)):
        monkeypatch.setattr(sys, "stderr", stream)
        run_tournament(config, ["random", "random"], 4, progress=True)
        bar = StepBar(100, "steps", True)
        bar.to(100)
        bar.close()
        assert ("\r" in stream.getvalue()) is drawn, stream.getvalue()
        assert bars_shown(True) is drawn and bars_shown(False) is False


LONG = "ppo:runs/classic4-with-a-long-name/checkpoints/model_2000000.zip"


def column(rendered: str, index: int = 0) -> list[str]:
    """The cells of column ``index`` of a rendered rich table, a cell's wrapped lines joined."""
    cells: list[str] = []
    for line in rendered.splitlines():
        if line.startswith("│"):
            parts = [part.strip() for part in line.strip("│").split("│")]
            if cells and not any(parts[:index] + parts[index + 1:]):  # the next line of a wrapped name
                cells[-1] += parts[index]
            else:
                cells.append(parts[index])
    return cells


def render(table: object, width: int) -> str:
    console = Console(width=width, file=io.StringIO())
    console.print(table)
    return console.file.getvalue()


def test_tables_wrap_long_names_whole_and_reports_keep_them() -> None:
    rows = [{"agent": LONG, "games": 1000, "wins": 260.0, "win_rate": 0.26, "ci_low": 0.23, "ci_high": 0.29},
            {"agent": "classic-tricks", "games": 1000, "wins": 250.5, "win_rate": 0.2505, "ci_low": 0.22,
             "ci_high": 0.28}]
    results = render(rich_table("Results", rows), 60)
    group = Group("classic 4p", {}, "hand", ["results/a"], [
        {"rank": 1, "agent": LONG, "ordinal": 1.0, "mu": 25.0, "ci_low": 20.0, "ci_high": 30.0, "games": 8,
         "tournaments": 1}])
    (table,) = leaderboard_tables([group])
    ratings = render(table, 80)  # eight columns: 10 characters left for the name
    assert "…" not in results + ratings
    assert column(results) == [LONG, "classic-tricks"] and column(ratings, 1) == [LONG]
    assert f"| {LONG} |" in markdown_table(rows)


def test_a_tournament_table_in_a_narrow_terminal_keeps_every_name() -> None:
    result = run_tournament(GameConfig(num_players=2), ["classic-tricks", "classic-cover"], 4, progress=False)
    console = Console(width=50, file=io.StringIO())
    print_tables(result, console=console)
    assert "…" not in console.file.getvalue()  # what does not fit goes on over the next lines
    assert sorted(column(render(rich_tables(result)[0], 60))) == ["classic-cover", "classic-tricks"]


def test_win_counts_are_integers_when_whole() -> None:
    shares = sum([1 / 3] * 78)  # 26 wins shared three ways, a hair off 26.0 in floating point
    assert [format_cell(v, "wins") for v in (26.0, 26.5, 79 / 3, 0.0, shares)] == ["26", "26.5", "26.333", "0", "26"]
    assert [format_cell(v, "win_rate") for v in (1.0, 0.26)] == ["1.000", "0.260"]
    rows = [{"agent": "a", "wins": 26.0, "win_rate": 0.26}, {"agent": "b", "wins": 26.5, "win_rate": 0.265}]
    assert markdown_table(rows).splitlines()[2:] == ["| a | 26 | 0.260 |", "| b | 26.5 | 0.265 |"]
    assert column(render(rich_table("Results", rows), 80), 1) == ["26", "26.5"]
