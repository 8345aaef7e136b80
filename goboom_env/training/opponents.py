"""Batched opponents: numpy agents that each pick one action for many games at once.

A :class:`BatchOpponent` plays the seats to move of a batch of games from their observations and legal masks:
``random``, a frozen snapshot of the learner (:class:`SnapshotOpponent`, the numpy actor that ``ppo:`` plays), or the
variant's best heuristic (``classic-tricks`` or ``jokers-boom``: :func:`batched_heuristic`, the scalar agent's scores
computed for every game at once); :class:`PaddedOpponent` serves a generalist's padded observations. The fast trainer
(``goboom train-fast``), ``goboom exploit`` and the SB3 ``VecEnv`` of the batched engine play them. Numpy only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import GameConfig
from goboom_env.training.artifacts.numpy_actor import FrozenMlp


class BatchOpponent(Protocol):
    """Plays the seats to move of a batch of games: ``actions[i]`` for ``obs[i]`` with legal ``mask[i]``."""

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...


def sample_masked(logits: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row from softmax(logits) restricted to ``mask`` (Gumbel-max)."""
    noisy = np.where(mask.astype(bool), logits + rng.gumbel(size=logits.shape), -np.inf)
    return np.argmax(noisy, axis=1)


class RandomOpponent:
    """Uniform over the legal actions."""

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return sample_masked(np.zeros(mask.shape, np.float32), mask, rng)


class SnapshotOpponent:
    """A frozen copy of the learner that samples from its masked policy (as the league of ``goboom train``)."""

    def __init__(self, net: FrozenMlp) -> None:
        self.net = net

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return sample_masked(self.net.logits(obs), mask, rng)


class ClassicTricksOpponent:
    """``classic-tricks`` (:class:`goboom_env.agents.ClassicTricksAgent`) on a batch of observations.

    The same decoding of the observation (the encoder's
    :meth:`~goboom_env.observation.ObservationEncoder.counts`) and the same scores as the scalar agent, computed
    for every card at once: follow with the lowest card that wins the trick; otherwise play the card that keeps the most
    unseen cards followable (``kept``), on the lead minus the unseen cards that could follow it, plus a
    hundredth of its points. Ties are broken at random, as the scalar agent does."""

    def __init__(self, config: GameConfig) -> None:
        from goboom_env.cards import CLASSIC_POINTS, MATCH_MASKS
        from goboom_env.observation import encoder_for

        if not config.is_classic:
            raise ValueError("the batched heuristic opponent plays classic Go Boom only; use learner, self or "
                             "random for the jokers variant")
        self.n = config.num_players
        self.decks = config.num_decks
        self.encoder = encoder_for(config)
        self.match = np.array([[(MATCH_MASKS[c] >> x) & 1 for x in range(52)] for c in range(52)], np.float32)
        self.points = np.array(CLASSIC_POINTS[:52], np.float32) / 100.0

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        counts, faces = self.encoder.counts(obs), np.arange(52)
        hand = counts["hand"][:, :52].astype(np.float32)
        unseen = (self.decks - counts["hand"][:, :52] - counts["seen"][:, :52]).astype(np.float32)
        led_block = counts["led"][:, :52] > 0
        leading = ~led_block.any(1)
        led = np.where(leading, -1, led_block.argmax(1))
        trick = counts["trick"].reshape(len(obs), self.n, -1)[:, :, :52] > 0
        played = np.where(trick.any(2), trick.argmax(2), -1)
        same_suit = (played >= 0) & (played // 13 == led[:, None] // 13)
        best = np.maximum(np.where(same_suit, played, -1).max(1), led)
        cover = hand @ self.match  # per face x: own cards that x matches
        kept = (unseen * (cover > 0)).sum(1, keepdims=True) - (unseen * (cover == 1)) @ self.match.T
        follow = unseen @ self.match.T
        score = kept + self.points - np.where(leading[:, None], follow, 0.0)
        legal = mask[:, :52].astype(bool)
        noisy = np.where(legal, score + rng.random(score.shape) * 1e-6, -np.inf)
        choice = noisy.argmax(1)
        wins = legal & ~leading[:, None] & (faces // 13 == led[:, None] // 13) & (faces > best[:, None])
        choice = np.where(wins.any(1), wins.argmax(1), choice)  # the lowest winning card
        return np.where(legal.any(1), choice, NUM_ACTIONS - 1)


class JokersBoomOpponent:
    """``jokers-boom`` (:class:`goboom_env.agents.JokersBoomAgent`) on a batch of observations.

    The same decoding (the encoder's :meth:`~goboom_env.observation.ObservationEncoder.counts`) and the same
    scores as the scalar agent for every card at once: boom at once when an opponent holds one card and the
    stock is not empty; otherwise the matching non-boom card worth most points plus three per own card that
    would match it next, minus two per unseen card that could match it; a boom card only when no other card
    matches; draw or pass only when nothing else is legal. Ties are broken at random, as the scalar agent does."""

    def __init__(self, config: GameConfig) -> None:
        from goboom_env.agents.heuristics import JokersBoomAgent
        from goboom_env.cards import ACES_MASK, JOKER, JOKER_BIT, JOKERS_POINTS, MATCH_MASKS, NUM_FACES, faces_in
        from goboom_env.observation import encoder_for

        if config.is_classic:
            raise ValueError("JokersBoomOpponent plays the jokers variant; use ClassicTricksOpponent for classic")
        self.encoder = encoder_for(config)
        self.total = np.full(NUM_FACES, config.num_decks, np.float64)
        self.total[JOKER] = config.num_jokers
        boom = np.zeros(NUM_FACES, bool)
        boom[faces_in(ACES_MASK if config.aces_mode else JOKER_BIT)] = True
        self.boom = boom
        self.match = np.zeros((NUM_FACES, NUM_FACES))  # match[c, x]: face x matches card c (the joker nothing)
        for c in range(52):
            self.match[c, faces_in(MATCH_MASKS[c])] = 1.0
        self.points = np.array(JOKERS_POINTS, np.float64)
        self.scarcity = JokersBoomAgent.scarcity

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        counts = self.encoder.counts(obs)
        hand = counts["hand"].astype(np.float64)
        unseen = self.total - hand - counts["seen"]
        plain = hand * ~self.boom
        score = (self.points + 3.0 * (plain @ self.match.T - plain) - self.scarcity * (unseen @ self.match.T)
                 + rng.random(hand.shape) * 1e-6)
        legal = mask[:, :-1].astype(bool)
        plays, booms = legal & ~self.boom, legal & self.boom
        urgent = (counts["hand_sizes"][:, 1:].min(1) <= 1) & (counts["stock"][:, 0] > 0) & booms.any(1)
        pool = np.where((urgent | ~plays.any(1))[:, None], booms, plays)
        choice = np.where(pool, score, -np.inf).argmax(1)
        return np.where(pool.any(1), choice, NUM_ACTIONS - 1)


class PaddedOpponent:
    """A batched opponent per player count, on observations padded to the 12-seat layout (a generalist's games).

    Each row's table size is read from its ``flags`` block (``num_players / 12``); the rows of one count are
    un-padded (:func:`goboom_env.observation.unpad_observations`) and given to that count's opponent."""

    def __init__(self, opponents: dict[int, BatchOpponent]) -> None:
        from goboom_env.config import MAX_PLAYERS
        from goboom_env.observation import layout

        self.opponents = opponents
        self.count_entry = layout(MAX_PLAYERS)["flags"].stop - 1
        """The padded observation's ``num_players / 12`` entry."""
        self.max_players = MAX_PLAYERS

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        from goboom_env.observation import unpad_observations

        counts = np.rint(np.asarray(obs[:, self.count_entry], np.float64) * self.max_players).astype(np.int64)
        out = np.empty(len(obs), np.int64)
        for k in np.unique(counts):
            if int(k) not in self.opponents:
                raise ValueError(f"no batched opponent for {int(k)} players (has {sorted(self.opponents)})")
            rows = np.flatnonzero(counts == k)
            out[rows] = self.opponents[int(k)].act(unpad_observations(obs[rows], int(k)), mask[rows], rng)
        return out


def batched_heuristic(config: GameConfig, player_counts: Sequence[int] = ()) -> BatchOpponent:
    """The ``heuristic`` alias on a batch: the best rule-based agent of the variant (``classic-tricks`` or
    ``jokers-boom``); with ``player_counts``, on padded observations of games at those counts
    (:class:`PaddedOpponent`, each count playing ``config.replace(num_players=k)``)."""
    if player_counts:
        return PaddedOpponent({int(k): batched_heuristic(config.replace(num_players=int(k))) for k in player_counts})
    return ClassicTricksOpponent(config) if config.is_classic else JokersBoomOpponent(config)
