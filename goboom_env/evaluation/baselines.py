"""One agent against each baseline: the evaluation every trainer and ``goboom demo`` report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from goboom_env.config import GameConfig
from goboom_env.evaluation.tournament import TournamentResult, run_tournament


def evaluate_vs_baselines(config: GameConfig, agent: str, baselines: Sequence[str], games: int, *, seed: int = 0,
                          episode: str = "hand", progress: bool = False) -> dict[str, TournamentResult]:
    """The 1-vs-(n-1) duplicate tournament of ``agent`` against each of ``baselines``, by name, all from ``seed``
    (every baseline meets the agent on the same cards)."""
    return {baseline: run_tournament(config, [agent, baseline], games, seed=seed,
                                     duplicate=True, episode=episode, progress=progress)
            for baseline in baselines}


def evaluation_line(steps: int, baselines: Sequence[str], games: int) -> str:
    """The status line of a trainer's evaluation: ``evaluating at 20,480 steps: 1,000 games against each of random,
    heuristic...``."""
    return f"evaluating at {steps:,} steps: {games:,} games against each of {', '.join(baselines)}..."


def agent_rows(results: dict[str, TournamentResult], agent: str) -> dict[str, dict[str, Any]]:
    """The agent's row of each tournament's table (games, wins, win rate, 95% CI...), by baseline."""
    return {baseline: next(r for r in result.table() if r["agent"] == agent) for baseline, result in results.items()}


def win_rate_columns(results: dict[str, TournamentResult], agent: str) -> dict[str, float]:
    """``win_rate/B``, ``ci_low/B``, ``ci_high/B`` of the agent for each baseline ``B`` (``eval.csv`` columns)."""
    return {f"{key}/{baseline}": float(mine[key]) for baseline, mine in agent_rows(results, agent).items()
            for key in ("win_rate", "ci_low", "ci_high")}
