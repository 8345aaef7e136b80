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

import sys
from collections.abc import Sequence

from goboom_env.cli.options import parse
from goboom_env.training.demo import DemoArgs


def main(argv: Sequence[str], prog: str = "goboom demo") -> int:
    """Train, evaluate, print the table and the report path; 2 on a bad option or an existing --out."""
    try:
        args = parse(DemoArgs, argv, prog, __doc__)
        from goboom_env.training.demo import run_demo

        report = run_demo(args)
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    print(f"report: {report}")
    return 0
