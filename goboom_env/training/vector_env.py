"""The single-agent view of Go Boom on the batched engine, as a Gymnasium ``VectorEnv``.

``gymnasium.make_vec("goboom_env/GoBoom-v0", num_envs=N, vectorization_mode="vector_entry_point", ...)`` builds it.
Each game is the env ``gymnasium.make`` builds (:class:`~goboom_env.training.sb3.selfplay.SelfPlayEnv`), with the
opponents (``random`` and the heuristics) batched over all games; reset with ``seed=s``, game ``i`` plays step for step
what the ``sync`` vector env plays. Spaces, rewards, infos, autoreset modes and reset options: docs/vector.md.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from goboom_env.agents import make_agent
from goboom_env.agents.batched import BatchOpponent, TablesDecoder
from goboom_env.agents.heuristics import HEURISTIC_AGENTS, HeuristicAgent
from goboom_env.agents.policy import RandomAgent
from goboom_env.cards import DRAW_OR_PASS, NUM_ACTIONS, face_of
from goboom_env.config import GameConfig
from goboom_env.env import make_config, space_prototypes
from goboom_env.training.league import SELF, League, SelfPlaySeeds, opponent_entries
from goboom_env.training.seats import ILLEGAL_REWARD, LearnerSeats
from goboom_env.vector import Streams, VectorGame

RESET_OPTIONS = ("deck", "dealer", "seat", "opponent", "reset_mask")
"""What ``reset(options=...)`` takes: the scalar env's options and Gymnasium's ``reset_mask``."""


class StreamSeats(LearnerSeats):
    """Learner seats whose autoreset draw takes game ``b``'s seat from row ``b`` of :attr:`streams`, as a scalar env
    draws it."""

    def __init__(self, streams: Streams, width: int) -> None:
        super().__init__(len(streams), width)
        self.streams = streams

    def redraw(self, games: np.ndarray) -> np.ndarray:
        idx = np.flatnonzero(games)
        if len(idx):
            self.assign(idx, self.streams.integers(self.table[idx], idx))
        return idx


class AgentOpponent:
    """``random`` or a heuristic played on many games: its rule on a batch, each game's tie-breaks drawn from its own
    copy of the agent's generator (row ``games[i] * stride + offset`` of ``streams``), as the scalar agent draws."""

    def __init__(self, spec: str, config: GameConfig, streams: Streams, stride: int, offset: int) -> None:
        agent = make_agent(spec, config)
        if type(agent) is not RandomAgent and type(agent) not in HEURISTIC_AGENTS.values():
            raise ValueError(f"opponent {spec!r}: the batched env plays 'random' and the heuristics ('heuristic', "
                             f"{', '.join(repr(name) for name in HEURISTIC_AGENTS)}); for another agent use "
                             f"vectorization_mode='sync'")
        self.heuristic = agent if isinstance(agent, HeuristicAgent) else None
        self.decoder = TablesDecoder(config)
        self.streams, self.stride, self.offset = streams, stride, offset

    def act(self, obs: np.ndarray, mask: np.ndarray, games: np.ndarray) -> np.ndarray:
        """The action of the seat to move in each of ``games`` (its observations and legal masks)."""
        legal = mask.astype(bool)
        rows = games * self.stride + self.offset
        if self.heuristic is None:  # RandomAgent: rng.choice(legal)
            return self.streams.best(legal, 0.0, rows)
        actions = legal.argmax(1)  # a forced move (one legal action) is played without a draw
        choosing = np.flatnonzero(legal.sum(1) > 1)
        if len(choosing):
            choice = self.heuristic.choice(self.decoder.decode(obs[choosing], mask[choosing]))
            best = self.streams.best(choice.pool, choice.score, rows[choosing])
            actions[choosing] = np.where(best < 0, DRAW_OR_PASS, best)
        return actions


class ObjectOpponent:
    """A :class:`~goboom_env.agents.batched.BatchOpponent` object on every game, drawing from one generator."""

    def __init__(self, opponent: BatchOpponent) -> None:
        self.opponent = opponent
        self.rng = np.random.default_rng()

    def act(self, obs: np.ndarray, mask: np.ndarray, games: np.ndarray) -> np.ndarray:
        return self.opponent.act(obs, mask, self.rng)


class SelfPlayVectorEnv(VectorEnv):
    """``num_envs`` single-agent games of ``config`` on the batched engine. ``opponents``: pool entries ``(spec,
    weight)``, one drawn per game and episode; or ``opponent``, one :class:`~goboom_env.agents.batched.BatchOpponent`
    for every other seat (with its own generator). ``seat``: ``"random"`` or ``"rotate"``."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, config: GameConfig, num_envs: int, opponents: Sequence[tuple[str, float]] = (("random", 1.0),),
                 *, opponent: BatchOpponent | None = None, seat: str = "random", episode: str = "hand",
                 reward: str = "win", autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP) -> None:
        super().__init__()
        if seat not in ("rotate", "random"):
            raise ValueError(f"seat must be 'rotate' or 'random', got {seat!r}")
        try:
            self.autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(f"autoreset_mode must be one of {[m.value for m in AutoresetMode]}, "
                             f"got {autoreset_mode!r}") from None
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.game = VectorGame(config, num_envs, seed=None, episode=episode, reward=reward, autoreset=False)
        self.config, self.num_envs, self.n, self.seat_mode = config, self.game.num_envs, config.num_players, seat
        self.single_observation_space = copy.deepcopy(space_prototypes(config)[0]["observation"])
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.pool = League(list(opponents) if opponent is None else [(type(opponent).__name__, 1.0)])
        self.specs = self.pool.specs
        names = list(dict.fromkeys(spec for spec in self.specs if spec != SELF))  # SelfPlayEnv's agents, in order
        self.agent_streams = Streams(self.num_envs * len(names))  # row game * len(names) + k: agent k's generator
        self.players = ([ObjectOpponent(opponent)] if opponent is not None else [
            AgentOpponent(spec, config, self.agent_streams, len(names), k) for k, spec in enumerate(names)])
        self.player_of_entry = np.array([names.index(spec) if spec in names else -1 for spec in self.specs])
        self.seats = StreamSeats(Streams(self.num_envs), self.n)
        self.pool_streams = Streams(self.num_envs)  # per game, the scalar env's opponent draws
        self.entry = np.zeros(self.num_envs, np.int64)  # the pool entry each game's episode plays against
        self._over = np.zeros(self.num_envs, bool)  # the learner's episode ended: autoreset or reset_mask next
        self._obs = np.zeros((self.num_envs, *self.single_observation_space.shape), np.float32)
        self._mask = np.zeros((self.num_envs, NUM_ACTIONS), bool)
        self._engine: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # VectorGame's obs, mask, seat buffers

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new episode in every game (or those of ``options["reset_mask"]``): ``seed`` an int (game ``i`` from
        ``seed + i``), one seed (or None) per game, or None."""
        options = dict(options or {})
        unknown = sorted(set(options) - set(RESET_OPTIONS))
        if unknown:
            raise ValueError(f"unknown reset options {unknown}; known: {list(RESET_OPTIONS)}")
        games = self._reset_mask(options.pop("reset_mask", None))
        self._reseed(games, self._seeds(seed))
        self._begin(games, options)
        info = {"action_mask": np.where(games[:, None], self._mask, False), "_action_mask": games.copy()}
        return self._obs.copy(), info

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The learner's action in every game, then the opponents' until the learner is to move again in each."""
        if self._engine is None:
            raise RuntimeError("call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.num_envs} integers (one per game), got {acts.dtype} {acts.shape}")
        acts = acts.astype(np.int64)
        restart = self._over.copy() if self.autoreset_mode == AutoresetMode.NEXT_STEP else np.zeros_like(self._over)
        if self.autoreset_mode == AutoresetMode.DISABLED and self._over.any():
            raise RuntimeError(f"games {np.flatnonzero(self._over).tolist()} are over: reset them with "
                               f"reset(options={{'reset_mask': ...}}) (autoreset mode DISABLED)")
        illegal = ~restart & self.seats.illegal(acts, self._mask)
        legal_before = {int(b): np.flatnonzero(self._mask[b]).tolist() for b in np.flatnonzero(illegal)}
        moving = ~restart & ~illegal
        _, _, _, rewards, _ = self.game.step_some(np.where(moving, acts, 0), moving)
        self.seats.credit(rewards, moving)
        self._start(restart, {})
        self._advance(moving | restart)
        reward = np.zeros(self.num_envs)
        ended = moving & self.game.finished
        reward[moving] = self.seats.take(np.flatnonzero(moving), self.seats.seat[moving])
        reward[illegal] = ILLEGAL_REWARD
        self._drop_rewards(restart)
        terminated = ended | illegal
        self._read(moving | restart, illegal)
        info = self._step_info(terminated, illegal, acts, legal_before)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and terminated.any():
            info = self._autoreset_now(terminated, info)
        else:
            self._over = terminated.copy()
        return self._obs.copy(), reward, terminated, np.zeros(self.num_envs, bool), info

    def action_masks(self) -> np.ndarray:
        """``[num_envs, 54]`` bool: the learner's legal actions in each game (what sb3-contrib asks for)."""
        return self._mask.copy()

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """``call("action_masks")``: each game's mask, as the sync env's ``call`` returns it (the only call here)."""
        if name != "action_masks":
            raise AttributeError(f"call({name!r}): the batched env's games answer only call('action_masks')")
        return tuple(self.action_masks())

    def render(self) -> None:
        return None

    def _reseed(self, games: np.ndarray, seeds: list[int | None]) -> None:
        """Restart the generators of the marked games that have a seed, as ``SelfPlayEnv.reset`` does."""
        idx = np.array([b for b in np.flatnonzero(games) if seeds[b] is not None], np.int64)
        if not len(idx):
            return
        plan = [SelfPlaySeeds.of(seeds[b]) for b in idx]
        self.game.streams.seed([p.deal for p in plan], idx)
        self.seats.streams.seed([p.seat for p in plan], idx)
        self.pool_streams.seed([p.pool for p in plan], idx)
        agents = len(self.agent_streams) // self.num_envs
        self.agent_streams.seed([p.agents + k for p in plan for k in range(agents)],
                                (idx[:, None] * agents + np.arange(agents)).reshape(-1))
        if isinstance(self.players[0], ObjectOpponent):
            self.players[0].rng = np.random.default_rng([seeds[b] for b in idx])
        self.seats.dealt[idx] = False  # "rotate" starts again from a seeded seat

    def _start(self, games: np.ndarray, options: dict[str, Any]) -> None:
        """A new episode in the marked games: the learner's seat, the opponent, the deal."""
        idx = np.flatnonzero(games)
        if not len(idx) and self._engine is not None:
            return
        self.seats.choose(games, options.get("seat"), self.seat_mode)
        name = options.get("opponent")
        if name is None:
            self.entry[idx] = self.pool.pick(self.pool_streams.random(idx))
        elif name not in self.specs or name == SELF:
            raise ValueError(f"opponent {name!r} is not in the pool; known: {sorted(set(self.specs) - {SELF})}")
        else:
            self.entry[idx] = self.specs.index(name)
        decks = None if options.get("deck") is None else np.tile(
            [face_of(c) if isinstance(c, str) else c for c in options["deck"]], (self.num_envs, 1))
        dealers = None if options.get("dealer") is None else np.full(self.num_envs, options["dealer"])
        if self._engine is None:
            if not games.all():
                raise RuntimeError("call reset() without reset_mask first: every game needs a first episode")
            self._engine = self.game.reset(decks, dealers)
        else:
            self.game.reset(decks, dealers, games=games)
        self._over[idx] = False

    def _begin(self, games: np.ndarray, options: dict[str, Any]) -> None:
        """A new episode in the marked games, played up to the learner's first move."""
        self._start(games, options)
        self._advance(games)
        self._drop_rewards(games)
        self._read(games, np.zeros(self.num_envs, bool))

    def _advance(self, games: np.ndarray) -> None:
        """Play the opponents' seats of the marked games until the learner is to move in each or its game is over,
        crediting every seat's rewards."""
        obs, mask, seat = self._engine
        entry_player = self.player_of_entry[self.entry]
        while True:
            theirs = games & ~self.game.finished & (seat != self.seats.seat)
            if not theirs.any():
                return
            actions = np.zeros(self.num_envs, np.int64)
            for k, player in enumerate(self.players):
                rows = np.flatnonzero(theirs & (entry_player == k))
                if len(rows):
                    actions[rows] = player.act(obs[rows], mask[rows], rows)
            _, _, _, rewards, _ = self.game.step_some(actions, theirs)
            self.seats.credit(rewards, theirs)

    def _autoreset_now(self, ended: np.ndarray, info: dict[str, Any]) -> dict[str, Any]:
        """``SAME_STEP``: the ended games' last observation and info go to ``final_obs`` / ``final_info``, and a new
        episode starts in them at once."""
        final_obs = np.full(self.num_envs, None, object)
        for b in np.flatnonzero(ended):
            final_obs[b] = self._obs[b].copy()
        final_info = {**info, "action_mask": info["action_mask"] & ended[:, None], "_action_mask": ended.copy()}
        self._begin(ended, {})
        return {"action_mask": self._mask.copy(), "_action_mask": np.ones(self.num_envs, bool),
                "final_obs": final_obs, "_final_obs": ended.copy(), "final_info": final_info,
                "_final_info": ended.copy()}

    def _drop_rewards(self, games: np.ndarray) -> None:
        """Drop what the learner's seat received before a fresh episode's first move (as the scalar env's reset)."""
        idx = np.flatnonzero(games)
        self.seats.take(idx, self.seats.seat[idx])

    def _read(self, games: np.ndarray, illegal: np.ndarray) -> None:
        """The learner's observation and mask in the marked games (of the final state where the game is over; as it
        was after an illegal action), the mask zero where the episode ended."""
        obs, mask, _ = self._engine
        finished = self.game.finished
        playing = games & ~finished & ~illegal
        self._obs[playing] = obs[playing]
        self._mask[playing] = mask[playing]
        over = np.flatnonzero(games & finished)
        if len(over):
            self._obs[over] = self.game.observe(self.seats.seat[over], over)
        self._mask[over] = False
        self._mask[illegal] = False

    def _step_info(self, ended: np.ndarray, illegal: np.ndarray, actions: np.ndarray,
                   legal_before: dict[int, list[int]]) -> dict[str, Any]:
        """Gymnasium's vector info of a step: the masks, and the scalar env's info where an episode ended."""
        info: dict[str, Any] = {"action_mask": self._mask.copy(), "_action_mask": np.ones(self.num_envs, bool)}
        idx = np.flatnonzero(ended)
        if not len(idx):
            return info
        winners = self.game.winners
        columns: dict[str, np.ndarray] = {}
        if illegal.any():
            columns["illegal_action"] = np.where(illegal, actions, 0)
            columns["legal_actions"] = np.full(self.num_envs, None, object)
            for b, legal in legal_before.items():
                columns["legal_actions"][b] = legal
        columns["winners"] = np.full(self.num_envs, None, object)
        for b in idx.tolist():
            columns["winners"][b] = [] if illegal[b] else np.flatnonzero(winners[b]).tolist()
        columns["won"] = ended & ~illegal & winners[np.arange(self.num_envs), self.seats.seat]
        columns["seat"] = np.where(ended, self.seats.seat, 0)
        columns["opponent"] = np.full(self.num_envs, None, object)
        for b in idx.tolist():
            columns["opponent"][b] = self.specs[self.entry[b]]
        for key, column in columns.items():
            info[key] = column
            info[f"_{key}"] = (illegal if key in ("illegal_action", "legal_actions") else ended).copy()
        return info

    def _reset_mask(self, mask: Any) -> np.ndarray:
        if mask is None:
            return np.ones(self.num_envs, bool)
        games = np.asarray(mask)
        if games.dtype != np.bool_ or games.shape != (self.num_envs,) or not games.any():
            raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},) with a True, "
                             f"got {games.dtype} {games.shape}")
        return games

    def _seeds(self, seed: Any) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            return [int(seed) + i for i in range(self.num_envs)]
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"seed must be an int or {self.num_envs} seeds (one per game), got {len(seeds)}")
        return [None if s is None else int(s) for s in seeds]


def single_agent_vector_env(num_envs: int = 1, opponents: Sequence[str] | dict[str, float] = ("random",), *,
                            seat: str = "random", episode: str = "hand", reward: str = "win",
                            autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                            render_mode: str | None = None, config: GameConfig | None = None,
                            preset: str | None = None, **fields: Any) -> SelfPlayVectorEnv:
    """What ``gymnasium.make_vec("goboom_env/GoBoom-v0", num_envs=N, vectorization_mode="vector_entry_point", ...)``
    builds, from :func:`~goboom_env.training.sb3.selfplay.single_agent_env`'s arguments plus ``autoreset_mode``."""
    if render_mode is not None:
        raise ValueError(f"render_mode={render_mode!r}: the batched env does not render; use "
                         f"vectorization_mode='sync' for a rendering env")
    return SelfPlayVectorEnv(make_config(config, preset, **fields), num_envs, opponent_entries(opponents), seat=seat,
                             episode=episode, reward=reward, autoreset_mode=autoreset_mode)
