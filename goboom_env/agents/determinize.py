"""Determinizations that respect what the public events prove about the hidden hands (R4.1).

:meth:`PlayerView.sample_hand <goboom_env.player_view.PlayerView.sample_hand>` deals the hidden cards
uniformly; this module also uses the inferences that the rules make certain:

* classic (R1.5, R1.6): a player who drew (or passed on an empty stock) held no card matching the
  led card, and the cards it drew and kept do not match it either;
* jokers (R2.7): a player who drew voluntarily (or passed) held no matching non-boom card (with
  ``after_joker="any"`` and a joker on top: no non-boom card at all); the card it drew is unknown,
  as are the cards a boom made it draw (R2.6).

Each opponent's hand is tracked as *slots*, one per card, each with a mask of faces it cannot be.
A fact applies to the slots held at that moment; a drawn card adds a slot. Because a fact reaches
every slot held at the time, an older slot's mask contains every newer slot's mask, so a played
card is taken from the oldest slot that could have held it: what remains is the loosest set of
constraints consistent with the log, so no consistent hand is ever excluded.

:class:`Determinizer` reads the view once per decision and then samples many hands: the most
constrained slots are filled first with a random allowed card; a dead end retries, and after a few
retries an augmenting-path matching finds a consistent deal (one always exists: the real one).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from goboom_env.cards import JOKER, MATCH_MASKS, boom_mask
from goboom_env.engine import Hand
from goboom_env.events import EventKind
from goboom_env.player_view import PlayerView

ALL_CARDS = (1 << 52) - 1
"""Every non-joker face."""
GREEDY_TRIES = 8
"""Random most-constrained-first deals tried before the exact matching."""


class HandSlots:
    """The hidden cards of one opponent: one forbidden-face mask per card, oldest first."""

    __slots__ = ("masks",)

    def __init__(self, size: int) -> None:
        self.masks = [0] * size

    def learn(self, forbidden: int) -> None:
        """Every card held now is none of ``forbidden``."""
        self.masks = [m | forbidden for m in self.masks]

    def add(self, count: int, forbidden: int = 0) -> None:
        """``count`` cards joined the hand (drawn), none of ``forbidden``."""
        self.masks.extend([forbidden] * count)

    def play(self, face: int) -> None:
        """``face`` left the hand: drop the oldest slot that may hold it (the most constrained)."""
        for i, mask in enumerate(self.masks):
            if not (mask >> face) & 1:
                del self.masks[i]
                return
        if self.masks:  # an inconsistent log (cannot happen in a real game): drop the loosest slot
            self.masks.pop()


def hidden_constraints(view: PlayerView) -> list[list[int]]:
    """Per seat, the forbidden-face mask of each hidden card (empty for the view's own seat).

    Built by replaying ``view.events`` (see the module docstring). When the log does not account
    for a seat's public hand size (a state restored without its history), that seat's cards are
    left unconstrained.
    """
    config = view.config
    n = view.n
    slots = [HandSlots(config.hand_size) for _ in range(n)]
    if config.is_classic:
        _replay_classic(view.events, slots)
    else:
        boom = boom_mask(config.aces_mode)
        after_any = config.after_joker == "any" and not config.aces_mode
        _replay_jokers(view.events, slots, n, boom, after_any)
    out: list[list[int]] = []
    for seat in range(n):
        if seat == view.seat:
            out.append([])
        elif len(slots[seat].masks) == view.sizes[seat]:
            out.append(slots[seat].masks)
        else:
            out.append([0] * view.sizes[seat])
    return out


def _replay_classic(events: Sequence[tuple], slots: list[HandSlots]) -> None:
    """R1.5, R1.6: a draw or a pass proves a void in the led card's suit and rank."""
    led = -1
    pending: tuple[int, int, int] | None = None  # (seat, cards drawn, void mask) awaiting play or pass
    for event in events:
        kind = event[0]
        if pending is not None and event[1:2] == (pending[0],) and kind in (EventKind.PLAY, EventKind.PASS):
            seat, drawn, void = pending
            pending = None
            if kind == EventKind.PLAY:  # the last card drawn went straight to the trick
                slots[seat].add(drawn - 1, void)
                continue
            slots[seat].add(drawn, void)
            continue
        if kind == EventKind.PLAY:
            seat, face = event[1], event[2]
            slots[seat].play(face)
            if led < 0:
                led = face
        elif kind == EventKind.DRAW:
            void = MATCH_MASKS[led]
            slots[event[1]].learn(void)
            pending = (event[1], event[2], void)
        elif kind == EventKind.PASS:  # no draw first: the stock was already empty
            slots[event[1]].learn(MATCH_MASKS[led])
        elif kind == EventKind.TRICK:
            led = -1


def _replay_jokers(events: Sequence[tuple], slots: list[HandSlots], n: int, boom: int, after_any: bool) -> None:
    """R2.6, R2.7: a voluntary draw or a pass proves that no matching non-boom card was held."""
    top = match = -1
    boomer, hit = -1, 0  # the seat whose boom is making the others draw, and how many drew so far
    for event in events:
        kind = event[0]
        if kind == EventKind.DRAW and boomer >= 0 and hit < n - 1 and event[1] == (boomer + hit + 1) % n:
            slots[event[1]].add(event[2])  # a card drawn because of the boom: unknown
            hit += 1
            continue
        boomer = -1
        if kind == EventKind.UPCARD:
            top = match = event[1]
        elif kind == EventKind.PLAY:
            seat, face = event[1], event[2]
            slots[seat].play(face)
            top = face
            if face != JOKER:
                match = face
        elif kind == EventKind.BOOM:
            boomer, hit = event[1], 0
        elif kind in (EventKind.DRAW, EventKind.PASS):
            plain = ALL_CARDS & ~boom
            void = plain if after_any and top == JOKER else MATCH_MASKS[match] & plain
            slots[event[1]].learn(void)
            if kind == EventKind.DRAW:
                slots[event[1]].add(event[2])


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
        constraints = hidden_constraints(view) if use_inference else [
            [] if s == view.seat else [0] * view.sizes[s] for s in range(view.n)]
        self.free = [sum(1 for m in masks if not m) for masks in constraints]
        """Per seat, its cards with no constraint."""
        tight = [(seat, mask) for seat, masks in enumerate(constraints) for mask in masks if mask]
        tight.sort(key=lambda sm: -self._excluded(sm[1]))
        self.tight = tight
        """(seat, forbidden mask) of every constrained card, most constrained first."""
        self.own = list(view.hand)

    def _excluded(self, mask: int) -> int:
        return sum(1 for f in self.pool if (mask >> f) & 1)

    def deal(self, rng: random.Random) -> tuple[list[list[int]], list[int]]:
        """Hidden cards dealt consistently: (cards per seat, stock top first)."""
        view = self.view
        pool = self.pool[:]
        rng.shuffle(pool)
        hands: list[list[int]] = [[] for _ in range(view.n)]
        if self.tight:
            pool = self._place_tight(pool, hands, rng)
        start = 0
        for seat in range(view.n):
            if seat == view.seat:
                hands[seat] = self.own[:]
                continue
            take = self.free[seat]
            hands[seat].extend(pool[start:start + take])
            start += take
        return hands, pool[start:] + self.bottom

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

    def sample(self, rng: random.Random) -> Hand:
        """A full hand in the view's public state, hidden cards dealt consistently; no event log
        (the engine only appends to it, and search does not read it)."""
        return self.hand_of(*self.deal(rng))

    def hand_of(self, hands: list[list[int]], stock: list[int]) -> Hand:
        """The full hand of one :meth:`deal`: the view's public state with those hidden cards."""
        view = self.view
        return Hand.from_state(
            view.config, dealer=view.dealer, hands=hands, stock=stock, seen=view.seen, drawn=view.drawn,
            events=(), current=view.current, phase=view.phase, trick=view.trick, leader=view.leader,
            led=view.led, best_face=view.best_face, best_seat=view.best_seat, turns=view.turns, top=view.top,
            match_face=view.match_face, passes=view.passes,
        )


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
    picks = [0] * len(masks)
    for i, k in enumerate(owner):
        if k >= 0:
            picks[k] = i
    return picks
