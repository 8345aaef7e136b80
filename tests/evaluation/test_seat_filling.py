"""Seat filling: with fewer agent specs than seats, the last spec fills the remaining seats, the same way in the
Python API (run_tournament) as on the command line (goboom evaluate --agents): one function, seat_agents."""

from __future__ import annotations

import pytest

from goboom_env import GameConfig
from goboom_env.evaluation import tournament
from goboom_env.evaluation.tournament import run_tournament

CLASSIC4 = GameConfig(variant="classic", num_players=4)


def test_two_specs_fill_a_four_player_tournament_like_the_cli() -> None:
    short = run_tournament(CLASSIC4, ["heuristic", "random"], 8, seed=2, progress=False)
    full = run_tournament(CLASSIC4, ["heuristic", "random", "random", "random"], 8, seed=2, progress=False)
    assert short.agents == ["heuristic", "random", "random", "random"]
    assert short.games == full.games and short.table() == full.table()
    assert [row["games"] for row in short.table()] == [8, 24]


def test_seat_agents_is_the_one_filling_function() -> None:
    seat_agents = tournament.seat_agents
    assert seat_agents(["heuristic", "random"], 4) == ["heuristic", "random", "random", "random"]
    assert seat_agents(["a", "b", "c"], 3) == ["a", "b", "c"]
    assert seat_agents(["heuristic"], 2) == ["heuristic", "heuristic"]


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        (["random"] * 5, "5 agents given for 4 seats: give at most one spec per seat"),
        ([], "at least one spec"),
        ("random", "must be a list of specs"),
    ],
)
def test_bad_seat_lists_are_refused(agents: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_tournament(CLASSIC4, agents, 2, progress=False)  # type: ignore[arg-type]


def test_the_cli_fills_through_the_evaluation_layer() -> None:
    """goboom evaluate and goboom play reach the evaluation layer's seat_agents; the CLI has no copy of its own."""
    import goboom_env.cli.options as options
    import goboom_env.cli.play as play

    assert not hasattr(options, "seat_agents")
    assert play.seat_agents is tournament.seat_agents
