"""GameConfig validation: every invalid configuration raises a ValueError that names the field,
and valid ones resolve their defaults from RULES.md (R1.1, R1.11, R1.12, R2.1, R2.2)."""

from __future__ import annotations

import dataclasses
import json

import pytest

import goboom_env
from goboom_env import PRESETS, GameConfig

INVALID = [
    ({"num_players": 13}, "num_players must be an integer in 2..12"),
    ({"num_players": 1}, "num_players"),
    ({"num_players": "4"}, "num_players"),
    ({"num_players": 4.0}, "num_players"),
    ({"num_players": True}, "num_players"),
    ({"variant": "poker"}, r"variant must be one of \['classic', 'jokers'\]"),
    ({"variant": None}, "variant"),
    ({"hand_size": 0}, "hand_size"),
    ({"hand_size": "7"}, "hand_size"),
    ({"num_players": 4, "hand_size": 14}, r"hand_size must be in 1\.\.13"),
    ({"num_players": 12, "hand_size": 9}, r"hand_size must be in 1\.\.8"),
    ({"num_decks": 0}, r"num_decks must be an integer in 1\.\.4"),
    ({"num_decks": 5}, "num_decks"),
    ({"num_decks": 1.5}, "num_decks"),
    ({"num_jokers": 2}, r"num_jokers must be 0 in classic"),
    ({"scoring": "penalty"}, r"scoring must be one of \['standard', 'reverse'\] for variant='classic'"),
    ({"scoring": "highest"}, "scoring"),
    ({"rounds": 3}, "rounds applies to variant='jokers' only"),
    ({"after_joker": "any"}, "after_joker applies to variant='jokers' only"),
    ({"target_score": 0}, "target_score must be an integer"),
    ({"target_score": "200"}, "target_score"),
    ({"variant": "jokers", "num_players": 4, "hand_size": 13}, r"num_players x hand_size must be <= 51"),
    ({"variant": "jokers", "num_players": 2, "hand_size": 26}, "hand_size must be in 1..25"),
    ({"variant": "jokers", "scoring": "reverse"}, r"scoring must be one of \['penalty'\] for variant='jokers'"),
    ({"variant": "jokers", "scoring": "standard"}, "scoring"),
    ({"variant": "jokers", "target_score": 100}, "target_score applies to variant='classic' only"),
    ({"variant": "jokers", "num_jokers": -1}, "num_jokers must be an integer"),
    ({"variant": "jokers", "num_jokers": "2"}, "num_jokers"),
    ({"variant": "jokers", "rounds": 0}, "rounds must be an integer"),
    ({"variant": "jokers", "after_joker": "sometimes"}, r"after_joker must be one of \['match', 'any'\]"),
    ({"variant": "jokers", "bogus": 1}, r"unknown configuration fields: \['bogus'\]"),
    ({"num_player": 4}, r"unknown configuration fields: \['num_player'\]"),
]


@pytest.mark.parametrize(("fields", "message"), INVALID, ids=[json.dumps(f) for f, _ in INVALID])
def test_invalid_config_names_the_field(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GameConfig.from_dict(fields)


@pytest.mark.parametrize(("fields", "message"), INVALID[:6], ids=[json.dumps(f) for f, _ in INVALID[:6]])
def test_env_rejects_invalid_config(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        goboom_env.env(**fields)


def test_resolved_defaults() -> None:
    assert GameConfig().to_dict() == {
        "variant": "classic", "num_players": 4, "hand_size": 7, "num_decks": 1, "num_jokers": 0,
        "scoring": "standard", "target_score": 200, "rounds": None, "after_joker": "match",
    }
    assert GameConfig(scoring="reverse").target_score == 100
    assert GameConfig(num_players=7).num_decks == 2
    jokers = GameConfig(variant="jokers", num_players=3)
    assert (jokers.num_jokers, jokers.rounds, jokers.scoring, jokers.target_score) == (2, 3, "penalty", None)
    assert GameConfig(variant="jokers", num_jokers=0).aces_mode
    assert not GameConfig(variant="jokers").aces_mode and not GameConfig().aces_mode


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_round_trip(name: str) -> None:
    cfg = GameConfig.preset(name)
    assert GameConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg
    assert cfg.replace() == cfg


def test_preset_overrides_and_unknown_preset() -> None:
    assert GameConfig.preset("jokers", num_players=3).num_players == 3
    with pytest.raises(ValueError, match=r"unknown preset 'nope'; choose one of \["):
        GameConfig.preset("nope")
    with pytest.raises(ValueError, match="hand_size"):
        GameConfig.preset("classic-12p", hand_size=9)


def test_config_is_frozen_and_replace_validates() -> None:
    cfg = GameConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.num_players = 5  # type: ignore[misc]
    with pytest.raises(ValueError, match="num_players"):
        cfg.replace(num_players=0)
    assert cfg.replace(num_players=7, num_decks=None).num_decks == 2


def test_env_config_arguments() -> None:
    env = goboom_env.env(preset="jokers-3p", hand_size=5)
    assert env.unwrapped.config == GameConfig(variant="jokers", num_players=3, hand_size=5)
    cfg = GameConfig(variant="classic", num_players=5)
    assert goboom_env.raw_env(config=cfg).config is cfg
    with pytest.raises(ValueError, match="either config or preset"):
        goboom_env.raw_env(config=cfg, preset="classic")
    with pytest.raises(ValueError, match=r"config must be a goboom_env\.GameConfig"):
        goboom_env.raw_env(config={"variant": "classic"})
