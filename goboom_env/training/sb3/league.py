"""The opponent league of self-play training: baseline agents by spec plus frozen snapshots of the learner.

:class:`OpponentPool` draws, per episode, one opponent for every other seat: a baseline spec, or (for
the :data:`SELF` entry) one of the last ``pool_size`` snapshots of the learner (:class:`FrozenMlp`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from goboom_env.agents import Policy, make_agent
from goboom_env.config import GameConfig, check_number
from goboom_env.training.artifacts.numpy_actor import FrozenMlp, SnapshotAgent

SELF = "self"
"""Opponent-pool name of the learner's snapshots."""


@dataclass
class PoolEntry:
    """One opponent choice: an agent spec (or :data:`SELF`) and its sampling weight."""

    spec: str
    weight: float


class OpponentPool:
    """Baseline agents by spec plus the learner's snapshots, sampled by weight.

    Each draw returns one name for all opponent seats of an episode: a baseline spec, or a snapshot
    (uniform over the last ``pool_size``) when the :data:`SELF` entry is drawn. While no snapshot
    exists the :data:`SELF` weight is left out.
    """

    def __init__(self, config: GameConfig, entries: Sequence[tuple[str, float]], *, pool_size: int = 8,
                 seed: int | None = None) -> None:
        weights = [check_number(f"the weight of opponent {spec!r}", w, allow_zero=True) for spec, w in entries]
        if not any(w > 0 for w in weights):
            raise ValueError(f"opponent pool needs at least one entry with a positive weight, got {list(entries)}")
        self.config = config
        self.entries = [PoolEntry(spec, w) for (spec, _), w in zip(entries, weights)]
        self.pool_size = pool_size
        self.rng = np.random.default_rng(seed)
        self.snapshots: dict[str, FrozenMlp] = {}
        self._agents: dict[str, Policy] = {}
        seed_base = int(self.rng.integers(2**31))
        for i, entry in enumerate(self.entries):
            if entry.spec != SELF:  # fail now, with the registry's message, on an unknown spec
                self._agents[entry.spec] = make_agent(entry.spec, config, seed_base + i)

    def add_snapshot(self, name: str, state: dict[str, Any]) -> None:
        """Add a frozen learner (weights from :meth:`FrozenMlp.state`); drops the oldest beyond ``pool_size``."""
        self.snapshots[name] = FrozenMlp.from_state(state)
        self._agents[name] = SnapshotAgent(name, self.snapshots[name], int(self.rng.integers(2**31)))
        while len(self.snapshots) > self.pool_size:
            oldest = next(iter(self.snapshots))
            del self.snapshots[oldest], self._agents[oldest]

    def reseed(self, seed: int) -> None:
        """Restart the draws and every agent's generator from ``seed``, so that a seeded episode is played
        the same way again (Gymnasium's ``reset(seed=...)`` contract)."""
        self.rng = np.random.default_rng([seed, 1])
        base = int(np.random.default_rng([seed, 2]).integers(2**31))
        for i, agent in enumerate(self._agents.values()):
            agent.reseed(base + i)

    def sample(self) -> str:
        """The name of the opponent for the next episode."""
        entries = [e for e in self.entries if e.weight > 0 and (e.spec != SELF or self.snapshots)]
        weights = np.array([e.weight for e in entries])
        entry = entries[int(self.rng.choice(len(entries), p=weights / weights.sum()))]
        if entry.spec != SELF:
            return entry.spec
        names = list(self.snapshots)
        return names[int(self.rng.integers(len(names)))]

    def agent(self, name: str) -> Policy:
        """The policy object of a sampled name."""
        if name not in self._agents:
            raise ValueError(f"opponent {name!r} is not in the pool; known: {sorted(self._agents)}")
        return self._agents[name]
