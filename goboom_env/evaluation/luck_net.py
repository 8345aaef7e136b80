"""The net value of luck-adjusted evaluation: a small MLP of the full state, fitted before the evaluation.

``V_s(state)`` = the softmax over the seats of ``f(ψ_s(state))``, ``f`` a two-hidden-layer MLP giving one score
and ``ψ_s`` the full state seen from seat ``s``: every seat's hand (its 53 face counts, size, cards it could
play on the led or match card, booms, whether it is to move, has played to the trick or leads it) in seat order
starting from ``s``, then the stock's cards (not their order) and size, the cards that match, the card to beat
or to match, the phase. It is the conditional-logit structure of the fitted value
(:mod:`goboom_env.evaluation.luck_value`) with a richer score: the values of a state sum to 1, and since
``ψ_s`` sees the seats only relative to ``s`` (whose turn included), rotating the seats rotates the values (the
deal's expectation stays ``1/n``).

The MLP is trained in numpy (no training library: the evaluation layer imports none), at the start of the
evaluation, on states of ``hands`` heuristic-vs-heuristic hands played from a fixed seed (:func:`training_pairs`:
about two states a hand, each with the state after its play, and one action in twenty that draws, with eight
states after it from random stock orders), to maximise the likelihood of the hands' win shares while keeping the
values before and after a play close, and the value before a draw close to the mean after it (the expectation
luck adjustment subtracts); evaluation runs it in numpy too (a few matrix
products per state). Before the MLP values a state, the heuristic plays it forward at every seat up to the next
card taken from the stock (:func:`settle`): the plays in between are no luck, so the value need not guess them.
The same configuration and seed give the same value on the same machine, whatever is evaluated.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from goboom_env.agents.rollout import HEURISTIC_MOVES, seen_mask
from goboom_env.cards import NUM_FACES, deck_faces
from goboom_env.config import GameConfig, check_int
from goboom_env.engine import Hand
from goboom_env.evaluation.luck_value import (
    FEATURES,
    draws_cards,
    playable_masks,
    state_features,
    win_shares,
)
from goboom_env.events import EventKind
from goboom_env.hand_state import NOT_PLAYED, Phase

DEFAULT_NET_HANDS = 40_000
"""Heuristic hands the net value is trained on (each state kept with probability :data:`KEEP`)."""
KEEP_DRAWS = 0.05
"""The share of the actions that draw whose successors are trained on (:func:`training_pairs`)."""
SUCCESSORS = 8
"""States after a draw sampled for each of those."""
DRAW_CONSISTENCY = 5.0
"""Weight of the squared gap between the value before a draw and the mean of its successors' values."""
KEEP = 0.04
"""The share of each hand's states trained on: about two a hand (a hand's states share one outcome; more hands,
fewer states each, overfit less)."""
HIDDEN = 64
"""Units of each hidden layer."""
EPOCHS = 10
"""Passes over the training states."""
CONSISTENCY = 5.0
"""Weight of the squared gap between the values before and after a play in the training loss."""
LOOKAHEAD = 8
"""Plays the heuristic makes from a state before it is valued (:func:`settle`)."""
SEAT_FEATURES = NUM_FACES + 10
"""Per seat of a view: the face counts and ten summaries."""
GLOBAL_FEATURES = 3 * NUM_FACES + 6
"""Per view, once: the stock's face counts, the matching faces, the card to beat or match, stock size, phase."""


def net_width(n: int) -> int:
    """Features of one seat's view for ``n`` players."""
    return n * SEAT_FEATURES + GLOBAL_FEATURES + FEATURES[n]


def _bits(mask: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(mask.to_bytes(7, "little"), np.uint8), bitorder="little")[:NUM_FACES]


_ROTATIONS: dict[int, np.ndarray] = {n: (np.arange(n)[:, None] + np.arange(n)[None, :]) % n for n in range(2, 13)}


def net_features(hand: Hand) -> np.ndarray:
    """``ψ_s`` for every seat ``s`` of a running hand: an ``(n, net_width(n))`` float32 array, rows in seat order."""
    n, cur = hand.n, hand.current
    classic = hand.classic
    booms, ref = playable_masks(hand)
    card = (hand.best_face if hand.phase == Phase.FOLLOW else -1) if classic else hand.top
    decks = float(hand.config.num_decks)
    seats = np.zeros((n, SEAT_FEATURES), np.float32)
    for t in range(n):
        x, mask = hand.sizes[t], hand.masks[t]
        seats[t, :NUM_FACES] = np.frombuffer(bytes(hand.counts[t]), np.uint8) / decks
        plays = (mask & ref).bit_count()
        boom = (mask & booms).bit_count()
        follow = classic and hand.phase == Phase.FOLLOW
        seats[t, NUM_FACES:] = (x / 10.0, 1.0 / max(x, 1), x == 1, x == 2, plays / 5.0, plays + boom > 0,
                                boom / 2.0, t == cur, follow and hand.trick[t] != NOT_PLAYED,
                                follow and hand.best_seat == t)
    stock = np.bincount(np.asarray(hand.stock, np.int64), minlength=NUM_FACES)[:NUM_FACES] / decks
    top = np.zeros(NUM_FACES, np.float32)
    if card >= 0:
        top[card] = 1.0
    phase = np.zeros(4, np.float32)
    phase[int(hand.phase) % 4] = 1.0
    shared = np.concatenate([stock, _bits(ref & ((1 << NUM_FACES) - 1)), top, phase,
                             [len(hand.stock) / 52.0, hand.passes / n]]).astype(np.float32)
    views = seats[_ROTATIONS[n]].reshape(n, n * SEAT_FEATURES)
    return np.concatenate([views, np.broadcast_to(shared, (n, GLOBAL_FEATURES)),
                           state_features(hand).astype(np.float32)], axis=1)


@dataclass(frozen=True, eq=False)
class NetValue:
    """``V(state)`` of luck adjustment from a trained MLP (:func:`net_value` trains it), run in numpy.

    :class:`~goboom_env.evaluation.luck.ModelValue` makes it a value of luck adjustment."""

    config: GameConfig
    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    """``(weight (in, out), bias (out,))`` per layer, ReLU between them; the last gives the score."""
    skip: np.ndarray
    """The linear part of the score: ``score = mlp(ψ) + skip · ψ``."""
    hands: int = DEFAULT_NET_HANDS
    seed: int = 0
    lookahead: int = 0
    """Plays looked ahead before the MLP values a state (:func:`settle`); 0: none."""

    def scores(self, features: np.ndarray) -> np.ndarray:
        """The MLP's score of each view: ``features`` ``(..., F)`` -> ``(...)``."""
        h = features
        linear = features @ self.skip
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < len(self.layers) - 1:
                np.maximum(h, 0.0, out=h)
        return h[..., 0] + linear

    def batch(self, hands: Sequence[Hand]) -> np.ndarray:
        """Every seat's value of each hand, ``(len(hands), n)``: the win shares of those that are over."""
        if self.lookahead:
            hands = [settle(h, self.lookahead) for h in hands]
        out = np.zeros((len(hands), self.config.num_players))
        running = [i for i, h in enumerate(hands) if not h.over]
        for i, h in enumerate(hands):
            if h.over:
                out[i] = win_shares(h)
        if running:
            u = self.scores(np.stack([net_features(hands[i]) for i in running])).astype(np.float64)
            u -= u.max(axis=-1, keepdims=True)
            e = np.exp(u)
            out[running] = e / e.sum(axis=-1, keepdims=True)
        return out

    def value(self, hand: Hand) -> np.ndarray:
        """Every seat's value of ``hand``: the win shares once it is over."""
        return self.batch([hand])[0]


def settle(hand: Hand, limit: int) -> Hand:
    """The state ``hand`` comes to when the variant's heuristic plays every seat (ties broken by a generator seeded
    with 0, so a fixed function of the state) until a seat must take a card from the stock, the hand is over or
    ``limit`` plays are made: the moves in between are not luck the value has to guess."""
    if hand.over or limit <= 0:
        return hand
    move = HEURISTIC_MOVES[hand.config.variant]
    rng = random.Random(0)
    out = None
    for _ in range(limit):
        state = out or hand
        legal = state.legal_mask()
        action = legal.bit_length() - 1 if not legal & (legal - 1) else move(state, seen_mask(state), rng)
        if draws_cards(state, action):
            break
        out = out or hand.copy()
        out.apply(action)
        if out.over:
            break
    return out or hand


def training_pairs(config: GameConfig, hands: int, seed: int, keep: float = KEEP, keep_draws: float = KEEP_DRAWS,
                   successors: int = SUCCESSORS) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """States of ``hands`` heuristic-vs-heuristic hands (:data:`~goboom_env.agents.rollout.HEURISTIC_MOVES`) from
    ``seed``, each kept with probability ``keep``: the features ``(N, 2, n, F)`` of the state before an action that
    draws no card and after it (the hand over after it: twice the state before), whether it has an after state
    ``(N,)``, and the hand's final win shares ``(N, n)``. Then the draws: of each action that takes cards from the
    stock, with probability ``keep_draws``, the state before it and ``successors`` states after it, each drawn
    from a random order of the stock and settled (:func:`settle`): features ``(M, 1 + successors, n, F)`` and the
    win shares of those where the hand is over (NaN where not), ``(M, 1 + successors, n)``."""
    move = HEURISTIC_MOVES[config.variant]
    rng = random.Random(seed)
    sampler = random.Random(f"keep {seed}")
    deck_rng = np.random.default_rng(seed)
    faces = deck_faces(config.num_decks, config.num_jokers)
    xs, has, ys, chains, fixed = [], [], [], [], []
    for h in range(hands):
        hand = Hand(config, [faces[i] for i in deck_rng.permutation(len(faces))], h % config.num_players)
        buried = sum(1 for e in hand.events if e[0] == EventKind.BURY)
        states = []
        while not hand.over:
            legal = hand.legal_mask()
            action = legal.bit_length() - 1 if not legal & (legal - 1) else move(hand, seen_mask(hand), rng)
            if sampler.random() < keep:
                before = net_features(hand)
                after = hand.copy()
                after.apply(action)
                paired = not draws_cards(hand, action) and not after.over
                states.append((before, net_features(after) if paired else before, paired))
            if keep_draws > 0 and draws_cards(hand, action) and sampler.random() < keep_draws:
                features, values = _draw_successors(hand, buried, action, successors, sampler)
                chains.append(features)
                fixed.append(values)
            hand.apply(action)
        share = win_shares(hand)
        for before, after, paired in states:
            xs.append(np.stack([before, after]))
            has.append(paired)
            ys.append(share)
    n, width = config.num_players, net_width(config.num_players)
    return (np.array(xs, np.float32).reshape(-1, 2, n, width), np.array(has, bool),
            np.array(ys, np.float32).reshape(-1, n),
            np.array(chains, np.float32).reshape(-1, 1 + successors, n, width),
            np.array(fixed, np.float32).reshape(-1, 1 + successors, n))


def _draw_successors(hand: Hand, buried: int, action: int, successors: int, sampler: random.Random
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The state ``hand`` before ``action`` draws and ``successors`` settled states after it, each from a random
    order of the stock's unknown part: features ``(1 + successors, n, F)`` and values ``(1 + successors, n)``
    (the win shares where the hand is over, NaN where the MLP values the state)."""
    bottom = min(buried, len(hand.stock))
    states = [hand]
    for _ in range(successors):
        state = hand.copy()
        rest = hand.stock[bottom:]
        sampler.shuffle(rest)
        state.stock = hand.stock[:bottom] + rest
        state.apply(action)
        states.append(settle(state, LOOKAHEAD))
    n = hand.n
    features = np.stack([np.zeros((n, net_width(n)), np.float32) if s.over else net_features(s) for s in states])
    values = np.stack([win_shares(s) if s.over else np.full(n, np.nan) for s in states]).astype(np.float32)
    return features, values


def train_mlp(features: np.ndarray, targets: np.ndarray, seed: int, hidden: int = HIDDEN, epochs: int = EPOCHS,
              batch: int = 256, lr: float = 1e-3, weight_decay: float = 1e-2, paired: np.ndarray | None = None,
              consistency: float = 0.0, chains: tuple[np.ndarray, np.ndarray] | None = None,
              draw_consistency: float = 0.0) -> tuple[tuple[tuple[np.ndarray, np.ndarray], ...], np.ndarray]:
    """The layers and linear part of an MLP whose softmax over the seats of its scores maximises
    ``sum y_s log V_s``, in numpy (AdamW, a one-cycle learning rate). ``features`` ``(N, n, F)`` with ``targets``
    ``(N, n)`` win shares, or ``(N, 2, n, F)`` (a state and its successor, both fitted to the hand's win shares)
    with ``paired`` ``(N,)`` saying which successors also pull their values towards the state's by
    ``consistency`` times their squared distance. ``chains`` (features ``(M, 1 + K, n, F)``, fixed values
    ``(M, 1 + K, n)``, NaN where the MLP values the state): each state is pulled towards the mean of its ``K``
    successors' values by ``draw_consistency`` times their squared distance, a batch of them beside each batch."""
    rng = np.random.default_rng(seed)
    x_all = np.ascontiguousarray(features, np.float32)
    y_all = np.ascontiguousarray(targets, np.float32)
    if x_all.ndim == 3:
        x_all = x_all[:, None]
        pairs_all = np.zeros(len(x_all), np.float32)
    else:
        pairs_all = np.asarray(paired if paired is not None else np.zeros(len(x_all)), np.float32)
    width = x_all.shape[-1]
    c_all, c_fixed = chains if chains is not None and draw_consistency else (x_all[:0], y_all[:0])

    def uniform(fan_in: int, shape: tuple[int, ...]) -> np.ndarray:
        bound = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    params = [uniform(width, (width, hidden)), uniform(width, (hidden,)), uniform(hidden, (hidden, hidden)),
              uniform(hidden, (hidden,)), uniform(hidden, (hidden, 1)), uniform(hidden, (1,)),
              np.zeros(width, np.float32)]
    moments = [np.zeros_like(p) for p in params]
    squares = [np.zeros_like(p) for p in params]
    batches = (len(x_all) + batch - 1) // batch
    chain_batch = -(-len(c_all) // batches) if len(c_all) else 0
    steps = epochs * batches
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    step = 0
    for _ in range(epochs):
        order = rng.permutation(len(x_all))
        chain_order = rng.permutation(len(c_all)) if chain_batch else None
        for i, start in enumerate(range(0, len(x_all), batch)):
            idx = order[start:start + batch]
            x, y, pairs = x_all[idx], y_all[idx], pairs_all[idx]
            p, cache = _forward(params, x)
            count = x.shape[0] * x.shape[1]
            du = (p - y[:, None, :]) / count
            if x.shape[1] == 2 and consistency:
                dp = np.zeros_like(p)
                diff = (p[:, 0] - p[:, 1]) * (2.0 * consistency / x.shape[0]) * pairs[:, None]
                dp[:, 0], dp[:, 1] = diff, -diff
                du += p * (dp - (dp * p).sum(axis=-1, keepdims=True))
            grads = _backward(params, cache, du)
            if chain_order is not None:
                cidx = chain_order[i * chain_batch:(i + 1) * chain_batch]
                if len(cidx):
                    grads = [g + h for g, h in zip(grads, _chain_grads(params, c_all[cidx], c_fixed[cidx],
                                                                       draw_consistency), strict=True)]
            step += 1
            rate = _one_cycle(lr, step - 1, steps)
            for param, grad, m, v in zip(params, grads, moments, squares, strict=True):
                param *= 1.0 - rate * weight_decay
                m *= beta1
                m += (1 - beta1) * grad
                v *= beta2
                v += (1 - beta2) * grad * grad
                param -= (rate / (1 - beta1 ** step)) * m / (np.sqrt(v / (1 - beta2 ** step)) + eps)
    w1, b1, w2, b2, w3, b3, k = params
    return ((w1, b1), (w2, b2), (w3, b3)), k


def _forward(params: list[np.ndarray], x: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """The values ``(..., n)`` of views ``x`` ``(..., n, F)`` under ``params``, with what the gradient needs."""
    w1, b1, w2, b2, w3, b3, k = params
    rows = x.reshape(-1, x.shape[-1])
    h1 = np.maximum(rows @ w1 + b1, 0.0)
    h2 = np.maximum(h1 @ w2 + b2, 0.0)
    u = ((h2 @ w3)[:, 0] + b3[0] + rows @ k).reshape(x.shape[:-1])
    u = u - u.max(axis=-1, keepdims=True)
    p = np.exp(u)
    p /= p.sum(axis=-1, keepdims=True)
    return p, (rows, h1, h2)


def _backward(params: list[np.ndarray], cache: tuple[np.ndarray, ...], du: np.ndarray) -> list[np.ndarray]:
    """The gradients of ``params`` given the loss's gradient ``du`` with respect to the scores."""
    w2, w3 = params[2], params[4]
    rows, h1, h2 = cache
    ds = du.reshape(-1).astype(np.float32)
    dh2 = np.outer(ds, w3[:, 0]) * (h2 > 0)
    dh1 = (dh2 @ w2.T) * (h1 > 0)
    return [rows.T @ dh1, dh1.sum(0), h1.T @ dh2, dh2.sum(0), (h2.T @ ds)[:, None],
            np.array([ds.sum()], np.float32), rows.T @ ds]


def _chain_grads(params: list[np.ndarray], x: np.ndarray, fixed: np.ndarray, weight: float) -> list[np.ndarray]:
    """The gradients of ``weight`` times the mean squared gap between each chain's first value and the mean of
    the rest (``fixed`` values where not NaN)."""
    p, cache = _forward(params, x)
    free = np.isnan(fixed)
    v = np.where(free, p, np.nan_to_num(fixed))
    gap = v[:, 0] - v[:, 1:].mean(axis=1)  # (B, n)
    scale = 2.0 * weight / x.shape[0]
    dv = np.zeros_like(v)
    dv[:, 0] = gap * scale
    dv[:, 1:] = -(gap * scale)[:, None, :] / (v.shape[1] - 1)
    dv *= free
    du = p * (dv - (dv * p).sum(axis=-1, keepdims=True))
    return _backward(params, cache, du)


def _one_cycle(peak: float, step: int, steps: int, warm: float = 0.3) -> float:
    """The learning rate of ``step`` of ``steps``: cosine from ``peak / 25`` up to ``peak`` over the first 30%, then
    cosine down to ``peak / 25e4`` (torch's OneCycleLR defaults)."""
    low, end = peak / 25.0, peak / 25.0 / 1e4
    rise = max(1, int(warm * steps))
    if step < rise:
        return float(low + (peak - low) * (1 - np.cos(np.pi * step / rise)) / 2)
    frac = (step - rise) / max(1, steps - rise)
    return float(end + (peak - end) * (1 + np.cos(np.pi * frac)) / 2)


@lru_cache(maxsize=8)
def net_value(config: GameConfig, hands: int = DEFAULT_NET_HANDS, seed: int = 0) -> NetValue:
    """The net value trained on ``hands`` heuristic hands of ``config`` played from ``seed`` (cached per process)."""
    check_int("fit hands", hands, 1)
    features, paired, targets, chains, fixed = training_pairs(config, hands, seed)
    layers, skip = train_mlp(features, targets, seed, paired=paired, consistency=CONSISTENCY, chains=(chains, fixed),
                             draw_consistency=DRAW_CONSISTENCY)
    return NetValue(config, layers, skip, hands, seed, LOOKAHEAD)


__all__ = ["DEFAULT_NET_HANDS", "NetValue", "net_features", "net_value", "net_width", "train_mlp"]
