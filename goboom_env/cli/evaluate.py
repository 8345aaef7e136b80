"""``goboom evaluate``: run a tournament (or every baseline against every other) and write a report.

Examples::

    goboom evaluate --variant classic --players 4 --agents heuristic random random random \\
        --games 5000 --duplicate --out results/
    goboom evaluate --variant jokers --players 4 --agents heuristic random   # 1 vs 3 random
    goboom evaluate --preset classic-2p --pairwise --games 2000 --processes 2 --out results/pairs
    goboom evaluate --variant classic --agents ppo:runs/x/model.zip heuristic --games 1000

The results appear in ``--out`` only once complete (written into a hidden sibling folder, then
renamed): a run that fails or is interrupted (Ctrl-C, exit code 130) writes nothing and leaves an
earlier folder untouched. An existing non-empty ``--out`` is refused unless ``--force`` replaces it;
without ``--out`` each run gets a new folder ``results/eval-<date>-<time>``.

Every :class:`~goboom_env.config.GameConfig` field has an option (``--players`` = ``num_players``);
``--config FILE`` reads them from JSON or TOML and ``--preset`` starts from a named preset; explicit
options win. With fewer ``--agents`` than seats, the last spec fills the remaining seats.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goboom_env.evaluation.interrupt import WorkerLostError
from goboom_env.evaluation.outdir import OutputError, StagedFolder, fresh_folder
from goboom_env.agents import baselines
from goboom_env.config import PRESETS, GameConfig

if TYPE_CHECKING:
    from goboom_env.evaluation.report import Pairwise
    from goboom_env.evaluation.tournament import TournamentResult

CONFIG_OPTIONS: dict[str, tuple[str, type, str]] = {
    # GameConfig field: (option, type, help)
    "variant": ("--variant", str, "rule system: classic (R1) or jokers (R2)"),
    "num_players": ("--players", int, "number of seats, 2..12"),
    "hand_size": ("--hand-size", int, "cards dealt to each player (default 7)"),
    "num_decks": ("--num-decks", int, "52-card decks (default: classic 1, or 2 for 7+ players; jokers 1)"),
    "num_jokers": ("--num-jokers", int, "jokers variant: jokers in the deck (default 2; 0 = aces mode, R2.8)"),
    "scoring": ("--scoring", str, "classic: standard (R1.11) or reverse (R1.12); jokers: penalty"),
    "target_score": ("--target-score", int, "classic: match end score (default 200 standard, 100 reverse)"),
    "rounds": ("--rounds", int, "jokers: rounds in a match (default one per player)"),
    "after_joker": ("--after-joker", str, "jokers: match (R2.6) or any (anything follows a joker)"),
}


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """Options for every GameConfig field plus ``--preset`` and ``--config FILE``."""
    group = parser.add_argument_group("game configuration (RULES.md)")
    group.add_argument("--preset", choices=sorted(PRESETS), help="start from a named configuration")
    group.add_argument("--config", type=Path, metavar="FILE",
                       help="JSON or TOML file of GameConfig fields (e.g. num_players = 3)")
    for field, (option, kind, text) in CONFIG_OPTIONS.items():
        group.add_argument(option, dest=field, type=kind, default=None, help=text)


def config_from_args(args: argparse.Namespace) -> GameConfig:
    """The GameConfig of ``--config``, then ``--preset``, then the explicit options (later wins)."""
    fields: dict[str, Any] = {}
    if args.config is not None:
        fields.update(_read_config_file(args.config))
    if args.preset is not None:
        fields.update(PRESETS[args.preset])
    fields.update({f: getattr(args, f) for f in CONFIG_OPTIONS if getattr(args, f) is not None})
    return GameConfig.from_dict(fields)


def _read_config_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise ValueError(f"cannot read --config {path}: {exc.strerror}") from exc
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"--config {path} is not valid {'TOML' if path.suffix == '.toml' else 'JSON'}: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"--config {path} must hold a table of GameConfig fields, got {type(data).__name__}")
    return data


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    """Register ``goboom evaluate``."""
    parser = subparsers.add_parser(name, help=help_text, description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_arguments(parser)
    parser.add_argument("--agents", nargs="+", metavar="SPEC",
                        help="agent spec per seat (random, heuristic, classic-tricks, mc:budget=64, "
                             "ppo:PATH, rllib:PATH, ...); default: heuristic then random; with "
                             "--pairwise: the agents to compare (default: every baseline of the variant)")
    parser.add_argument("--games", type=int, default=1000, help="games per tournament (default 1000)")
    parser.add_argument("--duplicate", action="store_true",
                        help="replay every deck order with the agents rotated over the seats")
    parser.add_argument("--pairwise", action="store_true",
                        help="play every agent 1-vs-(n-1) against every other (pairwise matrix)")
    parser.add_argument("--episode", choices=("hand", "match"), default="hand", help="a game is one hand or one match")
    parser.add_argument("--processes", type=int, default=1, help="worker processes (results do not depend on it)")
    parser.add_argument("--seed", type=int, default=0, help="tournament seed (default 0)")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder, created; an existing non-empty one is refused unless --force "
                             "(default: a new results/eval-<date>-<time>)")
    parser.add_argument("--force", action="store_true", help="replace an existing non-empty --out folder")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run the evaluation described by ``args``: 0 on success, 2 on a bad option (before any game is
    played), 1 when the results cannot be written or a worker process was killed. The results are saved
    before the tables are printed."""
    try:
        config = config_from_args(args)
        staged = StagedFolder(args.out or fresh_folder(Path("results"), "eval"), force=args.force)
        with staged as folder:
            result, pairwise = _play(args, config)
            report = _write(folder, staged.out, result, pairwise)
    except ValueError as exc:
        print(f"goboom evaluate: error: {exc}", file=sys.stderr)
        return 2
    except (OutputError, WorkerLostError) as exc:
        print(f"goboom evaluate: error: {exc}", file=sys.stderr)
        return 1
    from rich.console import Console

    from goboom_env.evaluation.report import print_tables

    print_tables(result, pairwise, Console())
    print(f"report written to {staged.out / report.name}")
    return 0


def _play(args: argparse.Namespace, config: GameConfig) -> tuple[TournamentResult | None, Pairwise | None]:
    """The tournament, or the pairwise runs with ``--pairwise``; ValueError for a bad option."""
    from goboom_env.evaluation.tournament import run_pairwise, run_tournament  # heavy imports only when games are played

    kwargs = {"seed": args.seed, "duplicate": args.duplicate, "processes": args.processes,
              "episode": args.episode, "progress": not args.no_progress}
    if args.pairwise:
        specs = list(dict.fromkeys(args.agents or baselines(config)))
        if len(specs) < 2:
            raise ValueError(f"--pairwise needs at least two distinct agents, got {specs}")
        return None, run_pairwise(config, specs, args.games, **kwargs)
    agents = seat_agents(args.agents or ["heuristic", "random"], config.num_players)
    return run_tournament(config, agents, args.games, **kwargs), None


def _write(folder: Path, out: Path, result: TournamentResult | None, pairwise: Pairwise | None) -> Path:
    """Every report file into ``folder`` (staged for ``out``); an OSError (disk full, ...) becomes an OutputError."""
    from goboom_env.evaluation.report import write_report

    try:
        return write_report(folder, result, pairwise, command=_command_line())
    except OSError as exc:
        raise OutputError(f"cannot write the results to {out}: {exc.strerror or exc}") from exc


def seat_agents(specs: list[str], num_players: int) -> list[str]:
    """One spec per seat: the given specs, the last one repeated to fill the remaining seats."""
    if len(specs) > num_players:
        raise ValueError(f"{len(specs)} agents given for {num_players} seats: give at most one spec per seat")
    return list(specs) + [specs[-1]] * (num_players - len(specs))


def _command_line() -> str:
    return "goboom " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else "goboom evaluate"
