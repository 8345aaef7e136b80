"""The callbacks of ``goboom train``, one per concern, composed with SB3's ``CallbackList`` (:func:`make_callbacks`)."""

from __future__ import annotations

import io
import time
from collections import defaultdict, deque
from typing import Any

from goboom_env.agents.ppo import save_snapshot
from goboom_env.config import GameConfig
from goboom_env.hints import needs_extra
from goboom_env.outdir import write_atomically
from goboom_env.training.artifacts.model_files import model_metadata
from goboom_env.training.artifacts.run_folder import (
    RunFiles,
    Schedule,
    StepBar,
    append_csv,
    best_win_rate,
    mean_or_blank,
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
"""Columns of ``progress.csv`` before the per-opponent ``win_rate/<opponent>``."""


def make_callbacks(args: TrainArgs, config: GameConfig, files: RunFiles) -> CallbackList:
    """The progress bar, progress logging, then league snapshots, checkpoints and periodic evaluation."""
    return CallbackList([
        StepBarCallback(args.progress),
        ProgressCallback(files, [spec for spec, _ in parse_opponents(args.opponents)]),
        ScheduleCallback(files, args, config),
    ])


class StepBarCallback(BaseCallback):
    """The run's progress bar over the steps SB3 will take: the budget rounded up to whole rollouts (SB3's own bar
    counts past its total)."""

    def __init__(self, enabled: bool) -> None:
        super().__init__()
        self.enabled = enabled
        self.bar: Any = None

    def _on_training_start(self) -> None:
        start, rollout = self.num_timesteps, self.model.n_steps * self.training_env.num_envs
        total = whole_rollouts(start, self.locals["total_timesteps"], rollout)
        self.bar = StepBar(total, "PPO", self.enabled, start)

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
        row |= {key: values.get(f"train/{key}", "") for key in PROGRESS_COLUMNS[6:]}
        row |= {f"win_rate/{kind}": mean_or_blank(self.results[kind]) for kind in self.kinds}
        for key, value in row.items():
            if key not in ("timesteps", "loss") and value != "" and not key.startswith("train"):
                self.logger.record(f"selfplay/{key}", value)
        append_csv(self.files.progress, row, PROGRESS_COLUMNS + [f"win_rate/{k}" for k in self.kinds])


class ScheduleCallback(BaseCallback):
    """What falls due on the run's step grid (:class:`Schedule`), in this order: a league snapshot (also at the start
    of a run without any), a checkpoint (SB3's ``CheckpointCallback`` counts calls, not steps, and saves no metadata
    nor numpy actor), an evaluation (sb3-contrib's ``MaskableEvalCallback`` plays no duplicate deals)."""

    def __init__(self, files: RunFiles, args: TrainArgs, config: GameConfig) -> None:
        super().__init__()
        self.files, self.args, self.config = files, args, config
        self.schedule = Schedule(0)
        self.best = -1.0

    def _on_training_start(self) -> None:
        args = self.args
        self.schedule = Schedule(self.num_timesteps, snapshot=args.snapshot_every,
                                 checkpoint=args.checkpoint_every, evaluate=args.eval_every)
        if not self.files.snapshot_files():
            self.snapshot()
        self.best = best_win_rate(self.files.eval, args.eval_opponents[-1])

    def _on_step(self) -> bool:
        due = self.schedule.due(self.num_timesteps)
        if "snapshot" in due:
            self.snapshot()
        if "checkpoint" in due:
            steps = self.num_timesteps
            save_model(self.model, self.files.checkpoint(steps), model_metadata(self.config, self.args, steps))
        if "evaluate" in due:
            self.evaluate()
        return True

    def snapshot(self) -> None:
        name = f"snapshot@{self.num_timesteps}"
        state = frozen_actor(self.model).state()
        self.training_env.env_method("add_snapshot", name, state)
        data = io.BytesIO()
        save_snapshot(data, state)
        write_atomically(self.files.snapshots / f"{name.replace('@', '_')}.npz", data.getvalue())

    def evaluate(self) -> None:
        args, files, steps = self.args, self.files, self.num_timesteps
        save_model(self.model, files.eval_model, model_metadata(self.config, args, steps))
        row = evaluate_model(files.eval_model, files, args, self.config, steps, args.seed + steps)
        for key, value in row.items():
            if key != "timesteps":
                self.logger.record(f"eval/{key}", value)
        self.best = files.keep_best(files.eval_model, row[f"win_rate/{args.eval_opponents[-1]}"], self.best)
