"""An SB3 ``VecEnv`` view of the batched engine: :class:`goboom_env.training.vector_env.SelfPlayVectorEnv` in SB3's
API, for ``MaskablePPO`` (docs/training.md). An illegal action raises ``IllegalActionError`` before any game moves;
``seed(s)`` seeds game ``i`` with ``s + i``, as SB3 seeds a ``DummyVecEnv``, so it plays what a ``SelfPlayEnv``
seeded alike plays.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from goboom_env.agents.batched import BatchOpponent
from goboom_env.config import GameConfig
from goboom_env.hints import needs_extra
from goboom_env.training.vector_env import SelfPlayVectorEnv

with needs_extra("the stable-baselines3 trainer (goboom_env.training.sb3)"):
    from stable_baselines3.common.vec_env import VecEnv


class VectorGameVecEnv(VecEnv):
    """``num_envs`` games of ``config`` as an SB3 VecEnv with ``action_masks()``; ``opponent``: ``random``, a
    heuristic's name or a :class:`~goboom_env.agents.batched.BatchOpponent`."""

    def __init__(self, config: GameConfig, num_envs: int = 64, opponent: str | BatchOpponent = "random", *,
                 seed: int | None = 0, episode: str = "hand", reward: str = "win") -> None:
        who: dict[str, Any] = {"opponents": [(opponent, 1.0)]} if isinstance(opponent, str) else {"opponent": opponent}
        self.env = SelfPlayVectorEnv(config, num_envs, **who, episode=episode, reward=reward,
                                     autoreset_mode=AutoresetMode.SAME_STEP)
        self.config = config
        self.render_mode = None
        super().__init__(num_envs, self.env.single_observation_space, self.env.single_action_space)
        if seed is not None:
            self.seed(seed)
        self._actions = np.zeros(num_envs, np.int64)
        self._ep_return = np.zeros(num_envs, np.float64)
        self._ep_len = np.zeros(num_envs, np.int64)

    @property
    def learner_seat(self) -> np.ndarray:
        return self.env.seats.seat

    def reset(self) -> np.ndarray:
        """A new episode in every game (seeded by :meth:`seed`, with ``set_options``' options)."""
        seeds = None if all(s is None for s in self._seeds) else self._seeds
        options = self._options[0]
        if any(o != options for o in self._options):
            raise ValueError("set_options: every game takes the same reset options here, got different ones")
        obs, _ = self.env.reset(seed=seeds, options=options or None)
        self._reset_seeds()
        self._reset_options()
        self._ep_return[:] = 0.0
        self._ep_len[:] = 0
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """The learner's actions (an illegal one refused), then the opponents up to its next turn in every game."""
        env = self.env
        env.seats.refuse_illegal(self._actions, env.action_masks(), env.seats.seat)
        obs, reward, terminated, truncated, info = env.step(self._actions)
        done = terminated | truncated
        self._ep_return += reward
        self._ep_len += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for b in np.flatnonzero(done):
            infos[b] = {"terminal_observation": info["final_obs"][b], "won": bool(info["final_info"]["won"][b]),
                        "episode": {"r": float(self._ep_return[b]), "l": int(self._ep_len[b])}}
        self._ep_return[done] = 0.0
        self._ep_len[done] = 0
        return obs, reward.astype(np.float32), done, infos

    def action_masks(self) -> np.ndarray:
        return self.env.action_masks()

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self, attr_name) for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """``action_masks`` per environment (what sb3-contrib asks for); other methods are called once per index."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in idx]
        return [getattr(self, method_name)(*method_args, **method_kwargs) for _ in idx]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [int(indices)] if isinstance(indices, (int, np.integer)) else [int(i) for i in indices]
