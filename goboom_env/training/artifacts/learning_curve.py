"""The learning curve of a PPO run folder as ``learning_curve.png``: win rate against training steps (and seconds)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from goboom_env.training.artifacts.run_folder import RunFiles, log_number, read_log
from goboom_env.untrusted import read_json

AXES = {"timesteps": "training steps (learner decisions)", "train_s": "training wall-clock seconds"}


def curve_axes(files: RunFiles) -> list[str]:
    """The x columns to plot: steps always, seconds when both logs of the run have them."""
    logs = [files.progress] + ([files.eval] if files.eval.exists() else [])
    headers = [read_log(path).columns for path in logs]
    return ["timesteps"] + (["train_s"] if all("train_s" in header for header in headers) else [])


def _draw(ax: Any, x: str, files: RunFiles, rows: list[dict[str, str]], evals: list[dict[str, str]]) -> None:
    """One panel: training win rates (lines) and evaluations with their 95% CI (error bars) against ``x``."""

    def column(path: Path, table: list[dict[str, str]], key: str) -> np.ndarray:
        values = [log_number(path, r, key) for r in table]  # ValueError naming the log and the column
        return np.array([np.nan if v is None else v for v in values], float)

    xs = column(files.progress, rows, x)
    for key in [k for k in (rows[0] if rows else {}) if k and k.startswith("win_rate/")]:
        ax.plot(xs, column(files.progress, rows, key), lw=1, alpha=0.7,
                label=f"training vs {key.split('/', 1)[1]} (last 1000 episodes)")
    eval_xs = column(files.eval, evals, x)
    for key in [k for k in (evals[0] if evals else {}) if k and k.startswith("win_rate/")]:
        name = key.split("/", 1)[1]
        ys = column(files.eval, evals, key)
        if f"ci_low/{name}" not in evals[0]:  # a mean over player counts (a generalist's) has no interval
            ax.plot(eval_xs, ys, marker="s", label=f"evaluation vs {name}")
            continue
        lo = ys - column(files.eval, evals, f"ci_low/{name}")
        hi = column(files.eval, evals, f"ci_high/{name}") - ys
        ax.errorbar(eval_xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=f"evaluation vs {name} (95% CI)")
    ax.set_xlabel(AXES[x])
    ax.set_ylabel("win rate")
    ax.grid(alpha=0.3)


def plot_learning_curve(files: RunFiles) -> Path | None:
    """Win rate vs training steps (and vs training seconds when logged) as a PNG; None without a progress log."""
    if not files.progress.exists():
        return None
    from goboom_env.evaluation.plots import plt, save_figure

    rows, evals = read_log(files.progress).rows, read_log(files.eval).rows
    axes_x = curve_axes(files)
    fig, axes = plt.subplots(1, len(axes_x), figsize=(7 * len(axes_x), 4), squeeze=False)
    run = read_json(files.args) if files.args.exists() else {}
    run = run if isinstance(run, dict) else {}
    n = run.get("num_players") if type(run.get("num_players")) is int and run["num_players"] > 1 else 4
    for ax, x in zip(axes[0], axes_x):
        _draw(ax, x, files, rows, evals)
        if rows and not run.get("player_counts"):  # a generalist's tables have no one parity
            ax.axhline(1 / n, color="grey", ls="--", lw=1, label=f"parity 1/{n}")
    if axes[0][0].get_legend_handles_labels()[0]:  # a run without evaluations nor parity line has no labels
        axes[0][0].legend(fontsize=7)
    return save_figure(fig, files.curve, dpi=100)
