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


# Aliases for the hot paths (issue 2): a module global is read about three times faster than
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
        """Restore a hand saved by :meth:`to_dict`; raises ValueError on malformed data."""
        try:
            config = GameConfig.from_dict(data["config"])
            new = cls.__new__(cls)
            new.config, new.n, new.classic = config, config.num_players, config.is_classic
            new.dealer = int(data["dealer"])
            new.counts = [bytearray(NUM_FACES) for _ in range(new.n)]
            new.masks, new.sizes = [0] * new.n, [0] * new.n
            for seat, codes in enumerate(data["hands"]):
                for code in codes:
                    new._give(seat, face_of(code))
            new.stock = [face_of(c) for c in reversed(data["stock"])]
            new.seen = bytearray(NUM_FACES)
            for code in data["seen"]:
                new.seen[face_of(code)] += 1
            new.drawn = [int(x) for x in data["drawn"]]
            new.events = [event_from_json(e) for e in data["events"]]
            new.current = int(data["current"])
            new.phase = Phase[data["phase"]]
            new.trick = [_trick_from_json(t) for t in data["trick"]]
            new.leader, new.best_seat = int(data["leader"]), int(data["best_seat"])
            new.led, new.best_face = _face_from_json(data["led"]), _face_from_json(data["best_face"])
            new.turns, new.passes = int(data["turns"]), int(data["passes"])
            new.top, new.match_face = _face_from_json(data["top"]), _face_from_json(data["match_face"])
            new.winner = data["winner"]
            new.blocked = bool(data["blocked"])
        except (KeyError, TypeError, IndexError, AttributeError) as exc:
            raise ValueError(f"malformed hand state: {exc!r}") from exc
        new._boom_mask = ACES_MASK if config.aces_mode else JOKER_BIT
        new._after_any = config.after_joker == "any" and not config.aces_mode
        new._points = CLASSIC_POINTS if new.classic else JOKERS_POINTS
        new._legal = -1
        _check_state(new, len(data["hands"]))
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
        """Restore a match saved by :meth:`to_dict`."""
        try:
            new = cls.__new__(cls)
            new.config = GameConfig.from_dict(data["config"])
            new.rng = np.random.default_rng()
            new.rng.bit_generator.state = data["rng"]
            new.scores = [int(s) for s in data["scores"]]
            new.results = [
                HandResult(r["winner"], r["blocked"], tuple(r["winners"]), tuple(r["hand_points"]),
                           tuple(r["score_deltas"]), r["dealer"])
                for r in data["results"]
            ]
            new.over = bool(data["over"])
            new.winners = [int(w) for w in data["winners"]]
            new.hand = Hand.from_dict(data["hand"])
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed match state: {exc!r}") from exc
        if len(new.scores) != new.config.num_players or new.hand.config != new.config:
            raise ValueError("malformed match state: scores and hand must fit the match's config")
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


def event_from_json(event: Sequence) -> tuple:
    """Inverse of :func:`event_to_json`."""
    kind = event[0]
    if kind == "play":
        return ("play", int(event[1]), face_of(event[2]))
    if kind in ("upcard", "bury"):
        return (kind, face_of(event[1]))
    return tuple(event)


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


def _check_state(hand: Hand, num_hands: int) -> None:
    """Reject a restored hand whose seats, phase or cards do not fit its config (ValueError)."""
    n = hand.n
    if not num_hands == len(hand.drawn) == len(hand.trick) == n:
        raise ValueError(f"malformed hand state: hands, drawn and trick need {n} entries (num_players)")
    if not (0 <= hand.dealer < n and 0 <= hand.current < n) or hand.winner not in (None, *range(n)):
        raise ValueError(f"malformed hand state: dealer, current and winner must be seats in 0..{n - 1}")
    phases = (Phase.LEAD, Phase.FOLLOW, Phase.OVER) if hand.classic else (Phase.DISCARD, Phase.OVER)
    if hand.phase not in phases or (not hand.classic and min(hand.top, hand.match_face) < 0):
        raise ValueError(f"malformed hand state: phase {hand.phase.name} does not fit variant "
                         f"{hand.config.variant!r} (jokers needs a top and a match card)")
    cards = [f for s in range(n) for f in hand.hand_faces(s)] + hand.stock
    cards += [f for f in range(NUM_FACES) for _ in range(hand.seen[f])]
    try:
        _check_deck(hand.config, cards)
    except ValueError as exc:
        raise ValueError(f"malformed hand state: hands + stock + seen cards: {exc}") from None


def _safe_code(face: int) -> str:
    return code_of(face) if 0 <= face <= JOKER else repr(face)


def _face_or_none(face: int) -> str | None:
    return None if face < 0 else code_of(face)


def _face_from_json(code: str | None) -> int:
    return -1 if code is None else face_of(code)


def _trick_to_json(entry: int) -> str | int:
    return code_of(entry) if entry >= 0 else entry


def _trick_from_json(entry: str | int) -> int:
    return face_of(entry) if isinstance(entry, str) else int(entry)
