"""A single-agent Gymnasium view of the Go Boom AEC env (``goboom_env/GoBoom-v0``), for self-play with MaskablePPO.

The learner plays one seat per episode; ``step`` applies its action, then plays the other seats with opponents drawn
from an :class:`~goboom_env.training.league.OpponentPool` until the learner's turn or the end, so a step's reward is
all the learner received since its previous action (a loss on another player's move too). ``action_masks()`` is a
method of the env, so sb3-contrib finds it through ``SubprocVecEnv`` too. Arguments, infos, an example: docs/interop.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from goboom_env.agents import Policy
from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import GameConfig
from goboom_env.env import make_config, raw_env, short_box
from goboom_env.global_state import state_encoder_for
from goboom_env.training.league import OpponentPool, SelfPlaySeeds, opponent_entries
from goboom_env.training.seats import ILLEGAL_REWARD, LearnerSeats
from goboom_env.training.shaping import hand_size_potential


class SelfPlayEnv(gym.Env):
    """Go Boom from one learner seat; the other seats are played by pool opponents inside ``step``.

    With ``privileged=True`` each observation is the global state seen from the learner (the observation, then the
    hidden cards) for a privileged critic; the actor must read only the first :attr:`public_dim` entries. With
    ``shaping > 0`` (:meth:`_phi`), ``gamma`` must be the learner's discount factor. ``reset(options=...)`` takes the
    AEC env's ``deck`` and ``dealer`` plus ``seat`` and ``opponent`` (a pool name), for scripted games.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, config: GameConfig, opponents: OpponentPool | Sequence[tuple[str, float]] = (("random", 1.0),),
                 *, episode: str = "hand", reward: str = "win", seat: str = "rotate", seed: int | None = None,
                 pool_size: int = 8, privileged: bool = False, shaping: float = 0.0, gamma: float = 1.0,
                 render_mode: str | None = None) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.render_mode = render_mode
        if seat not in ("rotate", "random"):
            raise ValueError(f"seat must be 'rotate' or 'random', got {seat!r}")
        if not shaping >= 0.0 or not 0.0 < gamma <= 1.0:
            raise ValueError(f"shaping must be >= 0 and gamma in (0, 1], got shaping={shaping!r}, gamma={gamma!r}")
        self.shaping, self.gamma = float(shaping), float(gamma)
        self._potential = 0.0
        self.config = config
        self.aec = raw_env(config=config, episode=episode, reward=reward)
        self.pool = opponents if isinstance(opponents, OpponentPool) else OpponentPool(
            config, list(opponents), pool_size=pool_size, seed=seed)
        public = self.aec.observation_space("player_0")["observation"]
        self.public_dim = int(public.shape[0])
        self.hidden = state_encoder_for(config) if privileged else None
        if self.hidden is None:
            self.observation_space = public
        else:  # the privileged critic's inputs (goboom_env.training.privileged): the global state
            self.observation_space = short_box(self.hidden.low, self.hidden.high)
        self.action_space = gym.spaces.Discrete(NUM_ACTIONS)
        self.seat_mode = seat
        self.n = config.num_players
        self.seats = LearnerSeats(1, self.n, np.random.default_rng(seed))
        """The learner's seat and what it received since its last move (one game)."""
        self.opponent = ""
        self._opponent_agent: Policy | None = None
        self._mask = np.zeros(NUM_ACTIONS, np.int8)
        self._over = True  # until reset() deals the first episode
        self._needs_reseed = seed is not None
        self._seed = seed

    # -- gymnasium API -------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Deal a new episode up to the learner's turn. ``seed`` restarts every generator (the deal, the seat, the
        opponent draw and the opponents' own), so a seeded episode replays; the constructor's seeds the first."""
        super().reset(seed=seed)
        if seed is not None:
            self.pool.reseed(seed)  # the pool's agents were built from the constructor's seed: restart them
            self.seats.dealt[:] = False  # "rotate" starts again from a seeded seat
        elif self._needs_reseed:
            seed = self._seed
            self.pool.rng = np.random.default_rng([seed, 1])
        self._needs_reseed = False
        seeds = None if seed is None else SelfPlaySeeds.of(seed)
        if seeds is not None:
            self.seats.rng = np.random.default_rng(seeds.seat)
        options = dict(options or {})
        self.seats.choose(np.ones(1, bool), options.pop("seat", None), self.seat_mode)
        self.opponent = options.pop("opponent", None) or self.pool.sample()
        self._opponent_agent = self.pool.agent(self.opponent)  # kept even if the pool drops it mid-episode
        self.aec.reset(seed=None if seeds is None else seeds.deal, options=options or None)
        self._over = False
        self._play_opponents()
        self.seats.take(0, self.seat)  # what came before the learner's first move is no step's reward
        self._potential = self._phi()
        return self._observe(), {"action_mask": self.action_masks()}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Play the learner's action, then the opponents until the learner's turn or the end."""
        aec = self.aec
        learner = aec.possible_agents[self.seat]
        if self._over:
            raise RuntimeError("the episode is over; call reset()")
        action = int(action)
        if self.seats.illegal(np.array([action]), self._mask[None])[0]:
            return self._illegal(action)
        aec.step(action)
        self._credit()
        self._play_opponents()
        reward = float(self.seats.take(0, self.seat))
        terminated = self._over = bool(aec.terminations[learner])
        if self.shaping:  # potential-based: gamma * phi(next) - phi(previous), phi = 0 once it is over
            potential = 0.0 if terminated else self._phi()
            reward += self.gamma * potential - self._potential
            self._potential = potential
        obs = self._observe()
        info: dict[str, Any] = {"action_mask": self.action_masks()}
        if terminated:
            winners = list(aec.infos[learner]["winners"])
            info |= {"winners": winners, "won": self.seat in winners, "seat": self.seat, "opponent": self.opponent}
        return obs, float(reward), terminated, False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner (all zeros once the episode is over)."""
        return self._mask.astype(bool)

    def add_snapshot(self, name: str, state: dict[str, Any]) -> None:
        """Add a frozen learner to the opponent pool (called through ``VecEnv.env_method``)."""
        self.pool.add_snapshot(name, state)

    def render(self) -> str:
        from goboom_env.render import render_text

        return render_text(self.aec.match.hand, self.aec.match, self.seat)

    @property
    def seat(self) -> int:
        """The learner's seat this episode (-1 before the first :meth:`reset`)."""
        return int(self.seats.seat[0]) if self.seats.dealt[0] else -1

    # -- internals -------------------------------------------------------------------------------

    def _credit(self) -> None:
        """Credit every seat's reward of the AEC step just played (its public ``rewards``)."""
        rewards = self.aec.rewards
        self.seats.credit(np.array([[rewards[a] for a in self.aec.possible_agents]]))

    def _play_opponents(self) -> None:
        """Play the other seats until the learner is to move or the episode is over, crediting every step."""
        aec = self.aec
        learner = aec.possible_agents[self.seat]
        agent = self._opponent_agent
        while not aec.terminations[learner] and aec.agent_selection != learner:
            name = aec.agent_selection
            view = None
            if agent.needs_view:
                from goboom_env.player_view import PlayerView

                view = PlayerView.of(aec.match, aec.agent_name_mapping[name])
            aec.step(int(agent.act(aec.observe(name), view)))
            self._credit()

    def _phi(self) -> float:
        """Shaping potential: ``shaping`` x (the opponents' mean hand size - the learner's hand size)."""
        if not self.shaping:
            return 0.0
        sizes = np.array([self.aec.match.hand.sizes])
        return self.shaping * float(hand_size_potential(sizes, np.array([self.seat]), self.n)[0])

    def _illegal(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Like PettingZoo's TerminateIllegalWrapper: an illegal action ends the episode with -1."""
        obs = self._extend(self.aec.observe(self.aec.possible_agents[self.seat])["observation"])
        legal = np.flatnonzero(self._mask).tolist()
        self._mask = np.zeros(NUM_ACTIONS, np.int8)
        self._over = True  # the AEC game is left as it is; reset() deals the next one
        info = {"action_mask": self.action_masks(), "illegal_action": action, "legal_actions": legal,
                "winners": [], "won": False, "seat": self.seat, "opponent": self.opponent}
        return obs, ILLEGAL_REWARD, True, False, info

    def _observe(self) -> np.ndarray:
        obs = self.aec.observe(self.aec.possible_agents[self.seat])
        self._mask = obs["action_mask"]
        return self._extend(obs["observation"])

    def _extend(self, observation: np.ndarray) -> np.ndarray:
        """The observation, followed by the hidden blocks of the global state when the critic is privileged."""
        if self.hidden is None:
            return observation
        return np.concatenate([observation, self.hidden.hidden(self.aec.match.hand, self.seat)])


def single_agent_env(opponents: Sequence[str] | dict[str, float] = ("random",), *, seat: str = "random",
                     episode: str = "hand", reward: str = "win", render_mode: str | None = None,
                     config: GameConfig | None = None, preset: str | None = None, **fields: Any) -> SelfPlayEnv:
    """What ``gymnasium.make("goboom_env/GoBoom-v0", ...)`` builds: one learner seat against ``opponents`` (agent specs,
    one drawn per episode, or a ``{spec: weight}`` dict); the rules, ``episode`` and ``reward`` as ``goboom_env.env()``
    takes them (docs/interop.md)."""
    return SelfPlayEnv(make_config(config, preset, **fields), opponent_entries(opponents), seat=seat,
                       episode=episode, reward=reward, render_mode=render_mode)
