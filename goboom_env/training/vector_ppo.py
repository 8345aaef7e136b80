"""Fast self-play PPO on the batched engine (:class:`goboom_env.vector.VectorGame`), CleanRL style.

One call of ``VectorGame.step`` moves the seat to play in each of ``num_envs`` games. Every seat is
played either by the learner (one network, parameter-shared: in a ``learner`` game all n seats are
the learner, so each hand yields n learner trajectories) or by a batched opponent (a frozen snapshot
of the learner, ``random``).

:func:`train` reads top to bottom: arguments, run folder, network (fresh, warm-started by behaviour
cloning, or resumed), then ``collect -> seat_gae -> update`` until the step budget is spent, with
CSV / TensorBoard logs, a progress bar, league snapshots, checkpoints and periodic evaluation through
:func:`goboom_env.evaluation.baselines.evaluate_vs_baselines` (the tournament runner). Saved models are
the play-only zips of :mod:`goboom_env.training.artifacts.model_files`: ``make_agent("ppo:run/model.zip", config)``
plays them unchanged.

=========================  ==================================================================
module                     what it holds
=========================  ==================================================================
:mod:`.vector_ppo`         :class:`VectorArgs` and :func:`train`, the run
:mod:`.vector_trainer`     :class:`Trainer` (collect, update), the warm start, the model file
:mod:`.vector_rollout`     the opponent-pool entries, the seat plan, per-seat GAE, batches
:mod:`.vector_policy`      the actor-critic network and the batched opponents
=========================  ==================================================================
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goboom_env.config import GameConfig
from goboom_env.evaluation.baselines import evaluate_vs_baselines, win_rate_columns
from goboom_env.training.artifacts.run_folder import (
    RunFiles,
    append_csv,
    best_win_rate,
    check_same_network,
    checkpoint_to_resume,
    last_evaluated,
    mean_or_blank,
    next_multiple,
    start_run_folder,
    step_bar,
    truncate_csv,
)
from goboom_env.training.config import SelfPlayArgs, check_bounds, check_output_folder, set_threads
from goboom_env.training.vector_rollout import parse_pool

PRECISIONS = ("auto", "fp32", "bf16")
"""Choices of ``--precision``."""

if TYPE_CHECKING:  # the trainer needs torch (the train extra): imported when a run starts
    from goboom_env.training.vector_trainer import Trainer


@dataclass
class VectorArgs(SelfPlayArgs):
    """Everything one fast self-play run needs; saved as ``args.json`` in the run folder. The PPO, pool,
    warm-start and evaluation settings (:class:`~goboom_env.training.config.SelfPlayArgs`) have the names
    and units of ``goboom train``."""

    n_epochs: int = 2
    ent_coef: float = 0.003
    snapshot_every: int = 250_000
    checkpoint_every: int = 500_000
    bc_games: int = 0
    critic_warmup: int = 0
    """Learner decisions at the start of a fresh run during which only the critic learns: the actor keeps its
    warm start while the critic, cloned on single-hand wins, learns the run's own return (match episodes,
    the points reward) before its advantages steer the policy (0 = off)."""
    init_actor: str = ""
    """Fine-tune: start the actor of a fresh run from a saved model's actor (a zoo name such as classic-4p, or a
    path) trained on another game with the same observation size and --net-arch (classic 4p standard scoring ->
    reverse scoring). The critic starts fresh: pair it with --critic-warmup. Excludes --bc-games ("" = off)."""
    anchor_kl: float = 0.0
    """Keep the policy near its warm start (the actor as the run started: the clone of --bc-games or the model of
    --init-actor): this coefficient x KL(policy || warm start) joins the loss once the actor learns, so that only
    consistent advantages move it far, not the noise of a few thousand match outcomes (0 = off; e.g. 0.5)."""
    eval_every: int = 500_000
    eval_games: int = 1000
    timesteps: int = 2_000_000
    """Learner decisions to train for."""
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
    precision: str = "auto"
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
    """Train one generalist network for classic Go Boom at all these player counts (e.g. 2 3 4 5 6 7 8 9 10 11 12):
    the games are split evenly over the counts and every observation is padded to the 12-seat layout; the model
    plays any of them (4 players when a command names none); --num-players is then not used. Empty: one game, the
    one of --num-players."""
    eval_player_counts: list[int] = field(default_factory=list)
    """The player counts a generalist is evaluated at (eval.csv columns win_rate/BASELINE@Np; the best model has
    the best mean over them). Empty: 3 4 6 12 among --player-counts, or all of them when none is among them."""

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        self.validate_game()
        self.validate_player_counts()
        check_output_folder(self.out)
        self.validate_ppo()
        check_bounds(self, ">= 1", "timesteps", "num_envs", "num_steps", "threads")
        self.validate_self_play()
        check_bounds(self, ">= 0", "time_limit", "critic_warmup", "anchor_kl")
        if self.privileged_critic and self.player_counts:
            raise ValueError("privileged_critic is for one table size: a generalist (--player-counts) pads its "
                             "observations to 12 seats and has no hidden-state layout to pad them with")
        if self.init_actor:
            if self.bc_games > 0:
                raise ValueError("init_actor and bc_games are two warm starts: give one of them (--bc-games 0 with "
                                 "--init-actor)")
            from goboom_env.observation import PADDED_SIZE, observation_size
            from goboom_env.training.vector_trainer import read_init_actor

            read_init_actor(self.init_actor, PADDED_SIZE if self.player_counts else observation_size(self.num_players),
                            self.net_arch)
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")
        check_bounds(self, "> 0", "max_grad_norm")
        parse_pool(self.opponents)  # names a bad entry before the run folder is made

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
        for count in self.player_counts:
            self.player_config(count)  # every table must be a valid game (hand size x players <= cards)
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
        from goboom_env.training.artifacts.model_files import default_player_count

        if self.player_counts:
            return self.player_config(default_player_count(self.player_counts))
        return self.game_config()

    def evaluated_counts(self) -> list[int]:
        """The player counts a generalist is evaluated at (see :attr:`eval_player_counts`)."""
        if self.eval_player_counts:
            return list(self.eval_player_counts)
        return [k for k in (3, 4, 6, 12) if k in self.player_counts] or list(self.player_counts)


# -- the run folder ------------------------------------------------------------------------------------------

PROGRESS_COLUMNS = ["timesteps", "episodes", "fps", "train_s", "batch", "pending", "policy_loss", "value_loss",
                    "entropy", "approx_kl", "clip_fraction", "explained_variance", "ep_len_mean", "anchor_kl"]
"""Columns of ``progress.csv`` before the per-opponent training win rates ``win_rate/<entry>``."""


class RunPaths:
    """The files of one fast run folder (the names of ``goboom train`` where they mean the same)."""

    def __init__(self, out: str | Path) -> None:
        self.files = RunFiles(out)
        self.root = self.files.root

    def state(self, steps: int) -> Path:
        """The resumable checkpoint (network, optimizer, snapshots, counters) at ``steps``."""
        return self.files.checkpoints / f"state_{steps}.pt"

    def checkpoint_model(self, steps: int) -> Path:
        """The play-only model saved with the checkpoint at ``steps``."""
        return self.files.checkpoints / f"model_{steps}.zip"

    def latest_state(self) -> Path | None:
        found = sorted(self.files.checkpoints.glob("state_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
        return found[-1] if found else None


# -- the training run ----------------------------------------------------------------------------------------


def train(args: VectorArgs, command: str | None = None) -> Path:
    """Run (or resume) one fast self-play run; returns the path of the final play-only model."""
    import torch

    from goboom_env.training.artifacts.learning_curve import plot_learning_curve
    from goboom_env.training.artifacts.model_files import check_compatible, model_metadata
    from goboom_env.training.vector_trainer import Trainer, init_actor, load_checkpoint, save_play_only, warm_start

    args.validate()
    set_threads(args.threads)
    config = args.run_config()
    paths = RunPaths(args.out)
    files = paths.files
    state_path = _check_run_folder(args, config, paths)
    start_run_folder(args, files, command)
    files.checkpoints.mkdir(parents=True, exist_ok=True)
    state = load_checkpoint(state_path) if state_path else None
    if state is not None:
        check_compatible(state["meta"], config, state_path)
    trainer = Trainer(args, config, seed_offset=state["steps"] if state else 0)
    if state is not None:
        trainer.load_state_dict(state)
        for log in (files.progress, files.eval):
            truncate_csv(log, trainer.steps)
    elif args.init_actor:
        report = init_actor(trainer.net, args.init_actor, trainer.public_dim, args.net_arch)
        (files.root / "init_actor.json").write_text(json.dumps(report, indent=1))
    elif args.bc_games > 0:
        report = warm_start(trainer.net, config, args.bc_teacher, args.bc_games, epochs=args.bc_epochs, seed=args.seed,
                            player_counts=args.player_counts, privileged=args.privileged_critic)
        (files.root / "bc.json").write_text(json.dumps(report, indent=1))
        trainer.train_s += report["seconds"]
    trainer.start()
    meta = lambda: model_metadata(config, args, trainer.steps, args.player_configs())  # noqa: E731
    writer = _tensorboard(files.tensorboard)
    bar = step_bar(args.timesteps, "fast PPO", args.progress, trainer.steps)
    next_snapshot = next_multiple(trainer.steps, args.snapshot_every)
    next_checkpoint = next_multiple(trainer.steps, args.checkpoint_every)
    next_eval = next_multiple(trainer.steps, args.eval_every) if args.eval_every > 0 else 1 << 62
    best = best_win_rate(files.eval, _best_column(args))
    try:
        while trainer.steps < args.timesteps and not 0 < args.time_limit <= trainer.train_s:
            started, before = time.perf_counter(), trainer.steps
            stats = trainer.iteration()
            elapsed = time.perf_counter() - started
            trainer.train_s += elapsed
            bar.update(trainer.steps - before)
            _log_progress(files.progress, writer, trainer, stats, (trainer.steps - before) / max(elapsed, 1e-9))
            if trainer.steps >= next_snapshot:
                trainer.snapshot()
                next_snapshot = next_multiple(trainer.steps, args.snapshot_every)
            if trainer.steps >= next_checkpoint:
                torch.save({**trainer.state_dict(), "meta": meta()}, paths.state(trainer.steps))
                save_play_only(trainer.net, paths.checkpoint_model(trainer.steps), meta())
                next_checkpoint = next_multiple(trainer.steps, args.checkpoint_every)
            if trainer.steps >= next_eval:
                best = _evaluate(trainer, files.eval_model, files, writer, best, meta())
                next_eval = next_multiple(trainer.steps, args.eval_every)
    except KeyboardInterrupt:
        path = paths.state(trainer.steps)
        torch.save({**trainer.state_dict(), "meta": meta()}, path)
        print(f"goboom train-fast: interrupted at step {trainer.steps}; saved {path}; "
              f"continue with --resume --out {paths.root}", file=sys.stderr)
        raise
    finally:
        bar.close()
    torch.save({**trainer.state_dict(), "meta": meta()}, paths.state(trainer.steps))
    save_play_only(trainer.net, files.model, meta())
    if args.eval_every >= 0 and last_evaluated(files) != trainer.steps:
        _evaluate(trainer, files.model, files, writer, best, meta())
    if not files.best.exists():
        shutil.copyfile(files.model, files.best)
    writer.close()
    plot_learning_curve(files)
    return files.model


def _check_run_folder(args: VectorArgs, config: GameConfig, paths: RunPaths) -> Path | None:
    """The checkpoint to resume from (None for a fresh run); refuses to overwrite a run or change the network."""
    from goboom_env.training.vector_trainer import load_checkpoint

    latest = checkpoint_to_resume(args, paths.root, paths.latest_state, "state_*.pt", paths.files.checkpoints)
    if latest is not None:
        saved = load_checkpoint(latest)["meta"].get("train_args") or {}
        check_same_network(args, saved)
        if list(saved.get("player_counts") or []) != list(args.player_counts):
            raise ValueError(f"--resume: player_counts {args.player_counts} differ from the checkpoint's "
                             f"{saved.get('player_counts') or []}")
    return latest


def _evaluate(trainer: Trainer, model: Path, files: Any, writer: Any, best: float, meta: dict[str, Any]) -> float:
    """Tournaments of the current actor against the baselines (:func:`evaluate_vs_baselines`); keeps the best."""
    from goboom_env.training.vector_trainer import save_play_only

    args = trainer.args
    save_play_only(trainer.net, model, meta)
    spec = f"ppo:{model}"
    row: dict[str, Any] = {"timesteps": trainer.steps, "train_s": round(trainer.train_s, 1)}
    if args.player_counts:
        row |= _generalist_columns(args, spec, trainer.steps)
    else:
        results = evaluate_vs_baselines(trainer.config, spec, args.eval_opponents, args.eval_games,
                                        seed=args.seed + trainer.steps, episode=args.episode)
        row |= win_rate_columns(results, spec)
    append_csv(files.eval, row, list(row))
    for key, value in row.items():
        if key != "timesteps":
            writer.add_scalar(f"eval/{key}", value, trainer.steps)
    score = row[f"win_rate/{_best_column(args)}"]
    if score > best:
        if model != files.best:
            shutil.copyfile(model, files.best)
        return score
    return best


def _generalist_columns(args: VectorArgs, spec: str, steps: int) -> dict[str, float]:
    """A generalist's ``eval.csv`` columns: the baseline tournaments at each evaluated player count
    (``win_rate/B@Np``, ``ci_low/B@Np``, ``ci_high/B@Np``) and the mean win rate over the counts per baseline
    (``win_rate/B@mean``, what the best model is chosen by)."""
    row: dict[str, float] = {}
    counts = args.evaluated_counts()
    for count in counts:
        results = evaluate_vs_baselines(args.player_config(count), spec, args.eval_opponents, args.eval_games,
                                        seed=args.seed + steps, episode=args.episode)
        row |= {f"{key}@{count}p": value for key, value in win_rate_columns(results, spec).items()}
    for baseline in args.eval_opponents:
        row[f"win_rate/{baseline}@mean"] = sum(row[f"win_rate/{baseline}@{k}p"] for k in counts) / len(counts)
    return row


def _best_column(args: VectorArgs) -> str:
    """The ``eval.csv`` win rate (``win_rate/<this>``) that picks the best model: against the last evaluation
    opponent, averaged over the player counts for a generalist."""
    return f"{args.eval_opponents[-1]}@mean" if args.player_counts else args.eval_opponents[-1]


def _log_progress(path: Path, writer: Any, trainer: Trainer, stats: dict[str, float], fps: float) -> None:
    """One ``progress.csv`` row and the matching TensorBoard scalars per iteration."""
    row: dict[str, Any] = {"timesteps": trainer.steps, "episodes": trainer.episodes, "fps": round(fps),
                           "train_s": round(trainer.train_s, 2),
                           **{k: round(v, 6) for k, v in stats.items() if not math.isnan(v)},  # NaN: blank
                           "ep_len_mean": mean_or_blank(trainer.lengths[-1000:])}
    for spec, results in trainer.results.items():
        row[f"win_rate/{spec}"] = mean_or_blank(results[-1000:])
    append_csv(path, row, PROGRESS_COLUMNS + [f"win_rate/{s}" for s in trainer.results])
    for key, value in row.items():
        if key != "timesteps" and value != "":
            group = "losses" if key in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction",
                                        "explained_variance", "anchor_kl") else "charts"
            writer.add_scalar(f"{group}/{key}", value, trainer.steps)


def _tensorboard(folder: Path) -> Any:
    from torch.utils.tensorboard import SummaryWriter

    return SummaryWriter(str(folder))
