"""The sections of an evaluation report, each recomputed here from the game records saved in results.json:
win rates by seat and by place after the dealer, point and game-length distributions, both ratings,
provenance, and the side-by-side report of hand and match runs."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import ROOT, goboom
from openskill.models import PlackettLuce

import goboom_env
from goboom_env.config import GameConfig
from goboom_env.evaluation.provenance import git_commit, model_files
from goboom_env.evaluation.report import write_report
from goboom_env.evaluation.stats import wilson_interval
from goboom_env.evaluation.tournament import GameOutcome, TournamentResult, run_tournament

PNG = b"\x89PNG\r\n\x1a\n"
AGENTS = ["heuristic", "random", "random", "random"]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, Path]:
    """A classic 4p match tournament's results.json, report.md and folder."""
    out = tmp_path_factory.mktemp("report")
    result = run_tournament(GameConfig(), AGENTS, 24, seed=5, duplicate=True, episode="match", progress=False)
    write_report(out, result, command="test")
    return json.loads((out / "results.json").read_text()), (out / "report.md").read_text(), out


def section_table(markdown: str, heading: str) -> list[dict[str, str]]:
    """The first Markdown table after ``heading`` (a whole line), as rows of cell text."""
    lines = markdown.splitlines()
    start = lines.index(heading)
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
        elif rows:
            break
    assert rows, f"no table under {heading!r}"
    head, body = rows[0], rows[2:]
    return [dict(zip(head, row)) for row in body]


def shares(game: dict[str, Any]) -> list[float]:
    return [1 / len(game["winners"]) if s in game["winners"] else 0.0 for s in range(len(game["seats"]))]


def win_counts(games: list[dict[str, Any]], place: Any) -> dict[tuple[str, int], tuple[int, float]]:
    """(agent, place) -> (seat-games, win shares), straight from the records."""
    count: dict[tuple[str, int], int] = defaultdict(int)
    wins: dict[tuple[str, int], float] = defaultdict(float)
    for game in games:
        for seat, (spec, share) in enumerate(zip(game["seats"], shares(game))):
            count[spec, place(game, seat)] += 1
            wins[spec, place(game, seat)] += share
    return {k: (count[k], wins[k]) for k in count}


@pytest.mark.parametrize(
    ("key", "heading", "place"),
    [("seat", "### Win rates by seat", lambda game, seat: seat),
     ("after_dealer", "### Win rates by place after the dealer", lambda game, seat: (seat - game["dealer"]) % 4)],
)
def test_win_rates_by_seat_and_by_dealer_match_the_records(report: tuple, key: str, heading: str, place: Any) -> None:
    data, markdown, _ = report
    expected = win_counts(data["games"], place)
    rows = data["seats" if key == "seat" else "dealer"]
    assert {(r["agent"], r[key]) for r in rows} == set(expected)
    for row in rows:
        games, wins = expected[row["agent"], row[key]]
        low, high = wilson_interval(wins, games)
        assert (row["games"], row["wins"]) == (games, pytest.approx(wins))
        assert (row["win_rate"], row["ci_low"], row["ci_high"]) == pytest.approx((wins / games, low, high))
    shown = section_table(markdown, heading)
    assert len(shown) == len(rows)
    for text, row in zip(shown, rows):
        assert (text["agent"], int(text[key]), int(text["games"])) == (row["agent"], row[key], row["games"])
        assert float(text["win_rate"]) == pytest.approx(row["win_rate"], abs=5e-4)
        assert float(text["ci_low"]) == pytest.approx(row["ci_low"], abs=5e-4)
    # every agent played every seat: the seat-games add up to the agent's games in the main table
    for agent in ("heuristic", "random"):
        total = sum(r["games"] for r in rows if r["agent"] == agent)
        assert total == next(r["games"] for r in data["table"] if r["agent"] == agent)


def summary_of(values: list[float]) -> dict[str, float]:
    x = np.array(values, float)
    return {"count": len(x), "mean": x.mean(), "sd": x.std(ddof=1), "min": x.min(), "p25": np.percentile(x, 25),
            "median": np.median(x), "p75": np.percentile(x, 75), "max": x.max()}


def test_point_and_length_distributions_match_the_records(report: tuple) -> None:
    data, markdown, out = report
    games = data["games"]
    for row in data["points"]:
        points = [g["points"][s] for g in games for s, spec in enumerate(g["seats"]) if spec == row["agent"]]
        assert {k: row[k] for k in summary_of(points)} == pytest.approx(summary_of(points))
    lengths = {r["measure"]: r for r in data["lengths"]}
    hands = [g["hands"] for g in games]
    decisions = [g["decisions"] / g["hands"] for g in games]
    assert min(hands) >= 1 and max(hands) > 1  # whole matches: several hands
    assert min(decisions) >= 7  # at least one card played by every seat of a 4p hand that someone goes out of
    for measure, values in (("hands per game", hands), ("decisions per hand", decisions)):
        assert {k: lengths[measure][k] for k in summary_of(values)} == pytest.approx(summary_of(values))
    shown = section_table(markdown, "### Points and game length")
    assert [r["agent"] for r in shown] == [r["agent"] for r in data["points"]]
    assert [float(r["mean"]) for r in shown] == pytest.approx([r["mean"] for r in data["points"]], abs=5e-4)
    assert "![points per game and game length](distributions.png)" in markdown
    assert (out / "distributions.png").read_bytes()[:8] == PNG


def openskill_ratings(games: list[dict[str, Any]], agents: list[str], outcome: str) -> dict[str, tuple[float, float]]:
    """mu and sigma per spec, rated here with openskill from the records (copies as the ratings module names them)."""
    model = PlackettLuce(tau=0.0)
    ratings: dict[str, Any] = {}
    for game in games:
        seen: dict[str, int] = defaultdict(int)
        names = []
        for spec in game["seats"]:
            seen[spec] += 1
            names.append(spec if agents.count(spec) == 1 else f"{spec}#{seen[spec]}")
        ranks = ([1 if s in game["winners"] else 2 for s in range(len(names))] if outcome == "win"
                 else game["placing"])
        teams = [[ratings.setdefault(name, model.rating(name=name))] for name in names]
        for name, (rating,) in zip(names, model.rate(teams, ranks=list(ranks))):
            ratings[name] = rating
    out = {}
    for spec in dict.fromkeys(agents):
        copies = [r for name, r in ratings.items() if name.split("#")[0] == spec]
        out[spec] = (float(np.mean([r.mu for r in copies])), float(np.mean([r.sigma for r in copies])))
    return out


@pytest.mark.parametrize(("key", "heading", "outcome"), [("ratings", "### Ratings", "win"),
                                                         ("ratings_placing", "### Ratings on the full placing",
                                                          "placing")])
def test_both_ratings_match_the_records(report: tuple, key: str, heading: str, outcome: str) -> None:
    data, markdown, _ = report
    expected = openskill_ratings(data["games"], data["summary"]["agents"], outcome)
    for row in data[key]:
        mu, sigma = expected[row["agent"]]
        assert (row["mu"], row["sigma"]) == pytest.approx((mu, sigma))
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((mu - 1.959964 * sigma, mu + 1.959964 * sigma))
    shown = section_table(markdown, heading)
    assert [(r["agent"], float(r["mu"])) for r in shown] == [(r["agent"], pytest.approx(r["mu"], abs=5e-4))
                                                             for r in data[key]]


def test_the_ratings_section_says_what_it_rates(report: tuple) -> None:
    _, markdown, _ = report
    ratings = markdown[markdown.index("### Ratings\n"):]
    assert "**win outcome**" in ratings and "**full placing**" in ratings and "not a bootstrap" in ratings


def _game(index: int, winner: int, placing: tuple[int, ...]) -> GameOutcome:
    return GameOutcome(index, index, ("a", "b", "c"), (winner,), (0, 0, 0), 1, placing, 0, "", 10)


def test_the_report_says_when_the_placing_rating_disagrees_with_the_win_table(tmp_path: Path) -> None:
    # a wins 3 of 7 games but comes last whenever it loses; b wins 2 and is second otherwise; c wins 2
    games = [_game(i, 0, (1, 2, 3)) for i in range(3)]
    games += [_game(i, 1, (3, 1, 2)) for i in range(3, 5)] + [_game(i, 2, (3, 2, 1)) for i in range(5, 7)]
    result = TournamentResult(GameConfig(num_players=3), ["a", "b", "c"], games * 20)
    write_report(tmp_path, result)
    data = json.loads((tmp_path / "results.json").read_text())
    by_wins = [r["agent"] for r in sorted(data["table"], key=lambda r: -r["win_rate"])]
    assert by_wins[0] == "a"
    assert data["ratings"][0]["agent"] == "a"  # the win outcome agrees with the win table
    assert data["ratings_placing"][0]["agent"] != "a"  # the placing punishes a's last places
    markdown = (tmp_path / "report.md").read_text()
    placing = markdown[markdown.index("### Ratings on the full placing"):]
    assert "disagree: `a` wins more often than" in placing
    win = markdown[markdown.index("### Ratings\n"):markdown.index("### Ratings on the full placing")]
    assert "rank the agents as their win rates do" in win  # b and c win equally often: either order agrees


def test_provenance_names_version_commit_and_resolved_agents(report: tuple) -> None:
    data, markdown, _ = report
    info = data["provenance"]
    assert info["package_version"] == goboom_env.__version__
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:
        assert info["git_commit"] == head.stdout.strip()
    assert info["agents"] == [{"spec": "heuristic", "resolves_to": "classic-tricks", "sha256": None},
                              {"spec": "random", "resolves_to": "random", "sha256": None}]
    assert "## Provenance" in markdown and f"goboom-env {goboom_env.__version__}" in markdown
    assert f"git commit: {info['git_commit']}" in markdown
    assert "| heuristic | classic-tricks | - |" in markdown


def test_git_commit_is_unknown_outside_a_checkout(tmp_path: Path) -> None:
    assert git_commit(tmp_path) == ("unknown", None)


def test_model_files_resolve_shipped_names_files_and_folders(tmp_path: Path) -> None:
    from goboom_env.evaluation.provenance import agent_rows, sha256

    shipped = Path(goboom_env.__file__).parent / "models" / "classic-4p-hands.zip"
    assert model_files("ppo:classic-4p-hands") == [shipped.resolve()]
    assert model_files("heuristic") == []
    folder = tmp_path / "checkpoint"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.bin").write_bytes(b"a")
    (folder / "sub" / "b.bin").write_bytes(b"b")
    assert model_files(f"rllib:{folder}") == [folder / "a.bin", folder / "sub" / "b.bin"]
    assert sha256(folder / "a.bin") == hashlib.sha256(b"a").hexdigest()
    rows = agent_rows(["ppo:classic-4p-hands"], GameConfig())
    assert rows == [{"spec": "ppo:classic-4p-hands", "resolves_to": str(shipped.resolve()),
                     "sha256": hashlib.sha256(shipped.read_bytes()).hexdigest()}]
    with pytest.raises(ValueError, match="not a file or folder"):
        model_files(f"rllib:{tmp_path / 'missing'}")


def test_episode_both_reports_match_and_hand_side_by_side_on_the_same_deals(tmp_path: Path) -> None:
    out = tmp_path / "both"
    done = goboom("evaluate", "--agents", "heuristic", "random", "--games", "8", "--duplicate", "--seed", "2",
                  "--episode", "both", "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "Match and hand win rates side by side" in done.stdout
    match = json.loads((out / "match" / "results.json").read_text())
    hand = json.loads((out / "hand" / "results.json").read_text())
    assert (match["summary"]["episode"], hand["summary"]["episode"]) == ("match", "hand")
    # the same deals and seats: game g of the hand run is the first hand of match g
    assert [(g["deck"], g["dealer"], g["seats"]) for g in match["games"]] == \
        [(g["deck"], g["dealer"], g["seats"]) for g in hand["games"]]
    assert all(g["hands"] == 1 for g in hand["games"]) and any(g["hands"] > 1 for g in match["games"])
    side = json.loads((out / "side_by_side.json").read_text())["side_by_side"]
    for row in side:
        for episode, data in (("match", match), ("hand", hand)):
            mine = next(r for r in data["table"] if r["agent"] == row["agent"])
            assert row[f"{episode}_win_rate"] == pytest.approx(mine["win_rate"])
            assert row[f"{episode}_ci_low"] == pytest.approx(mine["ci_low"])
    markdown = (out / "report.md").read_text()
    shown = section_table(markdown, "## Match and hand win rates")
    assert [float(r["match_win_rate"]) for r in shown] == pytest.approx([r["match_win_rate"] for r in side], abs=5e-4)
    assert "[match](match/report.md)" in markdown and "## Provenance" in markdown
    assert (out / "match" / "distributions.png").read_bytes()[:8] == PNG


def test_evaluate_plays_matches_without_a_model_and_refuses_other_episodes(tmp_path: Path) -> None:
    from goboom_env.cli.evaluate import EvaluateArgs, main

    assert EvaluateArgs().episode == "auto" and EvaluateArgs().episodes() == ("match",)
    with pytest.raises(ValueError, match=r"episode must be one of \['auto', 'match', 'hand', 'both'\]"):
        EvaluateArgs(episode="set").validate()
    assert main(["--episode", "set", "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
