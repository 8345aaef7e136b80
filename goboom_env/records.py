"""Complete game records as JSON Lines: write them while agents play, read them back checked, replay them.

A record holds one episode (a hand or a match) with all it takes to see it again move by move: the rules, who sat
where, the deck and dealer of every hand, every move with its events and how it ended (the Evaluation guide's "Game
records" section describes every field).

    >>> import numpy as np
    >>> from goboom_env.agents import RandomAgent
    >>> from goboom_env import GameConfig, Match
    >>> config = GameConfig(variant="jokers", num_players=3)
    >>> agents = [RandomAgent(config, seed=s) for s in range(3)]
    >>> result, record = record_episode(Match(config, np.random.default_rng(1)), agents, "match",
    ...                                 seats=["random"] * 3)
    >>> loads_record(dumps_record(record)) == record and verify(record) == result
    True
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from goboom_env.agents.policy import Policy
from goboom_env.cards import DRAW_OR_PASS, NUM_ACTIONS, code_of
from goboom_env.config import GameConfig, as_int, errors_prefixed
from goboom_env.engine import Hand, IllegalActionError, Match
from goboom_env.episode import EPISODES, EpisodeResult, check_episode, end_hand
from goboom_env.events import Event, EventKind, event_from_json, event_to_json
from goboom_env.game_loop import Decision, play_episode
from goboom_env.hints import shown
from goboom_env.outdir import write_atomically
from goboom_env.scoring import score_deltas, win_rewards
from goboom_env.untrusted import Fields, parse_json

FORMAT = "goboom-record"
VERSION = 1
"""The record format version this module writes and reads."""
DRAW_WORD = "draw"
"""The ``card`` field of a move with action 53 (draw or pass, R3.1)."""


def move_code(action: int) -> str:
    """An action as people write it: a card code, or ``"draw"`` for action 53."""
    return DRAW_WORD if action == DRAW_OR_PASS else code_of(action)


# -- the record types ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Move:
    """One decision: the seat to move, its action id (R3.1) and the events it caused."""

    seat: int
    action: int
    events: tuple[Event, ...]

    @property
    def card(self) -> str:
        return move_code(self.action)


@dataclass(frozen=True)
class HandRecord:
    """One hand: its deal (deck order, dealer), its moves and how it ended."""

    dealer: int
    deck: tuple[int, ...]
    """Faces, top first (R0.5)."""
    deal_events: tuple[Event, ...]
    moves: tuple[Move, ...]
    winners: tuple[int, ...]
    hand_points: tuple[int, ...]
    score_deltas: tuple[int, ...]
    scores: tuple[int, ...]
    """Each seat's total after this hand (a one-hand episode: the hand's score deltas)."""

    def deal(self, config: GameConfig) -> Hand:
        """The hand as dealt, before the first move."""
        return Hand(config, self.deck, self.dealer)


@dataclass(frozen=True)
class GameRecord:
    """A complete game (one episode): rules, seats, every hand, the result."""

    config: GameConfig
    episode: str
    seats: tuple[str, ...]
    hands: tuple[HandRecord, ...]
    result: EpisodeResult
    meta: dict[str, Any] = field(default_factory=dict, compare=False)
    """Where the game comes from (tournament game, deal, seed...): JSON values, not checked."""

    @property
    def rewards(self) -> list[float]:
        """The env's zero-sum ``reward="win"`` reward of each seat for this episode."""
        return win_rewards(self.config.num_players, self.result.winners)

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-friendly data (the line :func:`write` writes)."""
        return {
            "format": FORMAT, "version": VERSION, "config": self.config.to_dict(), "episode": self.episode,
            "seats": list(self.seats), "meta": dict(self.meta),
            "hands": [_hand_to_dict(h) for h in self.hands],
            "result": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self.result).items()}
            | {"rewards": self.rewards},
        }


def _hand_to_dict(hand: HandRecord) -> dict[str, Any]:
    return {
        "dealer": hand.dealer, "deck": [code_of(f) for f in hand.deck],
        "deal_events": [event_to_json(e) for e in hand.deal_events],
        "moves": [{"seat": m.seat, "action": m.action, "card": m.card, "events": [event_to_json(e) for e in m.events]}
                  for m in hand.moves],
        "winners": list(hand.winners), "hand_points": list(hand.hand_points),
        "score_deltas": list(hand.score_deltas), "scores": list(hand.scores),
    }


# -- recording ----------------------------------------------------------------------------------------
class Recorder:
    """Records an episode as it is played: :meth:`on_decision` is the decision hook of
    :func:`goboom_env.game_loop.play_episode`, then :meth:`finish` gives the record. Each hand's deck is read from
    the hand at its first decision (:func:`deck_of`); a match is recorded from its first hand."""

    def __init__(self, episode: str, seats: Sequence[str], meta: dict[str, Any] | None = None) -> None:
        check_episode(episode)
        self.episode, self.seats = episode, tuple(str(s) for s in seats)
        self.meta = dict(meta or {})
        self.match: Match | None = None
        self._hands: list[HandRecord] = []
        self._hand: Hand | None = None
        self._deck: tuple[int, ...] = ()
        self._moves: list[tuple[int, int, int]] = []  # (seat, action, events before it) of the current hand
        self._results_before = 0

    def on_decision(self, decision: Decision) -> None:
        """The decision hook: notes the move (its events are read once the hand is over)."""
        if self.match is None:
            check_recordable(decision.match, self.episode, self.seats)
            self.match, self._results_before = decision.match, len(decision.match.results)
        if decision.hand is not self._hand:
            if self._hand is not None:
                self._close_hand()
            self._hand = decision.hand
            self._deck = deck_of(decision.hand)
        self._moves.append((decision.seat, int(decision.action), len(decision.hand.events)))

    def _close_hand(self) -> None:
        hand, match = self._hand, self.match
        assert hand is not None and hand.over and match is not None, "a hand is closed only once it is over"
        events = hand.events
        starts = [start for _, _, start in self._moves] + [len(events)]
        moves = tuple(Move(seat, action, tuple(events[starts[i]:starts[i + 1]]))
                      for i, (seat, action, _) in enumerate(self._moves))
        index = self._results_before + len(self._hands)
        if len(match.results) > index:  # a match episode: Match.finish_hand scored it
            deltas = match.results[index].score_deltas
            before = self._hands[-1].scores if self._hands else (0,) * len(self.seats)
            scores = tuple(a + b for a, b in zip(before, deltas))
        else:  # a one-hand episode: end_hand leaves the match unscored
            deltas = scores = tuple(score_deltas(hand.config, hand.winner, hand.hand_points()))
        self._hands.append(HandRecord(hand.dealer, self._deck, tuple(events[:starts[0]]), moves,
                                      tuple(hand.winners()), tuple(hand.hand_points()), deltas, scores))
        self._hand, self._moves = None, []

    def finish(self, result: EpisodeResult | None = None) -> GameRecord:
        """The complete record, once the episode has ended with ``result`` (without it, found by replaying)."""
        if self.match is None:
            raise RuntimeError("finish() called before any decision was recorded")
        if self._hand is not None:
            self._close_hand()
        hands = tuple(self._hands)
        if result is None:
            result = _run_to_end(_replay_steps(self.match.config, self.episode, hands))
        return GameRecord(self.match.config, self.episode, self.seats, hands, result, self.meta)


def record_episode(match: Match, agents: Sequence[Policy], episode: str = "hand", *, seats: Sequence[str] | None = None,
                   meta: dict[str, Any] | None = None) -> tuple[EpisodeResult, GameRecord]:
    """Play one episode like :func:`goboom_env.game_loop.play_episode` and record it; ``seats`` names each seat's
    agent (default: the agents' ``name``), ``meta`` is stored as given."""
    names = list(seats) if seats is not None else [agent.name for agent in agents]
    check_recordable(match, episode, names)
    recorder = Recorder(episode, names, meta)
    result = play_episode(match, agents, episode, recorder.on_decision)
    return result, recorder.finish(result)


def check_recordable(match: Match, episode: str, seats: Sequence[str]) -> None:
    """Raise ValueError unless an episode of ``match`` can be recorded from here: one seat name per seat,
    a hand with no move played yet, and for a match episode the match's first hand."""
    if len(seats) != match.config.num_players:
        raise ValueError(f"need one seat name per seat: {match.config.num_players}, got {list(seats)}")
    if any(e[0] not in (EventKind.UPCARD, EventKind.BURY) for e in match.hand.events):
        raise ValueError("a game is recorded from the start of a hand: moves were already played")
    if episode == "match" and match.hands_played:
        raise ValueError("a match episode is recorded from the match's first hand: "
                         f"{match.hands_played} hand(s) were already played")


def deck_of(hand: Hand) -> tuple[int, ...]:
    """The deck order (faces, top first) that deals ``hand``, read before its first move: card ``i`` goes to seat
    ``(dealer + 1 + i) % n`` (R1.3, R2.3), each seat's cards ascending, the up-card and buried jokers (R2.3) back on
    top of the stock. ValueError when the hand was played on or dealing the deck gives another hand."""
    config, n = hand.config, hand.n
    dealt = [hand.hand_faces(s) for s in range(n)]
    if any(len(cards) != config.hand_size for cards in dealt) or any(
            e[0] not in (EventKind.UPCARD, EventKind.BURY) for e in hand.events):
        raise ValueError("deck_of needs a hand before its first move")
    first = (hand.dealer + 1) % n
    deck = [dealt[(first + i) % n][i // n] for i in range(config.hand_size * n)]
    buried = sum(1 for e in hand.events if e[0] == EventKind.BURY)
    # the cards turned up by the deal (the up-card, buried jokers now at the stock's bottom) go back on top
    deck += [face for e in hand.events for face in e[1:]] + hand.stock[::-1][:len(hand.stock) - buried]
    if Hand(config, deck, hand.dealer).to_dict() != hand.to_dict():
        raise ValueError("the hand cannot be dealt again from its cards (was it played on, or built by hand?)")
    return tuple(deck)


# -- JSON lines ---------------------------------------------------------------------------------------
def dumps_record(record: GameRecord) -> str:
    """One record as one JSON line (no newline at the end)."""
    return json.dumps(record.to_dict(), separators=(",", ":"))


def loads_record(line: str | bytes) -> GameRecord:
    """One record from its JSON line; ValueError naming the field when it is not a valid record."""
    return from_dict(parse_json(line))


def write(path: str | Path, records: Iterable[GameRecord], *, append: bool = True) -> int:
    """Write records to ``path``, one line each; returns how many. ``append=True`` adds them in one write (a file
    not ending with a newline, cut mid-write, is refused); ``append=False`` replaces the file atomically."""
    path = Path(path)
    lines = [dumps_record(r) + "\n" for r in records]
    text = "".join(lines).encode()
    if not append:
        write_atomically(path, text)
        return len(lines)
    with path.open("ab+") as fh:
        if fh.tell() > 0:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                raise ValueError(f"{path} does not end with a newline (a partly written record?); "
                                 "refusing to append to it")
        fh.write(text)
    return len(lines)


def read(path: str | Path) -> list[GameRecord]:
    """Every record of a JSON Lines file (blank lines skipped), each field checked but not replayed
    (:func:`verify` does); ValueError ``"<path> line <k>: <field>: <problem>"``, or when it cannot be read."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as fh:
            return loads_records(iter(lambda: fh.readline(MAX_LINE + 1), ""))
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not a text file of game records (not UTF-8: {exc.reason})") from None
    except ValueError as exc:
        raise ValueError(f"{path} {exc}") from None


MAX_LINE = 64 * 2**20
"""The longest record line :func:`read` reads, in characters (a long 12-seat match takes about 8 MB)."""


def loads_records(lines: Iterable[str]) -> list[GameRecord]:
    """Every record of JSON Lines text, as :func:`read` reads a file."""
    records = []
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_LINE:
            raise ValueError(f"line {number}: longer than {MAX_LINE:,} characters, more than any game record")
        if line.strip():
            with errors_prefixed(f"line {number}"):
                records.append(loads_record(line))
    return records


# -- checked reading ----------------------------------------------------------------------------------
def from_dict(data: Any) -> GameRecord:
    """A :class:`GameRecord` from the JSON data of one line, every field checked; ValueError names the first bad one."""
    top = Fields(data, ("format", "version", "config", "episode", "seats", "hands", "result"), ("meta",))
    if data["format"] != FORMAT:
        raise top.error("format", f"must be {FORMAT!r}, got {shown(data['format'])}")
    if as_int(data["version"]) != VERSION:
        raise top.error("version", f"this reader knows version {VERSION}, got {shown(data['version'])}")
    try:
        config = GameConfig.from_dict(data["config"])
    except (TypeError, ValueError) as exc:
        raise top.error("config", str(exc)) from None
    n = config.num_players
    if data["episode"] not in EPISODES:
        raise top.error("episode", f"must be one of {list(EPISODES)}, got {shown(data['episode'])}")
    seats = tuple(top.text(f"seats[{i}]", raw=spec) for i, spec in enumerate(top.items("seats", n)))
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        raise top.error("meta", f"must be a JSON object, got {type(meta).__name__}")
    hands = top.items("hands")
    if not hands:
        raise top.error("hands", "must hold at least one hand")
    if data["episode"] == "hand" and len(hands) != 1:
        raise top.error("hands", f"a one-hand episode holds exactly one hand, got {len(hands)}")
    hand_records = tuple(_read_hand(top.child(f"hands[{i}]", _HAND_FIELDS, raw=raw), config)
                         for i, raw in enumerate(hands))
    result = _read_result(top.child("result", _RESULT_FIELDS), config, data["episode"])
    return GameRecord(config, data["episode"], seats, hand_records, result, meta)


_HAND_FIELDS = ("dealer", "deck", "deal_events", "moves", "winners", "hand_points", "score_deltas", "scores")
_MOVE_FIELDS = ("seat", "action", "card", "events")
_RESULT_FIELDS = ("episode", "winners", "points", "hands", "hand_points", "last_hand_winners", "standing", "rewards")


def _read_hand(r: Fields, config: GameConfig) -> HandRecord:
    n = config.num_players
    dealer = r.integer("dealer", 0, n - 1)
    deck = [r.card(f"deck[{i}]", code) for i, code in enumerate(r.items("deck", config.deck_size))]
    try:
        Hand(config, deck, dealer)
    except ValueError as exc:
        raise r.error("deck", str(exc)) from None
    deal_events = tuple(event_from_json(r, f"deal_events[{i}]", raw, config)
                        for i, raw in enumerate(r.items("deal_events")))
    moves = tuple(_read_move(r.child(f"moves[{i}]", _MOVE_FIELDS, raw=raw), config)
                  for i, raw in enumerate(r.items("moves")))
    if not moves:
        raise r.error("moves", "a hand has at least one move")
    return HandRecord(dealer, tuple(deck), deal_events, moves, r.seats("winners", n), r.ints("hand_points", n, 0),
                      r.ints("score_deltas", n), r.ints("scores", n))


def _read_move(r: Fields, config: GameConfig) -> Move:
    seat = r.integer("seat", 0, config.num_players - 1)
    action = r.integer("action", 0, NUM_ACTIONS - 1)
    expected = move_code(action)
    if r.data["card"] != expected:
        raise r.error("card", f"action {action} is {expected!r}, got {shown(r.data['card'])}")
    events = tuple(event_from_json(r, f"events[{i}]", raw, config) for i, raw in enumerate(r.items("events")))
    return Move(seat, action, events)


def _read_result(r: Fields, config: GameConfig, episode: str) -> EpisodeResult:
    n = config.num_players
    if r.data["episode"] != episode:
        raise r.error("episode", f"must equal the record's episode {episode!r}, got {shown(r.data['episode'])}")
    result = EpisodeResult(episode, r.seats("winners", n), r.ints("points", n), r.integer("hands", 1, 10**6),
                           r.ints("hand_points", n, 0), r.seats("last_hand_winners", n), r.ints("standing", n))
    rewards = r.numbers("rewards", n)
    expected = win_rewards(n, result.winners)
    if any(abs(v - e) > 1e-9 for v, e in zip(rewards, expected)):
        raise r.error("rewards", f"must be the win rewards of the winners {list(result.winners)}: {expected}, "
                                 f"got {list(rewards)}")
    return result


# -- replay -------------------------------------------------------------------------------------------
class ReplayStep(NamedTuple):
    """One step of a replay: the deal of a hand (``move`` is None) or one move, with the state after it."""

    hand_index: int
    move_index: int | None
    """None for the deal."""
    move: Move | None
    hand: Hand
    """The hand after the step (a copy: it may be kept)."""
    events: tuple[Event, ...]
    scores: tuple[int, ...]
    """Each seat's total before the current hand is scored."""


def replay(record: GameRecord) -> Generator[ReplayStep, None, EpisodeResult]:
    """Play the record again on the engine, one :class:`ReplayStep` per deal and per move, and return its result:
    each move must be legal and cause the recorded events, each hand and the episode end as recorded; ValueError
    naming the hand and the move otherwise."""
    result = yield from _replay_steps(record.config, record.episode, record.hands)
    _check_equal("result", result, record.result)
    return result


def _replay_steps(config: GameConfig, episode: str,
                  hands: Sequence[HandRecord]) -> Generator[ReplayStep, None, EpisodeResult]:
    match = Match(config, np.random.default_rng(0), hands[0].deck, hands[0].dealer)
    result = None
    for h, recorded in enumerate(hands):
        where = f"hands[{h}]"
        if result is not None:
            raise ValueError(f"{where}: the episode was already over after hand {h - 1}")
        if h > 0:
            if recorded.dealer != match.hand.dealer:
                raise ValueError(f"{where}.dealer: the next dealer is P{match.hand.dealer} (R1.2, R2.2), "
                                 f"the record says P{recorded.dealer}")
            match.hand = recorded.deal(config)  # the recorded deal replaces the one the match drew
        hand = match.hand
        if tuple(hand.events) != recorded.deal_events:
            raise ValueError(f"{where}.deal_events: dealing gives {_events_text(hand.events)}, "
                             f"the record says {_events_text(recorded.deal_events)}")
        scores = tuple(match.scores)
        yield ReplayStep(h, None, None, hand.copy(), recorded.deal_events, scores)
        for m, move in enumerate(recorded.moves):
            yield _replay_move(hand, move, f"{where}.moves[{m}]", h, m, scores)
        if not hand.over:
            raise ValueError(f"{where}.moves: the hand is not over after its {len(recorded.moves)} recorded moves")
        _check_equal(f"{where}.winners", tuple(hand.winners()), recorded.winners)
        _check_equal(f"{where}.hand_points", tuple(hand.hand_points()), recorded.hand_points)
        result = end_hand(match, episode)
        deltas = tuple(match.results[-1].score_deltas if episode == "match"
                       else score_deltas(config, hand.winner, hand.hand_points()))  # a one-hand episode: unscored
        _check_equal(f"{where}.score_deltas", deltas, recorded.score_deltas)
        _check_equal(f"{where}.scores", tuple(match.scores) if episode == "match" else deltas, recorded.scores)
    if result is None:
        raise ValueError(f"hands: the match is not over after the {len(hands)} recorded hands")
    return result


def _run_to_end(steps: Generator[ReplayStep, None, EpisodeResult]) -> EpisodeResult:
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value


def _replay_move(hand: Hand, move: Move, where: str, h: int, m: int, scores: tuple[int, ...]) -> ReplayStep:
    if hand.over:
        raise ValueError(f"{where}: the hand is already over; this move and any after it are extra")
    if move.seat != hand.current:
        raise ValueError(f"{where}.seat: P{hand.current} is to move, the record says P{move.seat}")
    before = len(hand.events)
    try:
        hand.apply(move.action)
    except IllegalActionError as exc:
        raise ValueError(f"{where}.action: {move.card} is not legal: {exc}") from None
    events = tuple(hand.events[before:])
    if events != move.events:
        raise ValueError(f"{where}.events: the engine gives {_events_text(events)}, "
                         f"the record says {_events_text(move.events)}")
    return ReplayStep(h, m, move, hand.copy(), events, scores)


def _check_equal(where: str, got: Any, recorded: Any) -> None:
    if got != recorded:
        raise ValueError(f"{where}: the replay gives {got}, the record says {recorded}")


def _events_text(events: Iterable[Event]) -> str:
    return str([event_to_json(e) for e in events])


def verify(record: GameRecord) -> EpisodeResult:
    """Replay the whole record (:func:`replay`) and return its result."""
    return _run_to_end(replay(record))


__all__ = [
    "DRAW_WORD", "FORMAT", "VERSION", "GameRecord", "HandRecord", "Move", "Recorder",
    "ReplayStep", "check_recordable", "deck_of", "dumps_record", "from_dict", "loads_record", "loads_records",
    "move_code", "read", "record_episode", "replay", "verify", "write",
]
