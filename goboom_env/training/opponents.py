"""Batched opponents: numpy agents that each pick one action for many games at once (the fast trainer's and
``goboom exploit``'s): ``random`` and the learner's frozen snapshots here, the heuristics in
:mod:`goboom_env.agents.batched`. Numpy only.
"""

from __future__ import annotations

import numpy as np

from goboom_env.agents.ppo import FrozenMlp, masked_argmax
from goboom_env.observation import pad_observations


def sample_masked(logits: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row from softmax(logits) restricted to ``mask`` (Gumbel-max)."""
    noisy = np.where(mask.astype(bool), logits + rng.gumbel(size=logits.shape), -np.inf)
    return np.argmax(noisy, axis=1)


class RandomOpponent:
    """Uniform over the legal actions."""

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return sample_masked(np.zeros(mask.shape, np.float32), mask, rng)


class SnapshotOpponent:
    """A frozen network: sampling from its masked policy (a snapshot of the learner, as the league of ``goboom
    train``) or greedy (a ``ppo:`` model that plays greedily); a generalist's on observations padded to
    ``pad_players`` seats."""

    def __init__(self, net: FrozenMlp, greedy: bool = False, pad_players: int | None = None) -> None:
        self.net = net
        self.greedy = greedy
        self.pad_players = pad_players

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if self.pad_players is not None:
            obs = pad_observations(obs, self.pad_players)
        logits = self.net.logits(obs)
        return masked_argmax(logits, mask) if self.greedy else sample_masked(logits, mask, rng)
