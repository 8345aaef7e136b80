"""How many games luck-adjusted evaluation saves: the variance reduction of AIVAT (goboom_env.evaluation.luck).

For each configuration, one duplicate tournament of single hands (the second heuristic of the variant, evaluated,
against n-1 copies of the best one, the baselines), adjusted with ``--rollouts`` playouts a value. Per
configuration: the raw and adjusted win rates of the evaluated agent, the variance reduction factor (raw / adjusted
variance of its per-deal scores) with its 95% bootstrap interval over the deals, the games the adjusted estimate
needs for the interval width raw duplicate play reaches at 4,000 games (4000 / factor), and the estimator's cost in
seconds per game. ``setup_s`` is the time before the first game is adjusted (replaying the games).
Writes ``luck.md`` and ``luck.json`` into ``--out``.

``--agents ppo:MODEL BASELINE`` evaluates a network, whose policy the adjustment cannot know (its decisions are not
corrected; the playouts play it on its observations): the factor an agent of one's own can expect.

    .venv/bin/python benchmarks/luck_adjusted.py --games 160 --rollouts 8 --out results/luck
    .venv/bin/python benchmarks/luck_adjusted.py --games 160 --rollouts 8 --agents ppo:classic-2p classic-tricks \
        --configs "classic 2p" --out results/luck-network
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from goboom_env.config import GameConfig
from goboom_env.evaluation.luck import DEFAULT_ROLLOUTS, luck_adjust
from goboom_env.evaluation.report import markdown_table
from goboom_env.evaluation.tournament import run_tournament

CONFIGS: dict[str, tuple[GameConfig, str, str]] = {
    "classic 4p": (GameConfig(variant="classic", num_players=4), "classic-cover", "classic-tricks"),
    "classic 2p": (GameConfig(variant="classic", num_players=2), "classic-cover", "classic-tricks"),
    "jokers 4p": (GameConfig(variant="jokers", num_players=4), "jokers-shed", "jokers-boom"),
}
REFERENCE_GAMES = 4000
"""The raw duplicate tournament whose interval width the adjusted estimate must reach."""
RESAMPLES = 2000
"""Bootstrap resamples of the deals for the variance reduction's interval."""


def variance_ratio_interval(raw: np.ndarray, adjusted: np.ndarray, seed: int = 0) -> tuple[float, float]:
    """The 95% percentile bootstrap interval of raw variance / adjusted variance, resampling the deals (their raw and
    adjusted scores together): how far the measured factor could be from the true one at this many deals."""
    def ratio(r: np.ndarray, a: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.var(r, ddof=1, axis=axis) / np.var(a, ddof=1, axis=axis)

    ci = stats.bootstrap((raw, adjusted), ratio, paired=True, vectorized=True, n_resamples=RESAMPLES,
                         method="percentile", random_state=np.random.default_rng(seed)).confidence_interval
    return float(ci.low), float(ci.high)


def measure(name: str, games: int, rollouts: int, seed: int, agents: list[str] | None = None) -> dict[str, Any]:
    """One configuration's row; ``agents`` = (evaluated, baseline) instead of the configuration's pair."""
    config, evaluated, baseline = CONFIGS[name]
    evaluated, baseline = agents or (evaluated, baseline)
    n = config.num_players
    result = run_tournament(config, [evaluated] + [baseline] * (n - 1), games, seed=seed, duplicate=True,
                            episode="hand", progress=False)
    started = time.perf_counter()
    luck = luck_adjust(result, rollouts=rollouts, progress=False)
    setup = time.perf_counter() - started - sum(g.seconds for g in luck.games)
    row = luck.table()[0]
    factor = row["variance_reduction"]
    low, high = variance_ratio_interval(*luck.deal_scores(evaluated))
    return {"config": name, "seed": seed, "value": luck.label(), "agent": evaluated,
            "baseline": baseline, "games": len(result.games),
            "raw_win_rate": row["raw_win_rate"], "raw_ci": f"[{row['raw_ci_low']:.3f}, {row['raw_ci_high']:.3f}]",
            "adjusted_win_rate": row["adjusted_win_rate"],
            "adjusted_ci": f"[{row['adjusted_ci_low']:.3f}, {row['adjusted_ci_high']:.3f}]",
            "deals": row["deals"], "variance_reduction": factor, "reduction_ci": f"[{low:.2f}, {high:.2f}]",
            "games_for_4000_raw": round(REFERENCE_GAMES / factor) if factor else None,
            "seconds_per_game": luck.seconds_per_game(), "setup_s": round(setup, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=160, help="games per configuration (rounded to whole deals)")
    parser.add_argument("--rollouts", type=int, default=DEFAULT_ROLLOUTS, help="playouts per value")
    parser.add_argument("--agents", nargs=2, metavar=("EVALUATED", "BASELINE"), help="instead of each pair")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--out", type=Path, default=Path("results/luck"))
    args = parser.parse_args()
    if min(args.games, args.rollouts) < 1:
        parser.error("--games and --rollouts must be at least 1")
    rows = []
    for name in args.configs:
        rows.append(measure(name, args.games, args.rollouts, args.seed, args.agents))
        print(markdown_table(rows[-1:]), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "luck.json").write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                                    "rows": rows}, indent=1))
    (args.out / "luck.md").write_text(markdown_table(rows) + "\n")
    print(markdown_table(rows))


if __name__ == "__main__":
    main()
