"""The one command-line entry point, ``goboom``: one module of this package per sub-command.

Each sub-command module defines ``main(argv, prog) -> int``; only the module of the one that runs is imported, so
``goboom --help`` works without the optional extras. Ctrl-C or SIGTERM ends any sub-command with one line on stderr
and exit code 130 (143), its worker processes stopped (:mod:`goboom_env.process`).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence

from goboom_env import __version__, process
from goboom_env.hints import extra_modules, extra_of

SUBCOMMANDS: dict[str, tuple[str, str, str | None]] = {
    # name: (module that defines main(argv, prog) -> int, one-line help, extra it needs)
    "play": ("goboom_env.cli.play", "play a game in the terminal against baseline agents", None),
    "evaluate": ("goboom_env.cli.evaluate", "run a tournament between agents and write a report", "eval"),
    "replay": ("goboom_env.cli.replay", "show a saved game record move by move in the terminal", None),
    "benchmark": ("goboom_env.cli.benchmark", "score an agent on the standard tasks of goboom-bench-v1", "eval"),
    "leaderboard": ("goboom_env.cli.leaderboard", "rate the agents of several evaluate result folders together",
                    "eval"),
    "train": ("goboom_env.cli.train", "train a MaskablePPO agent by self-play (stable-baselines3)", "train"),
    "train-rllib": ("goboom_env.cli.train_rllib", "train a multi-agent PPO agent on Ray RLlib", "rllib"),
    "train-fast": ("goboom_env.cli.train_fast", "train a PPO agent by self-play on the batched engine (fast)", "fast"),
    "exploit": ("goboom_env.cli.exploit", "train a best response to an agent: how exploitable it is", "fast"),
    "demo": ("goboom_env.cli.demo", "train a small agent on the default configuration and evaluate it", "fast"),
    "export": ("goboom_env.cli.export", "write a model file (ppo:PATH) of a stable-baselines3 model", "train"),
    "serve": ("goboom_env.cli.serve", "play in the browser against the agents, and replay game records", "web"),
}


def missing_module(extra: str) -> str | None:
    """The first module of ``extra`` that cannot be found (found, not imported: this stays fast)."""
    return next((m for m in extra_modules(extra) if importlib.util.find_spec(m) is None), None)


def install_hint(command: str, module: str, extra: str) -> str:
    """The one-line error for a missing optional module."""
    return (f"goboom {command}: error: this command needs the optional dependency {module!r}, which is not "
            f'installed; install it with: pip install "goboom-env[{extra}]"')


def build_parser() -> argparse.ArgumentParser:
    """``goboom``'s parser: ``--version`` and the sub-commands (each parses its own options: no foreign imports)."""
    parser = argparse.ArgumentParser(prog="goboom", description="Go Boom RL environment tools.",
                                     epilog="Run goboom COMMAND --help for the options of a command.")
    parser.add_argument("--version", action="version", version=f"goboom-env {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, help_text, _) in SUBCOMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen sub-command; returns the exit status. Without ``argv`` (the ``goboom``
    process) SIGINT and SIGTERM stay handled through shutdown; with it, the previous handlers come back."""
    entry = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and argv[0] in SUBCOMMANDS else ""
    handling = process.Handling(f"goboom {command}" if command else "goboom", entry)  # until handled() gives its own
    try:
        with process.handled(handling.prog, entry=entry) as handling:
            try:
                return _run(command, argv)
            except BrokenPipeError:
                # the reader of stdout went away (| head): what is still buffered goes to /dev/null, so that Python's
                # final flush does not fail again (the recipe of the signal module's documentation)
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return 1
    except BaseException as exc:  # an interrupt during the command, or as its handling ended (it had just returned)
        if not (isinstance(exc, KeyboardInterrupt) or process.interrupted_by(exc)):
            raise
        if handling.signum:  # a real signal: no child process outlives the command
            process.stop_children()
        status = handling.report()
        handling.exit(status)  # the goboom process after a signal: no slow interpreter teardown
        return status


def _run(command: str, argv: list[str]) -> int:
    """The sub-command ``command`` with its options ``argv[1:]``; 2 for an unknown command or a missing extra."""
    try:
        if not command:
            build_parser().parse_args(argv)  # --help, --version or an unknown command: argparse exits
            return 2
        module_name, _, extra = SUBCOMMANDS[command]
        if extra and (module := missing_module(extra)):  # the hint installs the whole extra
            print(install_hint(command, module, extra), file=sys.stderr)
            return 2
        return int(importlib.import_module(module_name).main(argv[1:], f"goboom {command}") or 0)
    except ModuleNotFoundError as exc:  # an optional module imported late, e.g. by an agent spec
        late = extra_of(exc.name or "")
        if late is None:
            raise
        print(install_hint(command, exc.name or "", late), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
