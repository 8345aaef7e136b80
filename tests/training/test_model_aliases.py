"""The hand-trained shipped models are named for the episode unit they were trained on (classic-4p-hands and
jokers-4p-hands, beside classic-4p over whole matches); their former names classic4 and jokers4 still load, with a
DeprecationWarning naming the new name, and on the command line one note line on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest

from goboom_env import GameConfig
from goboom_env.agents import make_agent
from goboom_env.cli import main
from goboom_env.models import model_path, shipped_models

RENAMES = [("classic4", "classic-4p-hands"), ("jokers4", "jokers-4p-hands")]


@pytest.mark.parametrize(("old", "new"), RENAMES)
def test_a_former_name_loads_the_renamed_file_with_a_deprecation_warning(old: str, new: str) -> None:
    assert new in shipped_models() and old not in shipped_models()
    with pytest.warns(DeprecationWarning, match=rf"'{old}' is now named '{new}': write ppo:{new}"):
        path = model_path(old)
    assert path == model_path(new) and path.name == f"{new}.zip" and path.is_file()


@pytest.mark.parametrize(("old", "variant"), [("classic4", "classic"), ("jokers4", "jokers")])
def test_a_former_name_still_plays(old: str, variant: str) -> None:
    config = GameConfig(variant=variant, num_players=4)
    with pytest.warns(DeprecationWarning, match="is now named"):
        agent = make_agent(f"ppo:{old}", config, 0)
    assert agent is not None


def _goboom(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(list(argv))
    return code, [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_the_cli_names_the_new_name_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _goboom(capsys, "evaluate", "--agents", "ppo:classic4", "heuristic", "--games", "4", "--episode",
                        "hand", "--no-progress", "--out", str(tmp_path / "old"))
    assert code == 0
    assert err == ["note: the shipped model 'classic4' is now named 'classic-4p-hands': write ppo:classic-4p-hands "
                   "(the old name still loads, but is deprecated)"]
    code, err = _goboom(capsys, "evaluate", "--agents", "ppo:classic-4p-hands", "heuristic", "--games", "4",
                        "--episode", "hand", "--no-progress", "--out", str(tmp_path / "new"))
    assert code == 0 and err == []


def test_another_table_size_for_the_jokers_model_is_refused_naming_what_differs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--players 3 alone asks for the default variant at 3 players: refused, the variant named, never switched."""
    code, err = _goboom(capsys, "evaluate", "--players", "3", "--agents", "ppo:jokers-4p-hands", "heuristic",
                        "--games", "4", "--no-progress", "--out", str(tmp_path / "p3"))
    assert code == 2 and len(err) == 1 and not (tmp_path / "p3").exists()
    assert err[0].startswith("goboom evaluate: error: ppo:jokers-4p-hands was trained for another game than the game "
                             "options (--players) choose: variant: model 'jokers', options 'classic'; num_players: "
                             "model 4, options 3")
