"""The learning curve of a PPO run folder as ``learning_curve.png``: win rate against training steps and,
when the run logs its training seconds (``train_s``, as ``goboom train-fast`` does), against them too."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np

from goboom_env.hints import needs_extra
from goboom_env.training.artifacts.run_folder import RunFiles

AXES = {"timesteps": "training steps (learner decisions)", "train_s": "training wall-clock seconds"}
"""The x axes a curve may use: the column of ``progress.csv`` / ``eval.csv`` and its label."""


def curve_axes(files: RunFiles) -> list[str]:
    """The x columns to plot: steps always, seconds when both logs of the run have them."""
    logs = [files.progress] + ([files.eval] if files.eval.exists() else [])
    headers = [next(csv.reader(path.open()), []) for path in logs]
    return ["timesteps"] + (["train_s"] if all("train_s" in header for header in headers) else [])


def _draw(ax: Any, x: str, rows: list[dict[str, str]], evals: list[dict[str, str]]) -> None:
    """One panel: training win rates (lines) and evaluations with their 95% CI (error bars) against ``x``."""
    xs = [float(r[x]) for r in rows]
    for key in [k for k in (rows[0] if rows else {}) if k.startswith("win_rate/")]:
        ys = [float(r[key]) if r[key] not in ("", "nan") else np.nan for r in rows]
        ax.plot(xs, ys, lw=1, alpha=0.7, label=f"training vs {key.split('/', 1)[1]} (last 1000 episodes)")
    for key in [k for k in (evals[0] if evals else {}) if k.startswith("win_rate/")]:
        name = key.split("/", 1)[1]
        ys = np.array([float(r[key]) for r in evals])
        if f"ci_low/{name}" not in evals[0]:  # a mean over player counts (a generalist's) has no interval
            ax.plot([float(r[x]) for r in evals], ys, marker="s", label=f"evaluation vs {name}")
            continue
        lo = ys - np.array([float(r[f"ci_low/{name}"]) for r in evals])
        hi = np.array([float(r[f"ci_high/{name}"]) for r in evals]) - ys
        ax.errorbar([float(r[x]) for r in evals], ys, yerr=[lo, hi], marker="o", capsize=3,
                    label=f"evaluation vs {name} (95% CI)")
    ax.set_xlabel(AXES[x])
    ax.set_ylabel("win rate")
    ax.grid(alpha=0.3)


def plot_learning_curve(files: RunFiles) -> Path | None:
    """Win rate vs training steps (and vs training seconds when logged) as a PNG; None without a progress log."""
    if not files.progress.exists():
        return None
    with needs_extra("the learning curve plot"):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

    rows = list(csv.DictReader(files.progress.open()))
    evals = list(csv.DictReader(files.eval.open())) if files.eval.exists() else []
    axes_x = curve_axes(files)
    fig, axes = plt.subplots(1, len(axes_x), figsize=(7 * len(axes_x), 4), squeeze=False)
    run = json.loads(files.args.read_text()) if files.args.exists() else {}
    n = run.get("num_players", 4)
    for ax, x in zip(axes[0], axes_x):
        _draw(ax, x, rows, evals)
        if rows and not run.get("player_counts"):  # a generalist's tables have no one parity
            ax.axhline(1 / n, color="grey", ls="--", lw=1, label=f"parity 1/{n}")
    if axes[0][0].get_legend_handles_labels()[0]:  # a run without evaluations nor parity line has no labels
        axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(files.curve, dpi=100)
    plt.close(fig)
    return files.curve
