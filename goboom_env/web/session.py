"""One game played in the browser: a human in one seat, agents in the others, on the engine's public API.

The agents move through :func:`goboom_env.game_loop.play_hand`: the human's seat stops the loop when asked to act,
and the decision hook takes a picture of the table before each agent move. An agent that raises ends its game
(status ``failed``, a message without server paths; the full error in the server's log). Seeds as ``goboom play``:
the deal from ``S``, the agent in seat ``s`` from ``S + 1 + s``.
"""

from __future__ import annotations

import contextlib
import secrets
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from goboom_env.agents import Policy, SpecSource, make_agent
from goboom_env.cards import DRAW_OR_PASS, code_of, pretty
from goboom_env.config import GameConfig
from goboom_env.engine import PASSED, Hand, Match
from goboom_env.episode import EpisodeResult, end_hand
from goboom_env.events import EventKind, describe_event, fields_of
from goboom_env.game_loop import HUMAN, Decision, HumanSeat, agents_around, play_hand
from goboom_env.observation import observe
from goboom_env.records import GameRecord, Recorder, move_code
from goboom_env.render import parse_move as typed_move
from goboom_env.web.limits import excerpt, without_paths

MAX_MOVE_TEXT = 16
"""The longest typed move read (``draw``, ``10♣``, an action number): longer text is not a move."""


class GameError(Exception):
    """A request the game refuses: ``status`` is the HTTP status, ``message`` says why in words."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@contextlib.contextmanager
def refused_as_bad_request(*errors: type[Exception]) -> Iterator[None]:
    """A ValueError (or one of ``errors``) of the block as GameError 400 with its message: the request's fault."""
    try:
        yield
    except (ValueError, *errors) as exc:
        raise GameError(400, str(exc)) from None


class _YourTurn(Exception):  # noqa: N818 (a signal that stops the decision loop, not an error)
    """Raised by the human's seat when the decision loop asks it to move: the loop stops there."""


def _your_turn() -> int:
    """The human's seat never chooses in the decision loop: their move comes in a request."""
    raise _YourTurn


Frame = dict[str, Any]
"""What the page draws: the table as one seat sees it (see :func:`table_view`)."""


class GameSession:
    """A game between a human in ``seat`` and the agents ``specs`` (one per other seat, in seat order)."""

    def __init__(self, config: GameConfig, seat: int, specs: list[str], names: list[str], *, episode: str = "hand",
                 seed: int | None = None, delay_ms: int = 0,
                 on_game_end: Callable[[GameSession, GameRecord], None] | None = None,
                 redact: Callable[[str], str] = str) -> None:
        self.id = secrets.token_urlsafe(9)
        self.token = secrets.token_urlsafe(18)
        self.config, self.seat, self.episode, self.seed = config, seat, episode, seed
        self.specs = [*specs[:seat], HUMAN, *specs[seat:]]  # every seat's, for the log
        self.names = [*names[:seat], HUMAN, *names[seat:]]
        self.redact = redact  # an agent's error as the page may see it (model paths replaced)
        agents = agents_around(seat, specs, seed, self._agent)
        self.policies: list[Policy] = [agents.get(s, HumanSeat(_your_turn)) for s in range(config.num_players)]
        self.match = Match(config, np.random.default_rng(seed))
        self.recorder = Recorder(episode, self.names, {"source": "goboom serve", "seed": seed})
        self.record: GameRecord | None = None
        self.shown: Hand = self.match.hand  # the current hand, or the finished one until the next is asked for
        self.result: EpisodeResult | None = None
        self.waiting_next = False
        self.lock = threading.Lock()
        self.attached = False  # a websocket plays this game (a second one is refused)
        self.last_active = time.monotonic()
        self.delay_ms = delay_ms  # between two agent moves shown on a websocket
        self.on_game_end = on_game_end
        self.failure: str | None = None  # why an agent ended the game, in words the page may show
        self.seq = 0  # the number of the last frame sent to a websocket (increasing: a page drops a stale frame)

    def _agent(self, seat: int, spec: str, seed: int | None) -> Policy:
        """The agent of ``seat`` seeded with ``seed``; GameError 400 naming it by its choice when it cannot be made."""
        try:
            return make_agent(spec, self.config, seed, source=SpecSource.WEB)
        except (ValueError, OSError) as exc:
            print(f"goboom serve: the agent {spec} cannot be made: {exc}", file=sys.stderr)
            raise GameError(400, f"opponent P{seat} ({self.names[seat]}) cannot play: {self.redact(str(exc))}") \
                from None

    @property
    def over(self) -> bool:
        return self.result is not None

    @property
    def finished(self) -> bool:
        """Over, or an agent failed."""
        return self.over or self.failure is not None

    def status(self) -> str:
        """``your_turn``, ``agents``, ``hand_over`` (waiting for the next hand), ``over`` or ``failed``."""
        if self.failure is not None:
            return "failed"
        if self.over:
            return "over"
        if self.waiting_next:
            return "hand_over"
        return "your_turn" if self.match.hand.current == self.seat else "agents"

    def frame(self) -> Frame:
        """The table as the human sees it now."""
        hand = self.shown
        finished = hand.over
        scored = finished and self.episode == "match"  # Match.finish_hand counted it already
        one_hand = self.result is not None and self.episode == "hand"  # the match is not scored: the hand's points
        frame = table_view(hand, self.seat, reveal=finished, names=self.names) | {
            "status": self.status(), "game": self.id, "episode": self.episode,
            "hand_number": self.match.hands_played + (0 if scored else 1),
            "scores": list(self.result.points) if one_hand else list(self.match.scores),
            "results": [{"winners": list(r.winners), "points": list(r.hand_points), "deltas": list(r.score_deltas),
                         "blocked": r.blocked, "dealer": r.dealer} for r in self.match.results]}
        if self.result is not None:
            frame["winners"] = list(self.result.winners)
        if self.failure is not None:
            frame["error"] = self.failure
        return frame

    def play(self, move: Any) -> list[Frame]:
        """Play the human's ``move``, then the agents' up to the human's next turn; returns their frames."""
        self._check_going_on()
        if self.waiting_next:
            raise GameError(409, "the hand is over; ask for the next hand first")
        hand = self.match.hand
        if hand.current != self.seat:
            raise GameError(409, f"it is not your turn: P{hand.current} ({self.names[hand.current]}) is to move")
        action = parse_move(move)
        legal = hand.legal_actions()
        if action not in legal:
            words = " ".join(move_code(a) for a in legal)
            raise GameError(422, f"{move_code(action)} is not a legal move now; legal moves: {words}")
        self.recorder.on_decision(Decision(self.match, hand, self.seat, observe(self.match, self.seat), None, action))
        hand.apply(action)
        return self.advance()

    def next_hand(self) -> list[Frame]:
        """Start the next hand of the match after a finished one; returns the frames up to the human's turn."""
        self._check_going_on()
        if not self.waiting_next:
            raise GameError(409, "the hand is still being played")
        self.waiting_next = False
        self.shown = self.match.hand
        return self.advance()

    def advance(self) -> list[Frame]:
        """Let the agents move until the human's turn or the end of the hand: a frame before each agent move, then
        the table as it ends up (status ``failed`` when an agent raised)."""
        self._check_not_failed()
        if self.over or self.waiting_next:
            return [self.frame()]
        hand = self.match.hand
        frames: list[Frame] = []

        def hook(decision: Decision) -> None:  # sees each decision before it is applied
            frames.append(self.frame())
            self.recorder.on_decision(decision)

        try:
            with contextlib.suppress(_YourTurn):
                play_hand(self.match, self.policies, hook)
        except Exception as exc:  # a failing agent ends its own game; the server and the other games go on
            self._fail(exc)
        else:
            if hand.over:
                self._settle(hand)
        frames.append(self.frame())
        return frames

    def resume(self) -> list[Frame]:
        """What a page that opens the game is sent: :meth:`advance`, or the table as it is once the game failed."""
        return [self.frame()] if self.failure is not None else self.advance()

    def _check_not_failed(self) -> None:
        """GameError 410 once an agent has ended the game."""
        if self.failure is not None:
            raise GameError(410, self.failure)

    def _check_going_on(self) -> None:
        """GameError 410 once an agent has ended the game, 409 once it is over."""
        self._check_not_failed()
        if self.over:
            raise GameError(409, "the game is over; start a new game")

    def _fail(self, exc: Exception) -> None:
        """End the game after the agent to move raised ``exc``: the error to the log, a short message to the page."""
        seat = self.match.hand.current
        print(f"goboom serve: game {self.id}: the agent of P{seat} ({self.specs[seat]}) failed:",
              file=sys.stderr)
        traceback.print_exception(exc, file=sys.stderr)
        detail = without_paths(self.redact(str(exc)))
        detail = detail if len(detail) <= 80 else detail[:80] + "…"
        self.failure = (f"the game has ended: opponent P{seat} ({self.names[seat]}) failed "
                        f"({type(exc).__name__}: {detail}); start a new game")

    def _settle(self, hand: Hand) -> None:
        """Score the finished ``hand``: the game ends, or the next hand waits for the human."""
        self.shown = hand
        self.result = end_hand(self.match, self.episode)
        self.waiting_next = self.result is None
        if self.result is not None:
            self.record = self.recorder.finish(self.result)
            if self.on_game_end is not None:
                self.on_game_end(self, self.record)


def parse_move(move: Any) -> int:
    """An action id from what the page sent: an action number (R3.1) or a typed move; GameError 400 otherwise."""
    if isinstance(move, bool) or not isinstance(move, (int, str)):
        raise GameError(400, f"a move must be a card code such as '7D', 'draw' or an action number, "
                             f"got {excerpt(move)}")
    if isinstance(move, int):
        if not 0 <= move <= DRAW_OR_PASS:
            raise GameError(400, f"action numbers are 0..{DRAW_OR_PASS}, got {excerpt(move)}")
        return move
    if len(move) > MAX_MOVE_TEXT:
        raise GameError(400, f"not a move: {excerpt(move)}; type a card code (TC, KS, JK), draw, or an action number")
    with refused_as_bad_request():
        return typed_move(move)


def card(face: int) -> dict[str, str]:
    """A card for the page: its code (``TS``) and its text (``10♠``)."""
    return {"code": code_of(face), "text": pretty(face)}


def event_view(event: tuple) -> dict[str, Any]:
    """An engine event for the page: its kind, its fields (faces as codes) and the phrase people read."""
    kind = EventKind(event[0])
    out: dict[str, Any] = {"kind": kind.value, "text": describe_event(event)}
    for name, value in zip(fields_of(kind), event[1:]):
        out["card" if name == "face" else name] = code_of(value) if name == "face" else value
    return out


def table_view(hand: Hand, seat: int | None, *, reveal: bool = False, names: list[str] | None = None,
               with_events: bool = True) -> Frame:
    """The table of ``hand`` as ``seat`` sees it (R4.1), its legal cards marked (``seat=None`` or ``reveal``: every
    hand face up); ``with_events`` adds the hand's event log."""
    legal = set(hand.legal_actions()) if not hand.over else set()
    mover = hand.current if not hand.over else None
    players = []
    for s in range(hand.n):
        player: dict[str, Any] = {"seat": s, "name": (names or [f"P{i}" for i in range(hand.n)])[s],
                                  "size": hand.sizes[s], "dealer": s == hand.dealer, "to_move": s == mover}
        if reveal or seat is None or s == seat:
            player["cards"] = [card(f) | {"legal": s == mover and f in legal} for f in hand.hand_faces(s)]
        players.append(player)
    own = hand.hand_faces(seat) if seat is not None else []
    frame: Frame = {
        "config": hand.config.to_dict(),
        "seat": seat,
        "players": players,
        "dealer": hand.dealer,
        "current": mover,
        "stock": len(hand.stock),
        "phase": hand.phase.name.lower(),
        "your_hand": [card(f) | {"legal": mover == seat and f in legal} for f in own],
        "legal": sorted(move_code(a) for a in legal) if seat is None or mover == seat else [],
        "can_draw": DRAW_OR_PASS in legal and (seat is None or mover == seat),
    }
    if with_events:
        frame["events"] = [event_view(e) for e in hand.events]
    if hand.classic:
        frame["trick"] = ["pass" if t == PASSED else card(t) if t >= 0 else None for t in hand.trick]
        frame["led"] = card(hand.led) if hand.led >= 0 else None
        frame["leader"] = hand.leader if hand.leader >= 0 else None
    else:
        frame["top"] = card(hand.top) if hand.top >= 0 else None
        frame["match_card"] = card(hand.match_face) if hand.match_face >= 0 else None
    if hand.over:
        frame["hand_result"] = {"winner": hand.winner, "blocked": hand.blocked, "winners": hand.winners(),
                                "points": hand.hand_points()}
    return frame
