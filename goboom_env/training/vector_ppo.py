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
from goboom_env.training.settings import VectorArgs, set_threads

if TYPE_CHECKING:  # the trainer needs torch (the train extra): imported when a run starts
    from goboom_env.training.vector_trainer import Trainer


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
