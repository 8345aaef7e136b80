"""Where and how the games of a tournament were won: win rates by seat and by place after the first dealer, points
per game, hands per game and decisions per hand, every figure from the
:class:`~goboom_env.evaluation.tournament.GameOutcome` fields in ``results.json``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from goboom_env.evaluation.stats import wilson_interval
from goboom_env.evaluation.tournament import GameOutcome, TournamentResult


def seat_rows(result: TournamentResult) -> list[dict[str, Any]]:
    """Per agent and seat: ``agent, seat, games, wins, win_rate, ci_low, ci_high``."""
    return _win_rows(result, "seat", lambda game, seat: seat)


def dealer_rows(result: TournamentResult) -> list[dict[str, Any]]:
    """Per agent and place after the first dealer (``after_dealer = (seat - dealer) % n``; 1 plays first, R1.4,
    R2.4): the columns of :func:`seat_rows`."""
    n = result.config.num_players
    return _win_rows(result, "after_dealer", lambda game, seat: (seat - game.dealer) % n)


def points_per_game(result: TournamentResult) -> dict[str, list[int]]:
    """Per agent: what the scoring added to its total in each of its seat-games, in game order."""
    return {spec: [g.points[s] for g in result.games for s, x in enumerate(g.seats) if x == spec]
            for spec in result.specs()}


def point_rows(result: TournamentResult) -> list[dict[str, Any]]:
    """Per agent: the :func:`summarize` of its points per game (:func:`points_per_game`)."""
    return [{"agent": spec, **summarize(points)} for spec, points in points_per_game(result).items() if points]


def length_rows(result: TournamentResult) -> list[dict[str, Any]]:
    """The summaries of ``hands per game`` and ``decisions per hand`` (forced moves included)."""
    return [{"measure": "hands per game", **summarize(hands_per_game(result.games))},
            {"measure": "decisions per hand", **summarize(decisions_per_hand(result.games))}]


def hands_per_game(games: Sequence[GameOutcome]) -> list[int]:
    return [game.hands for game in games]


def decisions_per_hand(games: Sequence[GameOutcome]) -> list[float]:
    """Each game's mean number of decisions per hand."""
    return [game.decisions / game.hands for game in games]


def summarize(values: Sequence[float]) -> dict[str, float]:
    """``count, mean, sd, min, p25, median, p75, max`` of ``values`` (``sd`` with ``ddof=1``, 0 for one value)."""
    if not len(values):
        raise ValueError("summarize needs at least one value")
    x = np.asarray(values, np.float64)
    p25, median, p75 = np.percentile(x, [25, 50, 75])
    return {"count": len(x), "mean": float(x.mean()), "sd": float(x.std(ddof=1)) if len(x) > 1 else 0.0,
            "min": float(x.min()), "p25": float(p25), "median": float(median), "p75": float(p75),
            "max": float(x.max())}


def _win_rows(result: TournamentResult, key: str, place: Callable[[GameOutcome, int], int]) -> list[dict[str, Any]]:
    """Win counts per agent and per ``place(game, seat)``, with 95% Wilson intervals."""
    games: dict[tuple[str, int], int] = defaultdict(int)
    wins: dict[tuple[str, int], float] = defaultdict(float)
    for game in result.games:
        for seat, (spec, share) in enumerate(zip(game.seats, game.win_shares())):
            games[spec, place(game, seat)] += 1
            wins[spec, place(game, seat)] += share
    rows = []
    for spec in result.specs():
        for where in range(result.config.num_players):
            count = games.get((spec, where), 0)
            if not count:
                continue
            low, high = wilson_interval(wins[spec, where], count)
            rows.append({"agent": spec, key: where, "games": count, "wins": wins[spec, where],
                         "win_rate": wins[spec, where] / count, "ci_low": low, "ci_high": high})
    return rows
