"""League self-play on RLlib: only ``main`` is trained; :class:`LeagueMapping` draws each other seat's module per
episode from the trainers' opponent pool: ``main``, or a frozen snapshot of it (modules ``league_0 ..``)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from goboom_env.hints import needs_extra
from goboom_env.training.league import League
from goboom_env.training.rllib.policy import MAIN_MODULE
from goboom_env.training.rllib.run import learner_state
from goboom_env.training.settings import LEARNER

with needs_extra("the RLlib trainer (goboom_env.training.rllib)"):
    from ray.rllib.algorithms.algorithm import Algorithm
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_RL_MODULE

LEAGUE_PREFIX = "league_"


def league_ids(size: int) -> list[str]:
    """Module ids of the frozen snapshot slots."""
    return [f"{LEAGUE_PREFIX}{i}" for i in range(size)]


@dataclass(frozen=True)
class LeagueMapping:
    """RLlib's agent-to-module mapping: per episode one learner seat plays ``main``; every other seat draws from
    ``opponents`` (``learner``: ``main``; ``self``: a random league slot). Seeded by the episode id, so every seat and
    worker sees the same draw; a plain picklable object (no closure)."""

    num_players: int
    pool_size: int
    opponents: tuple[tuple[str, float], ...]

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        return self.modules(str(episode.id_))[int(agent_id.rsplit("_", 1)[1])]

    @cached_property
    def pool(self) -> League[str]:
        """The opponent pool of every non-learner seat: ``main`` (``learner``) or a league slot (``self``)."""
        pool: League[str] = League(self.opponents, size=self.pool_size)
        for slot in league_ids(self.pool_size):
            pool.add(slot, slot)
        return pool

    def modules(self, episode_id: str) -> list[str]:
        """The module of each seat in the episode with this id."""
        rng = random.Random(f"goboom-league:{episode_id}")
        learner = rng.randrange(self.num_players)
        draws = [(rng.random(), rng.randrange(self.pool_size)) for _ in range(self.num_players)]
        entries = self.pool.pick(np.array([draw for draw, _ in draws]))
        slots = list(self.pool.snapshots)
        return [MAIN_MODULE if seat == learner or self.pool.specs[entry] == LEARNER else slots[slot]
                for seat, (entry, (_, slot)) in enumerate(zip(entries, draws))]


class LeagueMetricsCallback(RLlibCallback):
    """Logs ``main_win_rate``: the share of ``main``'s seats with a positive return in episodes with a snapshot
    (1/n = as strong as the league)."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        modules = {agent: episode.module_for(agent) for agent in episode.agent_ids}
        if metrics_logger is None or all(m == MAIN_MODULE for m in modules.values()):
            return
        rewards = episode.get_rewards()
        for agent, module in modules.items():
            if module == MAIN_MODULE:
                won = float(sum(rewards[agent]) > 0) if agent in rewards else 0.0
                metrics_logger.log_value("main_win_rate", won, reduce="mean", window=1000)


def snapshot(algo: Algorithm, slot: str) -> None:
    """Copy the learner's ``main`` weights into league ``slot`` and push them to the env runners."""
    learners = algo.learner_group
    learners.set_state({COMPONENT_LEARNER: {COMPONENT_RL_MODULE: {slot: learner_state(algo)}}})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=learners, policies=[slot], inference_only=True,
                                       timeout_seconds=60.0)
