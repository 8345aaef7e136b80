"""The callbacks of ``goboom train``, one per concern, composed with SB3's ``CallbackList`` (:func:`make_callbacks`).

* :class:`StepBarCallback`: the progress bar over the steps the run will really take (whole rollouts).
* :class:`ProgressCallback`: win rates of the training episodes per opponent kind; one ``progress.csv``
  and TensorBoard (``selfplay/``) row per rollout.
* :class:`LeagueSnapshotCallback`: every ``snapshot_every`` steps a frozen copy of the learner joins the
  opponent pool of every env (and ``snapshots/``).
* :class:`RunCheckpointCallback`: every ``checkpoint_every`` steps a full model with its metadata in
  ``checkpoints/model_STEPS.zip``, what ``--resume`` continues from. SB3's own ``CheckpointCallback``
  does not fit: it counts calls, not steps (so a resumed run would drift off the step grid), names files
  ``*_steps.zip`` and saves a bare SB3 zip without the metadata and numpy actor that ``ppo:`` and
  ``--resume`` check.
* :class:`TournamentEvalCallback`: every ``eval_every`` steps the model plays duplicate tournaments
  against each evaluation baseline (:func:`~goboom_env.evaluation.baselines.evaluate_vs_baselines`);
  ``eval.csv``, TensorBoard (``eval/``) and ``best_model.zip``. sb3-contrib's ``MaskableEvalCallback``
  does not fit: it plays plain episodes of one env against whatever opponents that env draws, one seat
  at a time, where the evaluation here needs duplicate deals, rotating seats, a fixed baseline in every
  other seat and a confidence interval per baseline.
"""

from __future__ import annotations

import shutil
import time
from collections import defaultdict, deque
from typing import Any

from goboom_env.agents.ppo import save_snapshot
from goboom_env.config import GameConfig
from goboom_env.hints import needs_extra
from goboom_env.training.artifacts.model_files import model_metadata
from goboom_env.training.artifacts.run_folder import (
    RunFiles,
    append_csv,
    best_win_rate,
    mean_or_blank,
    next_multiple,
    step_bar,
    whole_rollouts,
)
from goboom_env.training.league import SELF
from goboom_env.training.sb3.model import evaluate_model, frozen_actor, save_model
from goboom_env.training.settings import TrainArgs, parse_opponents

with needs_extra("the stable-baselines3 trainer (goboom_env.training.sb3)"):
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList

PROGRESS_COLUMNS = [
    "timesteps", "episodes", "ep_rew_mean", "ep_len_mean", "win_rate", "fps", "loss", "policy_gradient_loss",
    "value_loss", "entropy_loss", "approx_kl", "clip_fraction", "explained_variance",
]
"""Columns of ``progress.csv`` before the per-opponent win rates ``win_rate/<opponent>``."""


def make_callbacks(args: TrainArgs, config: GameConfig, files: RunFiles) -> CallbackList:
    """The progress bar, progress logging, league snapshots, checkpoints and periodic evaluation, in that order."""
    return CallbackList([
        StepBarCallback(args.progress),
        ProgressCallback(files, [spec for spec, _ in parse_opponents(args.opponents)]),
        LeagueSnapshotCallback(files, args.snapshot_every),
        RunCheckpointCallback(files, args, config),
        TournamentEvalCallback(files, args, config),
    ])


class StepBarCallback(BaseCallback):
    """The run's progress bar (:func:`~goboom_env.training.artifacts.run_folder.step_bar`) over the steps SB3 will
    take: it learns whole rollouts of ``num_steps x num_envs`` steps, so the total is the budget rounded up to the last
    rollout's end (SB3's own bar counts past its total: 24,576/20,000), and the bar ends at its total."""

    def __init__(self, enabled: bool) -> None:
        super().__init__()
        self.enabled = enabled
        self.bar: Any = None

    def _on_training_start(self) -> None:
        start, rollout = self.num_timesteps, self.model.n_steps * self.training_env.num_envs
        total = whole_rollouts(start, self.locals["total_timesteps"], rollout)
        self.bar = step_bar(total, "PPO", self.enabled, start)

    def _on_step(self) -> bool:
        self.bar.to(self.num_timesteps)
        return True

    def _on_training_end(self) -> None:
        self.bar.close()


class ProgressCallback(BaseCallback):
    """Win rates of the last 1000 training episodes (overall and per opponent kind) and the PPO losses:
    one ``progress.csv`` row and ``selfplay/`` TensorBoard scalars per rollout."""

    def __init__(self, files: RunFiles, kinds: list[str]) -> None:
        super().__init__()
        self.files = files
        self.kinds = kinds
        self.results: dict[str, deque] = defaultdict(lambda: deque(maxlen=1000))
        self.all_results: deque = deque(maxlen=1000)
        self.episodes = 0
        self.t0 = time.time()
        self.t0_steps = 0

    def _on_training_start(self) -> None:
        self.t0_steps = self.num_timesteps

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            if "won" in info:
                kind = SELF if info["opponent"].startswith("snapshot@") else info["opponent"]
                self.results[kind].append(float(info["won"]))
                self.all_results.append(float(info["won"]))
                self.episodes += 1
        return True

    def _on_rollout_end(self) -> None:
        values = self.model.logger.name_to_value
        buffer = self.model.ep_info_buffer or []
        elapsed = max(time.time() - self.t0, 1e-9)
        row: dict[str, Any] = {
            "timesteps": self.num_timesteps, "episodes": self.episodes,
            "ep_rew_mean": mean_or_blank([e["r"] for e in buffer]),
            "ep_len_mean": mean_or_blank([e["l"] for e in buffer]),
            "win_rate": mean_or_blank(self.all_results), "fps": round((self.num_timesteps - self.t0_steps) / elapsed),
        }
        for key in PROGRESS_COLUMNS[6:]:
            row[key] = values.get(f"train/{key}", "")
        for kind in self.kinds:
            row[f"win_rate/{kind}"] = mean_or_blank(self.results[kind])
        for key, value in row.items():
            if key not in ("timesteps", "loss") and value != "" and not key.startswith("train"):
                self.logger.record(f"selfplay/{key}", value)
        append_csv(self.files.progress, row, PROGRESS_COLUMNS + [f"win_rate/{k}" for k in self.kinds])


class LeagueSnapshotCallback(BaseCallback):
    """Every ``every`` steps (and at the start of a run without snapshots) a frozen copy of the learner's actor
    joins every env's opponent pool and is saved as ``snapshots/snapshot_STEPS.npz`` (what a resumed run
    refills its pool from)."""

    def __init__(self, files: RunFiles, every: int) -> None:
        super().__init__()
        self.files = files
        self.every = every
        self.next = 0

    def _on_training_start(self) -> None:
        self.next = next_multiple(self.num_timesteps, self.every)
        if not self.files.snapshot_files():
            self._snapshot()

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next:
            self._snapshot()
            self.next += self.every
        return True

    def _snapshot(self) -> None:
        name = f"snapshot@{self.num_timesteps}"
        state = frozen_actor(self.model).state()
        self.training_env.env_method("add_snapshot", name, state)
        self.files.snapshots.mkdir(parents=True, exist_ok=True)
        save_snapshot(self.files.snapshots / f"{name.replace('@', '_')}.npz", state)


class RunCheckpointCallback(BaseCallback):
    """Every ``args.checkpoint_every`` steps the full model with its metadata, as ``checkpoints/model_STEPS.zip``."""

    def __init__(self, files: RunFiles, args: TrainArgs, config: GameConfig) -> None:
        super().__init__()
        self.files, self.args, self.config = files, args, config
        self.next = 0

    def _on_training_start(self) -> None:
        self.next = next_multiple(self.num_timesteps, self.args.checkpoint_every)

    def _on_step(self) -> bool:
        steps = self.num_timesteps
        if steps >= self.next:
            save_model(self.model, self.files.checkpoints / f"model_{steps}.zip",
                       model_metadata(self.config, self.args, steps))
            self.next += self.args.checkpoint_every
        return True


class TournamentEvalCallback(BaseCallback):
    """Every ``args.eval_every`` steps (never when it is 0 or less): duplicate tournaments of the model against
    each of ``args.eval_opponents``; a row of ``eval.csv``, ``eval/`` TensorBoard scalars, and
    ``best_model.zip`` when the win rate against the last evaluation opponent is the best so far."""

    def __init__(self, files: RunFiles, args: TrainArgs, config: GameConfig) -> None:
        super().__init__()
        self.files, self.args, self.config = files, args, config
        self.next = -1
        self.best = -1.0

    def _on_training_start(self) -> None:
        every = self.args.eval_every
        self.next = next_multiple(self.num_timesteps, every) if every > 0 else -1
        self.best = best_win_rate(self.files.eval, self.args.eval_opponents[-1])

    def _on_step(self) -> bool:
        if self.next > 0 and self.num_timesteps >= self.next:
            self._evaluate()
            self.next += self.args.eval_every
        return True

    def _evaluate(self) -> None:
        args, files, steps = self.args, self.files, self.num_timesteps
        save_model(self.model, files.eval_model, model_metadata(self.config, args, steps))
        row = evaluate_model(files.eval_model, files, args, self.config, steps, args.seed + steps)
        for key, value in row.items():
            if key != "timesteps":
                self.logger.record(f"eval/{key}", value)
        score = row[f"win_rate/{args.eval_opponents[-1]}"]
        if score > self.best:
            self.best = score
            shutil.copyfile(files.eval_model, files.best)
