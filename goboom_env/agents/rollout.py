"""Fast rollout policies for search and luck-adjusted playouts: the heuristics of :mod:`goboom_env.agents.batched`
played on the engine's bitmasks, since decoding an observation costs more than the engine step and a search plays
thousands of hands per decision. Each player sees only its own cards and the cards out of play.

With two decks they count faces, not copies, for speed: a face is unseen while no copy is in hand and some copy
is not out of play."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from functools import partial

from goboom_env.agents.heuristics import BEST_HEURISTIC
from goboom_env.cards import CLASSIC_POINTS, DRAW_OR_PASS, JOKER, JOKERS_POINTS, MATCH_MASKS, boom_mask, faces_in
from goboom_env.engine import DRAW_BIT, Hand
from goboom_env.hand_state import Phase

DECK_MASK = (1 << 52) - 1  # every non-joker face
_MATCH = (*MATCH_MASKS, 0)  # with an empty row for the joker: it matches nothing (R2.6)


def seen_mask(hand: Hand) -> int:
    """Faces whose every copy is out of play (played cards, the up-card)."""
    copies, jokers = hand.config.num_decks, max(hand.config.num_jokers, 1)
    return sum(1 << face for face, count in enumerate(hand.seen) if count >= (copies if face != JOKER else jokers))


def _pick(cards: list[int], scores: list[int], rng: random.Random) -> int:
    """The card with the highest score; ties broken at random."""
    best = max(scores)
    top = [c for c, s in zip(cards, scores) if s == best]
    return top[0] if len(top) == 1 else top[int(rng.random() * len(top))]


def _covers_without(faces: list[int], counts: bytearray) -> list[int]:
    """Per face of the hand: the faces matched by some card left after playing one copy of it."""
    k = len(faces)
    prefix = [0] * (k + 1)
    for i, f in enumerate(faces):
        prefix[i + 1] = prefix[i] | MATCH_MASKS[f]
    out = [0] * k
    suffix = 0
    for i in range(k - 1, -1, -1):
        f = faces[i]
        out[i] = prefix[i] | suffix | (MATCH_MASKS[f] if counts[f] > 1 else 0)
        suffix |= MATCH_MASKS[f]
    return out


def classic_tricks_move(hand: Hand, seen: int, rng: random.Random) -> int:
    """``classic-tricks`` on the engine: win the trick cheaply, else keep the hand flexible (R1.5-R1.8); a lead the
    others can hardly follow sends them drawing (R1.6)."""
    cards = faces_in(hand.legal_mask())
    led = hand.led
    if led >= 0:
        suit, best = led // 13, hand.best_face
        if winners := [c for c in cards if c // 13 == suit and c > best]:
            return winners[0]
    return _classic_move(hand, cards, seen, rng, cover=100, points=1, lead=100)


def classic_cover_move(hand: Hand, seen: int, rng: random.Random) -> int:
    """``classic-cover`` on the engine: keep the most unseen cards followable, then shed points (R1.5-R1.10)."""
    return _classic_move(hand, faces_in(hand.legal_mask()), seen, rng, cover=10_000, points=100, lead=1)


def _classic_move(hand: Hand, cards: list[int], seen: int, rng: random.Random, cover: int, points: int,
                  lead: int) -> int:
    """The legal card (all cards: no drawing while able to follow, R1.5) with the best ``cover`` per unseen face
    still followable without it, plus ``points`` per point it is worth, less on the lead ``lead`` per unseen face
    that follows it; DRAW_OR_PASS when it is the only legal action (no card follows the led one, R1.6)."""
    if cards == [DRAW_OR_PASS]:
        return DRAW_OR_PASS
    seat = hand.current
    own = hand.masks[seat]
    faces = faces_in(own)
    covers = dict(zip(faces, _covers_without(faces, hand.counts[seat])))
    unseen = DECK_MASK & ~own & ~seen
    leading = hand.led < 0
    scores = [(covers[c] & unseen).bit_count() * cover + CLASSIC_POINTS[c] * points
              - ((MATCH_MASKS[c] & unseen).bit_count() * lead if leading else 0) for c in cards]
    return _pick(cards, scores, rng)


def _jokers_move(hand: Hand, seen: int, rng: random.Random, scarcity: int, boom_first: bool) -> int:
    """Points plus three per own follow-up, less ``scarcity`` per unseen matching card; boom cards instead of
    drawing, or at once (``boom_first``) when an opponent holds one card."""
    legal = hand.legal_mask()
    seat = hand.current
    boom = boom_mask(hand.config.aces_mode)
    booms = legal & boom
    plays = legal & ~boom & ~DRAW_BIT
    rush = boom_first and booms and hand.stock and min(s for i, s in enumerate(hand.sizes) if i != seat) <= 1
    pick = booms if rush or not plays else plays
    if not pick:
        return DRAW_OR_PASS
    own = hand.masks[seat]
    plain = own & ~boom
    unseen = DECK_MASK & ~own & ~seen
    cards = faces_in(pick)
    scores = [JOKERS_POINTS[c] + 3 * ((_MATCH[c] & plain).bit_count() - ((plain >> c) & 1))
              - scarcity * (_MATCH[c] & unseen).bit_count() for c in cards]
    return _pick(cards, scores, rng)


jokers_boom_move = partial(_jokers_move, scarcity=2, boom_first=True)
"""``jokers-boom`` on the engine: boom a player about to go out, else shed hard-to-match cards (R2.5-R2.9)."""
jokers_shed_move = partial(_jokers_move, scarcity=0, boom_first=False)
"""``jokers-shed`` on the engine: shed points while keeping follow-ups, boom only instead of drawing (R2.5-R2.7)."""


def random_move(hand: Hand, seen: int, rng: random.Random) -> int:
    """A uniformly random legal action."""
    legal = faces_in(hand.legal_mask())
    return legal[int(rng.random() * len(legal))] if len(legal) > 1 else legal[0]


Move = Callable[[Hand, int, random.Random], int]
"""``move(hand, seen_mask, rng) -> action`` for the player to move (:func:`play_out` asks it only for a choice)."""
AGENT_MOVES: dict[str, Move] = {
    "classic-tricks": classic_tricks_move,
    "classic-cover": classic_cover_move,
    "jokers-boom": jokers_boom_move,
    "jokers-shed": jokers_shed_move,
    "random": random_move,
}
"""The agents with a move on the engine, by spec: the agent's choice (and tie set), far faster."""
HEURISTIC_MOVES: dict[str, Move] = {variant: AGENT_MOVES[name] for variant, name in BEST_HEURISTIC.items()}


def play_out(hand: Hand, move: Move, rng: random.Random, seats: Mapping[int, Move] | None = None) -> None:
    """Play ``hand`` to its end with ``move`` for every seat but those ``seats`` gives their own move."""
    seen = seen_mask(hand)
    copies = hand.config.num_decks
    classic = hand.config.is_classic
    while hand.phase != Phase.OVER:
        legal = hand.legal_mask()
        if not legal & (legal - 1):
            action = legal.bit_length() - 1
        else:
            action = (seats.get(hand.current, move) if seats else move)(hand, seen, rng)
        played = action if action != DRAW_OR_PASS else _drawn_match(hand) if classic else -1
        hand.apply(action)
        if played == JOKER or (played >= 0 and hand.seen[played] >= copies):
            seen |= 1 << played


def _drawn_match(hand: Hand) -> int:
    """Classic: the card that a draw will play (the first matching card from the top, R1.6), or -1."""
    match = MATCH_MASKS[hand.led]
    return next((face for face in reversed(hand.stock) if (match >> face) & 1), -1)
