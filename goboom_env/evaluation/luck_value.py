"""The fitted value of luck-adjusted evaluation: a deterministic function of the full state, fitted before it.

``V_s(state)`` = the softmax over the seats of ``w · φ_s(state)`` (a conditional logit: the values of a state sum
to 1, like the win shares), where ``φ_s`` are features of the true full state seen from seat ``s`` (every hand
known, the stock's cards but not their order): hand sizes, cards that match the led or match card, whose turn,
flexibility of the hand, the stock size, booms held. The weights ``w`` are the maximum-likelihood fit of the hands'
win shares on the states of ``hands`` heuristic-vs-heuristic hands (the variant's best heuristic at every seat,
:data:`~goboom_env.agents.rollout.HEURISTIC_MOVES`) played from a fixed seed: the same value for the same
configuration and seed, whatever is evaluated. The features depend on seats only through their position relative
to the player to move, so rotating the seats rotates the values (the deal's expectation stays ``1/n``).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from goboom_env.agents.rollout import DECK_MASK, HEURISTIC_MOVES, seen_mask
from goboom_env.cards import DRAW_OR_PASS, JOKER, MATCH_MASKS, boom_mask, deck_faces, faces_in
from goboom_env.config import GameConfig, check_int
from goboom_env.engine import Hand
from goboom_env.hand_state import NOT_PLAYED, Phase

DEFAULT_FIT_HANDS = 1000
"""Heuristic hands the value is fitted on: about ten seconds per 4-player configuration."""
RIDGE = 1e-3
"""The L2 penalty of the fit, per state."""


def win_shares(hand: Hand) -> np.ndarray:
    """Per seat: 1/k if among the k winners of the finished hand, else 0."""
    winners = hand.winners()
    shares = np.zeros(hand.n)
    shares[winners] = 1.0 / len(winners)
    return shares


def playable_masks(hand: Hand) -> tuple[int, int]:
    """``(booms, ref)`` of a running hand: the boom faces (jokers only; 0 in classic) and the faces that count as a
    play now besides them (the led card's matches while following a trick, any card when leading or after a joker
    with ``after_joker="any"``, else the match card's non-boom matches)."""
    booms = boom_mask(hand.config.aces_mode) if not hand.classic else 0
    if hand.classic:
        return booms, MATCH_MASKS[hand.led] if hand.phase == Phase.FOLLOW else DECK_MASK
    if hand.config.after_joker == "any" and not hand.config.aces_mode and hand.top == JOKER:
        return booms, DECK_MASK
    return booms, MATCH_MASKS[hand.match_face] & ~booms


def state_features(hand: Hand) -> np.ndarray:
    """``φ_s`` for every seat ``s`` of a running hand: an ``(n, F)`` array, rows in seat order."""
    n, cur = hand.n, hand.current
    classic = hand.classic
    booms, ref = playable_masks(hand)
    unseen = DECK_MASK & ~seen_mask(hand)
    stock = len(hand.stock)
    in_stock = 0
    for face in set(hand.stock):
        in_stock |= 1 << face
    stock_matching = sum(1 for f in hand.stock if (ref >> f) & 1) if classic else 0
    stock_frac = stock / 52.0
    rows = np.zeros((n, FEATURES[n]))
    for s in range(n):
        x = hand.sizes[s]
        d = (s - cur) % n
        mask = hand.masks[s]
        plays = (mask & ref).bit_count() + (mask & booms).bit_count()
        cover = 0
        for f in faces_in(mask & DECK_MASK):
            cover |= MATCH_MASKS[f]
        to_move = d == 0
        must_draw = to_move and plays == 0
        if classic:
            draws = (stock + 1) / (stock_matching + 1) if must_draw and hand.phase == Phase.FOLLOW else 0.0
            played = hand.phase == Phase.FOLLOW and hand.trick[s] != NOT_PLAYED
            best = hand.phase == Phase.FOLLOW and hand.best_seat == s
            extra = (draws / 10.0, float(played), float(best), float(best and x == 1))
        else:
            jokers = (mask & booms).bit_count() if booms != JOKER_ONLY else hand.counts[s][JOKER]
            extra = (float(must_draw) * stock_frac, float(jokers), float(jokers > 0 and x <= 2),
                     float(plays > 0 and x <= 2))
        one, two = float(x == 1), float(x == 2)
        row = [1.0 / max(x, 1), x / 10.0, np.log(max(x, 1)), one, two,
               float(to_move and plays > 0), float(to_move and plays > 0 and x == 1),
               float(plays > 0), float(plays > 0 and x == 1),
               (cover & unseen).bit_count() / 52.0, (cover & in_stock).bit_count() / 52.0,
               float(must_draw), x / 10.0 * stock_frac, *extra]
        suits = sorted(((mask >> (13 * k)) & 0x1FFF).bit_count() for k in range(4))
        row += [sum(c > 0 for c in suits) / 4.0, suits[-1] / max(x, 1), float(suits[0] == 0 and x > 1)]
        row += [float(d == k) for k in range(1, n)]
        row += [one * float(d == k) for k in range(1, n)]
        rows[s, :len(row)] = row
        rows[s, len(row):] = np.asarray(row) * stock_frac
    return rows


JOKER_ONLY = 1 << JOKER
BASE_FEATURES = 20
"""Features before the relative-seat ones."""
FEATURES = {n: 2 * (BASE_FEATURES + 2 * (n - 1)) for n in range(2, 13)}
"""Features per seat, by player count: each base feature alone and times the stock fraction."""


def softmax_values(weights: np.ndarray, features: np.ndarray) -> np.ndarray:
    """``V_s = exp(w · φ_s) / sum_t exp(w · φ_t)`` for each row of ``features`` (``(..., n, F)``)."""
    u = features @ weights
    u -= u.max(axis=-1, keepdims=True)
    e = np.exp(u)
    return e / e.sum(axis=-1, keepdims=True)


def fit_conditional_logit(features: np.ndarray, targets: np.ndarray, ridge: float = RIDGE,
                          iterations: int = 30) -> np.ndarray:
    """The weights maximising ``sum y_s log V_s`` (Newton's method with an L2 penalty); ``features`` is
    ``(N, n, F)``, ``targets`` ``(N, n)`` win shares summing to 1 per state."""
    count, _, width = features.shape
    w = np.zeros(width)
    for _ in range(iterations):
        p = softmax_values(w, features)
        mean = np.einsum("ns,nsf->nf", p, features)
        grad = np.einsum("ns,nsf->f", targets - p, features) - ridge * count * w
        centred = features - mean[:, None, :]
        hess = np.einsum("ns,nsf,nsg->fg", p, centred, centred) + ridge * count * np.eye(width)
        step = np.linalg.solve(hess, grad)
        w += step
        if np.abs(step).max() < 1e-8:
            break
    return w


@dataclass(frozen=True, eq=False)
class FittedValue:
    """``V(state)`` of luck adjustment from fitted weights (:func:`fitted_value` fits them).

    :class:`~goboom_env.evaluation.luck.ModelValue` makes it a value of luck adjustment."""

    config: GameConfig
    weights: np.ndarray
    """The conditional-logit weights over :func:`state_features`."""
    hands: int = DEFAULT_FIT_HANDS
    """Heuristic hands the weights were fitted on."""
    seed: int = 0
    """Seed of those hands."""

    def value(self, hand: Hand) -> np.ndarray:
        """Every seat's value of ``hand``: the win shares once it is over."""
        if hand.over:
            return win_shares(hand)
        return softmax_values(self.weights, state_features(hand))

    def batch(self, hands: Sequence[Hand]) -> np.ndarray:
        """Every seat's value of each hand, ``(len(hands), n)``."""
        return np.stack([self.value(h) for h in hands])


def draws_cards(hand: Hand, action: int) -> bool:
    """Whether ``action`` takes a card from the stock (a draw, or a boom with a stock to draw from)."""
    if not hand.stock or hand.n < 2:
        return False
    return action == DRAW_OR_PASS or (not hand.classic and (boom_mask(hand.config.aces_mode) >> action) & 1 == 1)


def after_draw(hand: Hand, buried: int, action: int, drawn: Sequence[int], card: int) -> Hand:
    """The state once ``action`` has drawn ``drawn`` then ``card`` from the stock, before its later draws.

    Classic: a matching card is played (the engine's step); a card that does not match stays in the player's
    hand, who is still to draw. Jokers: a boom's later recipients have not drawn yet. The rest of the stock keeps
    its cards in a canonical order (the value does not depend on it)."""
    after = hand.copy()
    bottom = min(buried, len(after.stock))
    rest = Counter(after.stock[bottom:])
    rest.subtract(drawn)
    rest[card] -= 1
    top = [*drawn, card]
    after.stock = [JOKER] * bottom + sorted(rest.elements()) + top[::-1]
    seat = after.current
    if hand.classic and not (MATCH_MASKS[hand.led] >> card) & 1 and len(after.stock) > len(top):
        for face in top:  # still drawing (R1.6): the cards so far join the hand
            after.stock.pop()
            after.counts[seat][face] += 1
            after.masks[seat] |= 1 << face
            after.sizes[seat] += 1
            after.drawn[seat] += 1
        after._legal = -1  # the legal-action cache of the changed hand
        return after
    after.apply(action)
    if not hand.classic and action != DRAW_OR_PASS and not after.over:
        _give_back(hand, after, seat, len(top))
    return after


def _give_back(before: Hand, after: Hand, seat: int, kept: int) -> None:
    """Undo a boom's draws after the first ``kept``: each later recipient returns the card it drew to the stock."""
    taken = len(before.stock) - len(after.stock)
    for k in range(taken - 1, kept - 1, -1):
        other = (seat + 1 + k) % before.n
        face = _last_drawn(before, after, other)
        counts = after.counts[other]
        counts[face] -= 1
        if not counts[face]:
            after.masks[other] &= ~(1 << face)
        after.sizes[other] -= 1
        after.drawn[other] -= 1
        after.stock.append(face)
    after._legal = -1


def _last_drawn(before: Hand, after: Hand, seat: int) -> int:
    """The one card ``seat`` gained between ``before`` and ``after``."""
    for face in faces_in(after.masks[seat]):
        if after.counts[seat][face] > before.counts[seat][face]:
            return face
    raise AssertionError("the seat drew no card")


def training_states(config: GameConfig, hands: int, seed: int,
                    featurize: Callable[[Hand], np.ndarray] = state_features,
                    keep: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Features ``(N, n, F)`` (``featurize`` of each state, :func:`state_features` by default) and final win shares
    ``(N, n)`` of every state of ``hands`` heuristic hands: before each action, and after each card a draw takes.
    ``keep`` < 1 keeps each state with that probability (its own stream of ``seed``: the hands are the same)."""
    move = HEURISTIC_MOVES[config.variant]
    rng = random.Random(seed)
    deck_rng = np.random.default_rng(seed)
    faces = deck_faces(config.num_decks, config.num_jokers)
    sampler = random.Random(f"keep {seed}")
    kept = (lambda: True) if keep >= 1 else (lambda: sampler.random() < keep)
    xs, ys = [], []
    for h in range(hands):
        hand = Hand(config, [faces[i] for i in deck_rng.permutation(len(faces))], h % config.num_players)
        buried = sum(1 for e in hand.events if e[0] == "bury")
        states = []
        while not hand.over:
            if kept():
                states.append(featurize(hand))
            legal = hand.legal_mask()
            action = legal.bit_length() - 1 if not legal & (legal - 1) else move(hand, seen_mask(hand), rng)
            if draws_cards(hand, action):
                after = hand.copy()
                after.apply(action)
                order = hand.stock[::-1][:len(hand.stock) - len(after.stock)]
                for j, card in enumerate(order[:-1]):
                    mid = after_draw(hand, buried, action, order[:j], card)
                    if not mid.over and kept():
                        states.append(featurize(mid))
            hand.apply(action)
        winners = hand.winners()
        share = np.zeros(config.num_players)
        share[winners] = 1.0 / len(winners)
        xs += states
        ys += [share] * len(states)
    return np.array(xs), np.array(ys)


@lru_cache(maxsize=8)
def fitted_value(config: GameConfig, hands: int = DEFAULT_FIT_HANDS, seed: int = 0) -> FittedValue:
    """The value fitted on ``hands`` heuristic hands of ``config`` played from ``seed`` (cached per process)."""
    check_int("fit hands", hands, 1)
    features, targets = training_states(config, hands, seed)
    return FittedValue(config, fit_conditional_logit(features, targets), hands, seed)


__all__ = ["DEFAULT_FIT_HANDS", "FittedValue", "after_draw", "draws_cards", "fit_conditional_logit", "fitted_value",
           "softmax_values", "state_features", "training_states"]
