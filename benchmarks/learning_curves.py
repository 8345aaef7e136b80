"""Win rate against the heuristic vs training wall-clock seconds: `goboom train` (SB3) and `goboom train-fast`.

Each trainer runs once for ``--seconds`` of wall time (its own defaults, one torch thread, checkpoints
every ``--checkpoint-every`` steps, no periodic evaluation so that evaluation time is never charged to
training). Afterwards every saved checkpoint plays 1 vs 3 ``heuristic`` on ``--games`` duplicate games
(fresh ``--eval-seed``); its x value is the wall-clock time from the run's start (``args.json`` is
written first) to the checkpoint file, warm start included. Writes ``curves.csv``, ``curves.png`` and
``curves.md`` into ``--out``. Run it on a quiet machine: the x axis is wall-clock time.

    .venv/bin/python benchmarks/learning_curves.py --seconds 300 --out results/curves
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
from pathlib import Path

TRAINERS = {
    # name: the goboom sub-command and its options beyond the shared ones (the fast one: the demo's recipe)
    "sb3": ["train"],
    "fast": ["train-fast", "--bc-games", "3000", "--opponents", "heuristic=3", "learner=1"],
}


def run_trainer(name: str, out: Path, seconds: float, every: int, seed: int) -> None:
    """One training run of ``name`` into ``out``, stopped after ``seconds`` (SB3 has no time limit: it is
    given a step budget it cannot reach and stopped by the timeout, its checkpoints kept)."""
    command = [sys.executable, "-m", "goboom_env.cli", *TRAINERS[name], "--seed", str(seed), "--out", str(out),
               "--force", "--eval-every", "-1", "--checkpoint-every", str(every), "--threads", "1", "--no-progress"]
    if name == "fast":
        subprocess.run([*command, "--timesteps", "100000000", "--time-limit", str(seconds)], check=True)
    else:
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run([*command, "--timesteps", "100000000"], timeout=seconds, check=True)


def evaluate(model: Path, games: int, seed: int) -> tuple[float, float, float]:
    """Win rate and 95% CI of ``ppo:model`` 1 vs 3 heuristic on duplicate deals."""
    from goboom_env.config import GameConfig
    from goboom_env.evaluation.baselines import evaluate_vs_baselines, win_rate_columns

    spec = f"ppo:{model}"
    row = win_rate_columns(evaluate_vs_baselines(GameConfig(), spec, ["heuristic"], games, seed=seed), spec)
    return row["win_rate/heuristic"], row["ci_low/heuristic"], row["ci_high/heuristic"]


def curve(name: str, run: Path, games: int, seed: int) -> list[dict[str, object]]:
    """One row per checkpoint of the run: steps, wall seconds since the start, win rate and CI."""
    start = (run / "args.json").stat().st_mtime
    models = sorted((run / "checkpoints").glob("model_*.zip"), key=lambda p: int(p.stem.split("_")[1]))
    rows = []
    for model in models:
        rate, low, high = evaluate(model, games, seed)
        rows.append({"trainer": name, "steps": int(model.stem.split("_")[1]),
                     "seconds": round(model.stat().st_mtime - start, 1), "win_rate": rate, "ci_low": low,
                     "ci_high": high})
        print(rows[-1], flush=True)
    return rows


def plot(rows: list[dict[str, object]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name in TRAINERS:
        mine = [r for r in rows if r["trainer"] == name]
        x = [r["seconds"] for r in mine]
        ax.plot(x, [r["win_rate"] for r in mine], marker="o", label=name)
        ax.fill_between(x, [r["ci_low"] for r in mine], [r["ci_high"] for r in mine], alpha=0.2)
    ax.axhline(0.25, color="grey", linestyle="--", label="parity (1/4)")
    ax.set_xlabel("training wall-clock seconds (warm start included)")
    ax.set_ylabel("win rate vs 3 x heuristic")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=300.0, help="training wall time per trainer")
    parser.add_argument("--checkpoint-every", type=int, nargs=2, default=[100_000, 250_000],
                        metavar=("SB3", "FAST"), help="steps between checkpoints of each trainer")
    parser.add_argument("--games", type=int, default=1000, help="duplicate games per checkpoint")
    parser.add_argument("--seed", type=int, default=4040, help="training seed of both runs")
    parser.add_argument("--eval-seed", type=int, default=6060, help="seed of the evaluation deals")
    parser.add_argument("--out", type=Path, default=Path("results/curves"))
    args = parser.parse_args()
    if args.seconds <= 0 or args.games < 1 or min(args.checkpoint_every) < 1:
        parser.error("--seconds, --games and --checkpoint-every must be positive")
    args.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, object]] = []
    for name, every in zip(TRAINERS, args.checkpoint_every, strict=True):
        run_trainer(name, args.out / name, args.seconds, every, args.seed)
        rows += curve(name, args.out / name, args.games, args.eval_seed)
    if not rows:
        parser.exit(2, f"learning_curves: no trainer saved a checkpoint within {args.seconds:g} s; give more "
                       "--seconds or a smaller --checkpoint-every\n")
    from goboom_env.evaluation.report import write_result_files

    plot(rows, args.out / "curves.png")
    print(write_result_files(args.out, "curves", rows, [
        {"trainer": r["trainer"], "steps": f"{r['steps']:,}", "wall s": r["seconds"],
         "win rate vs heuristic": f"{r['win_rate']:.3f}", "95% CI": f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"}
        for r in rows]))


if __name__ == "__main__":
    main()
