"""``goboom train-fast``: self-play PPO on the batched engine (arguments in :class:`goboom_env.training.vector_ppo.VectorArgs`).

Example::

    goboom train-fast --timesteps 5000000 --out runs/fast4               # classic, 4 players
    goboom train-fast --variant jokers --opponents learner=3 self=1 --out runs/fastj
    goboom train-fast --out runs/fast4 --resume --timesteps 8000000

The run folder has the layout of ``goboom train`` (model.zip, best_model.zip, checkpoints/,
progress.csv, eval.csv, tensorboard/); the models load as ``ppo:PATH``.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from goboom_env.training.config import add_arguments, from_namespace
from goboom_env.training.vector_ppo import VectorArgs


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> argparse.ArgumentParser:
    """Register the ``train-fast`` sub-command."""
    parser = subparsers.add_parser(name, help=help_text, description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser, VectorArgs)
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Parse the merged arguments, train, print where the model went."""
    try:
        train_args = from_namespace(args, VectorArgs)
    except ValueError as exc:
        print(f"goboom train-fast: error: {exc}", file=sys.stderr)
        return 2
    from goboom_env.training.vector_ppo import train

    try:
        path = train(train_args, command="goboom " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    except ValueError as exc:
        print(f"goboom train-fast: error: {exc}", file=sys.stderr)
        return 2
    root = path.parent
    print(f"model: {path}")
    if (root / "eval.csv").exists():
        print(f"evaluation: {root / 'eval.csv'}")
    print(f"learning curve: {root / 'learning_curve.png'}")
    return 0
