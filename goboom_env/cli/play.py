"""``goboom play``: play one seat in the terminal against baseline agents (moves read from stdin).

Type a card as it is shown (``10♣``, ``K♠``) or as a code (``7D``, ``TS``, ``10h``, ``JK``), ``draw`` /
``pass`` / ``d`` for DRAW_OR_PASS (R3.1), an action number ``0..53``, ``help`` for the rules and the legal moves,
or ``quit``. A forced move (the only legal one) is played for you unless ``--no-auto-forced``. Input can be piped:
``printf '7H\\nQD\\n' | goboom play --seed 3``; the game stops when the input ends. With
``--opponents ppo:jokers-4p-hands`` and no game option, the game is the one the model was trained for (a generalist:
4 players, or its first count when not trained for 4; ``--players N`` picks another of its counts). ``--save FILE``
appends the game's record to a JSON Lines file (``goboom replay FILE`` shows it).
"""

from __future__ import annotations

import secrets
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np

from goboom_env.agents import make_agent
from goboom_env.cli.options import check_seat, parse, print_error, with_model_game
from goboom_env.config import GameConfig, check_int
from goboom_env.engine import Hand, Match
from goboom_env.episode import EpisodeResult, end_hand
from goboom_env.evaluation.tournament import seat_agents
from goboom_env.events import describe_event, drawn_cards
from goboom_env.game_loop import HUMAN, HumanSeat, agents_around, play_hand
from goboom_env.records import MAX_LINE, GameRecord, Recorder, loads_record, write
from goboom_env.render import move_text, parse_move, render_text, rules_summary, scores_text
from goboom_env.training.settings import GameArgs

QUIT_WORDS = {"quit", "q", "exit"}
HELP_WORDS = {"help", "?", "h", ""}
HOW_TO_TYPE = ("type a card as shown (10♣, K♠) or as a code (TC, KS, JK), draw (or pass, d), an action number "
               "0..53, or quit.")
"""The last line of ``help``, after the rules and the legal moves."""


@dataclass
class PlayArgs(GameArgs):
    """The options of ``goboom play`` (the game fields, then your seat and the opponents)."""

    seat: int = 0
    """Your seat."""
    opponents: list[str] = field(default_factory=lambda: ["heuristic"])
    """Agent spec per other seat, the last one repeated (ppo:jokers-4p-hands with no game option: the model's game)."""
    seed: int | None = None
    """Seed of the deal and the agents; None = a fresh one (printed, to play the same game again)."""
    auto_forced: bool = True
    """Play your forced moves (a single legal move) for you."""
    save: Path | None = None
    """Append the record of the game to this JSON Lines file when it ends (goboom replay FILE shows it): a new
    file, or one of game records (any other file is refused)."""

    def agent_specs(self) -> list[tuple[str, str]]:
        """The opponents."""
        return [("opponents", spec) for spec in self.opponents]

    def validate(self) -> None:
        """Raise ValueError naming the first bad option."""
        self.validate_game()
        if self.seed is not None:
            check_int("--seed", self.seed, 0)
        check_seat(self.seat, self.game_config().num_players)


def main(argv: Sequence[str], prog: str = "goboom play") -> int:
    """Play a game on stdin/stdout: 0 when it ends or on quit, 1 when the input ends first (or the record
    cannot be saved), 2 on bad options."""
    try:
        args = parse(PlayArgs, argv, prog, __doc__)
        args = with_model_game(args, argv, args.opponents)
        args.validate()
        config = args.game_config()
        if args.save is not None:
            _check_save(args.save)
        specs = seat_agents(args.opponents, config.num_players - 1)
        seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
        game = TerminalGame(config, args.seat, specs, seed, args.episode, args.auto_forced)
    except ValueError as exc:
        print_error(prog, exc)
        return 2
    code = game.play(sys.stdin, sys.stdout)
    if args.save is not None:
        return _save(game, args.save, prog) or code
    return code


def _check_save(path: Path) -> None:
    """Refuse a ``--save`` file that could not be written, or that is not a file of game records (the game is
    appended to it: a file of anything else is not goboom's to change), before the game rather than after it."""
    if path.is_dir():
        raise ValueError(f"--save {path} is a folder; give a file, e.g. {path / 'games.jsonl'}")
    if not path.parent.is_dir():
        raise ValueError(f"--save {path}: the folder {path.parent} does not exist")
    if not path.exists():
        return
    try:
        with path.open("rb") as fh:
            first = fh.readline(MAX_LINE)
    except OSError as exc:
        raise ValueError(f"--save {path}: cannot read it ({exc.strerror or exc})") from exc
    try:
        if first:  # an empty file takes records too
            loads_record(first)
    except ValueError:
        raise ValueError(f"--save {path} is not a file of game records (its first line is not one), so no game is "
                         "appended to it; choose another --save") from None


def _save(game: TerminalGame, path: Path, prog: str) -> int:
    """Append the game's record to ``path``: 0, or 1 (one line on stderr) when it cannot be written."""
    if game.record is None:
        print(f"not saved to {path}: the game did not end")
        return 0
    try:
        write(path, [game.record])
    except (OSError, ValueError) as exc:
        print_error(prog, f"cannot save the game to {path}: {getattr(exc, 'strerror', None) or exc}")
        return 1
    print(f"game record appended to {path} (goboom replay {path})")
    return 0


class TerminalGame:
    """One game, a human in ``seat`` against agents; :attr:`record` holds its complete record once it has ended."""

    def __init__(self, config: GameConfig, seat: int, opponent_specs: list[str], seed: int | None,
                 episode: str = "hand", auto_forced: bool = True) -> None:
        self.config, self.seat, self.episode, self.seed, self.auto_forced = config, seat, episode, seed, auto_forced
        self.names = [*opponent_specs[:seat], HUMAN, *opponent_specs[seat:]]  # every seat's, in the record
        self.agents = agents_around(seat, opponent_specs, seed,
                                    lambda _, spec, agent_seed: make_agent(spec, config, agent_seed))
        self.match = Match(config, np.random.default_rng(seed))
        self.record: GameRecord | None = None
        self.shown = 0
        self._mine: Counter[int] = Counter()
        """The human's cards when the events were last shown (to tell the cards they drew since)."""

    def play(self, inp: TextIO, out: TextIO) -> int:
        """Run the game to its end: 0 when it ends or on quit, 1 when the input ends first."""
        who = ", ".join(f"P{s}={name}" for s, name in enumerate(self.names) if s != self.seat)
        print(f"You are P{self.seat}. Opponents: {who}.", file=out)
        if self.seed is not None:
            print(f"seed {self.seed} (--seed {self.seed} deals this game again)", file=out)
        human = HumanSeat(lambda: self._ask(inp, out))
        agents = [self.agents.get(s, human) for s in range(self.config.num_players)]
        recorder = Recorder(self.episode, self.names, {"seed": self.seed, "human_seat": self.seat})
        try:
            while True:
                self.shown = 0  # a new hand: none of its events shown yet, the cards dealt to the human known
                self._mine = Counter(self.match.hand.hand_faces(self.seat))
                hand = play_hand(self.match, agents, recorder.on_decision)
                self._show_events(hand, out)
                result = end_hand(self.match, self.episode)
                print(self._table(hand, reveal=True), file=out)  # every hand, who won, the points left
                if self.episode == "match":
                    print(scores_text(self.match.results[-1].score_deltas, self.match.scores), file=out)
                if result is not None:
                    print(_result_line(result, self.seat), file=out)
                    self.record = recorder.finish(result)
                    return 0
                print(f"--- next hand, dealer P{self.match.hand.dealer} ---", file=out)
        except _GameStoppedError as stop:
            code, message = stop.args
            print(message, file=out)
            return code

    def _table(self, hand: Hand, reveal: bool = False) -> str:
        """The table without the human's cards (shown once, on their own line) or, with ``reveal``, with
        every hand; the scores only in a match (a one-hand game is not scored)."""
        match = self.match if self.episode == "match" else None
        return render_text(hand, match, None, last=0, reveal=reveal)

    def _ask(self, inp: TextIO, out: TextIO) -> int:
        """What happened since the human's last turn, then their move: played for them when forced (and
        ``auto_forced``), else read until a legal one; :class:`_GameStoppedError` on quit or at the end of input."""
        hand = self.match.hand
        self._show_events(hand, out)
        legal = hand.legal_actions()
        if self.auto_forced and len(legal) == 1:
            print(f"your only move: {move_text(legal[0])} (played for you)", file=out)
            return legal[0]
        print(self._table(hand), file=out)
        print(f"your hand: {' '.join(move_text(f) for f in hand.hand_faces(self.seat))}", file=out)
        print(f"legal: {legal_text(legal)}", file=out)
        while True:
            print("your move> ", end="", file=out, flush=True)
            line = inp.readline()
            if not line:
                raise _GameStoppedError(1, "input ended before the end of the game.")
            text = line.strip()
            if text.lower() in QUIT_WORDS:
                raise _GameStoppedError(0, "game abandoned.")
            if text.lower() in HELP_WORDS:
                print(rules_summary(self.config), f"legal now: {legal_text(legal)}", HOW_TO_TYPE, sep="\n", file=out)
                continue
            try:
                action = parse_move(text)
            except ValueError as exc:
                print(f"? {exc}", file=out)
                continue
            if action not in legal:
                print(f"? {move_text(action)} is not legal now; legal: {legal_text(legal)}", file=out)
                continue
            return action

    def _show_events(self, hand: Hand, out: TextIO) -> None:
        """Print what happened since the last call, with the cards the human drew (theirs to see: :func:`drawn_cards`,
        against the hand at the last look, which becomes the hand now)."""
        new = hand.events[self.shown:]
        for event in new:
            print(f"  {describe_event(event)}", file=out)
        now = Counter(hand.hand_faces(self.seat))
        if drawn := drawn_cards(self._mine.elements(), now.elements(), new, self.seat, hand.classic):
            print(f"  (you drew {' '.join(move_text(f) for f in sorted(drawn.elements()))})", file=out)
        self._mine = now
        self.shown = len(hand.events)


class _GameStoppedError(Exception):
    """The human quit (exit code 0) or the input ended (exit code 1) before the end of the game: its arguments are
    the exit code and the line that says so."""


def legal_text(legal: list[int]) -> str:
    """Legal actions as they are shown and typed: ``7♠ 10♣ draw``."""
    return " ".join(move_text(a) for a in legal)


def _result_line(result: EpisodeResult, seat: int) -> str:
    """Who won the episode, and whether that is you."""
    names = ", ".join(f"P{w}" for w in result.winners) or "nobody"
    verdict = "You win!" if seat in result.winners else "You lose."
    return f"the {result.episode} is won by {names}. {verdict}"
