"""End-to-end runs of ``goboom evaluate`` and ``goboom play`` in a subprocess."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from helpers import goboom, goboom_evaluate

PNG = b"\x89PNG\r\n\x1a\n"


def test_evaluate_writes_report_json_csv_and_plots(tmp_path: Path) -> None:
    out = tmp_path / "results"
    done = goboom_evaluate(out, "--variant", "classic", "--players", "4", "--agents", "heuristic", "random", "random",
                           "random", "--games", "80", "--duplicate", "--processes", "2", "--seed", "3")
    assert "Results" in done.stdout and "report written to" in done.stdout
    report = (out / "report.md").read_text()
    assert "![win rates with 95% CI](win_rates.png)" in report and "### Paired comparisons" in report
    assert (out / "win_rates.png").read_bytes()[:8] == PNG
    data = json.loads((out / "results.json").read_text())
    assert data["summary"]["games"] == 80 and data["summary"]["duplicate"] is True
    assert data["summary"]["config"]["num_players"] == 4
    assert [r["agent"] for r in data["table"]] == ["heuristic", "random"]
    assert {r["agent"] for r in data["ratings"]} == {"heuristic", "random"}
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [r["agent"] for r in rows] == ["heuristic", "random"] and rows[0]["games"] == "80"


@pytest.mark.slow
def test_evaluate_pairwise_mode_with_config_options(tmp_path: Path) -> None:
    config = tmp_path / "game.toml"
    config.write_text('variant = "jokers"\nnum_players = 3\n')
    out = tmp_path / "pairs"
    goboom_evaluate(out, "--config", str(config), "--num-jokers", "0", "--pairwise", "--games", "12", "--episode",
                    "hand")
    data = json.loads((out / "pairwise.json").read_text())
    assert data["summary"]["config"]["num_jokers"] == 0  # the option overrides the file
    pairs = {(r["agent"], r["opponent"]) for r in data["pairwise"]}
    assert pairs == {(x, y) for x in ("random", "jokers-shed", "jokers-boom")
                     for y in ("random", "jokers-shed", "jokers-boom") if x != y}
    assert (out / "pairwise.png").read_bytes()[:8] == PNG
    assert (out / "win_rates.png").read_bytes()[:8] == PNG
    assert len(list(csv.DictReader((out / "results.csv").open()))) == 6
    assert "![pairwise matrix](pairwise.png)" in (out / "report.md").read_text()


def test_evaluate_reports_bad_options_without_a_traceback(tmp_path: Path) -> None:
    done = goboom("evaluate", "--variant", "classic", "--players", "13", "--out", str(tmp_path))
    assert done.returncode == 2
    assert "num_players must be an integer in 2..12" in done.stderr and "Traceback" not in done.stderr
    done = goboom("evaluate", "--agents", "heuristic", "nosuch", "--games", "2", "--out", str(tmp_path))
    assert done.returncode == 2 and "unknown agent 'nosuch'" in done.stderr


def test_play_reads_moves_from_piped_stdin() -> None:
    # plenty of moves: garbage first, then every card code and draw, over and over; illegal ones are refused
    codes = [r + s for s in "CDHS" for r in "23456789TJQKA"]
    moves = "\n".join((["zz", "99", "help", *codes, "draw"]) * 40) + "\n"
    done = goboom("play", "--variant", "jokers", "--players", "3", "--seed", "4", "--opponents", "heuristic",
                  "random", stdin=moves)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert "You are P0. Opponents: P1=heuristic, P2=random." in done.stdout
    assert "not a move: 'zz'" in done.stdout and "action numbers are 0..53" in done.stdout
    assert "is not legal now" in done.stdout
    assert "hand over:" in done.stdout and ("You win!" in done.stdout or "You lose." in done.stdout)


def test_play_stops_cleanly_when_input_ends() -> None:
    done = goboom("play", "--preset", "classic", "--seed", "1", stdin="")
    assert done.returncode == 1 and "input ended before the end of the game" in done.stdout
    done = goboom("play", "--preset", "classic", "--seat", "7")
    assert done.returncode == 2 and "--seat must be in 0..3" in done.stderr
