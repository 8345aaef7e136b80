"""Rating tables from tournament games with openskill's Plackett-Luce model (no hand-rolled Elo).

Every game is one free-for-all match ranked by an *outcome*: ``"win"`` (the winners first, every other seat second)
or ``"placing"`` (then the others by :attr:`GameOutcome.placing`); the Evaluation guide's "Ratings" describes both and
the table's columns. A spec in several seats is rated per copy (``random#k``: the spec's ``k``-th entry in the agent
list). Agents do not learn during a tournament, so ``tau = 0``; tournaments are interleaved game by game, so that
none of them comes "last".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import zip_longest
from typing import Any, Literal, get_args

from goboom_env.config import check_choice
from goboom_env.evaluation.stats import Z95
from goboom_env.evaluation.tournament import GameOutcome, TournamentResult
from goboom_env.hints import needs_extra

with needs_extra("the ratings of goboom_env.evaluation.ratings"):
    from openskill.models import PlackettLuce

Outcome = Literal["win", "placing"]
OUTCOMES: tuple[str, ...] = get_args(Outcome)
"""What a rating ranks the seats of a game by (see the module docstring)."""


def copy_names(agents: Sequence[str], seats: Sequence[str]) -> list[str]:
    """Rated identity of each seat: the spec, with ``#k`` when the spec has several copies."""
    totals = {s: agents.count(s) for s in agents}
    seen: dict[str, int] = {}
    out = []
    for spec in seats:
        seen[spec] = seen.get(spec, 0) + 1
        out.append(spec if totals.get(spec, 1) == 1 else f"{spec}#{seen[spec]}")
    return out


def ranks(game: GameOutcome, outcome: str = "win") -> list[int]:
    """The rank of each seat that ``outcome`` (one of :data:`OUTCOMES`) rates (1 = best; equal ranks are ties)."""
    check_choice("outcome", outcome, OUTCOMES)
    if outcome == "placing":
        return list(game.placing)
    return [1 if seat in game.winners else 2 for seat in range(len(game.seats))]


def rate_games(agents: Sequence[str], games: Iterable[GameOutcome], outcome: str = "win") -> list[dict[str, Any]]:
    """Plackett-Luce ratings per distinct spec, best first (``ordinal``), each game ranked by ``outcome``."""
    check_choice("outcome", outcome, OUTCOMES)
    model = PlackettLuce(tau=0.0)
    ratings: dict[str, Any] = {}
    for game in games:
        names = copy_names(agents, game.seats)
        teams = [[ratings.setdefault(name, model.rating(name=name))] for name in names]
        new = model.rate(teams, ranks=ranks(game, outcome))
        for name, (rating,) in zip(names, new):
            ratings[name] = rating
    rows = []
    for spec in dict.fromkeys(agents):
        copies = [r for name, r in ratings.items() if name == spec or name.startswith(f"{spec}#")]
        if not copies:
            continue
        mu = sum(r.mu for r in copies) / len(copies)
        sigma = sum(r.sigma for r in copies) / len(copies)
        rows.append({"agent": spec, "mu": mu, "sigma": sigma, "ordinal": mu - 3 * sigma,
                     "ci_low": mu - Z95 * sigma, "ci_high": mu + Z95 * sigma, "copies": len(copies)})
    return sorted(rows, key=lambda row: -row["ordinal"])


def rating_table(results: TournamentResult | Iterable[TournamentResult], outcome: str = "win") -> list[dict[str, Any]]:
    """Ratings over one tournament, or over several (interleaved game by game, agents pooled by spec)."""
    if isinstance(results, TournamentResult):
        return rate_games(results.agents, results.games, outcome)
    results = list(results)
    model_agents: list[str] = []
    games = [g for group in zip_longest(*(r.games for r in results)) for g in group if g is not None]
    for result in results:
        for spec in result.specs():
            # the largest number of copies any tournament uses decides the copy names
            need = result.agents.count(spec) - model_agents.count(spec)
            model_agents.extend([spec] * max(0, need))
    return rate_games(model_agents, games, outcome)
