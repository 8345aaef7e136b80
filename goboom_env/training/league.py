"""The opponent pool of self-play, one for every trainer: weighted opponent entries plus the learner's snapshots.

A :class:`League` holds the opponent mix (``learner=3 self=1 heuristic=1``) and the learner's last ``size``
snapshots, which the :data:`SELF` entry stands for; each trainer keeps its own kind of snapshot there
(``goboom train``: :class:`OpponentPool`; ``train-fast``: its seat plan; ``train-rllib``: module slots).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from goboom_env.agents import Policy, make_agent
from goboom_env.agents.ppo import FrozenMlp, SnapshotAgent
from goboom_env.config import GameConfig, check_number
from goboom_env.training.settings import SNAPSHOTS

SELF = SNAPSHOTS  # the pool entry of the learner's snapshots

Snapshot = TypeVar("Snapshot")


def opponent_entries(opponents: str | Sequence[str] | dict[str, float]) -> list[tuple[str, float]]:
    """The pool entries of ``opponents``: a spec, a list of them (equal weights) or a ``{spec: weight}`` dict."""
    if isinstance(opponents, str):
        opponents = [opponents]
    entries = list(opponents.items()) if isinstance(opponents, dict) else [(spec, 1.0) for spec in opponents]
    if not entries or not all(isinstance(spec, str) for spec, _ in entries):
        raise ValueError(f"opponents must be a non-empty list of agent specs or a {{spec: weight}} dict, "
                         f"got {opponents!r}")
    return entries


@dataclass(frozen=True)
class SelfPlaySeeds:
    """Where each generator of a single-agent episode restarts on ``reset(seed)`` (the pool's agent ``k`` from
    ``agents + k``): ``SelfPlayEnv`` and each game of the batched env alike."""

    seat: int
    deal: int
    pool: tuple[int, int]
    agents: int

    @classmethod
    def of(cls, seed: int) -> SelfPlaySeeds:
        return cls(seat=seed, deal=seed + 7, pool=(seed, 1),
                   agents=int(np.random.default_rng([seed, 2]).integers(2**31)))


class League(Generic[Snapshot]):
    """Weighted opponent entries and the learner's last ``size`` snapshots (oldest first), drawn from ``rng``; an
    entry of weight 0 is never drawn, nor :data:`SELF` while there is no snapshot."""

    def __init__(self, entries: Sequence[tuple[str, float]], *, size: int = 8,
                 rng: np.random.Generator | None = None) -> None:
        self.weights = [check_number(f"the weight of opponent {spec!r}", w, allow_zero=True) for spec, w in entries]
        if not any(w > 0 for w in self.weights):
            raise ValueError(f"opponent pool needs at least one entry with a positive weight, got {list(entries)}")
        self.specs = [spec for spec, _ in entries]
        self.size = size
        self.rng = np.random.default_rng() if rng is None else rng
        self.snapshots: dict[str, Snapshot] = {}

    def add(self, name: str, snapshot: Snapshot) -> list[str]:
        """Add the newest snapshot; returns the names of those dropped beyond ``size``."""
        self.snapshots[name] = snapshot
        dropped = list(self.snapshots)[: max(len(self.snapshots) - self.size, 0)]
        for old in dropped:
            del self.snapshots[old]
        return dropped

    def pick(self, uniform: np.ndarray | float) -> np.ndarray:
        """The entry (index) at each uniform draw in [0, 1): the weights' inverse distribution function."""
        live = [i for i, spec in enumerate(self.specs) if self.weights[i] > 0 and (spec != SELF or self.snapshots)]
        if not live:
            raise ValueError(f"no opponent to draw: the pool's entries {self.specs} need a snapshot first")
        weights = np.array([self.weights[i] for i in live])
        cdf = (weights / weights.sum()).cumsum()
        cdf /= cdf[-1]
        return np.asarray(live)[np.searchsorted(cdf, uniform, side="right")]

    def draw(self, count: int) -> np.ndarray:
        """The entries of ``count`` games (indices into :attr:`specs`), one uniform draw each."""
        return self.pick(self.rng.random(count))

    def draw_snapshots(self, count: int) -> np.ndarray:
        """A snapshot index for each of ``count`` games, uniformly."""
        return self.rng.integers(len(self.snapshots), size=count)

    def sample(self) -> str:
        """The opponent of the next game: an entry's spec, or a snapshot's name when :data:`SELF` is drawn."""
        spec = self.specs[int(self.draw(1)[0])]
        if spec != SELF:
            return spec
        return list(self.snapshots)[int(self.draw_snapshots(1)[0])]


class OpponentPool(League[FrozenMlp]):
    """``goboom train``'s pool: one scalar agent per name, baselines by spec and the learner's snapshots; each
    :meth:`sample` names the opponent of an episode's other seats, :meth:`agent` its policy."""

    def __init__(self, config: GameConfig, entries: Sequence[tuple[str, float]], *, pool_size: int = 8,
                 seed: int | None = None) -> None:
        super().__init__(entries, size=pool_size, rng=np.random.default_rng(seed))
        self.config = config
        self._agents: dict[str, Policy] = {}
        seed_base = int(self.rng.integers(2**31))
        for i, spec in enumerate(self.specs):
            if spec != SELF:  # fail now, with the registry's message, on an unknown spec
                self._agents[spec] = make_agent(spec, config, seed_base + i)

    def add_snapshot(self, name: str, state: dict[str, Any]) -> None:
        """Add a frozen learner (:meth:`FrozenMlp.state`), dropping the oldest beyond ``pool_size``."""
        snapshot = FrozenMlp.from_state(state)
        self._agents[name] = SnapshotAgent(name, snapshot, int(self.rng.integers(2**31)))
        for old in self.add(name, snapshot):
            del self._agents[old]

    def reseed(self, seed: int) -> None:
        """Restart the draws and every agent's generator from ``seed`` (Gymnasium's ``reset(seed=...)``)."""
        seeds = SelfPlaySeeds.of(seed)
        self.rng = np.random.default_rng(seeds.pool)
        for i, agent in enumerate(self._agents.values()):
            agent.reseed(seeds.agents + i)

    def agent(self, name: str) -> Policy:
        if name not in self._agents:
            raise ValueError(f"opponent {name!r} is not in the pool; known: {sorted(self._agents)}")
        return self._agents[name]
