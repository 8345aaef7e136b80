"""goboom evaluate names, in one line on stderr, a model trained on another episode unit (single hands or whole
matches) than the evaluation plays; the unit comes from the model's metadata (trained_episode)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goboom_env.agents.ppo import read_metadata
from goboom_env.cli import evaluate
from goboom_env.models import model_path

HAND_MODEL = "ppo:classic-4p-hands"  # the shipped model trained on single hands
MATCH_MODEL = "ppo:classic-4p"  # the shipped model trained on whole matches


def _evaluate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *options: str) -> list[str]:
    code = evaluate.main([*options, "--games", "4", "--no-progress", "--out", str(tmp_path / "out")])
    assert code == 0
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_a_hand_model_scored_on_matches_gets_one_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _evaluate(tmp_path, capsys, "--agents", HAND_MODEL, "heuristic", "--episode", "match")
    assert err == [f"note: {HAND_MODEL} was trained on single hands; this evaluation plays whole matches "
                   "(--episode hand to score it on hands)"]


def test_no_note_for_a_model_on_its_own_episode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _evaluate(tmp_path, capsys, "--agents", MATCH_MODEL, "heuristic") == []
    assert _evaluate(tmp_path, capsys, "--agents", HAND_MODEL, "heuristic", "--episode", "hand", "--force") == []


def test_a_match_model_scored_on_hands_gets_the_note_the_other_way(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    err = _evaluate(tmp_path, capsys, "--agents", MATCH_MODEL, "heuristic", "--episode", "hand")
    assert err == [f"note: {MATCH_MODEL} was trained on whole matches; this evaluation plays single hands "
                   "(--episode match to score it on matches)"]


def test_by_default_a_model_plays_its_own_unit_and_the_table_names_it(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    for model, unit, out in ((HAND_MODEL, "hand", "a"), (MATCH_MODEL, "match", "b")):
        code = evaluate.main(["--agents", model, "heuristic", "--games", "2", "--no-progress",
                              "--out", str(tmp_path / out)])
        printed = capsys.readouterr()
        assert code == 0 and printed.err == ""
        assert f"Results, one {unit} a game" in printed.out
        assert json.loads((tmp_path / out / "results.json").read_text())["summary"]["episode"] == unit
    assert evaluate.EvaluateArgs(agents=["heuristic"]).episodes() == ("match",)  # no model: the rules' game
    assert evaluate.EvaluateArgs(agents=[HAND_MODEL, MATCH_MODEL]).episodes() == ("match",)  # both units
    assert evaluate.EvaluateArgs(agents=[MATCH_MODEL], luck_adjusted=True).episodes() == ("hand",)


def test_trained_episode_reads_the_metadata_and_falls_back_to_hands() -> None:
    from goboom_env.agents.ppo import trained_episode

    assert trained_episode(read_metadata(model_path(HAND_MODEL.removeprefix("ppo:")))) == "hand"
    assert trained_episode(read_metadata(model_path(MATCH_MODEL.removeprefix("ppo:")))) == "match"
    assert trained_episode({"config": {}, "train_args": None}) == "hand"  # an old or exported model
    assert trained_episode({"config": {}, "train_args": {"timesteps": 5}}) == "hand"
