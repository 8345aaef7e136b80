"""``goboom train``: self-play MaskablePPO training (arguments in :class:`goboom_env.training.config.TrainArgs`).

Example::

    goboom train --variant classic --players 4 --timesteps 2000000 --n-envs 8 --out runs/classic4
    goboom train --config run.toml --out runs/x          # TOML keys = the flags' field names
    goboom train --out runs/classic4 --resume --timesteps 3000000
"""

from __future__ import annotations

import argparse
import shlex
import sys

from goboom_env.training.config import TrainArgs, add_arguments, from_namespace


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> argparse.ArgumentParser:
    """Register the ``train`` sub-command."""
    parser = subparsers.add_parser(name, help=help_text, description=(TrainArgs.__doc__ or "").strip(),
                                   formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_arguments(parser)
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Parse the merged arguments, train, print where the model went."""
    try:
        train_args = from_namespace(args)
    except ValueError as exc:
        print(f"goboom train: error: {exc}", file=sys.stderr)
        return 2
    from goboom_env.training.sb3 import RunFiles, train

    try:
        path = train(train_args, command="goboom " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    except ValueError as exc:
        print(f"goboom train: error: {exc}", file=sys.stderr)
        return 2
    files = RunFiles(train_args.out)
    print(f"model: {path}")
    if files.eval.exists():
        print(f"evaluation: {files.eval}")
    print(f"learning curve: {files.curve}")
    return 0

