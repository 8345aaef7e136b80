"""A single-agent Gymnasium view of the Go Boom AEC env, for self-play training with MaskablePPO.

The learner plays one seat per episode (rotated or random); :meth:`SelfPlayEnv.step` applies the
learner's action and then plays every other seat with opponents drawn from an
:class:`OpponentPool` (baselines by agent spec and frozen snapshots of the learner) until it is the
learner's turn again or the episode is over. The reward of a step is the learner's *own*
cumulative reward since its previous action, so a loss caused by another player going out (R1.9,
R2.9) reaches the learner. ``action_masks()`` is a method of the env, so sb3-contrib finds it
through ``SubprocVecEnv`` too.

Frozen snapshots are plain numpy copies of the policy network (:class:`FrozenMlp`): picklable,
cheap to run one observation at a time, and free of torch, so opponents never slow the learner.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from goboom_env.agents import Policy, make_agent
from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import GameConfig
from goboom_env.env import raw_env
from goboom_env.training.privileged import HiddenEncoder

SELF = "self"
"""Opponent-pool name of the learner's snapshots."""
ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}


class FrozenMlp:
    """A numpy copy of an SB3 ``MlpPolicy`` actor: hidden layers, then the action logits.

    ``layers`` is a list of ``(weight, bias)`` with weight shaped ``(out, in)`` like torch.
    """

    def __init__(self, layers: Sequence[tuple[np.ndarray, np.ndarray]], activation: str = "tanh") -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        self.layers = [(np.ascontiguousarray(w.T, np.float32), np.asarray(b, np.float32))
                       for w, b in _checked_layers(layers)]
        self.activation = activation
        self._act = ACTIVATIONS[activation]

    @property
    def input_size(self) -> int:
        """Length of the observation vectors the network reads."""
        return int(self.layers[0][0].shape[0])

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Unmasked action logits for one observation vector or a batch."""
        x = np.asarray(obs, np.float32)
        *hidden, (w_out, b_out) = self.layers
        for w, b in hidden:
            x = self._act(x @ w + b)
        return x @ w_out + b_out

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> int:
        """Most probable legal action, or a sample from the masked softmax when ``rng`` is given."""
        logits = np.where(mask.astype(bool), self.logits(obs), -np.inf)
        if rng is None:
            return int(np.argmax(logits))
        p = np.exp(logits - logits.max())
        return int(rng.choice(NUM_ACTIONS, p=p / p.sum()))

    def state(self) -> dict[str, Any]:
        """Picklable weights (to ship to subprocess envs or save as ``.npz``)."""
        return {"layers": [(w.T.copy(), b.copy()) for w, b in self.layers], "activation": self.activation}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> FrozenMlp:
        """Inverse of :meth:`state`."""
        return cls(state["layers"], state["activation"])


def _checked_layers(layers: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The layers as float arrays, or ValueError naming what is wrong: a network that is empty, whose shapes do
    not chain, that does not end in the NUM_ACTIONS logits, or that holds NaN or infinite weights."""
    if not isinstance(layers, Sequence) or not layers:
        raise ValueError("the network has no layers")
    checked = []
    for i, layer in enumerate(layers):
        if not isinstance(layer, Sequence) or len(layer) != 2:
            raise ValueError(f"layer {i} must be a (weight, bias) pair")
        try:
            w, b = (np.asarray(a, np.float32) for a in layer)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"layer {i} is not numeric: {exc}") from exc
        if w.ndim != 2 or b.shape != (w.shape[0],):
            raise ValueError(f"layer {i}: weight {w.shape} and bias {b.shape} are not an (out, in) matrix and "
                             "an (out,) vector")
        if checked and w.shape[1] != checked[-1][0].shape[0]:
            raise ValueError(f"layer {i} reads {w.shape[1]} inputs but layer {i - 1} gives {checked[-1][0].shape[0]}")
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise ValueError(f"layer {i} holds NaN or infinite weights")
        checked.append((w, b))
    if checked[-1][0].shape[0] != NUM_ACTIONS:
        raise ValueError(f"the network gives {checked[-1][0].shape[0]} action logits, not {NUM_ACTIONS}")
    return checked


class SnapshotAgent:
    """A frozen learner snapshot as a :class:`~goboom_env.agents.Policy` (samples its actions)."""

    needs_view = False

    def __init__(self, name: str, net: FrozenMlp, seed: int | None = None, deterministic: bool = False) -> None:
        self.name = name
        self.net = net
        self.rng = None if deterministic else np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray], view: Any | None = None) -> int:
        return self.net.act(observation["observation"], observation["action_mask"], self.rng)

    def reseed(self, seed: int | None) -> None:
        """Restart the sampling generator (tournament runners call this before each game)."""
        if self.rng is not None:
            self.rng = np.random.default_rng(seed)


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
        if not entries or not any(w > 0 for _, w in entries):
            raise ValueError(f"opponent pool needs at least one entry with a positive weight, got {entries}")
        self.config = config
        self.entries = [PoolEntry(spec, float(w)) for spec, w in entries]
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


class SelfPlayEnv(gym.Env):
    """Go Boom from one learner seat; the other seats are played by pool opponents inside ``step``.

    Observations are the env's observation vectors (a ``Box``); the legal actions come from
    :meth:`action_masks`. With ``privileged=True`` each vector is followed by the hidden cards
    (:class:`goboom_env.training.privileged.HiddenEncoder`) for a privileged critic; the actor must read only
    the first :attr:`public_dim` entries. ``shaping > 0`` adds potential-based reward shaping on the
    hand-size difference (:meth:`_phi`); ``gamma`` must then be the learner's discount factor.
    ``info`` at the end of an episode holds ``winners``, ``won`` (the learner is among them),
    ``seat`` and ``opponent``. ``reset(options=...)`` accepts the AEC env's ``deck`` and
    ``dealer`` plus ``seat`` (the learner's seat) and ``opponent`` (a pool name) for scripted games.
    An illegal action ends the episode with reward ``-1`` (as PettingZoo's ``TerminateIllegalWrapper``
    does); a masked policy never takes one.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, config: GameConfig, opponents: OpponentPool | Sequence[tuple[str, float]] = (("random", 1.0),),
                 *, episode: str = "hand", reward: str = "win", seat: str = "rotate", seed: int | None = None,
                 pool_size: int = 8, privileged: bool = False, shaping: float = 0.0, gamma: float = 1.0) -> None:
        super().__init__()
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
        self.hidden = HiddenEncoder(config) if privileged else None
        if self.hidden is None:
            self.observation_space = public
        else:  # the privileged critic's extra inputs (goboom_env.training.privileged), in [0, 1] like the hand block
            low = np.concatenate([public.low, np.zeros(self.hidden.size, np.float32)])
            high = np.concatenate([public.high, np.ones(self.hidden.size, np.float32)])
            self.observation_space = gym.spaces.Box(low, high, dtype=np.float32)
        self.action_space = gym.spaces.Discrete(NUM_ACTIONS)
        self.seat_mode = seat
        self.n = config.num_players
        self.seat = -1
        self.opponent = ""
        self._opponent_agent: Policy | None = None
        self._mask = np.zeros(NUM_ACTIONS, np.int8)
        self._seat_rng = np.random.default_rng(seed)
        self._needs_reseed = seed is not None
        self._seed = seed

    # -- gymnasium API -------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Deal a new episode: choose the learner seat and the opponent, play up to the learner's turn."""
        super().reset(seed=seed)
        if seed is None and self._needs_reseed:
            seed = self._seed
        self._needs_reseed = False
        if seed is not None:
            self._seat_rng = np.random.default_rng(seed)
            self.pool.rng = np.random.default_rng([seed, 1])
        options = dict(options or {})
        seat = options.pop("seat", None)
        if seat is None:
            seat = self._next_seat()
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < self.n:
            raise ValueError(f"seat must be in 0..{self.n - 1}, got {seat!r}")
        self.seat = int(seat)
        self.opponent = options.pop("opponent", None) or self.pool.sample()
        self._opponent_agent = self.pool.agent(self.opponent)  # kept even if the pool drops it mid-episode
        self.aec.reset(seed=None if seed is None else seed + 7, options=options or None)
        self._play_opponents()
        self._potential = self._phi()
        return self._observe(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Play the learner's action, then the opponents until the learner's turn or the end."""
        aec = self.aec
        learner = aec.possible_agents[self.seat]
        if aec.terminations[learner]:
            raise RuntimeError("the episode is over; call reset()")
        action = int(action)
        if not 0 <= action < NUM_ACTIONS or not self._mask[action]:
            return self._illegal(action)
        aec.step(action)
        self._play_opponents()
        reward = float(aec._cumulative_rewards[learner])
        terminated = aec.terminations[learner]
        if self.shaping:  # potential-based: gamma * phi(next) - phi(previous), phi = 0 once it is over
            potential = 0.0 if terminated else self._phi()
            reward += self.gamma * potential - self._potential
            self._potential = potential
        info: dict[str, Any] = {}
        if terminated:
            winners = list(aec.infos[learner]["winners"])
            info = {"winners": winners, "won": self.seat in winners, "seat": self.seat, "opponent": self.opponent}
        return self._observe(), reward, bool(terminated), False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner (all zeros once the episode is over)."""
        return self._mask.astype(bool)

    def add_snapshot(self, name: str, state: dict[str, Any]) -> None:
        """Add a frozen learner to the opponent pool (called through ``VecEnv.env_method``)."""
        self.pool.add_snapshot(name, state)

    def render(self) -> str:
        from goboom_env.render import render_text

        return render_text(self.aec.match.hand, self.aec.match, self.seat)

    # -- internals -------------------------------------------------------------------------------

    def _next_seat(self) -> int:
        if self.seat_mode == "random" or self.seat < 0:
            return int(self._seat_rng.integers(self.n))
        return (self.seat + 1) % self.n

    def _play_opponents(self) -> None:
        aec = self.aec
        learner = aec.possible_agents[self.seat]
        agent = self._opponent_agent
        needs_view = getattr(agent, "needs_view", False)
        while not aec.terminations[learner] and aec.agent_selection != learner:
            name = aec.agent_selection
            view = None
            if needs_view:
                from goboom_env.info import PlayerView

                view = PlayerView.of(aec.match, aec.agent_name_mapping[name])
            aec.step(int(agent.act(aec.observe(name), view)))

    def _phi(self) -> float:
        """Shaping potential: ``shaping`` x (the opponents' mean hand size - the learner's hand size).

        Potential-based shaping (Ng, Harada and Russell, 1999) adds ``gamma * phi(s') - phi(s)`` to each
        step's reward; it leaves the best policy unchanged (phi is 0 at the end) but pays at once for
        shedding a card or making another player draw, instead of only at the end of the hand."""
        if not self.shaping:
            return 0.0
        sizes = self.aec.match.hand.sizes
        others = (sum(sizes) - sizes[self.seat]) / (self.n - 1)
        return self.shaping * (others - sizes[self.seat])

    def _illegal(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Like PettingZoo's TerminateIllegalWrapper: an illegal action ends the episode with -1."""
        obs = self._extend(self.aec.observe(self.aec.possible_agents[self.seat])["observation"])
        legal = np.flatnonzero(self._mask).tolist()
        self._mask = np.zeros(NUM_ACTIONS, np.int8)
        for agent in self.aec.agents:
            self.aec.terminations[agent] = True
        info = {"illegal_action": action, "legal_actions": legal, "winners": [], "won": False,
                "seat": self.seat, "opponent": self.opponent}
        return obs, -1.0, True, False, info

    def _observe(self) -> np.ndarray:
        obs = self.aec.observe(self.aec.possible_agents[self.seat])
        self._mask = obs["action_mask"]
        return self._extend(obs["observation"])

    def _extend(self, observation: np.ndarray) -> np.ndarray:
        """The observation, followed by the hidden cards when the critic is privileged."""
        if self.hidden is None:
            return observation
        return np.concatenate([observation, self.hidden.encode(self.aec.match.hand, self.seat)])
