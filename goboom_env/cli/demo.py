"""``goboom demo`` (= ``make demo``): train a small agent on the default game and evaluate it.

By default classic Go Boom for 4 players, one hand per episode (the game options choose another). The demo clones
the heuristic, trains with ``goboom train-fast`` for a few minutes on 2 CPU cores, then plays duplicate 1-vs-(n-1)
tournaments of the new agent against ``random`` and the heuristic and prints the win rates with 95% confidence
intervals and the path of the report.
"""

from __future__ import annotations

from collections.abc import Sequence

from goboom_env.cli.options import parse, run_command
from goboom_env.training.demo import run_demo
from goboom_env.training.settings import DemoArgs


def main(argv: Sequence[str], prog: str = "goboom demo") -> int:
    """Train, evaluate, print the table and the report path; 2 on a bad option or an existing --out."""

    def demo() -> int:
        print(f"report: {run_demo(parse(DemoArgs, argv, prog, __doc__))}")
        return 0

    return run_command(prog, demo)
