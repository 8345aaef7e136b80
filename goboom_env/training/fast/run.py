"""The run folder of ``goboom train-fast``: ``goboom train``'s layout plus ``checkpoints/state_STEPS.pt``, the
resumable state (:meth:`RunFiles.state`); its checkpoints, play-only models and progress and evaluation logs
(``trainer``: the run's :class:`~goboom_env.training.fast.ppo.Trainer`).
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goboom_env.agents.ppo import metadata_problem
from goboom_env.config import errors_prefixed
from goboom_env.evaluation.baselines import evaluate_vs_baselines, evaluation_line, win_rate_columns
from goboom_env.hints import needs_extra, shown
from goboom_env.outdir import write_atomically
from goboom_env.process import say
from goboom_env.training.artifacts.model_files import write_actor
from goboom_env.training.artifacts.run_folder import (
    RunFiles,
    append_csv,
    checkpoint_to_resume,
    load_tensors,
    mean_or_blank,
)
from goboom_env.training.settings import VectorArgs

if TYPE_CHECKING:
    from goboom_env.training.fast.policy import ActorCritic

STATE_NAME = re.compile(r"state_(\d+)\.pt")
LOSS_COLUMNS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "explained_variance")
PROGRESS_COLUMNS = ["timesteps", "episodes", "fps", "train_s", "batch", "pending", *LOSS_COLUMNS, "ep_len_mean"]
"""Columns of ``progress.csv`` before the per-opponent training win rates ``win_rate/<entry>``."""


def check_run_folder(args: VectorArgs, paths: RunFiles) -> Path | None:
    """The checkpoint to resume from (None for a fresh run); refuses to change the network."""
    return checkpoint_to_resume(args, lambda: paths.latest_checkpoint(STATE_NAME), "state_*.pt", paths.checkpoints,
                                lambda path: load_checkpoint(path)["meta"].get("train_args") or {})


def save_play_only(net: ActorCritic, path: Path, metadata: dict[str, Any]) -> Path:
    """The play-only model zip that ``ppo:PATH`` loads."""
    return write_actor(path, {**metadata, "deterministic": True, "trainer": "vector"}, net.frozen().state())


def save_checkpoint(state: dict[str, Any], path: Path) -> Path:
    """Write the checkpoint ``state`` to ``path`` whole or not at all (``write_atomically``): a run killed meanwhile
    leaves no truncated ``state_*.pt`` for ``--resume``."""
    with needs_extra("the fast trainer (goboom_env.training.fast)"):
        import torch

    buf = io.BytesIO()
    torch.save(state, buf)
    return write_atomically(path, buf.getvalue())


def load_checkpoint(path: Path) -> dict[str, Any]:
    """A ``state_N.pt`` checkpoint, read with ``weights_only`` (a crafted file runs no code), every field the trainer
    reads checked; ValueError naming the file and the field otherwise."""
    with errors_prefixed("--resume"):
        state = load_tensors(path, path)
        missing = [k for k in CHECKPOINT_FIELDS if not isinstance(state, dict) or k not in state]
        if missing:
            raise ValueError(f"{path} is not a goboom train-fast checkpoint (no {', '.join(missing)})")
        with errors_prefixed(f"{path} is damaged"):
            check_checkpoint(state)
    return state


CHECKPOINT_FIELDS = ("net", "optimizer", "steps", "episodes", "train_s", "snapshots", "meta")


def check_checkpoint(state: dict[str, Any]) -> None:
    """ValueError naming the first field of a checkpoint that is wrong."""
    with needs_extra("the fast trainer (goboom_env.training.fast)"):
        import torch

    problem = metadata_problem(state["meta"])
    if problem:
        raise ValueError(f"its meta {problem}")
    for key in ("steps", "episodes"):
        if type(state[key]) is not int or state[key] < 0:
            raise ValueError(f"{key} must be a non-negative integer, got {shown(state[key])}")
    if type(state["train_s"]) not in (int, float) or not 0 <= state["train_s"] < math.inf:
        raise ValueError(f"train_s must be a non-negative number, got {shown(state['train_s'])}")
    for key in ("net", "optimizer"):
        value = state[key]
        if not (isinstance(value, dict) and all(isinstance(k, str) for k in value)):
            raise ValueError(f"{key} must be a state dict (a mapping of names), got {type(value).__name__}")
    if not all(torch.is_tensor(v) for v in state["net"].values()):
        raise ValueError("net must map each name to a tensor")
    if not isinstance(state["snapshots"], (list, tuple)):
        raise ValueError(f"snapshots must be a list, got {type(state['snapshots']).__name__}")
    for i, entry in enumerate(state["snapshots"]):
        if not (isinstance(entry, (list, tuple)) and len(entry) == 2 and isinstance(entry[0], str)
                and isinstance(entry[1], dict) and isinstance(entry[1].get("activation"), str)
                and isinstance(entry[1].get("layers"), (list, tuple))
                and all(isinstance(layer, (list, tuple)) and len(layer) == 2 and all(map(torch.is_tensor, layer))
                        for layer in entry[1]["layers"])):
            raise ValueError(f"snapshots[{i}] must be [name, {{'layers': [[weight, bias], ...], 'activation': "
                             "name}]")


def evaluate(trainer: Any, model: Path, files: RunFiles, writer: Any, best: float, meta: dict[str, Any]) -> float:
    """Tournaments of the current actor against the baselines into ``eval.csv``; returns the best score so far and
    keeps its model. A generalist's columns: each baseline at each evaluated count (``win_rate/B@Np``, its CI) and
    the mean win rate over the counts (``win_rate/B@mean``, which picks the best model)."""
    args = trainer.args
    save_play_only(trainer.net, model, meta)
    spec = f"ppo:{model}"
    row: dict[str, Any] = {"timesteps": trainer.steps, "train_s": round(trainer.train_s, 1)}
    counts = args.evaluated_counts() if args.player_counts else []
    say(evaluation_line(trainer.steps, args.eval_opponents, args.eval_games)
        + (f" at {', '.join(map(str, counts))} players" if counts else ""))
    tables = [(args.player_config(k), f"@{k}p") for k in counts] if counts else [(trainer.config, "")]
    for config, suffix in tables:
        results = evaluate_vs_baselines(config, spec, args.eval_opponents, args.eval_games,
                                        seed=args.seed + trainer.steps, episode=args.episode, progress=args.progress)
        row |= {f"{key}{suffix}": value for key, value in win_rate_columns(results, spec).items()}
    for baseline in args.eval_opponents if counts else []:  # a generalist's mean over its counts
        row[f"win_rate/{baseline}@mean"] = sum(row[f"win_rate/{baseline}@{k}p"] for k in counts) / len(counts)
    append_csv(files.eval, row, list(row))
    for key, value in row.items():
        if key != "timesteps":
            writer.add_scalar(f"eval/{key}", value, trainer.steps)
    return files.keep_best(model, row[f"win_rate/{best_column(args)}"], best)


def best_column(args: VectorArgs) -> str:
    """The ``eval.csv`` win rate (``win_rate/<this>``) that picks the best model: against the last evaluation
    opponent (a generalist's: its mean)."""
    return f"{args.eval_opponents[-1]}@mean" if args.player_counts else args.eval_opponents[-1]


def log_progress(path: Path, writer: Any, trainer: Any, stats: dict[str, float], fps: float) -> None:
    """One ``progress.csv`` row and the matching TensorBoard scalars per iteration."""
    row: dict[str, Any] = {"timesteps": trainer.steps, "episodes": trainer.episodes, "fps": round(fps),
                           "train_s": round(trainer.train_s, 2),
                           **{k: round(v, 6) for k, v in stats.items() if not math.isnan(v)},  # NaN: blank
                           "ep_len_mean": mean_or_blank(trainer.lengths[-1000:])}
    row |= {f"win_rate/{spec}": mean_or_blank(results[-1000:]) for spec, results in trainer.results.items()}
    append_csv(path, row, PROGRESS_COLUMNS + [f"win_rate/{s}" for s in trainer.results])
    for key, value in row.items():
        if key != "timesteps" and value != "":
            group = "losses" if key in LOSS_COLUMNS else "charts"
            writer.add_scalar(f"{group}/{key}", value, trainer.steps)
