"""``goboom train-fast``: self-play PPO on the batched engine (options:
:class:`goboom_env.training.vector_ppo.VectorArgs`; the PPO settings have the names of ``goboom train``).

Example::

    goboom train-fast --timesteps 5000000 --out runs/fast4               # classic, 4 players
    goboom train-fast --variant jokers --opponents learner=3 self=1 --out runs/fastj
    goboom train-fast --out runs/fast4 --resume --timesteps 8000000

The run folder has the layout of ``goboom train`` (model.zip, best_model.zip, checkpoints/,
progress.csv, eval.csv, tensorboard/); the models load as ``ppo:PATH``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from goboom_env.cli.options import command_line, parse
from goboom_env.training.vector_ppo import VectorArgs


def main(argv: Sequence[str], prog: str = "goboom train-fast") -> int:
    """Parse the options, train, print where the model went; 2 on a bad option or setting."""
    try:
        args = parse(VectorArgs, argv, prog, __doc__)
        args.validate()
        from goboom_env.training.vector_ppo import train

        path = train(args, command=command_line(prog, argv))
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    root = path.parent
    print(f"model: {path}")
    if (root / "eval.csv").exists():
        print(f"evaluation: {root / 'eval.csv'}")
    print(f"learning curve: {root / 'learning_curve.png'}")
    return 0
