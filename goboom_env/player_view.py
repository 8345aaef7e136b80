"""What one seat may know (RULES.md R4.1): :class:`PlayerView`, the seat's own cards and the public facts of a
hand, so that two states differing only in hidden cards give equal views. :func:`observe` is re-exported from
:mod:`goboom_env.observation`.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

import numpy as np

from goboom_env.cards import JOKER, NUM_FACES, faces_in
from goboom_env.config import GameConfig, as_int
from goboom_env.engine import Hand, Match, Phase
from goboom_env.events import Event
from goboom_env.hand_state import deck_counts
from goboom_env.observation import action_mask, encoder_for, observe


@dataclass(frozen=True, eq=True)
class PlayerView:
    """The information of one seat (R4.1): own hand plus public state, the public fields named as on
    :class:`Hand` (per-seat ones by absolute seat). Equal views = same knowledge."""

    config: GameConfig
    seat: int
    hand: tuple[int, ...]
    """Own cards (faces, ascending, one entry per card)."""
    sizes: tuple[int, ...]
    stock_size: int
    seen: tuple[int, ...]
    drawn: tuple[int, ...]
    phase: Phase
    current: int
    dealer: int
    trick: tuple[int, ...]
    leader: int
    led: int
    best_face: int
    best_seat: int
    turns: int
    top: int
    match_face: int
    passes: int
    events: tuple[Event, ...]
    """The hand's event log (every engine event is public, R4.1)."""
    buried: int
    """Jokers buried at the bottom of the stock at the turn-up (R2.3), public."""
    legal: int
    """Legal actions bitmask when this seat is to move, else 0."""
    scores: tuple[int, ...]
    hands_played: int

    @classmethod
    def of(cls, state: Match | Hand, seat: int) -> PlayerView:
        """The view of ``seat`` on a :class:`Match` (with scores) or a bare :class:`Hand`."""
        match = state if isinstance(state, Match) else None
        hand = match.hand if match is not None else state
        if not isinstance(hand, Hand):
            raise ValueError(f"PlayerView.of needs a Match or a Hand, got {type(state).__name__}")
        index = as_int(seat)
        if index is None or not 0 <= index < hand.n:
            raise ValueError(f"seat must be in 0..{hand.n - 1}, got {seat!r}")
        seat = index
        to_move = seat == hand.current and not hand.over
        return cls(
            config=hand.config, seat=seat, hand=tuple(hand.hand_faces(seat)), sizes=tuple(hand.sizes),
            stock_size=len(hand.stock), seen=tuple(hand.seen), drawn=tuple(hand.drawn), phase=hand.phase,
            current=hand.current, dealer=hand.dealer, trick=tuple(hand.trick), leader=hand.leader,
            led=hand.led, best_face=hand.best_face, best_seat=hand.best_seat, turns=hand.turns,
            top=hand.top, match_face=hand.match_face, passes=hand.passes, events=tuple(hand.events),
            buried=sum(1 for e in hand.events if e[0] == "bury"),
            legal=hand.legal_mask() if to_move else 0,
            scores=tuple(match.scores) if match is not None else (0,) * hand.n,
            hands_played=match.hands_played if match is not None else 0,
        )

    @property
    def n(self) -> int:
        return self.config.num_players

    @property
    def counts(self) -> tuple[int, ...]:
        """Own cards per face (53 entries)."""
        return tuple(self.hand.count(face) for face in range(NUM_FACES))

    def legal_actions(self) -> list[int]:
        """Legal actions of this seat (empty when it is not to move)."""
        return faces_in(self.legal)

    def hidden_pool(self) -> list[int]:
        """The cards this seat cannot see as faces, ascending (other hands + stock, including buried jokers)."""
        own = self.counts
        unseen = [total - own[f] - self.seen[f] for f, total in enumerate(deck_counts(self.config))]
        return [f for f, c in enumerate(unseen) for _ in range(c)]

    def sample_hand(self, rng: np.random.Generator) -> Hand:
        """A *determinization* for search agents: a full :class:`Hand` consistent with this view, the hidden cards
        dealt uniformly to the other hands and the stock (buried jokers stay at the bottom, R2.3); inferences from
        play (a player who drew could not follow) are not used."""
        pool = self.hidden_pool()
        bottom = min(self.buried, self.stock_size)  # buried jokers still under the stock (R2.3)
        for _ in range(bottom):
            pool.remove(JOKER)
        rest = iter([pool[i] for i in rng.permutation(len(pool))])
        hands = [list(self.hand) if s == self.seat else list(islice(rest, self.sizes[s])) for s in range(self.n)]
        return self.hand_holding(hands, [*rest, *[JOKER] * bottom])

    def hand_holding(self, hands: list[list[int]], stock: list[int], events: tuple[Event, ...] | None = None) -> Hand:
        """A Hand in this view's public state holding the given cards (``stock`` top first), with ``events`` as its
        log (default: the view's)."""
        out = [e[1] for e in self.events if e[0] == "out"]
        return Hand.from_state(
            self.config, dealer=self.dealer, hands=hands, stock=stock, seen=self.seen, drawn=self.drawn,
            events=self.events if events is None else events, current=self.current, phase=self.phase,
            trick=self.trick, leader=self.leader, led=self.led, best_face=self.best_face, best_seat=self.best_seat,
            turns=self.turns, top=self.top, match_face=self.match_face, passes=self.passes,
            winner=out[-1] if out else None, blocked=self.phase == Phase.OVER and not out,
        )


__all__ = ["PlayerView", "action_mask", "encoder_for", "observe"]
