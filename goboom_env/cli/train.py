"""``goboom train``: self-play MaskablePPO training (options: :class:`goboom_env.training.config.TrainArgs`).

Example::

    goboom train --variant classic --players 4 --timesteps 2000000 --n-envs 8 --out runs/classic4
    goboom train --config run.toml --out runs/x          # TOML keys = the options' field names
    goboom train --out runs/classic4 --resume --timesteps 3000000
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from goboom_env.cli.options import command_line, parse
from goboom_env.training.config import TrainArgs


def main(argv: Sequence[str], prog: str = "goboom train") -> int:
    """Parse the options, train, print where the model went; 2 on a bad option or setting."""
    try:
        args = parse(TrainArgs, argv, prog, __doc__)
        args.validate()
        from goboom_env.training.sb3 import RunFiles, train

        path = train(args, command=command_line(prog, argv))
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    files = RunFiles(args.out)
    print(f"model: {path}")
    if files.eval.exists():
        print(f"evaluation: {files.eval}")
    print(f"learning curve: {files.curve}")
    return 0
