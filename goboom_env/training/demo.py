"""The demo behind ``goboom demo`` (= ``make demo``): train a small agent on the default game with the fast trainer,
then evaluate it in duplicate tournaments against ``random`` and the best heuristic (docs/training.md, "make demo").
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from goboom_env.config import GameConfig
from goboom_env.training.settings import DemoArgs, GameArgs, VectorArgs, shared_fields

DEMO_OPPONENTS = ["heuristic=3", "learner=1"]
"""Training games: three in four against three batched heuristics, the rest parameter-shared self-play."""


def run_demo(args: DemoArgs) -> Path:
    """Train, evaluate, print the table; returns the path of ``report.md``. ValueError on bad settings or a run
    folder the output rule refuses (a non-empty one: the demo never replaces one), checked before any work."""
    args.validate()
    config = args.game_config()
    out = Path(args.out) if args.out else Path("runs") / time.strftime("demo-%Y%m%d-%H%M%S")
    opponents = DEMO_OPPONENTS if config.variant == "classic" else ["learner=1"]
    train_args = VectorArgs(**shared_fields(args, GameArgs), timesteps=args.timesteps,
                            bc_games=args.bc_games, seed=args.seed, opponents=list(opponents),
                            checkpoint_every=250_000, eval_every=-1, out=str(out), progress=args.progress)
    train_args.validate()
    from goboom_env.training.fast.ppo import train

    print(f"Training PPO (fast self-play trainer) on {config.variant} Go Boom, {config.num_players} players, "
          f"for {args.timesteps} steps -> {out}")
    started = time.perf_counter()
    model = train(train_args)
    train_s = time.perf_counter() - started
    print(f"Trained in {train_s:.0f} s. Evaluating against the baselines ({args.games} games each, one "
          f"{args.episode} a game: the unit it trained on)...")
    rows = evaluate(config, model, ["random", "heuristic"], args.games, args.seed + 1, out, args.progress,
                    args.episode)
    report = write_report(out, config, model, rows, args.timesteps, train_s, args.episode)
    print(format_table(rows, config.num_players))
    return report


def evaluate(config: GameConfig, model: Path, baselines: list[str], games: int, seed: int, out: Path,
             progress: bool, episode: str = "hand") -> list[dict[str, Any]]:
    """One 1-vs-(n-1) duplicate tournament per baseline (``eval_vs_BASELINE.json``); the model's table row of each."""
    from goboom_env.evaluation.baselines import evaluate_vs_baselines

    spec = f"ppo:{model}"
    rows = []
    results = evaluate_vs_baselines(config, spec, baselines, games, seed=seed, episode=episode, progress=progress)
    for baseline, result in results.items():
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
                 train_s: float, episode: str = "hand") -> Path:
    """``report.md`` (and ``report.json``) in the run folder."""
    data = {"config": config.to_dict(), "model": str(model), "timesteps": timesteps,
            "train_seconds": round(train_s, 1), "evaluation": rows}
    (out / "report.json").write_text(json.dumps(data, indent=1))
    records = ", ".join(f"eval_vs_{r['opponent']}.json" for r in rows)
    text = [
        "# goboom demo report", "",
        f"Model `{model}`: PPO (`goboom train-fast`), {config.variant} Go Boom, {config.num_players} players, "
        f"{timesteps} training steps in {train_s:.0f} s.", "",
        f"Evaluation: the model in one seat against {config.num_players - 1} copies of each baseline, seats "
        f"rotated, duplicate deals, one {episode} a game; a win rate whose 95% CI lies above 1/{config.num_players} "
        "beats the baseline.",
        "",
        "```", format_table(rows, config.num_players), "```", "",
        f"Tournament records: {records}; learning curve: learning_curve.png.", "",
    ]
    path = out / "report.md"
    path.write_text("\n".join(text))
    return path
