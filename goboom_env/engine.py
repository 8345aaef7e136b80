"""The rules of Go Boom as a pure engine (RULES.md R1, R2, R3): no RL imports, no global state.

Two layers:

* :class:`Hand` is one deal, from a fixed deck order to the moment a player goes out or the
  round is blocked. Its methods are the whole rulebook of a deal: :meth:`Hand.legal_mask`,
  :meth:`Hand.legal_actions`, :meth:`Hand.apply`.
* :class:`Match` is a game of several hands with scoring (R1.11, R1.12, R2.11, R2.12) and
  dealer rotation (R1.2, R2.2); randomness comes from a ``numpy.random.Generator`` passed in.

Actions follow R3.1: ``0..52`` play a card of that face, ``53`` = DRAW_OR_PASS. A ten-line game::

    >>> import numpy as np
    >>> from goboom_env.config import GameConfig
    >>> from goboom_env.engine import Match
    >>> rng = np.random.default_rng(0)
    >>> match = Match(GameConfig(variant="jokers", num_players=3), rng)
    >>> while not match.over:
    ...     hand = match.hand
    ...     while not hand.over:
    ...         hand.apply(int(rng.choice(hand.legal_actions())))
    ...     _ = match.finish_hand()
    >>> len(match.results) == 3
    True
"""

from __future__ import annotations

import enum
import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from goboom_env.cards import (
    ACES_MASK,
    CLASSIC_POINTS,
    DRAW_OR_PASS,
    JOKER,
    JOKER_BIT,
    JOKERS_POINTS,
    MATCH_MASKS,
    NUM_FACES,
    code_of,
    deck_faces,
    face_of,
    faces_in,
)
from goboom_env.config import GameConfig, as_int

DRAW_BIT = 1 << DRAW_OR_PASS
NOT_PLAYED = -1
"""``Hand.trick`` entry of a seat that has not had its turn in the current trick yet."""
PASSED = -2
"""``Hand.trick`` entry of a seat that drew without matching and passed (R1.6)."""


class IllegalActionError(ValueError):
    """An action that the rules do not allow in this state (R3.2)."""


class Phase(enum.IntEnum):
    """Where a hand stands: who does what next."""

    LEAD = 0
    """Classic: the player to move leads a new trick with any card (R1.4, R1.8)."""
    FOLLOW = 1
    """Classic: the player to move follows the led card or draws (R1.5, R1.6)."""
    DISCARD = 2
    """Jokers: the player to move matches the match card, booms, draws or passes (R2.5-R2.7)."""
    OVER = 3
    """Somebody went out (R1.9, R2.9) or the round is blocked (R2.10)."""


# Aliases for the hot paths: a module global is read about three times faster than
# the enum class attribute ``Phase.LEAD``, and legality is checked on every decision.
_LEAD, _FOLLOW, _DISCARD, _OVER = Phase


class Hand:
    """One deal of Go Boom, played from a fixed deck order (R0.5).

    Public attributes are read by the observation encoder, the renderer and the agents; only
    :meth:`apply` changes them. Sets of faces are bitmasks (see :mod:`goboom_env.cards`).
    """

    __slots__ = (
        "_after_any",
        "_boom_mask",
        "_legal",
        "_points",
        "best_face",
        "best_seat",
        "blocked",
        "classic",
        "config",
        "counts",
        "current",
        "dealer",
        "drawn",
        "events",
        "leader",
        "led",
        "masks",
        "match_face",
        "n",
        "passes",
        "phase",
        "seen",
        "sizes",
        "stock",
        "top",
        "trick",
        "turns",
        "winner",
    )

    def __init__(self, config: GameConfig, deck: Sequence[int], dealer: int) -> None:
        """Deal ``deck`` (faces, index 0 = top) from ``dealer``'s seat (R1.3, R2.3)."""
        n = config.num_players
        _check_deck(config, deck)
        seat = as_int(dealer)
        if seat is None or not 0 <= seat < n:
            raise ValueError(f"dealer must be a seat in 0..{n - 1}, got {dealer!r}")
        self.config = config
        self.n = n
        self.classic = config.is_classic
        self.dealer = seat
        self.counts = [bytearray(NUM_FACES) for _ in range(n)]
        self.masks = [0] * n
        self.seen = bytearray(NUM_FACES)
        self.drawn = [0] * n
        self.events: list[tuple] = []
        self.trick = [NOT_PLAYED] * n
        self.leader = self.led = self.best_face = self.best_seat = -1
        self.turns = self.passes = 0
        self.top = self.match_face = -1
        self.winner: int | None = None
        self.blocked = False
        self._boom_mask = ACES_MASK if config.aces_mode else JOKER_BIT
        self._after_any = config.after_joker == "any" and not config.aces_mode
        self._points = CLASSIC_POINTS if self.classic else JOKERS_POINTS
        self._legal = -1
        dealt = config.hand_size * n
        counts, masks, first = self.counts, self.masks, self.dealer + 1
        for i in range(dealt):  # one card at a time from the dealer's left (R1.3); _give inlined
            face = int(deck[i])
            counts[(first + i) % n][face] += 1
            masks[(first + i) % n] |= 1 << face
        self.sizes = [config.hand_size] * n
        self.stock = [int(f) for f in reversed(deck[dealt:])]  # top of the stock = last item
        self.current = (self.dealer + 1) % n  # R1.4, R2.4
        if self.classic:
            self.phase = Phase.LEAD
        else:
            self.phase = Phase.DISCARD
            self._turn_up()

    # -- queries ---------------------------------------------------------------------------

    @property
    def over(self) -> bool:
        """True once a player went out or the round is blocked."""
        return self.phase == _OVER

    def legal_mask(self) -> int:
        """Legal actions of the player to move as a bitmask over the 54 actions (R3.2)."""
        legal = self._legal
        if legal >= 0:
            return legal
        hand = self.masks[self.current]
        phase = self.phase
        if phase == _LEAD:
            legal = hand
        elif phase == _FOLLOW:
            legal = (hand & MATCH_MASKS[self.led]) or DRAW_BIT
        elif phase == _DISCARD:
            boom = self._boom_mask
            if self._after_any and self.top == JOKER:
                matching = hand & ~boom
            else:
                matching = hand & MATCH_MASKS[self.match_face] & ~boom
            legal = matching | (hand & boom) if matching else (hand & boom) | DRAW_BIT
        else:
            legal = 0
        self._legal = legal
        return legal

    def legal_actions(self) -> list[int]:
        """Legal actions of the player to move, ascending (empty once the hand is over)."""
        return faces_in(self.legal_mask())

    def hand_faces(self, seat: int) -> list[int]:
        """The faces in ``seat``'s hand, ascending, one entry per card."""
        counts = self.counts[seat]
        return [f for f in faces_in(self.masks[seat]) for _ in range(counts[f])]

    def hand_points(self) -> list[int]:
        """Points of the cards left in each hand (R1.10 classic, R2.11 jokers)."""
        pts = self._points
        return [sum(counts[f] * pts[f] for f in faces_in(mask)) for counts, mask in zip(self.counts, self.masks)]

    def winners(self) -> list[int]:
        """Seats that won the hand: the one who went out, or after a blocked round (R2.10)
        the players with the fewest hand points. Empty while the hand is running."""
        if self.winner is not None:
            return [self.winner]
        if not self.blocked:
            return []
        points = self.hand_points()
        low = min(points)
        return [s for s, p in enumerate(points) if p == low]

    # -- the one mutator ----------------------------------------------------------------------

    def apply(self, action: int) -> None:
        """Play ``action`` (R3.1) for the player to move; raises :class:`IllegalActionError`."""
        if type(action) is not int:
            action = _as_action(action)
        legal = self._legal if self._legal >= 0 else self.legal_mask()
        if action < 0 or action > DRAW_OR_PASS or not (legal >> action) & 1:
            raise self._illegal(action)
        self._legal = -1
        if self.classic:
            self._classic_step(action)
        else:
            self._jokers_step(action)

    def _illegal(self, action: Any) -> IllegalActionError:
        if self.over:
            return IllegalActionError(f"the hand is over; no action is legal (got {action!r})")
        return IllegalActionError(
            f"action {action!r} is not legal for seat {self.current}; legal actions: "
            f"{self.legal_actions()} (R3.2)"
        )

    # -- classic (R1) ----------------------------------------------------------------------------

    def _classic_step(self, action: int) -> None:
        seat = self.current
        if action != DRAW_OR_PASS:
            self._take(seat, action)
            self._classic_play(seat, action)
            return
        stock = self.stock
        match = MATCH_MASKS[self.led]
        drawn = 0
        while stock:  # R1.6: draw until a card matches the led card, then play it
            face = stock.pop()
            drawn += 1
            if (match >> face) & 1:
                self.drawn[seat] += drawn
                self.events.append(("draw", seat, drawn))
                self._classic_play(seat, face)  # the matching card goes straight to the trick
                return
            self._give(seat, face)
        if drawn:
            self.drawn[seat] += drawn
            self.events.append(("draw", seat, drawn))
        self.events.append(("pass", seat))
        self.trick[seat] = PASSED
        self._classic_next(seat)

    def _classic_play(self, seat: int, face: int) -> None:
        self.events.append(("play", seat, face))
        self.seen[face] += 1
        self.trick[seat] = face
        if self.phase == _LEAD:
            self.phase = _FOLLOW
            self.leader = self.best_seat = seat
            self.led = self.best_face = face
        elif face // 13 == self.led // 13 and face > self.best_face:  # R1.7: first of twins wins
            self.best_face = face
            self.best_seat = seat
        if not self.sizes[seat]:
            self._go_out(seat)  # R1.9, even mid-trick or on the lead
            return
        self._classic_next(seat)

    def _classic_next(self, seat: int) -> None:
        self.turns += 1
        if self.turns < self.n:
            self.current = (seat + 1) % self.n
            return
        winner = self.best_seat  # R1.7, R1.8
        self.events.append(("trick", winner))
        self.current = winner
        self.phase = _LEAD
        self.turns = 0
        self.trick = [NOT_PLAYED] * self.n
        self.leader = self.led = self.best_face = self.best_seat = -1

    # -- jokers (R2) ------------------------------------------------------------------------------

    def _turn_up(self) -> None:
        """R2.3: turn the stock's top card up; a joker is buried at the bottom instead."""
        stock = self.stock
        while True:
            face = stock.pop()
            if face == JOKER:
                stock.insert(0, face)
                self.events.append(("bury", face))
                continue
            self.top = self.match_face = face
            self.seen[face] += 1
            self.events.append(("upcard", face))
            return

    def _jokers_step(self, action: int) -> None:
        seat = self.current
        n = self.n
        if action == DRAW_OR_PASS:  # R2.7: draw exactly one, or pass on an empty stock
            if self.stock:
                self._give(seat, self.stock.pop())
                self.drawn[seat] += 1
                self.events.append(("draw", seat, 1))
            else:
                self.events.append(("pass", seat))
                self.passes += 1
                if self.passes == n:  # R2.10
                    self.blocked = True
                    self.phase = Phase.OVER
                    self.events.append(("blocked",))
                    return
            self.current = (seat + 1) % n
            return
        self._take(seat, action)
        self.seen[action] += 1
        self.events.append(("play", seat, action))
        self.passes = 0
        self.top = action
        if (self._boom_mask >> action) & 1:  # R2.6, R2.8
            if action != JOKER:
                self.match_face = action
            self.events.append(("boom", seat))
            stock = self.stock
            for k in range(1, n):
                if not stock:
                    break
                other = (seat + k) % n
                self._give(other, stock.pop())
                self.drawn[other] += 1
                self.events.append(("draw", other, 1))
        else:
            self.match_face = action
        if not self.sizes[seat]:
            self._go_out(seat)  # R2.9
            return
        self.current = (seat + 1) % n

    # -- shared helpers ---------------------------------------------------------------------------

    def _give(self, seat: int, face: int) -> None:
        counts = self.counts[seat]
        counts[face] += 1
        self.masks[seat] |= 1 << face
        self.sizes[seat] += 1

    def _take(self, seat: int, face: int) -> None:
        counts = self.counts[seat]
        left = counts[face] - 1
        counts[face] = left
        if not left:
            self.masks[seat] &= ~(1 << face)
        self.sizes[seat] -= 1

    def _go_out(self, seat: int) -> None:
        self.events.append(("out", seat))
        self.winner = seat
        self.phase = Phase.OVER

    # -- copying and serialisation ---------------------------------------------------------------

    def copy(self) -> Hand:
        """An independent copy (for search agents and tests); the event log is shared-nothing."""
        new = Hand.__new__(Hand)
        for name in Hand.__slots__:
            setattr(new, name, getattr(self, name))
        new.counts = [bytearray(c) for c in self.counts]
        new.masks = list(self.masks)
        new.sizes = list(self.sizes)
        new.stock = list(self.stock)
        new.seen = bytearray(self.seen)
        new.drawn = list(self.drawn)
        new.events = list(self.events)
        new.trick = list(self.trick)
        return new

    def to_dict(self) -> dict[str, Any]:
        """Exact JSON-friendly state (cards as codes); :meth:`from_dict` restores it."""
        return {
            "config": self.config.to_dict(),
            "dealer": self.dealer,
            "hands": [[code_of(f) for f in self.hand_faces(s)] for s in range(self.n)],
            "stock": [code_of(f) for f in reversed(self.stock)],
            "seen": [code_of(f) for f in range(NUM_FACES) for _ in range(self.seen[f])],
            "drawn": list(self.drawn),
            "events": [event_to_json(e) for e in self.events],
            "current": self.current,
            "phase": self.phase.name,
            "trick": [_trick_to_json(t) for t in self.trick],
            "leader": self.leader,
            "led": _face_or_none(self.led),
            "best_face": _face_or_none(self.best_face),
            "best_seat": self.best_seat,
            "turns": self.turns,
            "top": _face_or_none(self.top),
            "match_face": _face_or_none(self.match_face),
            "passes": self.passes,
            "winner": self.winner,
            "blocked": self.blocked,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Hand:
        """Restore a hand saved by :meth:`to_dict`. Every field is checked: its type and range, and
        that the state holds together (each card of the deck exactly once across the hands, the
        stock and the cards out of play; a phase, trick and pile that fit the variant; a winner with
        an empty hand). Anything else raises ValueError naming the field."""
        state = _read_hand(data)
        config = state["config"]
        new = cls.__new__(cls)
        new.n, new.classic = config.num_players, config.is_classic
        new.counts = [bytearray(NUM_FACES) for _ in range(new.n)]
        new.masks, new.sizes = [0] * new.n, [0] * new.n
        for seat, faces in enumerate(state.pop("hands")):
            for face in faces:
                new._give(seat, face)
        new.seen = bytearray(NUM_FACES)
        for face in state.pop("seen"):
            new.seen[face] += 1
        for name, value in state.items():
            setattr(new, name, value)
        new._boom_mask = ACES_MASK if config.aces_mode else JOKER_BIT
        new._after_any = config.after_joker == "any" and not config.aces_mode
        new._points = CLASSIC_POINTS if new.classic else JOKERS_POINTS
        new._legal = -1
        return new


@dataclass(frozen=True)
class HandResult:
    """How one hand ended and what it did to the scores."""

    winner: int | None
    """Seat that went out, or None for a blocked round (R2.10)."""
    blocked: bool
    winners: tuple[int, ...]
    """Hand winners: the one who went out, or the lowest hand points after a blocked round."""
    hand_points: tuple[int, ...]
    """Points left in each hand (R1.10 / R2.11)."""
    score_deltas: tuple[int, ...]
    """What each seat added to its total (R1.11, R1.12, R2.11)."""
    dealer: int


class Match:
    """A game of Go Boom: hands dealt in turn until the match ends (R1.11, R1.12, R2.2, R2.12).

    ``deck`` (faces or codes, index 0 = top) and ``dealer`` fix the first hand; later hands
    are shuffled with ``rng``. Call :meth:`finish_hand` once :attr:`hand` is over.
    """

    def __init__(
        self,
        config: GameConfig,
        rng: np.random.Generator,
        deck: Sequence[int | str] | None = None,
        dealer: int | None = None,
    ) -> None:
        self.config = config
        self.rng = rng
        self.scores = [0] * config.num_players
        self.results: list[HandResult] = []
        self.over = False
        self.winners: list[int] = []
        first = int(rng.integers(config.num_players)) if dealer is None else dealer  # R1.2, R2.2
        self.hand = Hand(config, self._deck(deck), first)

    def _deck(self, deck: Sequence[int | str] | None) -> list[int]:
        if deck is None:
            faces = _deck_multiset(self.config.num_decks, self.config.num_jokers)
            return [faces[i] for i in self.rng.permutation(len(faces))]
        return [face_of(c) if isinstance(c, str) else c for c in deck]

    def finish_hand(self) -> HandResult:
        """Score the finished hand, then end the match or deal the next hand (dealer + 1)."""
        hand = self.hand
        if not hand.over:
            raise RuntimeError("finish_hand() called while the hand is still being played")
        if self.over:
            raise RuntimeError("the match is over")
        points = hand.hand_points()
        deltas = score_deltas(self.config, hand.winner, points)
        self.scores = [s + d for s, d in zip(self.scores, deltas)]
        result = HandResult(
            hand.winner, hand.blocked, tuple(hand.winners()), tuple(points), tuple(deltas), hand.dealer
        )
        self.results.append(result)
        self.winners = match_winners(self.config, self.scores, len(self.results))
        self.over = bool(self.winners)
        if not self.over:
            self.hand = Hand(self.config, self._deck(None), (hand.dealer + 1) % self.config.num_players)
        return result

    @property
    def hands_played(self) -> int:
        """Hands finished so far."""
        return len(self.results)

    def to_dict(self) -> dict[str, Any]:
        """Exact JSON-friendly match state, including the generator's state."""
        return {
            "config": self.config.to_dict(),
            "scores": list(self.scores),
            "results": [r.__dict__ | {"winners": list(r.winners), "hand_points": list(r.hand_points),
                                      "score_deltas": list(r.score_deltas)} for r in self.results],
            "over": self.over,
            "winners": list(self.winners),
            "hand": self.hand.to_dict(),
            "rng": self.rng.bit_generator.state,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Match:
        """Restore a match saved by :meth:`to_dict`. Besides the hand (see :meth:`Hand.from_dict`),
        the finished hands must follow the scoring rules and add up to the scores, and the match
        must be over exactly when its winners say so; otherwise ValueError naming the field."""
        new = cls.__new__(cls)
        for name, value in _read_match(data).items():
            setattr(new, name, value)
        return new


# -- scoring (pure functions) ----------------------------------------------------------------------


def score_deltas(config: GameConfig, winner: int | None, points: Sequence[int]) -> list[int]:
    """What each seat adds to its total after a hand (R1.11, R1.12, R2.11)."""
    if config.scoring == "standard":
        deltas = [0] * len(points)
        if winner is not None:
            deltas[winner] = sum(points)
        return deltas
    return list(points)  # reverse and penalty: own points; the player who went out holds 0


def match_winners(config: GameConfig, scores: Sequence[int], hands_played: int) -> list[int]:
    """The match's winners if it is over, else ``[]`` (R1.11, R1.12, R2.2, R2.12)."""
    if config.scoring == "standard":
        return [s for s, v in enumerate(scores) if v >= config.target_score]
    if config.scoring == "reverse":
        ended = max(scores) >= config.target_score
    else:
        ended = hands_played >= config.rounds
    if not ended:
        return []
    low = min(scores)
    return [s for s, v in enumerate(scores) if v == low]


def win_rewards(num_players: int, winners: Sequence[int]) -> list[float]:
    """Zero-sum win reward: each of k winners gets (n/k - 1)/(n - 1), the others -1/(n - 1)."""
    n, k = num_players, len(winners)
    if k == 0:
        return [0.0] * n
    rewards = [-1.0 / (n - 1)] * n
    for s in winners:
        rewards[s] = (n / k - 1.0) / (n - 1)
    return rewards


# -- events and deck checks -------------------------------------------------------------------------


def event_to_json(event: tuple) -> list:
    """An engine event with faces turned into card codes (the format of tests/data/hands.json)."""
    kind = event[0]
    if kind == "play":
        return ["play", event[1], code_of(event[2])]
    if kind in ("upcard", "bury"):
        return [kind, code_of(event[1])]
    return list(event)


_NUMPY_INTS = frozenset(np.dtype(c).type for c in "bBhHiIlLqQ")
"""The numpy integer scalar types (np.int8 ... np.uint64), accepted as actions."""


def _as_action(action: Any) -> int:
    """An action as a Python int: numpy integers and 0-d integer arrays (what a policy's
    ``predict`` returns) are accepted like ints; bools and anything else raise."""
    if type(action) in _NUMPY_INTS:  # fast path for what rng.choice and argmax return
        return int(action)
    value = as_int(action)
    if value is None:
        raise IllegalActionError(action_type_error(action))
    return value


def action_type_error(action: Any) -> str:
    """The message for an action that is not an integer at all (a bool, a float, a string...)."""
    is_bool = isinstance(action, (bool, np.bool_)) or getattr(action, "dtype", None) == np.bool_
    kind = "a bool, not an integer" if is_bool else f"of type {type(action).__name__}"
    return (f"an action must be an integer in 0..{DRAW_OR_PASS} (an int, a numpy integer or a 0-d integer "
            f"array), got {action!r} ({kind})")


@functools.lru_cache(maxsize=64)
def _deck_multiset(num_decks: int, num_jokers: int) -> tuple[int, ...]:
    """:func:`deck_faces` (already sorted) as a cached tuple: every deal shuffles and checks it."""
    return tuple(deck_faces(num_decks, num_jokers))


def _check_deck(config: GameConfig, deck: Sequence[int]) -> None:
    expected = list(_deck_multiset(config.num_decks, config.num_jokers))
    try:
        got = sorted(map(int, deck))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"deck must be a list of card faces or codes: {exc}") from exc
    if got != expected:
        missing = sorted((Counter(expected) - Counter(got)).elements())
        extra = sorted((Counter(got) - Counter(expected)).elements())
        raise ValueError(
            f"deck is not the configured multiset of {len(expected)} cards "
            f"({config.num_decks} deck(s), {config.num_jokers} joker(s)): got {len(got)} cards; "
            f"missing {[_safe_code(f) for f in missing][:10]}, unexpected {[_safe_code(f) for f in extra][:10]}"
        )


def _safe_code(face: int) -> str:
    return code_of(face) if 0 <= face <= JOKER else repr(face)


def _face_or_none(face: int) -> str | None:
    return None if face < 0 else code_of(face)


def _trick_to_json(entry: int) -> str | int:
    return code_of(entry) if entry >= 0 else entry


# -- restoring saved states: every field read with its type and range, then checked for consistency ----

_HAND_FIELDS = (
    "config", "dealer", "hands", "stock", "seen", "drawn", "events", "current", "phase", "trick", "leader",
    "led", "best_face", "best_seat", "turns", "top", "match_face", "passes", "winner", "blocked",
)
_MATCH_FIELDS = ("config", "scores", "results", "over", "winners", "hand", "rng")
_RESULT_FIELDS = ("winner", "blocked", "winners", "hand_points", "score_deltas", "dealer")
_EVENT_ARGS: dict[str, tuple[str, ...]] = {
    "play": ("seat", "face"), "draw": ("seat", "count"), "pass": ("seat",), "trick": ("seat",),
    "out": ("seat",), "upcard": ("face",), "bury": ("face",), "boom": ("seat",), "blocked": (),
}
"""The arguments of each engine event (see the ``events.append`` calls above)."""
_CLASSIC_EVENTS = frozenset({"play", "draw", "pass", "trick", "out"})
_JOKERS_EVENTS = frozenset({"upcard", "bury", "play", "draw", "pass", "boom", "out", "blocked"})


_MISSING: Any = object()
"""Default of the :class:`_Reader` methods' ``raw`` argument: read the value from the dict."""


class _Reader:
    """Typed reads of one saved-state dict; every error is a ValueError naming the field."""

    def __init__(self, data: Any, what: str, fields: Sequence[str]) -> None:
        self.what = what
        if not isinstance(data, dict):
            raise ValueError(f"malformed {what}: expected a dict with keys {list(fields)}, got {type(data).__name__}")
        missing = [f for f in fields if f not in data]
        unknown = sorted(repr(k) for k in data if k not in fields)
        if missing or unknown:
            problems = [f"missing fields {missing}"] if missing else []
            problems += [f"unknown fields [{', '.join(unknown)}]"] if unknown else []
            raise ValueError(f"malformed {what}: {' and '.join(problems)}")
        self.data = data

    def error(self, field: str, problem: str) -> ValueError:
        return ValueError(f"malformed {self.what}: {field} {problem}")

    def integer(self, field: str, lo: int, hi: int, raw: Any = _MISSING) -> int:
        """An integer in ``lo..hi`` (bools and floats are not integers)."""
        raw = self.data[field] if raw is _MISSING else raw
        value = as_int(raw)
        if value is None or not lo <= value <= hi:
            raise self.error(field, f"must be an integer in {lo}..{hi}, got {raw!r}")
        return value

    def seat(self, field: str, n: int, unset: Any = _MISSING, raw: Any = _MISSING) -> Any:
        """A seat in ``0..n-1``, or ``unset`` (``None`` or ``-1``) where the field may be empty."""
        raw = self.data[field] if raw is _MISSING else raw
        if unset is not _MISSING and (raw is unset if unset is None else as_int(raw) == unset):
            return unset
        value = as_int(raw)
        if value is None or not 0 <= value < n:
            allowed = "a seat" if unset is _MISSING else f"{'null' if unset is None else unset} or a seat"
            raise self.error(field, f"must be {allowed} in 0..{n - 1}, got {raw!r}")
        return value

    def flag(self, field: str, raw: Any = _MISSING) -> bool:
        raw = self.data[field] if raw is _MISSING else raw
        if not isinstance(raw, (bool, np.bool_)):
            raise self.error(field, f"must be true or false, got {raw!r}")
        return bool(raw)

    def items(self, field: str, length: int | None = None, raw: Any = _MISSING) -> list:
        raw = self.data[field] if raw is _MISSING else raw
        if not isinstance(raw, (list, tuple)):
            raise self.error(field, f"must be a list, got {type(raw).__name__}")
        if length is not None and len(raw) != length:
            raise self.error(field, f"must have {length} entries (one per seat), got {len(raw)}")
        return list(raw)

    def face(self, field: str, raw: Any = _MISSING, optional: bool = False) -> int:
        """A card code (``"7D"``, ``"JK"``) as a face; ``None`` is -1 where ``optional``."""
        raw = self.data[field] if raw is _MISSING else raw
        if raw is None and optional:
            return -1
        if not isinstance(raw, str):
            expected = "a card code like '7D' or null" if optional else "a card code like '7D'"
            raise self.error(field, f"must be {expected}, got {raw!r}")
        try:
            return face_of(raw)
        except ValueError as exc:
            raise self.error(field, f"is not a card: {exc}") from None

    def faces(self, field: str, raw: Any = _MISSING) -> list[int]:
        return [self.face(f"{field}[{i}]", code) for i, code in enumerate(self.items(field, raw=raw))]

    def config(self) -> GameConfig:
        try:
            return GameConfig.from_dict(self.data["config"])
        except ValueError as exc:
            raise self.error("config", f"is not a valid GameConfig: {exc}") from None


def _read_event(r: _Reader, field: str, raw: Any, config: GameConfig) -> tuple:
    """One event of the log, checked against the variant's event kinds and the seats."""
    kinds = _CLASSIC_EVENTS if config.is_classic else _JOKERS_EVENTS
    items = r.items(field, raw=raw)
    if not items or not isinstance(items[0], str) or items[0] not in kinds:
        raise r.error(field, f"must be [kind, ...] with kind one of {sorted(kinds)} for variant "
                             f"{config.variant!r}, got {raw!r}")
    kind, args = items[0], items[1:]
    names = _EVENT_ARGS[kind]
    if len(args) != len(names):
        raise r.error(field, f"must be [{', '.join([repr(kind), *names])}], got {raw!r}")
    values: list[Any] = [kind]
    for name, arg in zip(names, args):
        if name == "seat":
            values.append(r.seat(field, config.num_players, raw=arg))
        elif name == "face":
            values.append(r.face(field, arg))
        else:  # a draw's card count: one in jokers (R2.7), at least one in classic (R1.6)
            values.append(r.integer(field, 1, 1 if not config.is_classic else config.deck_size, arg))
    return tuple(values)


def _read_trick_entry(r: _Reader, field: str, raw: Any) -> int:
    if isinstance(raw, str):
        return r.face(field, raw)
    if as_int(raw) in (NOT_PLAYED, PASSED):
        return as_int(raw)
    raise r.error(field, f"must be a card code, {NOT_PLAYED} (not played yet) or {PASSED} (passed), got {raw!r}")


def _read_hand(data: Any) -> dict[str, Any]:
    """The fields of a saved hand, typed and range-checked, then checked to hold together."""
    r = _Reader(data, "hand state", _HAND_FIELDS)
    config = r.config()
    n, classic = config.num_players, config.is_classic
    hands = r.items("hands", n)
    phases = (Phase.LEAD, Phase.FOLLOW, Phase.OVER) if classic else (Phase.DISCARD, Phase.OVER)
    phase = data["phase"]
    if phase not in [p.name for p in phases]:
        names = [p.name for p in phases]
        raise r.error("phase", f"must be one of {names} for variant {config.variant!r}, got {phase!r}")
    state = {
        "config": config,
        "dealer": r.seat("dealer", n),
        "hands": [r.faces(f"hands[{seat}]", h) for seat, h in enumerate(hands)],
        "stock": r.faces("stock")[::-1],  # saved top first; the engine pops the top from the end
        "seen": r.faces("seen"),
        "drawn": [r.integer(f"drawn[{seat}]", 0, config.deck_size, d) for seat, d in enumerate(r.items("drawn", n))],
        "events": [_read_event(r, f"events[{i}]", e, config) for i, e in enumerate(r.items("events"))],
        "current": r.seat("current", n),
        "phase": Phase[phase],
        "trick": [_read_trick_entry(r, f"trick[{seat}]", t) for seat, t in enumerate(r.items("trick", n))],
        "leader": r.seat("leader", n, unset=-1),
        "led": r.face("led", optional=True),
        "best_face": r.face("best_face", optional=True),
        "best_seat": r.seat("best_seat", n, unset=-1),
        "turns": r.integer("turns", 0, n - 1),
        "top": r.face("top", optional=True),
        "match_face": r.face("match_face", optional=True),
        "passes": r.integer("passes", 0, n),
        "winner": r.seat("winner", n, unset=None),
        "blocked": r.flag("blocked"),
    }
    _check_cards(r, state)
    _check_progress(r, state)
    if classic:
        _check_classic_trick(r, state)
    else:
        _check_discard_pile(r, state)
    return state


def _check_cards(r: _Reader, state: dict[str, Any]) -> None:
    """Every card of the deck exactly once across the hands, the stock and the cards out of play;
    the stock and the draw counters fit the deck."""
    config = state["config"]
    cards = [f for hand in state["hands"] for f in hand] + state["stock"] + state["seen"]
    try:
        _check_deck(config, cards)
    except ValueError as exc:
        raise r.error("hands + stock + seen cards", f"do not make up the deck: {exc}") from None
    if sum(state["drawn"]) + len(state["stock"]) > config.deck_size:
        raise r.error("drawn", f"counts cards drawn from the stock: drawn {state['drawn']} plus the "
                               f"{len(state['stock'])} cards left cannot exceed the deck's {config.deck_size}")


def _check_progress(r: _Reader, state: dict[str, Any]) -> None:
    """Who holds cards, who won, and the pass count fit the phase."""
    n, phase, winner, blocked = state["config"].num_players, state["phase"], state["winner"], state["blocked"]
    if blocked and state["config"].is_classic:
        raise r.error("blocked", "must be false in classic Go Boom (only jokers rounds block, R2.10)")
    if phase == _OVER and (winner is None) == (not blocked):
        raise r.error("phase", "OVER needs either a winner or a blocked round (not both)")
    if phase != _OVER and (winner is not None or blocked):
        raise r.error("winner", f"and blocked must be null and false while the hand runs (phase {phase.name})")
    for seat, hand in enumerate(state["hands"]):
        if (seat == winner) != (not hand):
            problem = f"is empty but the winner is {winner}" if not hand else "holds cards but it is the winner's"
            raise r.error(f"hands[{seat}]", problem)
    if winner is not None and state["current"] != winner:
        raise r.error("current", f"must be the winner {winner} once the hand is over (the seat that went out)")
    if blocked != (state["passes"] == n):
        raise r.error("passes", f"reaches {n} (num_players) exactly when the round is blocked (R2.10), "
                                f"got {state['passes']} with blocked={blocked}")
    if state["passes"] and state["stock"]:
        raise r.error("passes", "counts passes on an empty stock (R2.7), but the stock still holds cards")


def _check_classic_trick(r: _Reader, state: dict[str, Any]) -> None:
    """Classic: the trick in progress is played in seat order from its leader, each card follows the
    led card (R1.5), and the best card and seat are the ones R1.7 picks."""
    n, trick, phase = state["config"].num_players, state["trick"], state["phase"]
    for name in ("top", "match_face"):
        if state[name] >= 0:
            raise r.error(name, "must be null in classic Go Boom (no discard pile)")
    if state["passes"]:
        raise r.error("passes", "must be 0 in classic Go Boom")
    if phase == _LEAD:
        _check_no_trick(r, state, "when a trick is about to be led (phase LEAD)")
        return
    leader, led = state["leader"], state["led"]
    if leader < 0 or led < 0 or trick[leader] != led:
        raise r.error("leader", f"and led must name the seat that led this trick and its card (trick[leader]) "
                                f"in phase {phase.name}; got leader {leader}, led {_face_or_none(led)}")
    _check_out_of_play(r, state, [t for t in trick if t >= 0], "trick")  # so no joker in classic
    acted = 0
    while acted < n and trick[(leader + acted) % n] != NOT_PLAYED:
        acted += 1
    if any(trick[(leader + k) % n] != NOT_PLAYED for k in range(acted, n)):
        raise r.error("trick", f"must be filled in seat order from the leader {leader}, got {trick}")
    last = (leader + acted - 1) % n
    if phase == _FOLLOW and not (acted < n and state["turns"] == acted and state["current"] == (leader + acted) % n):
        raise r.error("turns", f"must count the {acted} seat(s) that acted in this trick, and current be the next "
                               f"seat {(leader + acted) % n}; got turns {state['turns']}, current {state['current']}")
    if phase == _OVER and not (state["turns"] == acted - 1 and state["winner"] == last and trick[last] >= 0):
        raise r.error("turns", f"must be {acted - 1} and the winner the last seat that played ({last}) when a "
                               f"player went out in this trick; got turns {state['turns']}, winner {state['winner']}")
    best_face, best_seat = led, leader
    for k in range(1, acted):
        seat = (leader + k) % n
        face = trick[seat]
        if face == PASSED:
            continue
        if face == JOKER or not (MATCH_MASKS[led] >> face) & 1:
            raise r.error(f"trick[{seat}]", f"{code_of(face)} does not follow the led {code_of(led)} (R1.5)")
        if face // 13 == led // 13 and face > best_face:
            best_face, best_seat = face, seat
    if (state["best_face"], state["best_seat"]) != (best_face, best_seat):
        got = f"{_safe_code(state['best_face'])} of seat {state['best_seat']}"
        raise r.error("best_seat", f"and best_face must be the winning card so far, {code_of(best_face)} of seat "
                                   f"{best_seat} (R1.7), got {got}")


_NO_TRICK = {"leader": -1, "led": None, "best_face": None, "best_seat": -1, "turns": 0}
"""The trick fields while no trick is under way, as saved (faces as card codes or null)."""


def _check_no_trick(r: _Reader, state: dict[str, Any], when: str) -> None:
    """No trick under way: no card in it, no leader, led or best card, no turns."""
    if any(t != NOT_PLAYED for t in state["trick"]):
        raise r.error("trick", f"must be {NOT_PLAYED} (not played) for every seat {when}, got {state['trick']}")
    for name, empty in _NO_TRICK.items():
        value = _face_or_none(state[name]) if name in ("led", "best_face") else state[name]
        if value != empty:
            raise r.error(name, f"must be {'null' if empty is None else empty} {when}, got {value!r}")


def _check_discard_pile(r: _Reader, state: dict[str, Any]) -> None:
    """Jokers: no trick; the top card and the match card are on the pile, and the match card is
    the top card unless a joker covers it (R2.5, R2.6, R2.8)."""
    _check_no_trick(r, state, "in jokers Go Boom (it has no tricks)")
    top, match = state["top"], state["match_face"]
    if top < 0 or match < 0:
        raise r.error("match_face", "and top must be cards: jokers needs a top and a match card")
    if match == JOKER:
        raise r.error("match_face", "cannot be a joker: it is the topmost non-joker of the pile (R2.5)")
    if top != match and top != JOKER:
        raise r.error("match_face", f"must be the top card {code_of(top)} unless a joker is on top (R2.6), "
                                    f"got {code_of(match)}")
    _check_out_of_play(r, state, [top, match] if top != match else [top], "top")


def _check_out_of_play(r: _Reader, state: dict[str, Any], faces: list[int], field: str) -> None:
    seen = Counter(state["seen"])
    missing = Counter(faces) - seen
    if missing:
        raise r.error(field, f"holds {[code_of(f) for f in sorted(missing.elements())]}, which are not among "
                             "the seen cards (the cards out of play)")


def _read_result(r: _Reader, field: str, raw: Any, config: GameConfig) -> HandResult:
    """One finished hand of a match, checked against the scoring rules."""
    n = config.num_players
    res = _Reader(raw, f"{r.what} ({field})", _RESULT_FIELDS)
    winner = res.seat("winner", n, unset=None)
    blocked = res.flag("blocked")
    most = config.deck_size * max(JOKERS_POINTS)
    points = [res.integer(f"hand_points[{s}]", 0, most, p) for s, p in enumerate(res.items("hand_points", n))]
    if blocked == (winner is not None) or (blocked and config.is_classic):
        raise res.error("blocked", f"must be true exactly when there is no winner, and only in jokers; got "
                                   f"winner {winner}, blocked {blocked}")
    if winner is not None and points[winner]:
        raise res.error("hand_points", f"of the winner {winner} must be 0 (an empty hand), got {points[winner]}")
    expected = [winner] if winner is not None else [s for s, p in enumerate(points) if p == min(points)]
    winners = [res.seat(f"winners[{i}]", n, raw=w) for i, w in enumerate(res.items("winners"))]
    if winners != expected:
        raise res.error("winners", f"must be {expected} (the seat that went out, or the fewest points), got {winners}")
    deltas = res.items("score_deltas", n)
    if deltas != score_deltas(config, winner, points) or any(as_int(d) is None for d in deltas):
        raise res.error("score_deltas", f"must be {score_deltas(config, winner, points)} for these hand points "
                                        f"and scoring {config.scoring!r}, got {deltas}")
    return HandResult(winner, blocked, tuple(winners), tuple(points), tuple(int(d) for d in deltas),
                      res.seat("dealer", n))


def _read_rng(r: _Reader, raw: Any) -> np.random.Generator:
    """A generator in the saved state ``raw`` (``bit_generator.state``: a dict of names and ints)."""
    rng = np.random.default_rng()
    kind = type(rng.bit_generator).__name__
    try:
        rng.bit_generator.state = raw
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise r.error("rng", f"is not a {kind} generator state: {exc}") from None
    if rng.bit_generator.state != raw or not _ints_and_names(raw):  # numpy coerced something (a float, a bool)
        raise r.error("rng", f"is not a {kind} generator state: its values must be integers in range")
    return rng


def _ints_and_names(value: Any) -> bool:
    """True if ``value`` is built from dicts, strings and integers only (no bools or floats)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _ints_and_names(v) for k, v in value.items())
    return isinstance(value, str) or (isinstance(value, int) and as_int(value) is not None)


def _read_match(data: Any) -> dict[str, Any]:
    """The fields of a saved match, typed, then checked against the hands it records."""
    r = _Reader(data, "match state", _MATCH_FIELDS)
    config = r.config()
    n = config.num_players
    rng = _read_rng(r, data["rng"])
    results = [_read_result(r, f"results[{i}]", x, config) for i, x in enumerate(r.items("results"))]
    scores = [r.integer(f"scores[{s}]", 0, 2**62, v) for s, v in enumerate(r.items("scores", n))]
    winners = [r.seat(f"winners[{i}]", n, raw=w) for i, w in enumerate(r.items("winners"))]
    over = r.flag("over")
    hand = Hand.from_dict(data["hand"])
    if hand.config != config:
        raise r.error("hand", f"is a hand of another configuration: {hand.config} vs the match's {config}")
    totals = [0] * n
    for i, result in enumerate(results):
        if match_winners(config, totals, i):
            raise r.error("results", f"go on after the match ended (after hand {i}, R1.11, R1.12, R2.2)")
        if result.dealer != (results[0].dealer + i) % n:
            raise r.error(f"results[{i}]", "dealer must move one seat left each hand (R1.2, R2.2)")
        totals = [t + d for t, d in zip(totals, result.score_deltas)]
    if scores != totals:
        raise r.error("scores", f"must be the sums of the hands' score deltas, {totals}, got {scores}")
    expected = match_winners(config, scores, len(results))
    if winners != expected or over != bool(expected):
        raise r.error("winners", f"and over must be {expected} and {bool(expected)} for these scores and "
                                 f"{len(results)} hand(s), got {winners} and {over}")
    if over:
        last = results[-1]
        if not hand.over or (hand.dealer, hand.winner, hand.blocked, tuple(hand.hand_points())) != (
                last.dealer, last.winner, last.blocked, last.hand_points):
            raise r.error("hand", "must be the last finished hand once the match is over")
    elif results and hand.dealer != (results[-1].dealer + 1) % n:
        raise r.error("hand", f"dealer must be {(results[-1].dealer + 1) % n}, one left of the last hand's (R1.2)")
    return {"config": config, "rng": rng, "scores": scores, "results": results, "over": over,
            "winners": winners, "hand": hand}
