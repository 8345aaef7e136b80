"""Determinizations that respect what the public events prove about the hidden hands (R4.1, read by
:class:`~goboom_env.events.VoidProofs`): a player who drew or passed held no card it could have played.

Each opponent's hand is a list of *slots*, one per card, each with a mask of faces it cannot be. A proof reaches
every slot held then, so an older slot's mask contains every newer one's, and a played card is taken from the
oldest slot that could have held it: no consistent hand is ever excluded. :class:`Determinizer` fills the most
constrained slots first with random allowed cards; after a few dead ends an augmenting-path matching finds a
deal (one always exists: the real one).
"""

from __future__ import annotations

import random
from itertools import islice

from goboom_env.cards import JOKER
from goboom_env.config import GameConfig
from goboom_env.engine import Hand
from goboom_env.events import VoidProofs
from goboom_env.player_view import PlayerView

GREEDY_TRIES = 8  # random most-constrained-first deals tried before the exact matching


class SlotProofs(VoidProofs):
    """A hand's proofs applied to each seat's hidden cards: one forbidden-face mask per card, oldest first."""

    def __init__(self, config: GameConfig) -> None:
        super().__init__(config)
        self.slots = [[0] * config.hand_size for _ in range(config.num_players)]

    def on_proof(self, seat: int, void: int) -> None:
        self.slots[seat] = [m | void for m in self.slots[seat]]

    def on_take(self, seat: int, count: int, void: int) -> None:
        self.slots[seat].extend([void] * count)

    def on_play(self, seat: int, face: int, from_hand: bool) -> None:
        """A card played from the hand leaves the oldest slot that may hold it (the most constrained)."""
        if not from_hand:
            return
        masks = self.slots[seat]
        for i, mask in enumerate(masks):
            if not (mask >> face) & 1:
                del masks[i]
                return
        if masks:  # an inconsistent log (cannot happen in a real game): drop the loosest slot
            masks.pop()


def hidden_constraints(view: PlayerView, use_inference: bool = True) -> list[list[int]]:
    """Per seat, the forbidden-face mask of each hidden card (empty for the view's own seat); all 0 without
    ``use_inference`` or where the log does not account for a seat's hand size (a state restored without history)."""
    proofs = SlotProofs(view.config)
    for event in view.events if use_inference else ():
        proofs.read(event)
    return [[] if seat == view.seat else masks if len(masks) == view.sizes[seat] else [0] * view.sizes[seat]
            for seat, masks in enumerate(proofs.slots)]


class Determinizer:
    """Samples full :class:`Hand` states consistent with one view and its public inferences."""

    def __init__(self, view: PlayerView, use_inference: bool = True) -> None:
        self.view = view
        bottom = min(view.buried, view.stock_size)  # jokers buried under the stock stay there (R2.3)
        pool = view.hidden_pool()
        for _ in range(bottom):
            pool.remove(JOKER)
        self.pool = pool
        self.bottom = [JOKER] * bottom
        constraints = hidden_constraints(view, use_inference)
        self.free = [sum(1 for m in masks if not m) for masks in constraints]  # per seat, unconstrained cards
        tight = [(seat, mask) for seat, masks in enumerate(constraints) for mask in masks if mask]
        self.tight = sorted(tight, key=lambda sm: -sum(1 for f in pool if (sm[1] >> f) & 1))
        """(seat, forbidden mask) of every constrained card, the most constrained (most faces excluded) first."""
        self.own = list(view.hand)

    def sample(self, rng: random.Random) -> Hand:
        """A full hand in the view's public state, hidden cards dealt consistently; no event log (search reads none)."""
        view = self.view
        pool = self.pool[:]
        rng.shuffle(pool)
        hands: list[list[int]] = [[] for _ in range(view.n)]
        if self.tight:
            pool = self._place_tight(pool, hands, rng)
        rest = iter(pool)
        for seat in range(view.n):
            hands[seat] = self.own[:] if seat == view.seat else hands[seat] + list(islice(rest, self.free[seat]))
        return view.hand_holding(hands, [*rest, *self.bottom], events=())

    def _place_tight(self, pool: list[int], hands: list[list[int]], rng: random.Random) -> list[int]:
        """Give every constrained card an allowed face; return the rest of ``pool`` (still shuffled)."""
        for _ in range(GREEDY_TRIES):
            rest = pool[:]
            picks: list[int] = []
            for _seat, mask in self.tight:
                allowed = [i for i, f in enumerate(rest) if not (mask >> f) & 1]
                if not allowed:
                    break
                picks.append(rest.pop(allowed[int(rng.random() * len(allowed))]))
            else:
                for (seat, _mask), face in zip(self.tight, picks):
                    hands[seat].append(face)
                return rest
        picks = _matching([mask for _seat, mask in self.tight], pool)
        for (seat, _mask), index in zip(self.tight, picks):
            hands[seat].append(pool[index])
        taken = set(picks)
        return [f for i, f in enumerate(pool) if i not in taken]


def _matching(masks: list[int], pool: list[int]) -> list[int]:
    """For each forbidden mask, a distinct index into ``pool`` of an allowed face (augmenting paths)."""
    owner = [-1] * len(pool)  # pool index -> mask index

    def augment(k: int, visited: set[int]) -> bool:
        for i, face in enumerate(pool):
            if (masks[k] >> face) & 1 or i in visited:
                continue
            visited.add(i)
            if owner[i] < 0 or augment(owner[i], visited):
                owner[i] = k
                return True
        return False

    for k in range(len(masks)):
        if not augment(k, set()):
            raise ValueError("no deal of the hidden cards fits the public events: the view's event log "
                             "is inconsistent with its hand sizes")
    picks = {k: i for i, k in enumerate(owner) if k >= 0}
    return [picks[k] for k in range(len(masks))]
