"""``goboom play``: play one seat in the terminal against baseline agents (moves read from stdin).

Type a card code (``7D``, ``TS``, ``10h``, ``JK``), ``draw`` / ``pass`` / ``d`` for DRAW_OR_PASS
(R3.1), an action number ``0..53``, ``help`` for the legal moves, or ``quit``. Input can be
piped: ``printf 'draw\\n7D\\n' | goboom play --seed 3``; the game stops when the input ends.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np

from goboom_env.agents import Observation, make_agent
from goboom_env.cards import DRAW_OR_PASS, code_of, face_of, pretty
from goboom_env.cli.options import parse, seat_agents
from goboom_env.config import GameConfig
from goboom_env.engine import Match
from goboom_env.episode import end_hand
from goboom_env.game_loop import play_hand
from goboom_env.info import PlayerView
from goboom_env.render import describe_event, render_text
from goboom_env.training.config import GameArgs

DRAW_WORDS = {"draw", "pass", "d", "p"}
QUIT_WORDS = {"quit", "q", "exit"}
QUIT = -1
"""What :meth:`TerminalGame._ask` returns when the player quits."""


@dataclass
class PlayArgs(GameArgs):
    """The options of ``goboom play`` (the game fields, then your seat and the opponents)."""

    seat: int = 0
    """Your seat."""
    opponents: list[str] = field(default_factory=lambda: ["heuristic"])
    """Agent spec per other seat, the last one repeated."""
    seed: int | None = None
    """Seed of the deal and the agents; None = a fresh one."""


def main(argv: Sequence[str], prog: str = "goboom play") -> int:
    """Play a game on stdin/stdout: 0 when it ends or on quit, 1 when the input ends first, 2 on bad options."""
    try:
        args = parse(PlayArgs, argv, prog, __doc__)
        args.validate()
        config = args.game_config()
        if not 0 <= args.seat < config.num_players:
            raise ValueError(f"--seat must be in 0..{config.num_players - 1}, got {args.seat}")
        specs = seat_agents(args.opponents, config.num_players - 1)
        game = TerminalGame(config, args.seat, specs, args.seed, args.episode)
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    return game.play(sys.stdin, sys.stdout)


class TerminalGame:
    """One game with a human in ``seat`` and agents in the other seats."""

    def __init__(self, config: GameConfig, seat: int, opponent_specs: list[str], seed: int | None,
                 episode: str = "hand") -> None:
        self.config = config
        self.seat = seat
        self.episode = episode
        rng = np.random.default_rng(seed)
        others = [s for s in range(config.num_players) if s != seat]
        self.agents = {s: make_agent(spec, config, None if seed is None else seed + 1 + s)
                       for s, spec in zip(others, opponent_specs)}
        self.names = {s: spec for s, spec in zip(others, opponent_specs)}
        self.match = Match(config, rng)

    def play(self, inp: TextIO, out: TextIO) -> int:
        """Run the game to its end; see :func:`run` for the exit codes."""
        who = ", ".join(f"P{s}={name}" for s, name in sorted(self.names.items()))
        print(f"You are P{self.seat}. Opponents: {who}.", file=out)
        self.shown = 0
        human = _Human(self, inp, out)
        agents = [self.agents.get(s, human) for s in range(self.config.num_players)]
        try:
            while True:
                hand = play_hand(self.match, agents)
                self.shown = self._show_events(hand.events, self.shown, out)
                print(render_text(hand, self.match, self.seat), file=out)
                result = end_hand(self.match, self.episode)
                if self.episode == "match":
                    self.shown = 0
                    scored = self.match.results[-1]
                    print(f"hand scores: {list(scored.score_deltas)}; totals: {self.match.scores}", file=out)
                if result is not None:
                    print(_winners_line(list(result.winners), self.seat, self.episode), file=out)
                    return 0
                print(f"--- next hand, dealer P{self.match.hand.dealer} ---", file=out)
        except _GameStoppedError as stop:
            print(stop.message, file=out)
            return stop.code

    def _ask(self, inp: TextIO, out: TextIO) -> int | None:
        """Read moves until a legal one (its action id); :data:`QUIT` on quit, None at the end of input."""
        hand = self.match.hand
        legal = hand.legal_actions()
        print(render_text(hand, self.match, self.seat, last=0), file=out)
        print(f"your hand: {' '.join(pretty(f) for f in hand.hand_faces(self.seat))}", file=out)
        print(f"legal: {legal_text(legal)}", file=out)
        while True:
            print("your move> ", end="", file=out, flush=True)
            line = inp.readline()
            if not line:
                return None
            text = line.strip()
            if text.lower() in QUIT_WORDS:
                return QUIT
            if text.lower() in ("help", "?", ""):
                print(f"legal: {legal_text(legal)}", file=out)
                continue
            try:
                action = parse_move(text)
            except ValueError as exc:
                print(f"? {exc}", file=out)
                continue
            if action not in legal:
                print(f"? {text} is not legal now; legal: {legal_text(legal)}", file=out)
                continue
            return action

    @staticmethod
    def _show_events(events: list[tuple], shown: int, out: TextIO) -> int:
        for event in events[shown:]:
            print(f"  {describe_event(event)}", file=out)
        return len(events)


class _GameStoppedError(Exception):
    """The human quit (exit code 0) or the input ended (exit code 1) before the end of the game."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Human:
    """The human's seat as a :class:`~goboom_env.agents.Policy`: shows what happened since its last
    turn, then reads a legal move from the input (the decision loop asks it like any agent)."""

    name = "you"
    needs_view = False

    def __init__(self, game: TerminalGame, inp: TextIO, out: TextIO) -> None:
        self.game, self.inp, self.out = game, inp, out

    def act(self, observation: Observation, view: PlayerView | None = None) -> int:
        game = self.game
        game.shown = game._show_events(game.match.hand.events, game.shown, self.out)
        action = game._ask(self.inp, self.out)
        if action is None:
            raise _GameStoppedError(1, "input ended before the end of the game.")
        if action == QUIT:
            raise _GameStoppedError(0, "game abandoned.")
        return action

    def reseed(self, seed: int | None) -> None:
        """Nothing to restart: the moves come from the input."""


def parse_move(text: str) -> int:
    """An action id from a typed move: card code, draw/pass word or number 0..53 (R3.1)."""
    word = text.strip().lower()
    if word in DRAW_WORDS:
        return DRAW_OR_PASS
    if word.isdigit():
        value = int(word)
        if not 0 <= value <= DRAW_OR_PASS:
            raise ValueError(f"action numbers are 0..{DRAW_OR_PASS}, got {value}")
        return value
    return face_of(text)


def legal_text(legal: list[int]) -> str:
    """Legal actions as the player types them: codes and ``draw``."""
    return " ".join("draw" if a == DRAW_OR_PASS else code_of(a) for a in legal)


def _winners_line(winners: list[int], seat: int, what: str) -> str:
    names = ", ".join(f"P{w}" for w in winners) or "nobody"
    verdict = "You win!" if seat in winners else "You lose."
    return f"{what} over: winner(s) {names}. {verdict}"
