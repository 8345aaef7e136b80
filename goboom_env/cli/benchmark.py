"""``goboom benchmark``: score an agent on the standard tasks of ``goboom-bench-v1`` (docs/benchmark.md).

Examples::

    goboom benchmark --agent ppo:runs/x/model.zip --out results/bench-x           # every task its game allows
    goboom benchmark --agent my_agent.py:Greedy --tasks classic-4p jokers-4p --processes 2 --out results/bench-g
    goboom benchmark --combine results/bench-s1 results/bench-s2 results/bench-s3 --out results/bench-ppo

Each task is one game over whole matches: the agent in one seat against each opponent of the task's panel, seats
rotating over fixed duplicate deals; the report gives each task's win rates and normalized score (random = 0, the
heuristic = 1) and their interquartile mean over the tasks with its 95% interval. A task whose game the agent cannot
play is skipped and named. ``--combine`` aggregates finished benchmark folders (the training seeds of one method)
without playing. The ``--out`` folder appears only once complete (Ctrl-C or an error leaves nothing half written);
docs/benchmark.md lists the tasks, the scores and the files it holds.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goboom_env.cli.evaluate import processes_note
from goboom_env.cli.options import command_line, run_parsed, writing
from goboom_env.config import check_int
from goboom_env.evaluation.benchmark import tasks_named
from goboom_env.outdir import StagedFolder, fresh_folder
from goboom_env.training.settings import spec_inputs

if TYPE_CHECKING:
    from goboom_env.evaluation.benchmark import Run


@dataclass
class BenchmarkArgs:
    """The options of ``goboom benchmark``."""

    agent: str = ""
    """The agent to score: a spec (heuristic, ismcts:iters=20, ...), a model (ppo:PATH, rllib:PATH) or a Python
    file's class (path/to/file.py:Class), as goboom evaluate --agents takes them."""
    combine: list[Path] = field(default_factory=list)
    """Instead of --agent: finished benchmark folders (e.g. one per training seed) to aggregate as runs of one
    method, without playing."""
    tasks: list[str] = field(default_factory=list)
    """The tasks to play, by name (classic-4p, jokers-4p, ...; docs/benchmark.md lists them); default: all."""
    processes: int = 1
    """Worker processes (the results do not depend on it)."""
    out: Path | None = None
    """Output folder, created; an existing non-empty one is refused unless --force; None = a new
    results/benchmark-<date>-<time>."""
    force: bool = False
    """Replace an existing non-empty --out folder."""
    progress: bool = True
    """Show the progress bars, on a terminal only (not in a log piped to a file)."""

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        if bool(self.agent) == bool(self.combine):
            raise ValueError("give either --agent SPEC (play the tasks) or --combine DIR... (aggregate finished "
                             "benchmark folders)")
        if self.combine and self.tasks:
            raise ValueError("--tasks chooses the tasks to play; --combine aggregates the tasks its folders played")
        tasks_named(self.tasks)
        check_int("--processes", self.processes, 1)

    def agent_specs(self) -> list[tuple[str, str]]:
        """The agent to score (a settings file may not name a Python file)."""
        return [("agent", self.agent)] if self.agent else []

    def inputs(self) -> list[tuple[str, str | Path]]:
        """What the command reads, as ``(option, path)``: the agent's files and the folders it combines (its --out
        may not hold them)."""
        return [*spec_inputs("--agent", [self.agent] if self.agent else []),
                *(("--combine", folder) for folder in self.combine)]


def main(argv: Sequence[str], prog: str = "goboom benchmark") -> int:
    """Parse ``argv``, benchmark, write and print: 0, 2 on a bad option (before any game), 1 when the results cannot
    be written or a worker process was lost."""
    return run_parsed(BenchmarkArgs, argv, prog, __doc__, lambda args: run(args, command_line(prog, argv)))


def run(args: BenchmarkArgs, command: str = "goboom benchmark") -> int:
    """Play (or combine), write and print the benchmark of ``args``; ValueError for a bad agent or folder."""
    from goboom_env.evaluation.benchmark import read_benchmark, run_benchmark, write_benchmark

    if args.combine:
        runs = [run for folder in args.combine for run in read_benchmark(folder)]
    staged = StagedFolder(args.out or fresh_folder(Path("results"), "benchmark"), force=args.force,
                          inputs=args.inputs())
    note = processes_note(args.processes, min(t.matches for t in tasks_named(args.tasks))) if args.agent else None
    if note:
        print(note, file=sys.stderr)
    with staged as folder:
        if args.agent:
            runs = [run_benchmark(args.agent, tasks_named(args.tasks), processes=args.processes,
                                  progress=args.progress)]
        with writing("the benchmark", staged.out):
            report = write_benchmark(folder, runs, command)
    _print(runs)
    print(f"report written to {staged.out / report.name}")
    return 0


def _print(runs: Sequence[Run]) -> None:
    """The normalized score and win rates of every task, and the aggregate, as tables."""
    from rich.console import Console

    from goboom_env.evaluation.benchmark import aggregate, aggregate_rows, task_interval
    from goboom_env.evaluation.report import rich_table

    rows: list[dict[str, Any]] = []
    for run in runs:
        for score in run.scores.values():
            low, high = task_interval(score)
            rates = [p.win_rate for p in score.panel] + [None]
            rows.append({"task": score.task, **({"agent": run.agent} if len(runs) > 1 else {}),
                         "normalized": score.normalized, "ci_low": low, "ci_high": high, "vs random": rates[0],
                         "vs heuristic": rates[1], "vs model": rates[2]})
    console = Console()
    console.print(rich_table("Normalized score (random = 0, heuristic = 1) and win rates against the panel", rows,
                             caption="95% bootstrap interval over the deals"))
    console.print(rich_table("Aggregate over the tasks (95% stratified bootstrap)", aggregate_rows(aggregate(runs)),
                             ["statistic", "value", "ci_low", "ci_high"]))
