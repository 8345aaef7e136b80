"""``goboom evaluate --save-games`` writes complete game records that replay to the recorded results, and
``goboom replay`` prints them (end to end, in a subprocess)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import goboom, goboom_evaluate

from goboom_env.cards import face_of
from goboom_env.cli.replay import main as replay_main
from goboom_env.engine import Hand
from goboom_env.records import read, verify


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A duplicate jokers match tournament on two processes with its first 4 games saved."""
    out = tmp_path_factory.mktemp("eval") / "results"
    goboom_evaluate(out, "--preset", "jokers-3p", "--agents", "heuristic", "random", "--games", "9", "--duplicate",
                    "--episode", "match", "--processes", "2", "--seed", "4", "--save-games", "4")
    return out


def test_saved_games_replay_to_the_results_of_the_tournament(saved: Path) -> None:
    records = read(saved / "games.jsonl")
    games = json.loads((saved / "results.json").read_text())["games"]
    assert [r.meta["game"] for r in records] == [0, 1, 2, 3]
    for record, game in zip(records, games):
        result = verify(record)
        assert list(result.winners) == game["winners"] and list(result.points) == game["points"]
        assert list(record.seats) == game["seats"] and record.hands[0].dealer == game["dealer"]
        dealt = Hand(record.config, [face_of(game["deck"][i:i + 2]) for i in range(0, len(game["deck"]), 2)],
                     game["dealer"])
        assert record.hands[0].deal(record.config).to_dict() == dealt.to_dict()
        assert len(record.hands) == game["hands"]
    # duplicate deals: the first three games play the same cards with the agents rotated
    assert len({r.hands[0].deck for r in records[:3]}) == 1 and records[3].hands[0].deck != records[0].hands[0].deck


def test_saving_games_leaves_the_other_outputs_unchanged(saved: Path, tmp_path: Path) -> None:
    out = tmp_path / "plain"
    goboom_evaluate(out, "--preset", "jokers-3p", "--agents", "heuristic", "random", "--games", "9", "--duplicate",
                    "--episode", "match", "--seed", "4")
    assert not (out / "games.jsonl").exists()
    plain, with_games = (json.loads((d / "results.json").read_text()) for d in (out, saved))
    assert plain["games"] == with_games["games"] and plain["table"] == with_games["table"]


def test_pairwise_saves_the_first_games_of_every_pairing(tmp_path: Path) -> None:
    out = tmp_path / "pairs"
    goboom_evaluate(out, "--preset", "classic-2p", "--pairwise", "--agents", "heuristic", "random", "--games", "4",
                    "--episode", "hand", "--save-games", "2")
    records = read(out / "games.jsonl")
    assert [r.meta["agents"] for r in records] == [["heuristic", "random"]] * 2 + [["random", "heuristic"]] * 2
    for record in records:
        verify(record)


def test_a_negative_save_games_is_refused_before_playing(tmp_path: Path) -> None:
    done = goboom("evaluate", "--games", "3", "--save-games", "-1", "--out", str(tmp_path / "x"), "--no-progress")
    assert done.returncode == 2 and "--save-games must be a non-negative integer" in done.stderr
    assert not (tmp_path / "x").exists()


def test_replay_shows_every_move_face_up_to_the_recorded_result(saved: Path) -> None:
    record = read(saved / "games.jsonl")[1]
    done = goboom("replay", str(saved / "games.jsonl"), "--game", "1")
    assert done.returncode == 0, done.stderr
    moves = [line for line in done.stdout.splitlines() if re.match(r"P\d \S+ [\[(]", line)]
    assert len(moves) == sum(len(h.moves) for h in record.hands)
    assert all("[" in line for line in moves)  # every hand face up: the mover's cards are shown
    assert done.stdout.count("=== hand ") == len(record.hands)
    winners = ", ".join(f"P{w} ({record.seats[w]})" for w in record.result.winners)
    assert f"the match is won by {winners}" in done.stdout
    last = record.hands[-1]
    assert "totals: " + "  ".join(f"P{s}={v}" for s, v in enumerate(last.scores)) in done.stdout


def test_replay_from_one_seat_hides_the_other_hands(saved: Path) -> None:
    done = goboom("replay", str(saved / "games.jsonl"), "--seat", "2")
    assert done.returncode == 0, done.stderr
    body = done.stdout.split("hand over:")[0]
    for line in body.splitlines():
        if re.match(r"P[01] \S+ ", line):
            assert re.match(r"P[01] \S+ \(\d+ cards?\): ", line), line
        if re.match(r"P2 \S+ ", line):
            assert "[" in line
        assert not re.match(r"\s+\(P[01] drew", line)


def test_replay_waits_for_enter_and_stops_on_q(saved: Path) -> None:
    done = goboom("replay", str(saved / "games.jsonl"), "--wait", stdin="\n\nq\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("[Enter: next move, q: stop]") == 3 and "is won by" not in done.stdout


@pytest.mark.parametrize(("args", "message"), [
    ([], "give the game record file to replay"),
    (["nope.jsonl"], "no game record file nope.jsonl"),
    (["GAMES", "--game", "7"], "--game 7: "),
    (["GAMES", "--seat", "5"], "--seat must be in 0..2, got 5"),
    (["GAMES", "--seat", "1", "--all"], "--seat and --all are alternatives"),
])
def test_replay_refuses_bad_options_in_one_line(saved: Path, args: list[str], message: str) -> None:
    done = goboom("replay", *[str(saved / "games.jsonl") if a == "GAMES" else a for a in args])
    assert done.returncode == 2 and done.stderr.startswith(f"goboom replay: error: {message}"), done.stderr
    assert "Traceback" not in done.stderr


def test_replay_of_a_record_that_is_not_the_game_it_claims_names_the_move(saved: Path, tmp_path: Path) -> None:
    line = json.loads((saved / "games.jsonl").read_text().splitlines()[0])
    line["hands"][0]["moves"][0]["seat"] = (line["hands"][0]["moves"][0]["seat"] + 1) % 3
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(line) + "\n")
    done = goboom("replay", str(bad))
    assert done.returncode == 1
    assert done.stderr.startswith("goboom replay: error: the record does not replay: hands[0].moves[0].seat: P")
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_text("{}\n")
    done = goboom("replay", str(corrupt))
    assert done.returncode == 2 and f"{corrupt} line 1: format: missing" in done.stderr


def _nan_reward(saved: Path) -> bytes:
    line = json.loads((saved / "games.jsonl").read_text().splitlines()[0])
    line["result"]["rewards"][0] = float("nan")
    return json.dumps(line).encode()


@pytest.mark.parametrize(("content", "message"), [
    (lambda saved: b"[" * 100_000 + b"]" * 100_000, "line 1: not JSON we read: nested more than 32 levels deep"),
    (lambda saved: b'{"format": "goboom-record", "version": ' + b"7" * 5000 + b"}",
     "line 1: version: an integer of 5000 digits (at most 20)"),
    (_nan_reward, "line 1: result.rewards[0]: NaN is not a JSON number"),
    (lambda saved: b"\xff\xfe{}\n", "is not a text file of game records (not UTF-8"),
], ids=["deep", "5000-digits", "nan-reward", "not-utf8"])
def test_replay_of_a_hostile_file_prints_one_error_line(saved: Path, tmp_path: Path, content: Callable[[Path], bytes],
                                                        message: str) -> None:
    bad = tmp_path / "hostile.jsonl"
    bad.write_bytes(content(saved))
    done = goboom("replay", str(bad))
    assert done.returncode == 2, done.stdout[-500:]
    assert done.stderr.startswith(f"goboom replay: error: {bad}") and message in done.stderr, done.stderr[-2000:]
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and done.stdout == ""


def test_replay_of_an_empty_file_says_it_holds_no_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert replay_main([str(empty)]) == 2
    assert capsys.readouterr().err == f"goboom replay: error: {empty} holds no game records\n"


HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07\x1b]8;;https://example.com\x1b\\\r\x9b"
"""A window title, a screen clear, a clipboard write, a hyperlink, a carriage return and a C1 CSI."""


def test_replay_shows_the_strings_of_a_record_with_their_control_characters_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import numpy as np

    from goboom_env.agents import make_agent
    from goboom_env.config import GameConfig
    from goboom_env.engine import Match
    from goboom_env.records import record_episode, write

    config = GameConfig(variant="classic", num_players=3)
    agents = [make_agent("random", config, s) for s in range(3)]
    _, record = record_episode(Match(config, np.random.default_rng(0)), agents, "hand",
                               seats=[f"random{HOSTILE}", "random", "random"], meta={"note": HOSTILE})
    write(tmp_path / "games.jsonl", [record])
    assert replay_main([str(tmp_path / "games.jsonl")]) == 0
    out = capsys.readouterr().out
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out), "a control character reached the terminal"
    assert "P0=random\\x1b]0;pwned\\x07\\x1b[2J" in out and "note: \\x1b]0;pwned" in out
