"""GameConfig validation: every invalid configuration raises a ValueError that names the field,
and valid ones resolve their defaults from RULES.md (R1.1, R1.11, R1.12, R2.1, R2.2)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

import numpy as np
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


@pytest.mark.parametrize("make", [GameConfig.from_dict, lambda fields: goboom_env.env(**fields)],
                         ids=["GameConfig", "env"])
@pytest.mark.parametrize(("fields", "message"), INVALID, ids=[json.dumps(f) for f, _ in INVALID])
def test_invalid_config_names_the_field(make: Callable[[dict], object], fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make(fields)


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


# -- derived defaults are derived again unless set explicitly -------------------------------------------


@pytest.mark.parametrize(
    ("base", "change", "field", "expected"),
    [
        (GameConfig(num_players=7), {"num_players": 4}, "num_decks", 1),
        (GameConfig(num_players=4), {"num_players": 7}, "num_decks", 2),
        (GameConfig(num_players=7, num_decks=2), {"num_players": 4}, "num_decks", 2),
        (GameConfig(scoring="reverse"), {"scoring": "standard"}, "target_score", 200),
        (GameConfig(scoring="reverse", target_score=100), {"scoring": "standard"}, "target_score", 100),
        (GameConfig(variant="jokers", num_players=3), {"num_players": 4}, "rounds", 4),
        (GameConfig(variant="jokers", num_players=3, rounds=3), {"num_players": 4}, "rounds", 3),
        (GameConfig(), {"variant": "jokers"}, "scoring", "penalty"),
        (GameConfig(variant="jokers"), {"variant": "classic"}, "num_jokers", 0),
        (GameConfig(num_players=7, num_decks=2), {"num_decks": None, "num_players": 4}, "num_decks", 1),
    ],
)
def test_replace_derives_defaults_again(base: GameConfig, change: dict, field: str, expected: object) -> None:
    assert getattr(base.replace(**change), field) == expected
    assert getattr(goboom_env.raw_env(config=base, **change).config, field) == expected


def test_env_config_with_fields_fails_only_where_a_fresh_config_fails() -> None:
    with pytest.raises(ValueError, match="rounds applies to variant='jokers' only"):
        GameConfig(variant="jokers", rounds=3).replace(variant="classic")
    with pytest.raises(ValueError, match="rounds applies to variant='jokers' only"):
        goboom_env.env(config=GameConfig(variant="jokers", rounds=3), variant="classic")
    with pytest.raises(ValueError, match=r"unknown configuration fields: \['bogus'\]"):
        goboom_env.env(config=GameConfig(), bogus=1)


_BASES = [
    {}, {"num_players": 7}, {"num_players": 7, "num_decks": 2}, {"num_players": 3, "num_decks": 2},
    {"scoring": "reverse"}, {"scoring": "reverse", "target_score": 100}, {"target_score": 50},
    {"variant": "jokers"}, {"variant": "jokers", "num_players": 3}, {"variant": "jokers", "rounds": 3},
    {"variant": "jokers", "num_jokers": 0}, {"variant": "jokers", "num_jokers": 4, "num_decks": 2},
    {"variant": "jokers", "after_joker": "any", "hand_size": 5},
]
_CHANGES = [
    {}, {"num_players": 4}, {"num_players": 7}, {"num_players": 3}, {"num_players": 12}, {"scoring": "standard"},
    {"scoring": "reverse"}, {"variant": "jokers"}, {"variant": "classic"}, {"num_decks": None}, {"num_decks": 2},
    {"target_score": None}, {"rounds": None}, {"rounds": 2}, {"num_jokers": 0}, {"hand_size": 5},
    {"variant": "jokers", "num_players": 5}, {"variant": "classic", "scoring": "reverse"},
]


def _build(fields: dict) -> GameConfig | str:
    """A config, or the error message building it gives."""
    try:
        return GameConfig(**fields)
    except ValueError as exc:
        return str(exc)


@pytest.mark.parametrize("base", _BASES, ids=[json.dumps(b) for b in _BASES])
def test_replace_equals_a_fresh_config_with_the_same_explicit_fields(base: dict) -> None:
    cfg = GameConfig(**base)
    assert GameConfig(**cfg.explicit_fields()) == cfg
    assert {k: v for k, v in cfg.explicit_fields().items() if k in base} == base
    for change in _CHANGES:
        fresh = _build({**cfg.explicit_fields(), **change})
        try:
            replaced: GameConfig | str = cfg.replace(**change)
        except ValueError as exc:
            replaced = str(exc)
        assert replaced == fresh, change
        if isinstance(fresh, GameConfig):
            assert replaced.explicit_fields() == fresh.explicit_fields(), change
            assert goboom_env.raw_env(config=cfg, **change).config == fresh


def test_explicit_fields_survive_pickling_and_are_not_compared() -> None:
    import pickle

    cfg = GameConfig(num_players=7, num_decks=2)
    assert pickle.loads(pickle.dumps(cfg)).replace(num_players=4).num_decks == 2
    assert cfg == GameConfig(num_players=7) and hash(cfg) == hash(GameConfig(num_players=7))
    assert "explicit" not in repr(cfg)
    saved = GameConfig.from_dict(cfg.to_dict())  # a saved config pins every derived value
    assert saved == cfg and saved.replace(num_players=4).num_decks == 2
    assert GameConfig.from_dict(GameConfig(num_players=7).explicit_fields()).replace(num_players=4).num_decks == 1


@pytest.mark.parametrize("value", [np.int64(5), np.array(5), np.uint8(5)], ids=repr)
def test_numpy_integer_fields_are_stored_as_ints(value: object) -> None:
    cfg = GameConfig(num_players=value, hand_size=value)
    assert cfg.num_players == 5 and type(cfg.num_players) is int and type(cfg.hand_size) is int
    json.dumps(cfg.to_dict())
