"""Go Boom as an RLlib ``MultiAgentEnv`` (new API stack), a thin adapter over :class:`goboom_env.env.raw_env`: only
the seat to move observes, and every seat gets its reward on every step (the contract: docs/rllib.md)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import GameConfig
from goboom_env.env import raw_env
from goboom_env.episode import check_episode
from goboom_env.hints import needs_extra
from goboom_env.render import render_text
from goboom_env.training.seats import LearnerSeats

with needs_extra("the RLlib trainer (goboom_env.training.rllib)"):
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

OBS_KEY = "observations"
MASK_KEY = "action_mask"


def make_env_config(game: GameConfig, episode: str = "hand", reward: str = "win") -> dict[str, Any]:
    """The ``env_config`` dict for :class:`GoBoomMultiAgentEnv` (JSON-friendly: it travels to Ray workers)."""
    check_episode(episode, reward)
    return {"game": game.to_dict(), "episode": episode, "reward": reward}


class GoBoomMultiAgentEnv(MultiAgentEnv):
    """Go Boom for RLlib, one decision per step; ``config``: :func:`make_env_config`'s dict (empty: the default)."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        unknown = set(config) - {"game", "episode", "reward"}
        if unknown:
            raise ValueError(f"unknown env_config keys {sorted(unknown)}; known: ['episode', 'game', 'reward']")
        game = GameConfig.from_dict(config.get("game", {}))
        self.aec = raw_env(config=game, episode=config.get("episode", "hand"), reward=config.get("reward", "win"))
        self.game = game
        self.agents = self.possible_agents = list(self.aec.possible_agents)
        inner = self.aec.observation_space(self.agents[0])["observation"]
        space = gym.spaces.Dict({OBS_KEY: inner, MASK_KEY: gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32)})
        self.observation_spaces = dict.fromkeys(self.agents, space)
        self.action_spaces = {a: gym.spaces.Discrete(NUM_ACTIONS) for a in self.agents}
        self.seats = LearnerSeats(1, game.num_players)  # every seat learns: it keeps rewards, refuses illegal moves
        self._masks: dict[str, np.ndarray] = {}

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict]]:
        """Deal a new episode; ``options`` as for ``raw_env.reset`` (``deck``, ``dealer``)."""
        self.aec.reset(seed=seed, options=options)
        self.seats.clear()
        agent = self.aec.agent_selection
        return {agent: self._observe(agent)}, {agent: {}}

    def step(self, action_dict: dict[str, int]) -> tuple[dict, dict, dict, dict, dict]:
        """Apply the action of the seat to move."""
        aec = self.aec
        agent = aec.agent_selection
        if agent not in action_dict:
            raise ValueError(f"expected an action for {agent} (the seat to move), got {sorted(action_dict)}")
        action, seat = int(action_dict[agent]), aec.agent_name_mapping[agent]
        self.seats.refuse_illegal(np.array([action]), self._masks[agent][None], np.array([seat]))
        aec.step(action)
        self.seats.credit(np.array([[aec.rewards[a] for a in self.agents]]))
        rewards = dict(zip(self.agents, self.seats.take(0).tolist()))
        if all(aec.terminations.values()):
            observations = {a: self._observe(a) for a in self.agents}
            terminateds = dict.fromkeys(self.agents, True) | {"__all__": True}
            infos = {a: dict(aec.infos[a]) for a in self.agents}
            return observations, rewards, terminateds, {"__all__": False}, infos
        nxt = aec.agent_selection
        return {nxt: self._observe(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {}

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.aec.observe(agent)
        self._masks[agent] = obs["action_mask"]
        return {OBS_KEY: obs["observation"], MASK_KEY: obs["action_mask"].astype(np.float32)}

    def render(self) -> str:
        """The table as text (the AEC env's ``ansi`` view, no hidden cards)."""
        return render_text(self.aec.match.hand, self.aec.match, None)
