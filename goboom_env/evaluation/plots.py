"""Matplotlib PNG plots of tournament results (Agg backend: no display needed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from goboom_env.hints import needs_extra

with needs_extra("the plots of goboom_env.evaluation.plots"):
    import matplotlib

    matplotlib.use("Agg")  # before pyplot: files only, no display
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm


def plot_win_rates(rows: Sequence[Mapping[str, Any]], path: str | Path, *, chance: float, title: str = "") -> Path:
    """Bar chart of win rates with their 95% CI as error bars and the 1/n chance line."""
    labels = [str(r["agent"]) for r in rows]
    rates, (low, high) = with_errors(rows, "win_rate")
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(rows) + 2), 3.6))
    ax.bar(range(len(rows)), rates, yerr=[low, high], capsize=6, color="#4C72B0")
    ax.axhline(chance, color="#C44E52", linestyle="--", label=f"chance 1/n = {chance:.3f}")
    ax.set_xticks(range(len(rows)), labels, rotation=20, ha="right")
    ax.set_ylabel("win rate (95% CI)")
    ax.set_ylim(0, min(1.0, max(float(rates.max() + high.max()) * 1.2, chance * 1.5)))
    ax.set_title(title)
    ax.legend(loc="upper right", fontsize=8)
    return save_figure(fig, path)


def plot_pairwise(matrix: Mapping[tuple[str, str], float], specs: Sequence[str], path: str | Path, *,
                  chance: float, title: str = "") -> Path:
    """Heat map: row X, column Y = win rate of X playing 1-vs-(n-1) against copies of Y."""
    k = len(specs)
    grid = np.array([[matrix.get((x, y), np.nan) for y in specs] for x in specs])
    fig, ax = plt.subplots(figsize=(1.3 * k + 2.5, 1.1 * k + 1.5))
    norm = TwoSlopeNorm(vcenter=chance, vmin=0.0, vmax=1.0)  # white = chance, blue = beats, red = loses
    image = ax.imshow(grid, cmap="RdBu", norm=norm)
    for (i, j), rate in np.ndenumerate(grid):
        ax.text(j, i, "-" if np.isnan(rate) else f"{rate:.3f}", ha="center", va="center", fontsize=9)
    ax.set_xticks(range(k), specs, rotation=20, ha="right")
    ax.set_yticks(range(k), specs)
    ax.set_xlabel("opponents (n-1 copies)")
    ax.set_ylabel("agent (one seat)")
    ax.set_title(title or f"win rate 1-vs-(n-1); chance = {chance:.3f}")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return save_figure(fig, path)


def plot_distributions(points: Mapping[str, Sequence[float]], hands: Sequence[int], decisions: Sequence[float],
                       path: str | Path, *, title: str = "") -> Path:
    """Box plots of each agent's points per game, and histograms of hands per game (when games last more than
    one hand) and of decisions per hand."""
    panels = 3 if max(hands, default=1) > 1 else 2
    fig, axes = plt.subplots(1, panels, figsize=(4.2 * panels, 3.6))
    labels = list(points)
    axes[0].boxplot([list(points[k]) for k in labels], showmeans=True)
    axes[0].set_xticks(range(1, len(labels) + 1), labels, rotation=20, ha="right")
    axes[0].set_ylabel("points per game")
    axes[0].set_title("points per game (triangle: mean)", fontsize=9)
    if panels == 3:
        low, high = min(hands), max(hands)
        axes[1].hist(hands, bins=np.arange(low - 0.5, high + 1.5), color="#4C72B0")
        axes[1].set_xlabel("hands per game")
        axes[1].set_ylabel("games")
    axes[-1].hist(decisions, bins=min(40, max(5, len(set(decisions)))), color="#55A868")
    axes[-1].set_xlabel("decisions per hand")
    axes[-1].set_ylabel("games")
    fig.suptitle(title, fontsize=10)
    return save_figure(fig, path)


def plot_task_scores(rows: Sequence[Mapping[str, Any]], path: str | Path, *, title: str = "") -> Path:
    """The benchmark's normalized score of each task (and agent) with its 95% interval; random = 0, heuristic = 1."""
    labels = [str(r["task"]) + (f" ({r['agent']})" if len({x["agent"] for x in rows}) > 1 else "") for r in rows]
    scores, (low, high) = with_errors(rows, "normalized")
    fig, ax = plt.subplots(figsize=(max(5.0, 0.7 * len(rows) + 2), 3.8))
    ax.bar(range(len(rows)), scores, yerr=[low, high], capsize=4, color="#4C72B0")
    ax.axhline(0.0, color="#7f7f7f", linewidth=1, label="random = 0")
    ax.axhline(1.0, color="#C44E52", linestyle="--", label="best heuristic = 1")
    ax.set_xticks(range(len(rows)), labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("normalized score (95% CI)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="best", fontsize=8)
    return save_figure(fig, path)


def plot_profile(aggregate: Any, path: str | Path, *, title: str = "") -> Path:
    """The performance profile of an :class:`~goboom_env.evaluation.stats.Aggregate`: the fraction of task scores
    above each threshold, with its 95% bootstrap band."""
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    ax.plot(aggregate.taus, aggregate.profile, color="#4C72B0")
    ax.fill_between(aggregate.taus, aggregate.profile_low, aggregate.profile_high, color="#4C72B0", alpha=0.25)
    ax.axvline(1.0, color="#C44E52", linestyle="--", label="best heuristic")
    ax.set_xlabel("normalized score threshold (random = 0, heuristic = 1)")
    ax.set_ylabel("fraction of task scores above")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    return save_figure(fig, path)


def with_errors(rows: Sequence[Mapping[str, Any]], key: str) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The ``key`` column of ``rows`` and its distances down to ``ci_low`` and up to ``ci_high`` (error bars)."""
    values = np.array([r[key] for r in rows])
    return values, (values - np.array([r["ci_low"] for r in rows]), np.array([r["ci_high"] for r in rows]) - values)


def save_figure(fig: Any, path: str | Path, dpi: int = 110) -> Path:
    """Lay out ``fig``, write it to ``path`` (its folder created) and close it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
