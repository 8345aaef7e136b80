"""The one command-line entry point, ``goboom``: sub-commands from the evaluation and training packages.

Each sub-command lives next to the code it drives and is registered here by module name, so
``goboom --help`` works even where an optional extra (torch, ray) is not installed.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    # name: (module that defines add_parser(subparsers) and run(args), one-line help)
    "play": ("goboom_cli.play", "play a game in the terminal against baseline agents"),
    "evaluate": ("evaluation.cli", "run a tournament between agents and write a report"),
    "train": ("training.cli", "train a MaskablePPO agent by self-play (stable-baselines3)"),
    "train-rllib": ("training.rllib_cli", "train a multi-agent PPO agent on Ray RLlib"),
    "demo": ("training.demo", "train a small agent on the default configuration and evaluate it"),
}


def build_parser() -> argparse.ArgumentParser:
    """The ``goboom`` argument parser with every sub-command whose module imports."""
    parser = argparse.ArgumentParser(prog="goboom", description="Go Boom RL environment tools.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            stub = sub.add_parser(name, help=f"{help_text} (unavailable: {exc.name} is not installed)")
            stub.set_defaults(_missing=exc)
            continue
        module.add_parser(sub, name, help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen sub-command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    missing = getattr(args, "_missing", None)
    if missing is not None:
        parser.error(f"'{args.command}' needs an optional dependency: {missing}. "
                     "Install the matching extra, e.g. pip install 'goboom-env[train]'.")
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
