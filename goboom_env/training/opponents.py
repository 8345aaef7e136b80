"""Batched opponents: numpy agents that each pick one action for many games at once.

A :class:`BatchOpponent` plays the seats to move of a batch of games from their observations and legal masks:
``random``, a frozen snapshot of the learner (:class:`SnapshotOpponent`, the numpy actor that ``ppo:`` plays), or the
variant's best heuristic (``classic-tricks`` or ``jokers-boom``: :func:`batched_heuristic`, from
:mod:`goboom_env.agents.batched`, the one implementation of the heuristics); :class:`PaddedOpponent` serves a
generalist's padded observations. The fast trainer (``goboom train-fast``) and ``goboom exploit`` play them (the
batched single-agent env plays the scalar heuristics' rules instead, with each game's tie-breaks). Numpy only.
"""

from __future__ import annotations

import numpy as np

from goboom_env.agents.batched import (
    BatchOpponent,
    ClassicTricksOpponent,
    JokersBoomOpponent,
    PaddedOpponent,
    batched_heuristic,
)
from goboom_env.agents.ppo import FrozenMlp

__all__ = [
    "BatchOpponent",
    "ClassicTricksOpponent",
    "JokersBoomOpponent",
    "PaddedOpponent",
    "RandomOpponent",
    "SnapshotOpponent",
    "batched_heuristic",
    "sample_masked",
]


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
