"""The settings of every command: one dataclass per run kind, a docstring per field (= ``--help``).

:class:`GameArgs` (every GameConfig field and the episode unit) is the base of all, so a ``--config`` file or an
option means the same to each command; :class:`PPOArgs` adds the PPO settings every trainer shares. Values come in
layers, later ones winning (:func:`build_args`): the defaults, a ``--config`` file (TOML, or JSON for a ``.json``
file; keys = field names), a ``--preset`` and the options. Importing this module imports no training library.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Self, get_args

from goboom_env.agents.ppo import MAX_PARAMETERS, network_size
from goboom_env.agents.registry import SpecSource, check_spec_source
from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import PRESETS, GameConfig, errors_prefixed, field_docs, field_names
from goboom_env.episode import Episode, check_episode
from goboom_env.hints import needs_extra, shown
from goboom_env.outdir import StagedFolder, check_output_folder
from goboom_env.scoring import Reward
from goboom_env.untrusted import parse_json, read_file

VecEnv = Literal["dummy", "subproc"]
"""Choices of ``goboom train --vec-env`` (the settings' Literal fields are checked by check_field_types)."""
SeatMode = Literal["rotate", "random"]
SEAT_MODES: tuple[str, ...] = get_args(SeatMode)
"""Choices of ``goboom train --seat``."""
Precision = Literal["auto", "fp32", "bf16"]
"""Choices of ``--precision`` (``goboom train-fast``, ``goboom exploit``)."""
Trainer = Literal["auto", "fast", "sb3"]
"""Choices of ``goboom exploit --trainer``: auto = the fast trainer where the agent plays without a view, else sb3."""
MAX_SETTINGS_BYTES = 2**20
"""The largest ``--config`` file read (settings files are a few hundred bytes)."""
Observation = Literal["snapshot", "history"]
"""The observation layouts a network reads (goboom_env.observation.OBSERVATION_LAYOUTS)."""

# the entries of --opponents (SPEC=WEIGHT) that are no agent spec
LEARNER = "learner"
"""Opponent-pool entry: every seat of the game is the learner itself (parameter-shared self-play)."""
SNAPSHOTS = "self"
"""Opponent-pool entry: the other seats are a frozen snapshot of the learner (as in ``goboom train``)."""
RANDOM = "random"
"""Opponent-pool entry: the other seats play uniformly among their legal actions."""
HEURISTIC = "heuristic"
"""Opponent-pool entry: the other seats play the variant's best heuristic, batched (``classic-tricks`` or
``jokers-boom``)."""
POOL_KINDS = (LEARNER, SNAPSHOTS, RANDOM, HEURISTIC)
"""The entries ``goboom train-fast --opponents`` plays (:func:`parse_opponents`)."""
LEAGUE_KINDS = (LEARNER, SNAPSHOTS)
"""The entries ``goboom train-rllib --opponents`` plays: the learner itself, or one of its snapshots."""


def _game_fields() -> list[tuple[str, Any, Any]]:
    """:class:`GameArgs`'s fields: each GameConfig rules field (its type, default and help), then the episode unit."""
    import tyro

    hints, docs = typing.get_type_hints(GameConfig), field_docs(GameConfig)
    fields: list[tuple[str, Any, Any]] = [
        (f.name, Annotated[hints[f.name], tyro.conf.arg(help=docs[f.name])], field(default=f.default))
        for f in dataclasses.fields(GameConfig) if f.name in field_names()]
    episode_help = "Episode unit: hand (one deal) or match (a whole game)."
    return [*fields, ("episode", Annotated[Episode, tyro.conf.arg(help=episode_help)], field(default="hand"))]


class _GameMethods:
    """What every command's settings do with their game fields (the methods of :class:`GameArgs`)."""

    def game_config(self) -> GameConfig:
        """The GameConfig these arguments choose (validated: a bad field raises ValueError)."""
        return GameConfig.from_dict({n: getattr(self, n) for n in field_names() if getattr(self, n) is not None})

    def validate_game(self) -> None:
        """Raise ValueError naming the first bad game field (or any field of the wrong type)."""
        check_field_types(dataclasses.asdict(self), type(self), "the arguments")
        self.game_config()
        check_episode(self.episode)

    def validate(self) -> None:
        """Raise ValueError naming the first bad field (subclasses check their own fields too)."""
        self.validate_game()

    def agent_specs(self) -> list[tuple[str, str]]:
        """``(field, spec)`` of every agent spec these settings name (a command that plays agents adds its own)."""
        return []

    def inputs(self) -> list[tuple[str, str]]:
        """What the command reads, as ``(option, path)``: the files of its agents (its --out may not hold them)."""
        return [item for name, spec in self.agent_specs()
                for item in spec_inputs("--" + name.replace("_", "-"), [spec])]


GameArgs = dataclasses.make_dataclass("GameArgs", _game_fields(), bases=(_GameMethods,),
                                      namespace={"__module__": __name__})
"""The game a command plays: every :class:`~goboom_env.config.GameConfig` field and the episode unit; the base of
every command's settings (the API reference reads this docstring; ``--help`` reads ``__doc__``)."""
GameArgs.__doc__ = "The game a command plays: every GameConfig field (RULES.md) and the episode unit."


@dataclass
class PPOArgs(GameArgs):
    """The PPO settings every trainer shares: same names, same units (learner steps, never iterations)."""

    reward: Reward = "win"
    """Reward: win (zero-sum +1 / -1/(n-1)) or points (centred hand points / 100)."""
    learning_rate: float = 5e-4
    """Adam learning rate."""
    n_epochs: int = 6
    """Optimisation passes over each rollout."""
    minibatch_size: int = 1024
    """Learner decisions per gradient step."""
    gamma: float = 0.995
    """Discount factor (per decision of the seat)."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    ent_coef: float = 0.001
    """Entropy bonus coefficient."""
    vf_coef: float = 0.5
    """Value loss coefficient."""
    clip_range: float = 0.2
    """PPO clip range."""
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy and of the (separate) value network."""
    snapshot_every: int = 100_000
    """Add a frozen copy of the learner to the opponent pool every this many steps."""
    checkpoint_every: int = 100_000
    """Save a resumable checkpoint every this many steps."""

    def validate_ppo(self) -> None:
        """Raise ValueError naming the first bad PPO setting."""
        check_bounds(self, ">= 1", "n_epochs", "minibatch_size", "snapshot_every", "checkpoint_every")
        check_bounds(self, "> 0", "learning_rate", "clip_range")
        check_bounds(self, "in (0, 1]", "gamma", "gae_lambda")
        check_bounds(self, ">= 0", "ent_coef", "vf_coef")
        if not self.net_arch or any(h < 1 for h in self.net_arch):
            raise ValueError(f"net_arch must be a non-empty list of positive sizes, got {shown(self.net_arch)}")
        weights = network_size([self.observation_width(), *self.net_arch, NUM_ACTIONS])
        if weights > MAX_PARAMETERS:
            raise ValueError(f"net_arch {shown(self.net_arch)} makes a network of {weights:,} weights, more than the "
                             f"{MAX_PARAMETERS:,} a network may have")

    def observation_width(self) -> int:
        """The entries of one observation the networks read."""
        from goboom_env.observation import observation_size

        return observation_size(self.num_players)

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        self.validate_game()
        self.validate_ppo()


def check_run(args: Any) -> None:
    """Raise ValueError naming the first bad run size, ``threads`` or ``seed`` (or one on the benchmark's deals)."""
    from goboom_env.evaluation.benchmark import check_training_seed  # imported late: this module stays light

    check_bounds(args, ">= 1", "timesteps", "num_envs", "num_steps")
    check_bounds(args, "in 1..1024", "threads")
    check_bounds(args, ">= 0", "seed")
    check_training_seed(args.seed, args.timesteps)


def sb3_ppo_kwargs(args: PPOArgs) -> dict[str, Any]:
    """The shared PPO settings under Stable-Baselines3's names (``MaskablePPO(**...)``), the network aside."""
    return {"learning_rate": args.learning_rate, "batch_size": args.minibatch_size, "n_epochs": args.n_epochs,
            "gamma": args.gamma, "gae_lambda": args.gae_lambda, "ent_coef": args.ent_coef,
            "vf_coef": args.vf_coef, "clip_range": args.clip_range}


def rllib_ppo_kwargs(args: PPOArgs) -> dict[str, Any]:
    """The shared PPO settings under RLlib's names (``PPOConfig().training(**...)``), the network aside."""
    return {"lr": args.learning_rate, "minibatch_size": args.minibatch_size, "num_epochs": args.n_epochs,
            "gamma": args.gamma, "lambda_": args.gae_lambda, "entropy_coeff": args.ent_coef,
            "vf_loss_coeff": args.vf_coef, "clip_param": args.clip_range}


@dataclass
class SelfPlayArgs(PPOArgs):
    """What ``goboom train`` and ``goboom train-fast`` share: snapshot pool, warm start, evaluation, run folder."""

    timesteps: int = 200_000
    """Learner decisions to train for."""
    pool_size: int = 8
    """Keep at most this many (most recent) snapshots in the pool."""
    bc_games: int | None = None
    """Warm start: clone the --bc-teacher on this many of its self-play hands before PPO (0 = off; None = one hand
    per 40 steps of --timesteps, at most 5,000)."""
    bc_teacher: str = "heuristic"
    """Agent spec whose moves the warm start imitates."""
    bc_epochs: int = 4
    """Passes over the teacher's decisions in the warm start."""
    privileged_critic: bool = False
    """Let the value network (only) also see the hidden cards of each decision while training (the other hands,
    the stock, its top card): advantages with less of the deal's luck in them. A saved model holds only the actor,
    which sees just the observation. train-fast: not with --player-counts."""
    shaping: float = 0.0
    """Potential-based reward shaping: this x (opponents' mean hand size - own hand size) as the potential
    (0 = off; e.g. 0.05). Pays at once for shedding and for making others draw; the best policy is unchanged."""
    eval_every: int = 250_000
    """Evaluate against the baselines every this many steps (0 = only at the end, -1 = never)."""
    eval_games: int | None = None
    """Games per baseline in each evaluation (1-vs-(n-1), seat-rotated, duplicate); None = one per 100 steps of
    --timesteps, from 100 to 2,000 (train-fast: 1,000)."""
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "heuristic"])
    """Baselines of the periodic evaluation; the last one picks the best model."""
    resume: bool = False
    """Continue the run in --out from its latest checkpoint (same arguments)."""
    force: bool = False
    """Replace an existing --out that goboom wrote (an earlier run), as a whole, once the new run has started. A
    folder goboom did not write is never replaced; without --force (or --resume) a non-empty one is refused."""
    progress: bool = True
    """Show progress bars, on a terminal only (a log piped to a file gets the one-line messages alone)."""

    EVAL_GAMES: ClassVar[int] = 2000
    """The most games per baseline that ``eval_games=None`` sizes an evaluation to."""

    def sized(self) -> Self:
        """These settings with ``bc_games`` and ``eval_games`` left None sized to the budget (small for a small one)."""
        bc_games = min(5000, max(0, self.timesteps // 40)) if self.bc_games is None else self.bc_games
        eval_games = (min(self.EVAL_GAMES, max(100, self.timesteps // 100)) if self.eval_games is None
                      else self.eval_games)
        return dataclasses.replace(self, bc_games=bc_games, eval_games=eval_games)

    def plan(self, rollout: int, exact: bool) -> str:
        """The line a run prints before any work: the steps it trains (``--timesteps`` rounded up to whole rollouts of
        ``rollout`` steps, ``exact``: as SB3 does, else at most one more), its warm start and its evaluations."""
        sized, end = self.sized(), -(-self.timesteps // rollout) * rollout
        if not exact:
            steps = f"{self.timesteps:,} steps or up to one rollout more (rollouts of up to {rollout:,})"
        elif end != self.timesteps:
            steps = f"{end:,} steps (--timesteps {self.timesteps:,} rounded up to whole rollouts of {rollout:,})"
        else:
            steps = f"{end:,} steps"
        warm = "no warm start"
        if sized.bc_games and not self.resume:
            warm = f"a warm start on {sized.bc_games:,} hands of {self.bc_teacher}"
            warm += " (one per 40 steps)" if self.bc_games is None else ""
        when = "at the end" if self.eval_every == 0 or self.eval_every >= end else None if self.eval_every < 0 \
            else f"every {self.eval_every:,} steps and at the end"
        evaluation = "none"
        if when:
            evaluation = f"{sized.eval_games:,} games against each of {', '.join(self.eval_opponents)} {when}"
            evaluation += " (one per 100 steps)" if self.eval_games is None else ""
        return f"plan: {steps}; {warm}; evaluation: {evaluation}"

    def agent_specs(self) -> list[tuple[str, str]]:
        """The warm-start teacher and the evaluation baselines."""
        return [("bc_teacher", self.bc_teacher), *(("eval_opponents", spec) for spec in self.eval_opponents)]

    def network(self) -> dict[str, Any]:
        """What a resumed run must keep (:func:`~goboom_env.training.artifacts.run_folder.checkpoint_to_resume`)."""
        return {"net_arch": list(self.net_arch), "privileged_critic": self.privileged_critic}

    def validate_self_play(self) -> None:
        """Raise ValueError naming the first bad pool, warm-start or evaluation setting."""
        sized = self.sized()
        check_bounds(sized, ">= 1", "pool_size", "eval_games", "bc_epochs")
        check_bounds(sized, ">= 0", "bc_games", "shaping")
        check_bounds(self, ">= -1", "eval_every")
        if self.eval_every >= 0 and not self.eval_opponents:
            raise ValueError("eval_opponents must name at least one agent spec (or set eval_every to -1)")


@dataclass
class TrainArgs(SelfPlayArgs):
    """Everything one MaskablePPO self-play run (``goboom train``) needs; saved as ``args.json`` in the run folder."""

    num_envs: int = 16
    """Parallel environments (one batched policy call serves all of them)."""
    num_steps: int = 1024
    """Rollout length per environment between updates."""
    vec_env: VecEnv = "dummy"
    """Vectorisation: dummy (one process, fastest on few cores) or subproc."""
    seed: int = 0
    """Seed of the model, the environments and the opponent sampling."""
    device: str = "cpu"
    """Torch device: cpu, cuda, cuda:N, or auto (the GPU when torch sees one, else the CPU); asking for a GPU
    that torch cannot use is an error, never a silent CPU run."""
    opponents: list[str] = field(default_factory=lambda: ["random=1", "heuristic=4", "self=1"])
    """Opponent pool as SPEC=WEIGHT items; SPEC is an agent spec (random, heuristic, mc:budget=20, ppo:PATH)
    or `self` for the snapshots of the learner. Each episode draws one entry for all opponent seats."""
    seat: SeatMode = "rotate"
    """Learner seat per episode: rotate (next seat each episode) or random."""
    out: str = "runs/ppo"
    """Run folder: model.zip, best_model.zip, checkpoints/, snapshots/, progress.csv, eval.csv, tensorboard/."""
    threads: int = 1
    """CPU threads of torch and of numpy's BLAS (1 is fastest for small networks on a shared machine)."""

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        super().validate()
        check_run(self)
        parse_opponents(self.opponents)
        self.validate_self_play()
        self.check_agent_specs()
        check_output_folder(self.out, force=self.force, resume=self.resume, resumable=True, inputs=self.inputs())

    def agent_specs(self) -> list[tuple[str, str]]:
        """The league opponents (not ``self``, the snapshots), the warm-start teacher and the evaluation baselines."""
        league = [("opponents", spec) for spec, _ in parse_opponents(self.opponents) if spec != SNAPSHOTS]
        return league + super().agent_specs()

    def check_agent_specs(self) -> None:
        """Build every agent the run will need once, so that a bad spec fails now, not after hours of training."""
        from goboom_env.agents import make_agent

        config = self.game_config()
        unused = {name for name, off in (("bc_teacher", not self.sized().bc_games),
                                         ("eval_opponents", self.eval_every < 0)) if off}
        for option, spec in self.agent_specs():
            if option not in unused:
                with errors_prefixed(option):
                    make_agent(spec, config, 0)


@dataclass
class VectorArgs(SelfPlayArgs):
    """Everything one fast self-play run (``goboom train-fast``) needs; saved as ``args.json`` in the run folder."""

    n_epochs: int = 2
    ent_coef: float = 0.003
    snapshot_every: int = 250_000
    checkpoint_every: int = 500_000
    bc_games: int | None = 0
    critic_warmup: int = 0
    """Learner decisions at the start of a fresh run during which only the critic learns: the actor keeps its
    warm start while the critic, cloned on single-hand wins, learns the run's own return (match episodes,
    the points reward) before its advantages steer the policy (0 = off)."""
    init_actor: str = ""
    """Fine-tune: start the actor of a fresh run from a saved model's actor (a zoo name such as classic-4p, or a
    path) trained on another game with the same observation size and --net-arch (classic 4p standard scoring ->
    reverse scoring). The critic starts fresh: pair it with --critic-warmup. Excludes --bc-games ("" = off)."""
    eval_every: int = 500_000
    EVAL_GAMES: ClassVar[int] = 1000
    timesteps: int = 2_000_000
    time_limit: float = 0.0
    """Also stop after this many seconds of training wall time, warm start included (0 = no limit)."""
    num_envs: int = 512
    """Games stepped together by the batched engine (one policy call serves all of them)."""
    num_steps: int = 32
    """Engine calls per rollout: a rollout holds up to num_envs x num_steps learner decisions."""
    seed: int = 0
    """Seed of the network, the deals and the opponent draws."""
    threads: int = 1
    """CPU threads of torch and of numpy's BLAS (1 is fastest on a shared 2-core machine: more threads spin against
    other jobs)."""
    precision: Precision = "auto"
    """Matrix products of the networks: fp32, bf16 (bfloat16 autocast; weights, gradients and losses stay
    float32; about twice the update speed on CPUs with native bfloat16) or auto (bf16 where the CPU
    has native bfloat16, AVX512-BF16 or AMX, else fp32)."""
    opponents: list[str] = field(default_factory=lambda: ["learner=1"])
    """Opponent pool as SPEC=WEIGHT items, one draw per game and episode: `learner` (all seats are the
    learner), `self` (the other seats are a snapshot of the learner), `random` or `heuristic` (the variant's best
    heuristic, classic-tricks or jokers-boom, batched)."""
    max_grad_norm: float = 0.5
    """Gradient norm clipping."""
    out: str = "runs/fast"
    """Run folder: model.zip, best_model.zip, checkpoints/, progress.csv, eval.csv, tensorboard/."""
    player_counts: list[int] = field(default_factory=list)
    """Train one generalist network for classic Go Boom at all these player counts (e.g. 2 3 4 5 6 7 8 9 10 11 12),
    the games split evenly over them and every observation padded to the 12-seat layout; the model plays any of them
    (4 players when a command names none) and --num-players is not used. Empty: one game, that of --num-players."""
    eval_player_counts: list[int] = field(default_factory=list)
    """The player counts a generalist is evaluated at (eval.csv columns win_rate/BASELINE@Np; the best model has
    the best mean over them). Empty: 3 4 6 12 among --player-counts, or all of them when none is among them."""
    observation: Observation = "snapshot"
    """The observation layout the network reads: snapshot (the table as it is) or history (the snapshot, then what
    the hand's public events prove; see docs/environment.md). history trains for one table size (not --player-counts)
    and warm-starts from the batched heuristic only (--bc-teacher heuristic)."""

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        self.validate_game()
        self.validate_player_counts()
        check_output_folder(self.out, force=self.force, resume=self.resume, resumable=True, inputs=self.inputs())
        self.validate_ppo()
        check_run(self)
        self.validate_self_play()
        check_bounds(self, ">= 0", "time_limit", "critic_warmup")
        self.validate_observation()
        if self.privileged_critic and self.player_counts:
            raise ValueError("privileged_critic is for one table size: a generalist (--player-counts) pads its "
                             "observations to 12 seats and has no hidden-state layout to pad them with")
        if self.init_actor:
            if self.sized().bc_games:
                raise ValueError("init_actor and bc_games are two warm starts: give one of them (--bc-games 0 with "
                                 "--init-actor)")
            from goboom_env.training.artifacts.model_files import read_init_actor

            read_init_actor(self.init_actor, self.observation_width(), self.net_arch)
        check_bounds(self, "> 0", "max_grad_norm")
        parse_opponents(self.opponents, POOL_KINDS)  # names a bad entry before the run folder is made

    def inputs(self) -> list[tuple[str, str]]:
        """What the run reads, as ``(option, path)``: the model of --init-actor too."""
        return super().inputs() + ([("--init-actor", self.init_actor)] if self.init_actor else [])

    def network(self) -> dict[str, Any]:
        """What a resumed run must keep: also a generalist's player counts."""
        return {**super().network(), "player_counts": list(self.player_counts)}

    def validate_observation(self) -> None:
        """Raise ValueError when a history run asks for what it lacks (validate_game checked the layout's name)."""
        if self.observation != "history":
            return
        if self.player_counts:
            raise ValueError("observation history is for one table size: a generalist (--player-counts) reads the "
                             "padded snapshot layout")
        from goboom_env.agents.heuristics import BEST_HEURISTIC

        if self.sized().bc_games and self.bc_teacher not in ("heuristic", BEST_HEURISTIC[self.variant]):
            raise ValueError(f"observation history warm-starts from the batched heuristic only (--bc-teacher "
                             f"heuristic), not {self.bc_teacher!r}")

    def observation_width(self) -> int:
        """The entries of one observation the network reads: a generalist's padded layout, else ``observation``'s."""
        from goboom_env.history import history_size
        from goboom_env.observation import PADDED_SIZE, observation_size

        if self.player_counts:
            return PADDED_SIZE
        return (history_size if self.observation == "history" else observation_size)(self.num_players)

    def validate_player_counts(self) -> None:
        """The generalist settings: distinct counts in 2..12, classic only, at least one game per count."""
        from goboom_env.vector import check_player_counts

        if not self.player_counts:
            if self.eval_player_counts:
                raise ValueError("eval_player_counts applies to a generalist run only (give --player-counts)")
            return
        check_player_counts(self.player_counts)
        if self.variant != "classic":
            raise ValueError(f"player_counts: a generalist plays classic Go Boom only, got variant={self.variant!r}")
        if self.num_envs < len(self.player_counts):
            raise ValueError(f"num_envs must be at least one game per player count ({len(self.player_counts)}), "
                             f"got {self.num_envs}")
        self.player_configs()  # every table must be a valid game (hand size x players <= cards)
        if self.eval_player_counts:
            check_player_counts(self.eval_player_counts, "eval_player_counts")
            extra = sorted(set(self.eval_player_counts) - set(self.player_counts))
            if extra:
                raise ValueError(f"eval_player_counts {extra} are not among player_counts {self.player_counts}")

    def player_config(self, count: int) -> GameConfig:
        """The game of ``count`` players of this run (its rules, the derived fields derived for that count)."""
        try:
            return self.game_config().replace(num_players=int(count))
        except ValueError as exc:
            raise ValueError(f"player_counts: no valid game at {count} players ({exc})") from None

    def player_configs(self) -> list[GameConfig]:
        """The game of each of :attr:`player_counts` (empty for a single-game run)."""
        return [self.player_config(k) for k in self.player_counts]

    def run_config(self) -> GameConfig:
        """The game the run's model plays by default: the game of the options, or a generalist's 4-player game
        (its first count when 4 is not among them)."""
        from goboom_env.agents.ppo import default_player_count

        if self.player_counts:
            return self.player_config(default_player_count(self.player_counts))
        return self.game_config()

    def evaluated_counts(self) -> list[int]:
        """The player counts a generalist is evaluated at (see :attr:`eval_player_counts`)."""
        if self.eval_player_counts:
            return list(self.eval_player_counts)
        return [k for k in (3, 4, 6, 12) if k in self.player_counts] or list(self.player_counts)


@dataclass
class RLlibArgs(PPOArgs):
    """Everything one RLlib self-play run (``goboom train-rllib``) needs; saved in ``goboom.json`` of the run folder."""

    learning_rate: float = 3e-4
    n_epochs: int = 4
    minibatch_size: int = 500
    ent_coef: float = 0.01
    vf_coef: float = 1.0
    snapshot_every: int = 20_000
    checkpoint_every: int = 40_000
    timesteps: int = 200_000
    """Stop once this many env steps (decisions of any seat) have been sampled."""
    num_env_runners: int = 1
    """Ray actors that sample episodes (0 = sample in the driver process)."""
    num_envs: int = 16
    """Environments stepped together (one batched forward pass) inside each env runner."""
    train_batch_size: int = 4000
    """Env steps sampled per training iteration."""
    opponents: list[str] = field(default_factory=lambda: ["learner=1", "self=1"])
    """Opponent pool as SPEC=WEIGHT items, one draw per non-learner seat and episode: `learner` (the learner itself)
    or `self` (a frozen snapshot of it)."""
    pool_size: int = 4
    """Frozen snapshot slots that `self` draws from."""
    out: str = "runs/rllib"
    """Run folder: checkpoints/, policy/, goboom.json, progress.csv, tensorboard/."""
    resume: bool = False
    """Continue the run in --out from its latest checkpoint (same arguments)."""
    force: bool = False
    """Replace an existing --out that goboom wrote (an earlier run), as a whole, once the new run has started. A
    folder goboom did not write is never replaced; without --force (or --resume) a non-empty one is refused."""
    address: str | None = None
    """Ray cluster to join (e.g. auto or HOST:6379); default: start a local Ray instance."""
    num_cpus: int | None = None
    """CPUs of the local Ray instance (default: all); ignored with --address."""
    seed: int = 0
    """Seed of the networks and the environments (league matchmaking draws from the random episode ids)."""
    eval_games: int = 0
    """After training, play this many games 1-vs-(n-1) against random and against heuristic (0 = skip)."""
    progress: bool = True
    """Show a live progress display, on a terminal only."""
    measure_sampling: int = 0
    """Instead of training, sample this many env steps per env runner and print env steps/s (0 = train)."""

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        super().validate()
        check_bounds(self, ">= 1", "timesteps", "train_batch_size", "pool_size", "num_envs")
        check_bounds(self, ">= 0", "num_env_runners", "eval_games", "seed", "measure_sampling")
        from goboom_env.evaluation.benchmark import check_training_seed  # imported late: this module stays light

        check_training_seed(self.seed, self.timesteps)
        if self.minibatch_size > self.train_batch_size:
            raise ValueError(f"minibatch_size ({self.minibatch_size}) must be <= train_batch_size "
                             f"({self.train_batch_size})")
        parse_opponents(self.opponents, LEAGUE_KINDS)
        if self.num_cpus is not None:
            check_bounds(self, ">= 1", "num_cpus")
        if self.address is not None:
            cluster_endpoint(self.address)
        check_output_folder(self.out, force=self.force, resume=self.resume, resumable=True)


@dataclass
class ExploitArgs(PPOArgs):
    """The settings of one exploitability run (``goboom exploit``): the game and PPO settings of every trainer, then
    the run's own. ``snapshot_every`` is not used (there is no league)."""

    agent: str = ""
    """Agent spec to exploit, frozen in every seat but the learner's (ppo:classic-4p-hands, ppo:PATH, classic-tricks,
    jokers-boom, ismcts:iters=400, ...)."""
    n_epochs: int = 2
    ent_coef: float = 0.003
    checkpoint_every: int = 500_000
    """Save the best response so far as checkpoints/model_STEPS.zip every this many steps."""
    timesteps: int = 1_000_000
    """Learner decisions to train the best response for."""
    time_limit: float = 0.0
    """Also stop after this many seconds of training (evaluations not counted; 0 = no limit)."""
    trainer: Trainer = "auto"
    """auto (the fast trainer on the batched engine where the agent plays from its observation alone,
    batched for ppo models, classic-tricks, jokers-boom and random, else called per game; MaskablePPO on the scalar
    environments for agents that need the seat's view, ismcts and mc), fast, or sb3."""
    num_envs: int = 512
    """Games played together (fast trainer: one batched engine; sb3: environments)."""
    num_steps: int = 32
    """Engine calls (sb3: steps per environment) per rollout."""
    seed: int = 0
    """Seed of the network, the deals, the agent's randomness and the evaluations."""
    threads: int = 1
    """CPU threads of torch and of numpy's BLAS."""
    precision: Precision = "auto"
    """Fast trainer's matrix products: fp32, bf16 or auto (as goboom train-fast)."""
    max_grad_norm: float = 0.5
    """Gradient norm clipping (fast trainer; SB3's own default 0.5 in the sb3 path)."""
    eval_every: int = 250_000
    """Evaluate the best response against the agent every this many steps (one more at the end; 0 = only
    at the end): the learning curve."""
    eval_games: int = 2000
    """Games per evaluation (1-vs-(n-1), duplicate deals with the seats rotated)."""
    out: str = "runs/exploit"
    """Run folder: model.zip, curve.csv, curve.png, exploit.json, args.json, checkpoints/."""
    force: bool = False
    """Replace an existing --out that goboom wrote (an earlier run), as a whole, once the new run has started. A
    folder goboom did not write is never replaced; without --force a non-empty one is refused."""
    progress: bool = True
    """Show progress bars, on a terminal only (a log piped to a file gets the one-line messages alone)."""

    def agent_specs(self) -> list[tuple[str, str]]:
        """The agent to exploit."""
        return [("agent", self.agent)] if self.agent else []

    def validate(self) -> None:
        """Raise ValueError naming the first bad field (the agent spec is checked when the run loads it)."""
        super().validate()
        if not self.agent:
            raise ValueError("name the agent to exploit, e.g. goboom exploit ppo:classic-4p-hands --variant classic")
        check_run(self)
        check_bounds(self, ">= 1", "eval_games")
        check_bounds(self, ">= 0", "time_limit", "eval_every")
        check_bounds(self, "> 0", "max_grad_norm")
        check_output_folder(self.out, force=self.force, inputs=self.inputs())

    def inputs(self) -> list[tuple[str, str]]:
        """What the run reads, as ``(option, path)``: the files of the agent exploited (its --out may not hold them)."""
        return spec_inputs("agent", [self.agent])


@dataclass
class RecipeArgs(PPOArgs):
    """The settings of the recipes that train with TorchRL or Tianshou (``training/train_*.py``). A recipe keeps no
    league and writes its model once, at the end: ``snapshot_every`` and ``checkpoint_every`` are not used."""

    timesteps: int = 50_000
    """Learner decisions to train for (rounded up to whole rollouts)."""
    num_envs: int = 8
    """Environments stepped together."""
    num_steps: int = 128
    """Steps per environment per rollout: a rollout holds num_envs x num_steps learner decisions."""
    seed: int = 0
    """Seed of the networks, the deals and the action sampling."""
    threads: int = 1
    """CPU threads of torch and of numpy's BLAS."""
    out: str = "runs/recipe"
    """Run folder: the model is written there as model.zip."""
    force: bool = False
    """Replace an existing --out that goboom wrote (an earlier run), as a whole, once the model is written. A folder
    goboom did not write is never replaced; without --force a non-empty one is refused."""

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        super().validate()
        check_bounds(self, ">= 1", "timesteps", "num_envs", "num_steps")
        check_bounds(self, "in 1..1024", "threads")
        check_bounds(self, ">= 0", "seed")
        rollout = self.num_envs * self.num_steps
        if self.minibatch_size > rollout:
            raise ValueError(f"minibatch_size ({self.minibatch_size}) must be <= num_envs x num_steps ({rollout}), "
                             "the learner decisions of one rollout")
        check_output_folder(self.out, force=self.force)

    def start(self) -> StagedFolder:
        """Begin a recipe's run: set the threads and torch's seed, check --out (:meth:`save` writes it)."""
        with needs_extra("the recipes (torch)"):
            import torch

        set_threads(self.threads)
        torch.manual_seed(self.seed)
        return StagedFolder(self.out, force=self.force)

    def save(self, staged: StagedFolder, network: Any, steps: int) -> Path:
        """The trained ``network`` (an ``nn.Sequential`` reading the observation) as ``--out/model.zip``, a model every
        tool plays as ``ppo:PATH``; --out appears only once the model is in it. Returns the model's path."""
        from goboom_env.training.artifacts.model_files import export_model

        with staged as folder:
            export_model(network, self.game_config(), folder / "model.zip", args=self, timesteps=steps)
        return staged.out / "model.zip"


@dataclass
class DemoArgs(GameArgs):
    """The options of ``goboom demo``: the game (classic, 4 players by default) and a short budget."""

    timesteps: int = 2_500_000
    """PPO training steps (learner decisions)."""
    bc_games: int = 3000
    """Warm start: hands of the heuristic to imitate before PPO (0 = off)."""
    games: int = 4000
    """Evaluation games per baseline, rounded up to whole duplicate deals."""
    out: str | None = None
    """Run folder, new or empty (the output rule of every command); None = runs/demo-<date>-<time>."""
    seed: int = 0
    """Seed of training and evaluation."""
    progress: bool = True
    """Show the progress bars, on a terminal only."""

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        self.validate_game()
        if self.timesteps < 1 or self.games < 1 or self.bc_games < 0:
            raise ValueError("--timesteps and --games must be >= 1, --bc-games >= 0")


# -- checks shared by every settings class ---------------------------------------------------------------


def set_threads(threads: int) -> None:
    """Cap this process's compute threads at ``threads``: torch's and those of the BLAS library behind numpy's matrix
    products (the batched heuristics, numpy actors), which otherwise starts one spinning worker per core."""
    with needs_extra("the training threads (set_threads)"):
        import torch
        from threadpoolctl import threadpool_limits

    torch.set_num_threads(threads)
    threadpool_limits(limits=threads, user_api="blas")


def check_field_types(values: dict[str, Any], cls: type, source: str) -> dict[str, Any]:
    """``values`` checked against ``cls``'s annotations: ValueError naming the field and ``source`` (e.g. the TOML
    file) on a mismatch. Integers are accepted for float fields (and returned as floats); booleans are never numbers."""
    hints = typing.get_type_hints(cls)
    out = {}
    for name, value in values.items():
        ok, value = _typed(hints[name], value)
        if not ok:
            raise ValueError(f"{name} in {source} must be {_kind_words(hints[name])}, got {shown(value)}")
        out[name] = value
    return out


def unwrap_optional(kind: Any) -> tuple[Any, bool]:
    """``(T, True)`` for ``T | None``, else ``(kind, False)``."""
    args = typing.get_args(kind)
    if typing.get_origin(kind) in (types.UnionType, typing.Union) and type(None) in args:
        return next(a for a in args if a is not type(None)), True
    return kind, False


def _kind_words(kind: Any) -> str:
    """The annotation ``kind`` in words: ``an integer``, ``one of 'hand', 'match'``, ``a list of strings``."""
    kind, _ = unwrap_optional(kind)
    if typing.get_origin(kind) is Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(kind))
    if typing.get_origin(kind) is list:
        return "a list of " + {int: "integers", str: "strings"}.get(typing.get_args(kind)[0], "values")
    return {int: "an integer", float: "a number", str: "a string", bool: "true or false"}.get(kind, str(kind))


def _typed(kind: Any, value: Any) -> tuple[bool, Any]:
    """(whether ``value`` fits the annotation ``kind``, the value converted where needed)."""
    kind, optional = unwrap_optional(kind)
    if value is None:
        return optional, value
    if typing.get_origin(kind) is Literal:
        return value in typing.get_args(kind) and not isinstance(value, bool), value
    if typing.get_origin(kind) is list:
        if not isinstance(value, list):
            return False, value
        checked = [_typed(typing.get_args(kind)[0], v) for v in value]
        return all(ok for ok, _ in checked), [v for _, v in checked]
    if kind is bool or isinstance(value, bool):
        return kind is bool and isinstance(value, bool), value
    if kind is float:
        return isinstance(value, (int, float)), float(value) if isinstance(value, (int, float)) else value
    if kind in (int, str):
        return isinstance(value, kind), value
    return True, value  # another annotation: left to the field's own validation


def spec_inputs(option: str, specs: Sequence[str]) -> list[tuple[str, str]]:
    """``(option, path)`` of each file the agent ``specs`` read (a model, a Python file): what --out may not hold."""
    from goboom_env.agents.registry import spec_files

    return [(option, path) for spec in specs for path in spec_files(spec)]


def parse_opponents(items: Sequence[str], kinds: Sequence[str] | None = None) -> list[tuple[str, float]]:
    """Every trainer's ``--opponents``: ``["random=1", "self=3"]`` -> ``[("random", 1.0), ("self", 3.0)]`` (the weight
    after the last '='). ``kinds``: the entries the trainer plays (None: any agent spec, plus ``self``)."""
    out = []
    for item in items:
        spec, sep, weight = str(item).rpartition("=")
        try:
            value = float(weight)
        except ValueError:
            value = -1.0
        if not sep or not spec or value < 0:
            raise ValueError(f"opponents item {item!r} must be SPEC=WEIGHT with a weight >= 0, e.g. heuristic=2")
        if kinds is not None and spec not in kinds:
            raise ValueError(f"opponents entry {spec!r}: this trainer plays {', '.join(kinds)}")
        out.append((spec, value))
    if not any(w > 0 for _, w in out):
        raise ValueError(f"opponents must give at least one positive weight, got {items}")
    return out


def cluster_endpoint(address: str) -> tuple[str, int] | None:
    """The (host, port) of ``goboom train-rllib --address`` (``HOST:PORT``, ``[IPv6]:PORT`` or Ray Client's
    ``ray://HOST:PORT``); None for ``auto``, which Ray looks up itself. Raises ValueError otherwise."""
    if address == "auto":
        return None
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(f"address must be auto, HOST:PORT or ray://HOST:PORT (port 1..65535), got {address!r}")
    return host, int(port)


BOUNDS: dict[str, Callable[[Any], bool]] = {
    ">= 1": lambda v: v >= 1,
    ">= 0": lambda v: v >= 0,
    ">= -1": lambda v: v >= -1,
    "> 0": lambda v: v > 0,
    "in (0, 1]": lambda v: 0 < v <= 1,
    "in 1..1024": lambda v: 1 <= v <= 1024,  # threads: torch and BLAS take no more (beyond is an overflow)
}
"""The numeric rules of the settings, keyed by the words their error message uses (NaN breaks every one)."""


def check_bounds(args: object, rule: str, *names: str) -> None:
    """ValueError ``NAME must be RULE, got VALUE`` for the first of ``names`` breaking ``rule`` (a key of BOUNDS)."""
    for name in names:
        value = getattr(args, name)
        if not BOUNDS[rule](value):
            raise ValueError(f"{name} must be {rule}, got {shown(value)}")


# -- settings files and presets ----------------------------------------------------------------------------


def load_config_file(path: str | Path, cls: type) -> dict[str, Any]:
    """The fields of a settings file for ``cls``: TOML, or JSON when the name ends in ``.json``. Unknown keys
    and values of the wrong type are a ValueError naming the key and the file."""
    path = Path(path)
    kind = "JSON" if path.suffix == ".json" else "TOML"
    if not path.is_file():
        raise ValueError(f"config file {path} does not exist")
    raw = read_file(path, MAX_SETTINGS_BYTES, f"config file {path}")
    try:
        data = parse_json(raw) if kind == "JSON" else tomllib.loads(raw.decode())
    except (UnicodeDecodeError, RecursionError, ValueError) as exc:  # TOMLDecodeError is a ValueError
        problem = "nested too deep" if isinstance(exc, RecursionError) else exc
        raise ValueError(f"config file {path} is not valid {kind}: {problem}") from None
    if not isinstance(data, dict):
        raise ValueError(f"config file {path} must hold a table of settings, got {type(data).__name__}")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names, key=str)
    if unknown:
        listed = ", ".join(shown(key) for key in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        raise ValueError(f"unknown keys [{listed}] in {path}; allowed: {sorted(names)}")
    values = check_field_types(data, cls, str(path))
    agent_specs = getattr(cls(**values), "agent_specs", list)  # (field, spec) of each agent the settings name
    for option, spec in agent_specs():  # an agent a settings file names is never a Python file
        if option in values:
            check_spec_source(spec, SpecSource.SETTINGS_FILE, f"{option} in {path}")
    return values


def shared_fields(source: Any, cls: type) -> dict[str, Any]:
    """The values of ``source``'s fields that the dataclass ``cls`` has too (one settings object's for another's)."""
    names = {f.name for f in dataclasses.fields(cls)} & {f.name for f in dataclasses.fields(source)}
    return {name: getattr(source, name) for name in names}


def build_args(cls: type, config: str | Path | None = None, preset: str | None = None, base: Any = None,
               **fields: Any) -> Any:
    """An instance of ``cls``: its defaults (or ``base``'s values), then the file ``config``, then the ``preset``, then
    ``fields`` (later wins). Not validated: call ``validate()`` (the trainers do)."""
    values: dict[str, Any] = {} if base is None else shared_fields(base, cls)
    if config is not None:
        values.update(load_config_file(config, cls))
    if preset is not None:
        GameConfig.preset(preset)  # an unknown name: ValueError naming the likely one
        values.update(PRESETS[preset])
    values.update(fields)
    unknown = sorted(set(values) - {f.name for f in dataclasses.fields(cls)})
    if unknown:
        raise ValueError(f"unknown settings {unknown} for {cls.__name__}")
    return cls(**values)
