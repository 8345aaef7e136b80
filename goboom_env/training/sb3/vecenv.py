"""An SB3 ``VecEnv`` view of the batched engine: one learner seat per game, the opponents batched inside.

:class:`VectorGameVecEnv` lets stable-baselines3 / sb3-contrib users (``MaskablePPO``) train on
:class:`goboom_env.vector.VectorGame` without a Python game loop per environment::

    from sb3_contrib import MaskablePPO
    from goboom_env.training.sb3.vecenv import VectorGameVecEnv

    venv = VectorGameVecEnv(GameConfig(), num_envs=64, opponent="heuristic", seed=0)
    MaskablePPO("MlpPolicy", venv, n_steps=128).learn(100_000)

Each of the ``num_envs`` environments is one game in which the learner holds one seat (drawn per
episode; :class:`~goboom_env.training.seats.LearnerSeats`); :meth:`step_wait` applies the learner's actions
(an illegal one raises ``IllegalActionError``), then plays the other seats of every game with one batched
opponent (``random``, ``heuristic`` = the variant's best heuristic batched, or any
:class:`goboom_env.training.opponents.BatchOpponent`) until the learner is to move again everywhere. The
reward of a step is what the learner's seat received since its previous action (the win reward at
the end of the hand, so a loss caused by another player going out reaches it), as
:class:`goboom_env.training.sb3.selfplay.SelfPlayEnv` does; a finished game is dealt anew at once (``done`` marks
it, ``info["terminal_observation"]`` holds the learner's last observation, ``info["episode"]`` the
return and length for SB3's logger, ``info["won"]`` whether the learner won).

The engine steps all its games together, so a game whose learner is already to move while other
games still wait for their opponents is held (:meth:`goboom_env.vector.VectorGame.step_some`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import GameConfig
from goboom_env.hints import needs_extra
from goboom_env.observation import ObservationEncoder
from goboom_env.training.opponents import BatchOpponent, RandomOpponent, batched_heuristic
from goboom_env.training.seats import LearnerSeats

with needs_extra("the stable-baselines3 trainer (goboom_env.training.sb3)"):
    from stable_baselines3.common.vec_env import VecEnv

OPPONENTS = ("random", "heuristic")


class VectorGameVecEnv(VecEnv):
    """``num_envs`` games of ``config`` as an SB3 VecEnv with ``action_masks()`` (see the module docstring)."""

    def __init__(self, config: GameConfig, num_envs: int = 64, opponent: str | BatchOpponent = "random", *,
                 seed: int = 0, episode: str = "hand", reward: str = "win") -> None:
        from goboom_env.vector import VectorGame

        if isinstance(opponent, str):
            if opponent not in OPPONENTS:
                raise ValueError(f"opponent must be one of {list(OPPONENTS)} or a BatchOpponent, got {opponent!r}")
            opponent = RandomOpponent() if opponent == "random" else batched_heuristic(config)
        self.config = config
        self.game = VectorGame(config, num_envs=num_envs, seed=seed, episode=episode, reward=reward,
                               autoreset=True, check=True)
        self.opponent = opponent
        self.n = config.num_players
        self.rng = np.random.default_rng(seed)
        encoder = ObservationEncoder(config)
        self.render_mode = None
        super().__init__(num_envs, gym.spaces.Box(encoder.low, encoder.high, dtype=np.float32),
                         gym.spaces.Discrete(NUM_ACTIONS))
        self.seats = LearnerSeats(num_envs, self.n, self.rng)
        self._obs = np.zeros((num_envs, encoder.size), np.float32)
        self._mask = np.zeros((num_envs, NUM_ACTIONS), bool)
        self._actions = np.zeros(num_envs, np.int64)
        self._ep_return = np.zeros(num_envs, np.float64)
        self._ep_len = np.zeros(num_envs, np.int64)
        self._current: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        """The engine's latest observations, masks and seats to move."""

    @property
    def learner_seat(self) -> np.ndarray:
        """``[num_envs]``: the learner's seat in each game."""
        return self.seats.seat

    # -- VecEnv API ------------------------------------------------------------------------------------

    def reset(self) -> np.ndarray:
        """Deal every game, draw the learner seats, play the opponents up to the learner's turns."""
        self._current = self.game.reset()
        everyone = np.arange(self.num_envs)
        self.seats.redraw(np.ones(self.num_envs, bool))
        self._ep_return[:] = 0.0
        self._ep_len[:] = 0
        reward, done = np.zeros(self.num_envs), np.zeros(self.num_envs, bool)
        self._advance(reward, done)
        self.seats.take(everyone, self.seats.seat)  # what came before the learner's first move is no step's
        return self._read()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """The learner's actions, then the opponents up to the learner's next turn in every game."""
        self.seats.refuse_illegal(self._actions, self._mask, self.seats.seat)
        last_obs = self._obs.copy()
        reward, done = np.zeros(self.num_envs), np.zeros(self.num_envs, bool)
        obs, mask, seat, rewards, ended = self.game.step(self._actions)
        self._current = (obs, mask, seat)
        self._collect(rewards, ended, reward, done)
        self._advance(reward, done)
        reward += self.seats.take(np.arange(self.num_envs), self.seats.seat)
        self._ep_len += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for b in np.flatnonzero(done):
            total = self._ep_return[b] + reward[b]
            infos[b] = {"terminal_observation": last_obs[b], "won": bool(reward[b] > 0),
                        "episode": {"r": float(total), "l": int(self._ep_len[b])}}
        self._ep_return += reward
        self._ep_return[done] = 0.0
        self._ep_len[done] = 0
        return self._read(), reward.astype(np.float32), done, infos

    def action_masks(self) -> np.ndarray:
        """``[num_envs, 54]`` bool: the learner's legal actions in each game."""
        return self._mask.copy()

    def close(self) -> None:
        pass

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

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Re-seeds the learner-seat and opponent draws (the deals follow the engine's own streams)."""
        self.rng = self.seats.rng = np.random.default_rng(seed)
        return [seed] * self.num_envs

    # -- internals ----------------------------------------------------------------------------------------

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [int(indices)] if isinstance(indices, (int, np.integer)) else [int(i) for i in indices]

    def _collect(self, rewards: np.ndarray, ended: np.ndarray, reward: np.ndarray, done: np.ndarray,
                 games: np.ndarray | None = None) -> None:
        """Credit the seats' rewards of one engine call (of the moving ``games``); where a game ended, add the
        learner's last reward to ``reward``, mark it ``done`` and draw its next learner seat (autoreset)."""
        self.seats.credit(rewards, games)
        finished = np.flatnonzero(ended if games is None else ended & games)
        reward[finished] += self.seats.take(finished, self.seats.seat[finished])
        done[finished] = True
        self.seats.redraw(ended if games is None else ended & games)

    def _advance(self, reward: np.ndarray, done: np.ndarray) -> None:
        """Play the opponents until the learner is to move in every game, holding the games already there."""
        while True:
            obs, mask, seat = self._current
            theirs = seat != self.seats.seat
            if not theirs.any():
                return
            actions = np.zeros(self.num_envs, np.int64)
            actions[theirs] = self.opponent.act(obs[theirs], mask[theirs], self.rng)
            obs, mask, seat, rewards, ended = self.game.step_some(actions, theirs)
            self._current = (obs, mask, seat)
            self._collect(rewards, ended, reward, done, games=theirs)

    def _read(self) -> np.ndarray:
        obs, mask, _ = self._current
        self._obs[:] = obs
        self._mask[:] = mask.astype(bool)
        return self._obs.copy()
