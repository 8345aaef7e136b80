"""``goboom leaderboard DIR...``: one openskill rating table over the games of several result folders of
``goboom evaluate`` and ``goboom benchmark`` (library: :mod:`goboom_env.evaluation.leaderboard`).

Examples::

    goboom leaderboard results/ppo-vs-heuristic results/ppo-vs-random results/pairs --out results/board
    goboom leaderboard results/*/ --outcome placing

Each game (configuration and episode unit) gets its own table: tournaments of different games are never pooled. A
rating's 95% interval is ``mu -/+ 1.96 sigma``, openskill's own uncertainty. The tables are printed and written to
``--out`` (leaderboard.md, .csv and .json). A path that is not a result folder, the same folder twice, or two
folders holding the same tournament is an error (exit code 2); docs/evaluation.md says more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import tyro

from goboom_env.cli.options import command_line, run_parsed, writing
from goboom_env.evaluation.ratings import Outcome
from goboom_env.outdir import StagedFolder, fresh_folder


@dataclass
class LeaderboardArgs:
    """The options of ``goboom leaderboard``."""

    folders: Annotated[list[Path], tyro.conf.Positional, tyro.conf.arg(metavar="DIR")] = field(default_factory=list)
    """Result folders of goboom evaluate (--out), each with results.json, or match/ and hand/ (--episode both), or
    of goboom benchmark (benchmark.json and tasks/)."""
    outcome: Outcome = "win"
    """What the ratings rank in each game: win (winners first, all others tied: agrees with the win tables)
    or placing (winners first, then by points)."""
    out: Path | None = None
    """Output folder, created; an existing non-empty one is refused unless --force; None = a new
    results/leaderboard-<date>-<time>."""
    force: bool = False
    """Replace an existing --out folder that goboom wrote (a folder goboom did not write is never replaced)."""

    def validate(self) -> None:
        """Raise ValueError naming the first bad field (the outcome: when the folders are rated)."""
        if not self.folders:
            raise ValueError("give at least one result folder of goboom evaluate or goboom benchmark: goboom "
                             "leaderboard DIR...")


def main(argv: Sequence[str], prog: str = "goboom leaderboard") -> int:
    """Parse ``argv``, rate, write and print the leaderboard: 0, 2 on a bad option or folder, 1 when the
    files cannot be written."""
    return run_parsed(LeaderboardArgs, argv, prog, __doc__, lambda args: run(args, command_line(prog, argv)))


def run(args: LeaderboardArgs, command: str = "goboom leaderboard") -> int:
    """Rate the tournaments of ``args.folders`` and write the leaderboard (ValueError for a bad folder)."""
    from rich.console import Console

    from goboom_env.evaluation.leaderboard import leaderboard, rich_tables, write_leaderboard

    groups = leaderboard(args.folders, args.outcome)
    staged = StagedFolder(args.out or fresh_folder(Path("results"), "leaderboard"), force=args.force,
                          inputs=[("DIR", folder) for folder in args.folders])
    with staged as folder, writing("the leaderboard", staged.out):
        report = write_leaderboard(folder, groups, args.outcome, command)
    console = Console()
    for table in rich_tables(groups, args.outcome):
        console.print(table)
    print(f"leaderboard written to {staged.out / report.name}")
    return 0
