"""The rules of Go Boom as a pure engine (RULES.md R1, R2, R3): no RL imports, no global state.

:class:`Hand` is one deal, from a fixed deck order until a player goes out or the round is blocked; its
:meth:`~Hand.legal_mask` and :meth:`~Hand.apply` are the whole rulebook of a deal, classic (R1) and jokers (R2)
sharing one state and one mutator. :class:`Match` is a game of several hands with scoring and dealer rotation,
its randomness from a ``numpy.random.Generator`` passed in. Actions follow R3.1: ``0..52`` play a card of that
face, ``53`` = DRAW_OR_PASS. A ten-line game::

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

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from goboom_env.cards import (
    DRAW_OR_PASS,
    JOKER,
    MATCH_MASKS,
    NUM_FACES,
    boom_mask,
    code_of,
    code_or_none,
    face_of,
    faces_in,
)
from goboom_env.config import GameConfig, as_int, errors_prefixed
from goboom_env.events import Blocked, CardEvent, Draw, Event, EventKind, Play, SeatEvent, event_to_json
from goboom_env.hand_state import NOT_PLAYED, PASSED, Phase, card_points, check_deck, deck_multiset
from goboom_env.scoring import HandResult, match_winners, score_deltas, win_rewards
from goboom_env.state_reader import read_hand, read_match

DRAW_BIT = 1 << DRAW_OR_PASS


class IllegalActionError(ValueError):
    """An action that the rules do not allow in this state (R3.2)."""


def blamed_on(who: str) -> AbstractContextManager[None]:
    """A block whose :class:`IllegalActionError` is raised again with ``who:`` (who chose the action) in front."""
    return errors_prefixed(who, IllegalActionError)


# Aliases for the hot paths: a module global is read about three times faster than
# the enum class attribute ``Phase.LEAD``, and legality is checked on every decision.
_LEAD, _FOLLOW, _DISCARD, _OVER = Phase
_PLAY, _DRAW, _PASS, _TRICK, _OUT, _UPCARD, _BURY, _BOOM, _BLOCKED = EventKind
_event = tuple.__new__
"""``_event(Play, (_PLAY, seat, face))`` == ``Play(_PLAY, seat, face)``, four times faster (events are logged every
move)."""


class Hand:
    """One deal of Go Boom, played from a fixed deck order (R0.5); only :meth:`apply` changes its public
    attributes. Sets of faces are bitmasks (see :mod:`goboom_env.cards`)."""

    __slots__ = (
        "_after_any", "_boom_mask", "_legal", "_points", "best_face", "best_seat", "blocked", "classic", "config",
        "counts", "current", "dealer", "drawn", "events", "leader", "led", "masks", "match_face", "n", "passes",
        "phase", "seen", "sizes", "stock", "top", "trick", "turns", "winner",
    )

    def __init__(self, config: GameConfig, deck: Sequence[int], dealer: int) -> None:
        """Deal ``deck`` (faces, index 0 = top) from ``dealer``'s seat (R1.3, R2.3)."""
        n = config.num_players
        check_deck(config, deck)
        seat = as_int(dealer)
        if seat is None or not 0 <= seat < n:
            raise ValueError(f"dealer must be a seat in 0..{n - 1}, got {dealer!r}")
        faces = [int(f) for f in deck]
        dealt = config.hand_size * n
        hands = [faces[(s - seat - 1) % n:dealt:n] for s in range(n)]  # one card at a time from the dealer's left
        phase = Phase.LEAD if config.is_classic else Phase.DISCARD  # R1.4, R2.4: the dealer's left moves first
        self._hold(config, seat, hands, faces[dealt:], bytes(NUM_FACES), [0] * n, [], (seat + 1) % n, phase)
        self.trick = [NOT_PLAYED] * n
        self.leader = self.led = self.best_face = self.best_seat = -1
        self.turns = self.passes = 0
        self.top = self.match_face = -1
        self.winner: int | None = None
        self.blocked = False
        if not self.classic:
            self._turn_up()

    @classmethod
    def from_state(
        cls, config: GameConfig, *, dealer: int, hands: Sequence[Sequence[int]], stock: Sequence[int],
        seen: Sequence[int], drawn: Sequence[int], events: Sequence[Event], current: int, phase: Phase,
        trick: Sequence[int], leader: int = -1, led: int = -1, best_face: int = -1, best_seat: int = -1,
        turns: int = 0, top: int = -1, match_face: int = -1, passes: int = 0, winner: int | None = None,
        blocked: bool = False,
    ) -> Hand:
        """A hand in a given mid-game state (faces; ``stock`` top first, ``seen`` as copies per face), unchecked so
        that search agents build determinizations fast; a state from outside goes through :meth:`from_dict`."""
        new = cls.__new__(cls)
        new._hold(config, dealer, hands, stock, seen, drawn, events, current, phase)
        new.trick = list(trick)
        new.leader, new.led, new.best_face, new.best_seat, new.turns = leader, led, best_face, best_seat, turns
        new.top, new.match_face, new.passes = top, match_face, passes
        new.winner, new.blocked = winner, blocked
        return new

    def _hold(
        self, config: GameConfig, dealer: int, hands: Sequence[Sequence[int]], stock: Sequence[int],
        seen: Sequence[int], drawn: Sequence[int], events: Sequence[Event], current: int, phase: Phase,
    ) -> None:
        """The rule switches, the cards (``stock`` top first), the log and whose turn it is: all but the trick."""
        self.config = config
        self.n = config.num_players
        self.classic = config.is_classic
        self.dealer = dealer
        self._boom_mask = boom_mask(config.aces_mode)
        self._after_any = config.anything_after_joker
        self._points = card_points(config)
        self._legal = -1
        self.counts = [bytearray(NUM_FACES) for _ in hands]
        self.masks = [0] * len(hands)
        for seat, faces in enumerate(hands):
            counts = self.counts[seat]
            mask = 0
            for face in faces:
                counts[face] += 1
                mask |= 1 << face
            self.masks[seat] = mask
        self.sizes = [len(faces) for faces in hands]
        self.stock = list(reversed(stock))  # top of the stock = last item
        self.seen = bytearray(seen)
        self.drawn = list(drawn)
        self.events = list(events)
        self.current = current
        self.phase = phase

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
        """Seats that won the hand: who went out, or the fewest hand points after a blocked round (R2.10)."""
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
            action = as_action(action)
        legal = self._legal if self._legal >= 0 else self.legal_mask()
        if action < 0 or action > DRAW_OR_PASS or not (legal >> action) & 1:
            raise self._illegal(action)
        self._legal = -1
        (self._classic_step if self.classic else self._jokers_step)(action)

    def _illegal(self, action: Any) -> IllegalActionError:
        if self.over:
            return IllegalActionError(f"the hand is over; no action is legal (got {action!r})")
        return IllegalActionError(f"action {action!r} is not legal for seat {self.current}; legal actions: "
                                  f"{self.legal_actions()} (R3.2)")

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
                self.events.append(_event(Draw, (_DRAW, seat, drawn)))
                self._classic_play(seat, face)  # the matching card goes straight to the trick
                return
            self._give(seat, face)
        if drawn:
            self.drawn[seat] += drawn
            self.events.append(_event(Draw, (_DRAW, seat, drawn)))
        self.events.append(_event(SeatEvent, (_PASS, seat)))
        self.trick[seat] = PASSED
        self._classic_next(seat)

    def _classic_play(self, seat: int, face: int) -> None:
        self.events.append(_event(Play, (_PLAY, seat, face)))
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
        self.events.append(_event(SeatEvent, (_TRICK, winner)))
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
                self.events.append(_event(CardEvent, (_BURY, face)))
                continue
            self.top = self.match_face = face
            self.seen[face] += 1
            self.events.append(_event(CardEvent, (_UPCARD, face)))
            return

    def _jokers_step(self, action: int) -> None:
        seat = self.current
        n = self.n
        if action == DRAW_OR_PASS:  # R2.7: draw exactly one, or pass on an empty stock
            if self.stock:
                self._give(seat, self.stock.pop())
                self.drawn[seat] += 1
                self.events.append(_event(Draw, (_DRAW, seat, 1)))
            else:
                self.events.append(_event(SeatEvent, (_PASS, seat)))
                self.passes += 1
                if self.passes == n:  # R2.10
                    self.blocked = True
                    self.phase = Phase.OVER
                    self.events.append(_event(Blocked, (_BLOCKED,)))
                    return
            self.current = (seat + 1) % n
            return
        self._take(seat, action)
        self.seen[action] += 1
        self.events.append(_event(Play, (_PLAY, seat, action)))
        self.passes = 0
        self.top = action
        if (self._boom_mask >> action) & 1:  # R2.6, R2.8
            if action != JOKER:
                self.match_face = action
            self.events.append(_event(SeatEvent, (_BOOM, seat)))
            stock = self.stock
            for k in range(1, n):
                if not stock:
                    break
                other = (seat + k) % n
                self._give(other, stock.pop())
                self.drawn[other] += 1
                self.events.append(_event(Draw, (_DRAW, other, 1)))
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
        self.events.append(_event(SeatEvent, (_OUT, seat)))
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
            "trick": [code_of(t) if t >= 0 else t for t in self.trick],
            "leader": self.leader,
            "led": code_or_none(self.led),
            "best_face": code_or_none(self.best_face),
            "best_seat": self.best_seat,
            "turns": self.turns,
            "top": code_or_none(self.top),
            "match_face": code_or_none(self.match_face),
            "passes": self.passes,
            "winner": self.winner,
            "blocked": self.blocked,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Hand:
        """Restore a hand saved by :meth:`to_dict`, every field checked for type, range and consistency (each card
        exactly once, a phase and pile that fit the variant); ValueError naming the field."""
        return cls.from_state(**read_hand(data))


class Match:
    """A game of Go Boom: hands dealt in turn until the match ends (R1.11, R1.12, R2.2, R2.12).

    ``deck`` (faces or codes, index 0 = top) and ``dealer`` fix the first hand; later hands are shuffled with
    ``rng``. Call :meth:`finish_hand` once :attr:`hand` is over."""

    def __init__(self, config: GameConfig, rng: np.random.Generator, deck: Sequence[int | str] | None = None,
                 dealer: int | None = None) -> None:
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
            faces = deck_multiset(self.config.num_decks, self.config.num_jokers)
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
        result = HandResult(hand.winner, hand.blocked, tuple(hand.winners()), tuple(points), tuple(deltas), hand.dealer)
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
        """Restore a match saved by :meth:`to_dict`, checked like :meth:`Hand.from_dict` and against the scoring
        rules; ValueError naming the field."""
        fields = read_match(data)
        fields["hand"] = Hand.from_state(**fields["hand"])
        new = cls.__new__(cls)
        for name, value in fields.items():
            setattr(new, name, value)
        return new


# -- actions ----------------------------------------------------------------------------------------------------------

_NUMPY_INTS = frozenset(np.dtype(c).type for c in "bBhHiIlLqQ")  # np.int8 ... np.uint64


def as_action(action: Any) -> int:
    """An action as a Python int: numpy integers and 0-d integer arrays are accepted; bools and the rest raise."""
    if type(action) in _NUMPY_INTS:  # fast path for what rng.choice and argmax return
        return int(action)
    value = as_int(action)
    if value is None:
        raise IllegalActionError(action_type_error(action))
    return value


def action_type_error(action: Any) -> str:
    """The message for an action that is not an integer at all."""
    is_bool = isinstance(action, (bool, np.bool_)) or getattr(action, "dtype", None) == np.bool_
    kind = "a bool, not an integer" if is_bool else f"of type {type(action).__name__}"
    return (f"an action must be an integer in 0..{DRAW_OR_PASS} (an int, a numpy integer or a 0-d integer "
            f"array), got {action!r} ({kind})")


__all__ = [
    "DRAW_BIT", "NOT_PLAYED", "PASSED", "Hand", "HandResult", "IllegalActionError", "Match", "Phase",
    "action_type_error", "as_action", "blamed_on", "check_deck", "event_to_json", "match_winners", "score_deltas",
    "win_rewards",
]
