"""Learning curves of several seeds of one recipe, as a band: win rate against the heuristic vs training steps
and vs training wall-clock seconds.

Each RUN is a ``goboom train-fast`` run folder of the same game and recipe that differ in ``--seed``. For every
multiple of ``--every`` steps, the first checkpoint model at or after it (``checkpoints/model_<steps>.zip``)
plays 1 vs (n-1) copies of ``--opponent`` on ``--games`` duplicate games of the run's own game and episode unit
(fresh ``--seed``, the same for every checkpoint); its training seconds are read from the run's
``progress.csv`` (warm start included). The plot draws each seed thin, their mean thick and the band from the
lowest to the highest seed. Writes ``band.csv``, ``band.png`` and ``band.md`` into ``--out``.

    .venv/bin/python benchmarks/seed_band.py runs/classic-4p-s11 runs/classic-4p-s12 runs/classic-4p-s13 \\
        --every 1000000 --games 400 --seed 6161 --out results/band
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path
from typing import Any

import numpy as np


def checkpoints_on_grid(run: Path, every: int) -> list[tuple[int, Path]]:
    """``(grid step, model)`` for each multiple of ``every``: the first checkpoint model at or after it."""
    models = sorted((run / "checkpoints").glob("model_*.zip"), key=lambda p: int(p.stem.split("_")[1]))
    if not models:
        raise SystemExit(f"seed_band: {run} has no checkpoints/model_*.zip (not a train-fast run folder?)")
    steps = [int(p.stem.split("_")[1]) for p in models]
    out = []
    for grid in range(every, steps[-1] + 1, every):
        first = next(i for i, s in enumerate(steps) if s >= grid)
        out.append((grid, models[first]))
    return out


def train_seconds(run: Path, steps: int) -> float:
    """Training wall-clock seconds of the run when it reached ``steps`` (the first progress row at or after it)."""
    with (run / "progress.csv").open() as f:
        for row in csv.DictReader(f):
            if int(row["timesteps"]) >= steps:
                return float(row["train_s"])
    raise SystemExit(f"seed_band: {run}/progress.csv never reaches step {steps}")


def run_args(run: Path) -> Any:
    """The run's settings (``args.json`` as a :class:`~goboom_env.training.settings.VectorArgs`)."""
    from goboom_env.training.settings import VectorArgs

    saved = json.loads((run / "args.json").read_text())
    return VectorArgs(**{k: v for k, v in saved.items() if k in VectorArgs.__dataclass_fields__})


def evaluate(args: Any, model: Path, opponent: str, games: int, seed: int) -> tuple[float, float, float]:
    """Win rate and 95% CI of the model against ``opponent`` in the run's game (a generalist's default table)
    and episode unit."""
    from goboom_env.evaluation.baselines import evaluate_vs_baselines, win_rate_columns

    spec = f"ppo:{model}"
    results = evaluate_vs_baselines(args.run_config(), spec, [opponent], games, seed=seed, episode=args.episode)
    row = win_rate_columns(results, spec)
    return row[f"win_rate/{opponent}"], row[f"ci_low/{opponent}"], row[f"ci_high/{opponent}"]


def measure(runs: list[Path], every: int, opponent: str, games: int, seed: int) -> list[dict[str, object]]:
    rows = []
    for run in runs:
        args = run_args(run)
        run_seed = args.seed
        for grid, model in checkpoints_on_grid(run, every):
            rate, low, high = evaluate(args, model, opponent, games, seed)
            steps = int(model.stem.split("_")[1])
            rows.append({"run": run.name, "seed": run_seed, "grid": grid, "steps": steps,
                         "train_s": train_seconds(run, steps), "win_rate": rate, "ci_low": low, "ci_high": high})
            print(f"{run.name} seed {run_seed}: {steps:>9,} steps  {rows[-1]['train_s']:7.0f} s  "
                  f"{rate:.3f} [{low:.3f}, {high:.3f}]", flush=True)
    return rows


def summary(rows: list[dict[str, object]]) -> list[dict[str, float]]:
    """Per grid step over the seeds that reached it: mean steps, mean seconds, mean / min / max win rate."""
    out = []
    for grid in sorted({r["grid"] for r in rows}):
        at = [r for r in rows if r["grid"] == grid]
        rates = np.array([r["win_rate"] for r in at], float)
        out.append({"grid": grid, "seeds": len(at), "train_s": float(np.mean([r["train_s"] for r in at])),
                    "mean": float(rates.mean()), "low": float(rates.min()), "high": float(rates.max())})
    return out


def plot(rows: list[dict[str, object]], table: list[dict[str, float]], parity: float, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 4))
    full = [t for t in table if t["seeds"] == max(u["seeds"] for u in table)]
    for ax, key, label in ((axes[0], "grid", "training steps (learner decisions)"),
                           (axes[1], "train_s", "training wall-clock seconds")):
        for run in sorted({r["run"] for r in rows}):
            mine = [r for r in rows if r["run"] == run]
            ax.plot([r[key] for r in mine], [r["win_rate"] for r in mine], lw=0.8, alpha=0.6,
                    label=f"seed {mine[0]['seed']}")
        xs = [t[key] for t in full]
        ax.fill_between(xs, [t["low"] for t in full], [t["high"] for t in full], alpha=0.2, label="lowest-highest seed")
        ax.plot(xs, [t["mean"] for t in full], lw=2.2, color="black", label="mean over seeds")
        ax.axhline(parity, color="grey", ls="--", lw=1, label="parity")
        ax.set_xlabel(label + (" (mean over seeds)" if key == "train_s" else ""))
        ax.set_ylabel("win rate")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="train-fast run folders of one recipe, different seeds")
    parser.add_argument("--every", type=int, default=1_000_000, help="grid of training steps")
    parser.add_argument("--opponent", default="heuristic", help="agent spec in the other seats")
    parser.add_argument("--games", type=int, default=400, help="duplicate games per checkpoint")
    parser.add_argument("--seed", type=int, default=6161, help="seed of the evaluation deals")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.every < 1 or args.games < 1:
        parser.error("--every and --games must be >= 1")
    for run in args.runs:
        if not (run / "args.json").is_file():
            parser.error(f"{run} is not a run folder (no args.json)")
    players = {run_args(run).run_config().num_players for run in args.runs}
    if len(players) != 1:
        parser.error(f"the runs play different player counts: {sorted(players)}")
    rows = measure(args.runs, args.every, args.opponent, args.games, args.seed)
    if not rows:
        parser.error(f"no run has a checkpoint at or after --every {args.every:,} steps")
    table = summary(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    from goboom_env.evaluation.report import write_result_files

    plot(rows, table, 1 / players.pop(), args.out / "band.png")
    heading = f"1 vs {args.opponent}, {args.games} duplicate games per checkpoint, evaluation seed {args.seed}"
    print(write_result_files(args.out, "band", rows, [
        {"steps": f"{t['grid']:,}", "seeds": t["seeds"], "mean training s": f"{t['train_s']:.0f}",
         "mean win rate": f"{t['mean']:.3f}", "lowest": f"{t['low']:.3f}", "highest": f"{t['high']:.3f}"}
        for t in table], heading))


if __name__ == "__main__":
    main()
