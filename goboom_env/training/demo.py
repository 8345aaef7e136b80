"""``goboom demo`` (= ``make demo``): train a small agent on the default game and evaluate it.

The default configuration is classic Go Boom for 4 players (R1), one hand per episode. The demo
clones the heuristic (warm start, :mod:`goboom_env.training.imitation`), trains with the fast self-play trainer
on the batched engine (:mod:`goboom_env.training.vector_ppo`, ``goboom train-fast``) against the batched
heuristic and itself for a short budget (a few minutes on 2 CPU cores), then plays
1-vs-3 tournaments of the new agent against ``random`` and against the best heuristic, seat-rotated
with duplicate deals, and prints the win-rate table with 95% confidence intervals and the path of
the report (``report.md`` plus one JSON per tournament in the run folder).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from goboom_env.config import GameConfig
from goboom_env.training.vector_ppo import VectorArgs

DEMO_OPPONENTS = ["heuristic=3", "learner=1"]
"""Training games: three in four put the learner in one seat against three batched heuristics, the rest
are parameter-shared self-play (all four seats learn)."""
DEMO_TIMESTEPS = 1_500_000


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> argparse.ArgumentParser:
    """Register the ``demo`` sub-command."""
    parser = subparsers.add_parser(name, help=help_text, description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timesteps", type=int, default=DEMO_TIMESTEPS,
                        help=f"PPO training steps (learner decisions, default: {DEMO_TIMESTEPS})")
    parser.add_argument("--bc-games", type=int, default=3000,
                        help="warm start: hands of the heuristic to imitate before PPO, 0 = off (default: 3000)")
    parser.add_argument("--games", type=int, default=4000,
                        help="evaluation games per baseline, rounded up to whole duplicate deals (default: 4000)")
    parser.add_argument("--out", type=Path, default=None,
                        help="run folder (default: runs/demo-<date>-<time>, never an existing one)")
    parser.add_argument("--seed", type=int, default=0, help="seed of training and evaluation (default: 0)")
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="hide the progress bars")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Train, evaluate, print the table and the report path."""
    if args.timesteps < 1 or args.games < 1 or args.bc_games < 0:
        print("goboom demo: error: --timesteps and --games must be >= 1, --bc-games >= 0", file=sys.stderr)
        return 2
    out = args.out or Path("runs") / time.strftime("demo-%Y%m%d-%H%M%S")
    if out.exists():
        print(f"goboom demo: error: {out} already exists; choose another --out", file=sys.stderr)
        return 2
    from goboom_env.training.vector_ppo import train

    config = GameConfig()
    train_args = VectorArgs(timesteps=args.timesteps, bc_games=args.bc_games, seed=args.seed,
                            opponents=list(DEMO_OPPONENTS), checkpoint_every=250_000, eval_every=-1, out=str(out),
                            progress=args.progress)
    try:
        train_args.validate()
        print(f"Training PPO (fast self-play trainer) on classic Go Boom, 4 players, for {args.timesteps} steps "
              f"-> {out}")
        started = time.perf_counter()
        model = train(train_args)
    except ValueError as exc:
        print(f"goboom demo: error: {exc}", file=sys.stderr)
        return 2
    train_s = time.perf_counter() - started
    print(f"Trained in {train_s:.0f} s. Evaluating against the baselines ({args.games} games each)...")
    rows = evaluate(config, model, ["random", "heuristic"], args.games, args.seed + 1, out, args.progress)
    report = write_report(out, config, model, rows, args.timesteps, train_s)
    print(format_table(rows, config.num_players))
    print(f"report: {report}")
    return 0


def evaluate(config: GameConfig, model: Path, baselines: list[str], games: int, seed: int, out: Path,
             progress: bool) -> list[dict[str, Any]]:
    """One 1-vs-(n-1) duplicate tournament per baseline; the model's table row of each."""
    from goboom_env.evaluation.tournament import run_tournament

    spec = f"ppo:{model}"
    rows = []
    for baseline in baselines:
        result = run_tournament(config, [spec] + [baseline] * (config.num_players - 1), games, seed=seed,
                                duplicate=True, progress=progress)
        result.to_json(out / f"eval_vs_{baseline}.json")
        table = {r["agent"]: r for r in result.table()}
        rows.append({"opponent": baseline, **table[spec], "opponent_win_rate": table[baseline]["win_rate"],
                     "beats": table[spec]["ci_low"] > 1 / config.num_players})
    return rows


def format_table(rows: list[dict[str, Any]], num_players: int = 4) -> str:
    """The evaluation rows as a fixed-width text table."""
    lines = [f"{f'vs {num_players - 1} x':<12} {'games':>6} {'win rate':>9} {'95% CI':>17} {'parity':>7}  beats?"]
    for r in rows:
        lines.append(f"{r['opponent']:<12} {r['games']:>6} {r['win_rate']:>9.3f} "
                     f"{'[' + format(r['ci_low'], '.3f') + ', ' + format(r['ci_high'], '.3f') + ']':>17} "
                     f"{1 / num_players:>7.3f}  {'yes' if r['beats'] else 'no'}")
    return "\n".join(lines)


def write_report(out: Path, config: GameConfig, model: Path, rows: list[dict[str, Any]], timesteps: int,
                 train_s: float) -> Path:
    """``report.md`` (and ``report.json``) in the run folder."""
    data = {"config": config.to_dict(), "model": str(model), "timesteps": timesteps,
            "train_seconds": round(train_s, 1), "evaluation": rows}
    (out / "report.json").write_text(json.dumps(data, indent=1))
    records = ", ".join(f"eval_vs_{r['opponent']}.json" for r in rows)
    text = [
        "# goboom demo report", "",
        f"Model `{model}`: PPO (`goboom train-fast`), classic Go Boom, {config.num_players} players, "
        f"{timesteps} training steps in {train_s:.0f} s.", "",
        "Evaluation: the model in one seat against three copies of each baseline, seats rotated, duplicate deals;"
        " a win rate whose 95% CI lies above 1/4 beats the baseline.", "",
        "```", format_table(rows, config.num_players), "```", "",
        f"Tournament records: {records}; learning curve: learning_curve.png.", "",
    ]
    path = out / "report.md"
    path.write_text("\n".join(text))
    return path
