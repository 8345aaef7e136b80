"""``goboom evaluate``: run a tournament (or every baseline against every other) and write a report.

Examples::

    goboom evaluate --variant classic --players 4 --agents heuristic random random random \\
        --games 5000 --duplicate --out results/
    goboom evaluate --variant jokers --players 4 --agents heuristic random   # 1 vs 3 random
    goboom evaluate --preset classic-2p --pairwise --games 2000 --processes 2 --out results/pairs
    goboom evaluate --variant classic --agents ppo:runs/x/model.zip heuristic --games 1000
    goboom evaluate --preset jokers --agents ppo:jokers-4p-hands heuristic --episode both --duplicate   # side by side
    goboom evaluate --variant classic --agents classic-cover classic-tricks --episode hand --duplicate \\
        --games 400 --luck-adjusted   # raw and luck-adjusted (AIVAT) win rates side by side

The results appear in ``--out`` only once complete: a run that fails or is interrupted (Ctrl-C, exit code 130)
writes nothing and leaves an earlier folder untouched. With ``ppo:`` models and no game option, the game is the one
the models were trained for (a generalist: 4 players, or its first count when not trained for 4; ``--players N``
picks another of its counts). ``--episode`` says what one game is; a model played on another unit than its own is
named in one ``note:`` line on stderr. docs/evaluation.md ("Command line", "What a game is") explains every option.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from goboom_env.agents import baselines
from goboom_env.cli.options import command_line, parse, run_command, with_model_game, writing
from goboom_env.config import GameConfig, check_choice, check_int
from goboom_env.hints import joined
from goboom_env.outdir import StagedFolder, fresh_folder
from goboom_env.training.settings import GameArgs

if TYPE_CHECKING:
    from goboom_env.evaluation.luck import LuckAdjustment
    from goboom_env.evaluation.report import Pairwise, Run
    from goboom_env.evaluation.tournament import TournamentResult


GAMES_FILE = "games.jsonl"
"""The file of game records written by ``--save-games`` (JSON Lines, :mod:`goboom_env.records`)."""
EvaluateEpisode = Literal["auto", "match", "hand", "both"]
EPISODE_CHOICES: tuple[str, ...] = get_args(EvaluateEpisode)
"""What ``--episode`` may be: the models' unit, one of the env's episode units, or both side by side (match first)."""


@dataclass
class EvaluateArgs(GameArgs):
    """The options of ``goboom evaluate`` (the game fields, then the tournament's own)."""

    episode: EvaluateEpisode = "auto"
    """What one game is: auto (the unit the ppo: models among --agents were trained for; without a model, or with
    models of both units, match), match (hands until the match ends, R1.11, R1.12, R2.12), hand (one deal, about
    five times faster) or both (the same seeds and deals played both ways, reported side by side)."""
    agents: list[str] = field(default_factory=list)
    """Agent spec per seat (random, heuristic, classic-tricks, ismcts:iters=400, mc:budget=64, ppo:classic-4p-hands,
    ppo:PATH, rllib:PATH, ...); the last one fills the remaining seats; none given = heuristic then random.
    With --pairwise: the agents to compare (none given = every baseline of the variant)."""
    games: int = 1000
    """Games per tournament."""
    duplicate: bool = False
    """Replay every deck order with the agents rotated over the seats."""
    pairwise: bool = False
    """Play every agent 1-vs-(n-1) against every other (pairwise matrix)."""
    processes: int = 1
    """Worker processes (the results do not depend on it)."""
    seed: int = 0
    """Tournament seed."""
    out: Path | None = None
    """Output folder, created; an existing non-empty one is refused unless --force; None = a new
    results/eval-<date>-<time>."""
    force: bool = False
    """Replace an existing --out folder that goboom wrote (a folder goboom did not write is never replaced)."""
    progress: bool = True
    """Show the progress bar, on a terminal only (not in a log piped to a file)."""
    save_games: int = 0
    """Save the complete records (every deal, move and event) of the first N games of the tournament, or of
    each pairing with --pairwise, to games.jsonl in the output folder, for `goboom replay`."""

    luck_adjusted: bool = False
    """Also report luck-adjusted win rates (AIVAT, docs/evaluation.md: each hand's outcome minus the luck of the deal,
    the draws and the baselines' tie-breaks; the same mean, less variance). Needs --episode hand, one tournament (not
    --pairwise); the first agent is the one evaluated."""
    rollouts: int = 32  # goboom_env.evaluation.luck.DEFAULT_ROLLOUTS
    """Playouts per value of --luck-adjusted: the mean win share of --rollouts playouts from the true state, each
    seat played by its own agent, a search's by the heuristic (about 0.07 s per classic 4p hand with 32 for
    heuristics, 0.2 s for a network; more: less noise in the adjustment, proportionally slower)."""

    def agent_specs(self) -> list[tuple[str, str]]:
        """The agents of the tournament."""
        return [("agents", spec) for spec in self.agents]

    def validate(self) -> None:
        """Raise ValueError naming the first bad field (``episode`` may also be ``both``)."""
        check_choice("episode", self.episode, EPISODE_CHOICES)
        check_int("--games", self.games, 1)
        check_int("--processes", self.processes, 1)
        check_int("--seed", self.seed, 0)
        check_int("--save-games", self.save_games, 0)
        check_int("--rollouts", self.rollouts, 1)
        if self.luck_adjusted and self.episode != "hand":
            raise ValueError(f"--luck-adjusted values single hands: add --episode hand (got --episode {self.episode})")
        if self.luck_adjusted and self.pairwise:
            raise ValueError("--luck-adjusted adjusts one tournament, not --pairwise runs")
        replace(self, episode="hand").validate_game()

    def episodes(self) -> tuple[str, ...]:
        """The episode units to play: ``("match", "hand")`` for ``both``; for ``auto`` the unit the ``ppo:`` models
        among the agents were trained for (``match`` without a model, for models of both units, or when a model cannot
        be read; hands with --luck-adjusted); else the one chosen."""
        if self.episode == "auto" and self.luck_adjusted:
            return ("hand",)
        if self.episode == "auto":
            units = set(_trained_units(self.agents).values())
            return (units.pop() if len(units) == 1 and None not in units else "match",)
        return ("match", "hand") if self.episode == "both" else (self.episode,)


def main(argv: Sequence[str], prog: str = "goboom evaluate") -> int:
    """Parse ``argv`` (without a game option, ``ppo:`` models play their own game) and evaluate; 2 on a bad option."""

    def evaluate() -> int:
        args = parse(EvaluateArgs, argv, prog, __doc__)
        return run(with_model_game(args, argv, args.agents), command_line(prog, argv))

    return run_command(prog, evaluate)


def run(args: EvaluateArgs, command: str = "goboom evaluate") -> int:
    """Run the evaluation of ``args`` (ValueError for a bad option, before any game), save and print the results."""
    config = args.game_config()
    if args.episode == "auto":
        args = replace(args, episode=args.episodes()[0])
    args.validate()
    if args.luck_adjusted or args.save_games:
        from goboom_env.evaluation.tournament import check_replayable

        check_replayable(config, args.agents or [])
    staged = StagedFolder(args.out or fresh_folder(Path("results"), "eval"), force=args.force, inputs=args.inputs())
    for note in (episode_note(args.agents, args.episode), processes_note(args.processes, args.games)):
        if note:
            print(note, file=sys.stderr)
    from goboom_env.evaluation.report import print_side_by_side, print_tables, write_report, write_side_by_side

    with staged as folder:
        runs = {episode: _play(replace(args, episode=episode), config) for episode in args.episodes()}
        luck = _luck(args, runs)
        with writing("the results", staged.out):  # one run's report, or the side-by-side one of two episodes
            report = (write_report(folder, *runs[args.episode], command=command, luck=luck) if len(runs) == 1
                      else write_side_by_side(folder, runs, command))
        for episode, (result, pairwise) in runs.items():
            where = "" if len(runs) == 1 else episode  # both: each run's files in its own subfolder
            _save_games(folder / where, staged.out / where, result, pairwise, args.save_games)
    from rich.console import Console

    if len(runs) == 1:
        print_tables(*runs[args.episode], console=Console(), luck=luck)
    else:
        print_side_by_side(runs, Console())
    print(f"report written to {staged.out / report.name}")
    return 0


def processes_note(processes: int, games: int) -> str | None:
    """The one-line note when ``--processes`` is more than a tournament of ``games`` games uses (at most one worker
    per game and per CPU: :func:`~goboom_env.evaluation.tournament.worker_count`); None otherwise."""
    from goboom_env.evaluation.tournament import available_cpus, worker_count

    used = worker_count(processes, games)
    if used == processes:
        return None
    return (f"note: --processes {processes} lowered to {used}: at most one worker per game ({games}) and per CPU "
            f"({available_cpus()})")


def _trained_units(specs: Sequence[str]) -> dict[str, str | None]:
    """The unit each ``ppo:`` model among ``specs`` was trained for (None: unreadable, the tournament reports it)."""
    from goboom_env.agents.ppo import spec_metadata, trained_episode

    units: dict[str, str | None] = {}
    for spec in dict.fromkeys(specs):
        try:
            meta = spec_metadata(spec)
        except ValueError:
            units[spec] = None
            continue
        if meta is not None:
            units[spec] = trained_episode(meta)
    return units


EPISODE_WORDS = {"hand": ("single hands", "hands"), "match": ("whole matches", "matches")}
"""How the episode note names each unit: what a model was trained on or a run plays, and the short form."""


def episode_note(specs: Sequence[str], episode: str) -> str | None:
    """The one-line note for readable models among ``specs`` trained on another episode unit than ``episode`` (``hand``
    or ``match``); None when every model plays its own unit, or for ``both``."""
    if episode not in EPISODE_WORDS:
        return None
    others = [spec for spec, unit in _trained_units(specs).items() if unit not in (None, episode)]
    if not others:
        return None
    trained = "match" if episode == "hand" else "hand"
    were, them = ("were", "them") if len(others) > 1 else ("was", "it")
    return (f"note: {joined(others)} {were} trained on {EPISODE_WORDS[trained][0]}; this evaluation plays "
            f"{EPISODE_WORDS[episode][0]} (--episode {trained} to score {them} on {EPISODE_WORDS[trained][1]})")


def _play(args: EvaluateArgs, config: GameConfig) -> tuple[TournamentResult | None, Pairwise | None]:
    """The tournament, or the pairwise runs with ``--pairwise``; ValueError for a bad option."""
    from goboom_env.evaluation.tournament import (  # heavy imports only when games are played
        run_pairwise,
        run_tournament,
    )

    kwargs = {"seed": args.seed, "duplicate": args.duplicate, "processes": args.processes,
              "episode": args.episode, "progress": args.progress}
    if args.pairwise:
        specs = list(dict.fromkeys(args.agents or baselines(config)))
        if len(specs) < 2:
            raise ValueError(f"--pairwise needs at least two distinct agents, got {specs}")
        return None, run_pairwise(config, specs, args.games, **kwargs)
    # run_tournament fills the remaining seats with the last spec (seat_agents)
    return run_tournament(config, args.agents or ["heuristic", "random"], args.games, **kwargs), None


def _luck(args: EvaluateArgs, runs: Mapping[str, Run]) -> LuckAdjustment | None:
    """With ``--luck-adjusted``: the luck-adjusted outcomes of the tournament's hands."""
    if not args.luck_adjusted:
        return None
    from goboom_env.evaluation.luck import luck_adjust

    result = runs["hand"][0]
    assert result is not None, "validate() refuses --luck-adjusted with --pairwise"
    return luck_adjust(result, rollouts=args.rollouts, progress=args.progress)


def _save_games(folder: Path, out: Path, result: TournamentResult | None, pairwise: Pairwise | None,
                count: int) -> None:
    """The records of the first ``count`` games of each tournament into ``folder``/games.jsonl (none: no file)."""
    if count <= 0:
        return
    from goboom_env.evaluation.tournament import record_games
    from goboom_env.records import write

    tournaments = [result] if result is not None else list((pairwise or {}).values())
    with writing("the game records", out / GAMES_FILE):
        write(folder / GAMES_FILE, [r for t in tournaments for r in record_games(t, count)], append=False)
