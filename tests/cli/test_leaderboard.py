"""``goboom leaderboard``: one rating table per game over several result folders, and its errors."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from helpers import goboom

from goboom_env.cli.leaderboard import main
from goboom_env.config import GameConfig
from goboom_env.evaluation.ratings import rating_table
from goboom_env.evaluation.report import write_report, write_side_by_side
from goboom_env.evaluation.tournament import TournamentResult, run_pairwise, run_tournament

CLASSIC4 = GameConfig()
KW = {"duplicate": True, "progress": False, "episode": "hand"}


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Result folders: two classic 4p tournaments (one names the heuristic by its alias), a classic 2p pairwise
    run and a jokers 3p side-by-side run."""
    base = tmp_path_factory.mktemp("results")
    runs: dict[str, TournamentResult] = {
        "a": run_tournament(CLASSIC4, ["heuristic", "random", "random", "random"], 16, seed=1, **KW),
        "b": run_tournament(CLASSIC4, ["classic-tricks", "classic-cover", "random", "random"], 16, seed=2, **KW),
    }
    for name, result in runs.items():
        write_report(base / name, result)
    write_report(base / "pairs", pairwise=run_pairwise(GameConfig(num_players=2), ["random", "classic-cover"], 4,
                                                       seed=3, **KW))
    jokers = GameConfig(variant="jokers", num_players=3)
    both = {episode: (run_tournament(jokers, ["jokers-boom", "random", "random"], 6, seed=4, duplicate=True,
                                     progress=False, episode=episode), None) for episode in ("match", "hand")}
    write_side_by_side(base / "both", both)
    return {name: base / name for name in ("a", "b", "pairs", "both")} | {"base": base}


def test_leaderboard_rates_every_game_per_configuration(folders: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "board"
    done = goboom("leaderboard", str(folders["a"]), str(folders["b"]), str(folders["pairs"]), str(folders["both"]),
                  "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "leaderboard written to" in done.stdout and "classic 4p, standard, episode = hand" in done.stdout
    data = json.loads((out / "leaderboard.json").read_text())
    titles = [g["title"] for g in data["groups"]]
    assert titles == ["classic 4p, standard, episode = hand", "classic 2p, standard, episode = hand",
                      "jokers 3p, 2 jokers, after_joker=match, episode = match",
                      "jokers 3p, 2 jokers, after_joker=match, episode = hand"]
    classic = data["groups"][0]
    # heuristic (folder a) resolved to classic-tricks, the agent of folder b: one agent, rated over both (the
    # same games as folder a's, played under the resolved name)
    expected = rating_table([run_tournament(CLASSIC4, ["classic-tricks"] + ["random"] * 3, 16, seed=1, **KW),
                             run_tournament(CLASSIC4, ["classic-tricks", "classic-cover", "random", "random"], 16,
                                            seed=2, **KW)])
    assert [r["agent"] for r in classic["rows"]] == [r["agent"] for r in expected]
    for row, want in zip(classic["rows"], expected):
        assert (row["mu"], row["sigma"], row["ordinal"]) == pytest.approx((want["mu"], want["sigma"], want["ordinal"]))
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((want["ci_low"], want["ci_high"]))
    games = {r["agent"]: r["games"] for r in classic["rows"]}
    assert games == {"classic-tricks": 32, "classic-cover": 16, "random": 16 * 3 + 16 * 2}
    assert {r["agent"]: r["tournaments"] for r in classic["rows"]} == {"classic-tricks": 2, "classic-cover": 1,
                                                                       "random": 2}
    pairs = data["groups"][1]
    assert {r["agent"] for r in pairs["rows"]} == {"random", "classic-cover"} and pairs["folders"] == [
        str(folders["pairs"])]
    assert data["groups"][2]["folders"] == [str(folders["both"] / "match")]
    rows = list(csv.DictReader((out / "leaderboard.csv").open()))
    assert len(rows) == sum(len(g["rows"]) for g in data["groups"])
    assert rows[0]["group"] == titles[0] and rows[0]["rank"] == "1"
    markdown = (out / "leaderboard.md").read_text()
    assert all(f"## {t}" in markdown for t in titles) and "not a bootstrap" in markdown
    assert f"| 1 | {classic['rows'][0]['agent']} | {classic['rows'][0]['mu']:.3f} |" in markdown


def test_the_placing_outcome_rates_the_full_placing(folders: dict[str, Path], tmp_path: Path) -> None:
    assert main([str(folders["a"]), "--outcome", "placing", "--out", str(tmp_path / "p")]) == 0
    data = json.loads((tmp_path / "p" / "leaderboard.json").read_text())
    result = run_tournament(CLASSIC4, ["heuristic", "random", "random", "random"], 16, seed=1, **KW)
    want = rating_table(result, "placing")
    assert data["outcome"] == "placing"
    assert [r["mu"] for r in data["groups"][0]["rows"]] == pytest.approx([r["mu"] for r in want])


def _damaged(base: Path, text: str) -> Path:
    folder = base / "damaged"
    folder.mkdir(exist_ok=True)
    (folder / "results.json").write_text(text)
    return folder


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda f, t: [t / "missing"], "does not exist"),
        (lambda f, t: [f["a"] / "results.csv"], "is a file, not a result folder"),
        (lambda f, t: [t], "is not a result folder of goboom evaluate: it has no results.json"),
        (lambda f, t: [_damaged(t, "{not json")], "results.json: not JSON"),
        (lambda f, t: [_damaged(t, '{"table": []}')], "it needs 'summary' and 'games'"),
        (lambda f, t: [_damaged(t, "[" * 100_000 + "]" * 100_000)],
         "results.json: not JSON we read: nested more than 32 levels deep"),
        (lambda f, t: [_damaged(t, '{"summary": {"config": {"variant": "poker"}}, "games": []}')],
         "bad or missing summary field"),
        (lambda f, t: [f["a"], f["a"]], "is given twice"),
        (lambda f, t: [f["a"], shutil.copytree(f["a"], t / "copy")], "holds the same tournament as"),
        (lambda f, t: [], "give at least one result folder"),
    ],
)
def test_bad_folders_are_refused_with_the_reason(folders: dict[str, Path], tmp_path: Path, make, message: str,
                                                 capsys: pytest.CaptureFixture) -> None:
    args = [str(p) for p in make(folders, tmp_path)]
    assert main([*args, "--out", str(tmp_path / "board")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("goboom leaderboard: error: ") and message in err, err
    assert not (tmp_path / "board").exists()


def test_a_damaged_game_record_names_the_game(folders: dict[str, Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    data = json.loads((folders["a"] / "results.json").read_text())
    del data["games"][3]["winners"]
    folder = _damaged(tmp_path, json.dumps(data))
    assert main([str(folder), "--out", str(tmp_path / "board")]) == 2
    assert "game 3: the record lacks winners" in capsys.readouterr().err
    data["games"][3]["winners"] = [7]
    (folder / "results.json").write_text(json.dumps(data))
    assert main([str(folder), "--out", str(tmp_path / "board")]) == 2
    assert "winners must be seats 0..3, got [7]" in capsys.readouterr().err


@pytest.mark.parametrize(("field", "value", "message"), [
    ("index", "z", "index must be an integer >= 0, got 'z'"),
    ("hands", 0, "hands must be an integer >= 1, got 0"),
    ("placing", ["a", "b", "c", "d"], "placing must be places 1..4"),
    ("placing", [1, 2, 3, 9], "placing must be places 1..4"),
    ("points", None, "points must list 4 integers, got None"),
    ("dealer", 4, "dealer must be a seat 0..3, got 4"),
    ("seats", 5, "seats must be a list, got 5"),
    ("winners", 3, "winners must be a list, got 3"),
    ("placing", None, "placing must be a list, got None"),
])
def test_a_game_record_with_a_field_of_the_wrong_kind_names_it(folders: dict[str, Path], tmp_path: Path, field: str,
                                                              value: object, message: str,
                                                              capsys: pytest.CaptureFixture) -> None:
    data = json.loads((folders["a"] / "results.json").read_text())
    data["games"][2][field] = value
    folder = _damaged(tmp_path, json.dumps(data))
    for outcome in ("win", "placing"):
        assert main([str(folder), "--outcome", outcome, "--out", str(tmp_path / "board")]) == 2
        assert f"game 2: {message}" in capsys.readouterr().err


def test_a_bad_outcome_is_refused(folders: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    assert main([str(folders["a"]), "--outcome", "points"]) == 2
    assert "invalid choice 'points' for argument '--outcome'. Expected one of ('win', 'placing')" in \
        capsys.readouterr().err


def test_agent_names_of_a_result_file_reach_the_terminal_as_plain_text(folders: dict[str, Path], tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """rich markup (a hyperlink) and escape sequences in an agent name of a crafted results.json are shown as text."""
    data = json.loads((folders["a"] / "results.json").read_text())
    name = "random[link=https://example.com]x[/link]\x1b]0;pwned\x07"
    for game in data["games"]:
        game["seats"] = [name if seat == "random" else seat for seat in game["seats"]]
    folder = _damaged(tmp_path, json.dumps(data))
    monkeypatch.setenv("COLUMNS", "300")  # the table's width: the name on one line
    assert main([str(folder), "--out", str(tmp_path / "board")]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "random[link=https://example.com]x[/link]\\x1b]0;pwned\\x07" in out
