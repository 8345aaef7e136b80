"""The learning curve of a PPO run folder: win rate against training steps, as ``learning_curve.png``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from goboom_env.training.run_folder import RunFiles


def plot_learning_curve(files: RunFiles) -> Path | None:
    """Win rate vs training steps (training episodes per opponent, evaluations with 95% CI) as a PNG."""
    if not files.progress.exists():
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(files.progress.open()))
    fig, ax = plt.subplots(figsize=(7, 4))
    steps = [int(r["timesteps"]) for r in rows]
    for key in [k for k in (rows[0] if rows else {}) if k.startswith("win_rate/")]:
        ys = [float(r[key]) if r[key] not in ("", "nan") else np.nan for r in rows]
        ax.plot(steps, ys, lw=1, alpha=0.7, label=f"training vs {key.split('/', 1)[1]} (last 1000 episodes)")
    if files.eval.exists():
        evals = list(csv.DictReader(files.eval.open()))
        for key in [k for k in (evals[0] if evals else {}) if k.startswith("win_rate/")]:
            name = key.split("/", 1)[1]
            xs = [int(r["timesteps"]) for r in evals]
            ys = np.array([float(r[key]) for r in evals])
            lo = ys - np.array([float(r[f"ci_low/{name}"]) for r in evals])
            hi = np.array([float(r[f"ci_high/{name}"]) for r in evals]) - ys
            ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=f"evaluation vs {name} (95% CI)")
    if rows:
        n = json.loads(files.args.read_text())["num_players"] if files.args.exists() else 4
        ax.axhline(1 / n, color="grey", ls="--", lw=1, label=f"parity 1/{n}")
    ax.set_xlabel("training steps (learner decisions)")
    ax.set_ylabel("win rate")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(files.curve, dpi=100)
    plt.close(fig)
    return files.curve
