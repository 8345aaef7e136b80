"""The PettingZoo AEC environment of Go Boom: ``goboom_env.env()`` (wrapped) and :class:`raw_env`.

One agent per seat acts at a time; each observation is seat-relative (own hand, the trick or discard pile, the
public history) with an ``action_mask`` of the legal plays. The arguments, spaces, rewards and the layout of every
observation block are documented on the Environment page (docs/environment.md); the tests keep that page's tables
equal to the encoders.
"""

from __future__ import annotations

import copy
import warnings
from functools import lru_cache
from typing import Any

import numpy as np
from gymnasium import logger, spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.wrappers import BaseWrapper

from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import GameConfig, as_int
from goboom_env.engine import Match, as_action, blamed_on
from goboom_env.episode import EPISODES, check_episode, end_hand
from goboom_env.global_state import StateEncoder, state_encoder_for
from goboom_env.hints import did_you_mean
from goboom_env.history import check_observation, history_encoder_for, make_encoder
from goboom_env.observation import encoder_for, observe
from goboom_env.render import render_rgb, render_text
from goboom_env.scoring import REWARDS, points_rewards, win_rewards

_OPTION_KEYS = {"deck", "dealer"}


def env(**kwargs: Any) -> AECEnv:
    """The Go Boom AEC environment in PettingZoo's classic-env wrappers (numpy actions work like ints)."""
    inner = raw_env(**kwargs)
    inner = wrappers.TerminateIllegalWrapper(inner, illegal_reward=-1)
    inner = wrappers.AssertOutOfBoundsWrapper(inner)
    inner = IntegerActionWrapper(inner)
    return wrappers.OrderEnforcingWrapper(inner)


# ``goboom_env.env`` is this function (PettingZoo's convention): ``help(goboom_env.env)`` shows the module's page.
env.__doc__ = f"{env.__doc__}\n{__doc__}"


def make_config(config: GameConfig | None = None, preset: str | None = None, **fields: Any) -> GameConfig:
    """One :class:`GameConfig` from a ready config, a preset name and/or loose fields."""
    if config is not None:
        if not isinstance(config, GameConfig):
            raise ValueError(f"config must be a goboom_env.GameConfig, got {type(config).__name__}")
        if preset is not None:
            raise ValueError("give either config or preset, not both")
        return config.replace(**fields) if fields else config
    if preset is not None:
        return GameConfig.preset(preset, **fields)
    return GameConfig.from_dict(fields)


@lru_cache(maxsize=64)
def space_prototypes(config: GameConfig, observation: str = "snapshot") -> tuple[spaces.Dict, spaces.Box]:
    """The observation and state spaces of ``config``'s env, built once (building a Box took most of an env's
    construction time); each env deep-copies them, since a space owns the generator ``sample`` draws from."""
    encoder = history_encoder_for(config) if observation == "history" else encoder_for(config)
    state_encoder = state_encoder_for(config)
    obs_space = spaces.Dict({
        "observation": short_box(encoder.low, encoder.high),
        "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
    })
    return obs_space, short_box(state_encoder.low, state_encoder.high)


def short_box(low: np.ndarray, high: np.ndarray) -> spaces.Box:
    """A float32 Box whose repr gives each bound's range (``Box(0.0, 1.0..2.695, (291,), float32)``), not all."""
    box = spaces.Box(low, high, dtype=np.float32)
    box.low_repr, box.high_repr = (f"{b.min():g}" + (f"..{b.max():g}" if b.max() > b.min() else "")
                                   for b in (low, high))
    return box


def start_episode(aec: AECEnv) -> None:
    """PettingZoo's per-agent bookkeeping at a reset: every agent in play, no reward yet, none done."""
    aec.agents = aec.possible_agents[:]
    aec.rewards = dict.fromkeys(aec.agents, 0.0)
    aec._cumulative_rewards = dict.fromkeys(aec.agents, 0.0)
    aec.terminations = dict.fromkeys(aec.agents, False)
    aec.truncations = dict.fromkeys(aec.agents, False)
    aec.infos = {a: {} for a in aec.agents}


class IntegerActionWrapper(BaseWrapper):
    """Passes integer actions on as Python ``int`` and refuses the rest, bools included, with
    :class:`IllegalActionError` (PettingZoo's wrappers would index the action mask with them)."""

    def step(self, action: Any) -> None:
        if action is not None and type(action) is not int:
            with blamed_on(self.env.agent_selection):
                action = as_action(action)
        self.env.step(action)

    def __str__(self) -> str:
        return str(self.env)  # as PettingZoo's own wrappers: print(env) names the env, goboom_v0


class raw_env(AECEnv):  # noqa: N801 (PettingZoo's naming convention)
    """Go Boom as a PettingZoo AEC environment; the Environment page (docs/environment.md) documents it."""

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "name": "goboom_v0", "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, config: GameConfig | None = None, *, preset: str | None = None, episode: str = "hand",
                 reward: str = "win", render_mode: str | None = None, render_seat: int | None = None,
                 observation: str = "snapshot", **fields: Any) -> None:
        super().__init__()
        self.config = make_config(config, preset, **fields)
        check_episode(episode, reward)
        self.observation = check_observation(observation)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        n = self.config.num_players
        seat = as_int(render_seat)
        if render_seat is not None and (seat is None or not 0 <= seat < n):
            raise ValueError(f"render_seat must be None or a seat in 0..{n - 1}, got {render_seat!r}")
        self.episode = episode
        self.reward_mode = reward
        self.render_mode = render_mode
        self.render_seat = seat
        self.encoder = make_encoder(self.config, observation)
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space, state_space = copy.deepcopy(space_prototypes(self.config, observation))
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self.state_encoder = StateEncoder(self.config)
        self.state_space = state_space
        self._rng = np.random.default_rng()
        self.match: Match | None = None
        self._rewards_set = False  # rewards holds a hand's non-zero rewards (cleared on the next step)

    def _require_reset(self, method: str) -> None:
        if self.match is None:
            raise RuntimeError(f"call reset() before {method}()")

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game (same seed, same game); ``options`` may fix the first hand:
        ``{"deck": [codes or faces, index 0 = top], "dealer": seat}``."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        options = dict(options or {})
        # other keys are ignored, as PettingZoo's api_test expects; one close to a known key is a typo, named
        for key in sorted(set(options) - _OPTION_KEYS, key=str):
            if hint := did_you_mean(key, _OPTION_KEYS):
                warnings.warn(f"ignoring unknown reset option {key!r}{hint}", stacklevel=2)
        self.match = Match(self.config, self._rng, options.get("deck"), options.get("dealer"))
        start_episode(self)
        self._rewards_set = False
        self.agent_selection = self.agents[self.match.hand.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The seat-relative observation of ``agent`` and its action mask (:func:`goboom_env.observation.observe`)."""
        self._require_reset("observe")
        finished = self.terminations.get(agent, True)
        return observe(self.match, self.agent_name_mapping[agent], self.encoder, finished=finished)

    def last(self, observe: bool = True) -> tuple:
        self._require_reset("last")
        return super().last(observe)

    def agent_iter(self, max_iter: int = 2**63) -> Any:
        self._require_reset("agent_iter")
        return super().agent_iter(max_iter)

    def step(self, action: int) -> None:
        """Apply ``action`` for the agent to move; :class:`IllegalActionError` for one that is not legal."""
        if self.match is None:  # checked inline: step is the hot path
            raise RuntimeError("call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        hand = self.match.hand
        with blamed_on(agent):
            hand.apply(action)
        self._cumulative_rewards[agent] = 0.0
        # rewards are non-zero only after a hand ends: clearing and accumulating are skipped otherwise (hot path)
        if self._rewards_set:
            self._clear_rewards()
            self._rewards_set = False
        if hand.over:
            self._end_hand()
        if not self.terminations[agent]:
            self.agent_selection = self.agents[self.match.hand.current]
        if self._rewards_set:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _end_hand(self) -> None:
        """Hand rewards, then the episode's end (decided by :func:`goboom_env.episode.end_hand`)."""
        hand = self.match.hand
        if self.reward_mode == "points":
            self._set_rewards(points_rewards(self.config, hand.winner, hand.hand_points()))
        result = end_hand(self.match, self.episode)
        if result is None:
            return
        if self.reward_mode == "win":
            self._set_rewards(win_rewards(self.config.num_players, result.winners))
        for a in self.agents:
            self.terminations[a] = True
            self.infos[a] = result.info()

    def _set_rewards(self, values: list[float]) -> None:
        self.rewards.update((a, float(v)) for a, v in zip(self.agents, values))
        self._rewards_set = True

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            logger.warn("render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'.")
            return None
        self._require_reset("render")
        if self.render_mode == "rgb_array":
            return render_rgb(self.match.hand, self.match, self.render_seat)
        text = render_text(self.match.hand, self.match, self.render_seat)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def state(self) -> np.ndarray:
        """The global state, hidden cards included, by absolute seat (Environment page, State), for central critics."""
        self._require_reset("state")
        return self.state_encoder.encode(self.match, 0)

    def state_dict(self) -> dict[str, Any]:
        """The full engine state (hidden cards included) as JSON-friendly data."""
        self._require_reset("state_dict")
        return self.match.to_dict()


__all__ = ["EPISODES", "REWARDS", "IntegerActionWrapper", "env", "make_config", "points_rewards", "raw_env"]
