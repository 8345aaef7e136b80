"""Seat-relative observation encoder: one flat ``float32`` vector with named slices (R4.1).

Everything is seen from the observing seat: per-seat blocks are ordered by relative seat,
``0`` = the observer, ``1`` = the player to its left (R0.4), and so on. Only public
information and the observer's own hand are encoded, so changing opponents' hidden cards or the
stock order never changes an observation (tested). The layout depends only on ``num_players``
(``n``): classic and jokers share it, unused blocks stay zero.

=========================  ============  ===================================================================
block                      size          meaning (values)
=========================  ============  ===================================================================
``hand``                   53            own cards per face, count / copies of that face in the deck
``seen``                   53            public cards out of play per face (tricks, discard pile), same scale
``led``                    53            classic: the card led to the current trick (one-hot)
``trick``                  n x 53        classic: card each relative seat played to the current trick
``trick_passed``           n             classic: relative seats that drew and passed in this trick (R1.6)
``leader``                 n             classic: relative seat that led the current trick (one-hot)
``top``                    53            jokers: top card of the discard pile, joker = face 52 (one-hot)
``match``                  53            jokers: the match card, the topmost non-joker (R2.5, one-hot)
``hand_sizes``             n             cards in each relative seat's hand / deck size
``drawn``                  n             cards each relative seat drew this hand / deck size
``stock``                  1             cards in the stock / deck size
``to_move``                n             relative seat to move (one-hot; zero once the hand is over)
``dealer``                 n             relative seat of the dealer (one-hot)
``scores``                 n             match totals / score scale (target score; 100 in jokers); may exceed 1
``passes``                 1             jokers: consecutive passes on an empty stock / n (R2.10)
``progress``               1             hands finished in the match / rounds (jokers; 0 in classic)
``flags``                  9             classic, jokers, standard, reverse, penalty scoring, aces mode,
                                         after_joker="any", two or more decks, num_players / 12
=========================  ============  ===================================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from goboom_env.cards import JOKER, NUM_FACES
from goboom_env.config import MAX_PLAYERS, GameConfig
from goboom_env.engine import PASSED, Hand

if TYPE_CHECKING:
    from goboom_env.engine import Match

OBSERVATION_VERSION = 1
"""Bumped whenever the layout changes; saved models record it."""


def layout(num_players: int) -> dict[str, slice]:
    """The named slices of the observation vector for ``num_players`` seats."""
    n, f = num_players, NUM_FACES
    sizes = [
        ("hand", f), ("seen", f), ("led", f), ("trick", n * f), ("trick_passed", n), ("leader", n),
        ("top", f), ("match", f), ("hand_sizes", n), ("drawn", n), ("stock", 1), ("to_move", n),
        ("dealer", n), ("scores", n), ("passes", 1), ("progress", 1), ("flags", 9),
    ]
    out, start = {}, 0
    for name, size in sizes:
        out[name] = slice(start, start + size)
        start += size
    return out


def observation_size(num_players: int) -> int:
    """Length of the observation vector: ``5 * 53 + 60 * n + 12``."""
    return layout(num_players)["flags"].stop


class ObservationEncoder:
    """Builds observations for one configuration; allocation-light, one call per decision."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        n = self.n = config.num_players
        self.slices = layout(n)
        self.size = observation_size(n)
        s = {k: v.start for k, v in self.slices.items()}
        self._off = s
        copies = np.full(NUM_FACES, 1.0 / config.num_decks, np.float32)
        copies[JOKER] = 1.0 / max(config.num_jokers, 1)
        self._inv_copies = copies
        self._score_scale = float(config.target_score or 100)
        template = np.zeros(self.size, np.float32)
        template[self.slices["flags"]] = self.flags(config)
        self._template = template
        # per-seat numeric blocks hand_sizes, drawn and scores are contiguous: one assignment
        self._per_seat = slice(s["hand_sizes"], s["hand_sizes"] + 2 * n)
        inv_deck = 1.0 / config.deck_size
        self._rot = [[(seat + k) % n for k in range(n)] for seat in range(n)]
        self._inv_deck = inv_deck
        self.low = np.zeros(self.size, np.float32)
        self.high = np.ones(self.size, np.float32)
        self.high[self.slices["scores"]] = np.inf

    @staticmethod
    def flags(config: GameConfig) -> list[float]:
        """The configuration flags block (see the table in the module docstring)."""
        return [
            float(config.is_classic), float(not config.is_classic),
            float(config.scoring == "standard"), float(config.scoring == "reverse"),
            float(config.scoring == "penalty"), float(config.aces_mode),
            float(config.after_joker == "any" and not config.aces_mode),
            float(config.num_decks >= 2), config.num_players / MAX_PLAYERS,
        ]

    def encode(self, hand: Hand, seat: int, match: Match | None = None) -> np.ndarray:
        """A fresh observation vector of ``hand`` seen from ``seat`` (scores from ``match``)."""
        out = self._template.copy()
        off = self._off
        n = self.n
        inv = self._inv_copies
        np.multiply(np.frombuffer(hand.counts[seat], np.uint8), inv, out=out[off["hand"]:off["hand"] + NUM_FACES])
        np.multiply(np.frombuffer(hand.seen, np.uint8), inv, out=out[off["seen"]:off["seen"] + NUM_FACES])
        ones = [off["dealer"] + (hand.dealer - seat) % n]
        if not hand.over:
            ones.append(off["to_move"] + (hand.current - seat) % n)
        if hand.classic:
            if hand.led >= 0:
                ones.append(off["led"] + hand.led)
                ones.append(off["leader"] + (hand.leader - seat) % n)
                trick_off = off["trick"]
                for rel, other in enumerate(self._rot[seat]):
                    played = hand.trick[other]
                    if played >= 0:
                        ones.append(trick_off + rel * NUM_FACES + played)
                    elif played == PASSED:
                        ones.append(off["trick_passed"] + rel)
        else:
            ones.append(off["top"] + hand.top)
            ones.append(off["match"] + hand.match_face)
            out[off["passes"]] = hand.passes / n
        out[ones] = 1.0
        rot = self._rot[seat]
        sizes, drawn = hand.sizes, hand.drawn
        out[self._per_seat] = [sizes[s] for s in rot] + [drawn[s] for s in rot]
        out[self._per_seat] *= self._inv_deck
        out[off["stock"]] = len(hand.stock) * self._inv_deck
        if match is not None:
            if any(match.scores):
                scores = match.scores
                out[off["scores"]:off["scores"] + n] = [scores[s] / self._score_scale for s in rot]
            if self.config.rounds:
                out[off["progress"]] = match.hands_played / self.config.rounds
        return out

    def describe(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """The named blocks of an observation vector (views), for debugging and tests."""
        return {name: vector[sl] for name, sl in self.slices.items()}
