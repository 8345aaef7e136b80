"""``goboom demo`` (= ``make demo``): train a small agent on the default game and evaluate it.

The default game is classic Go Boom for 4 players (R1), one hand per episode; every game option of the other
commands (``--variant``, ``--num-players``, ``--preset``, ``--config`` ...) chooses another. The demo clones
the heuristic (warm start), trains with the fast self-play trainer on the batched engine (``goboom
train-fast``) for a short budget (a few minutes on 2 CPU cores), then plays 1-vs-(n-1) tournaments of the new
agent against ``random`` and against the heuristic, seat-rotated with duplicate deals, and prints the
win-rate table with 95% confidence intervals and the path of the report (``report.md`` plus one JSON per
tournament in the run folder). The library function is :func:`goboom_env.training.demo.run_demo`.
"""

from __future__ import annotations

from collections.abc import Sequence

from goboom_env.cli.options import parse, run_command
from goboom_env.training.demo import DemoArgs, run_demo


def main(argv: Sequence[str], prog: str = "goboom demo") -> int:
    """Train, evaluate, print the table and the report path; 2 on a bad option or an existing --out."""

    def demo() -> int:
        print(f"report: {run_demo(parse(DemoArgs, argv, prog, __doc__))}")
        return 0

    return run_command(prog, demo)
