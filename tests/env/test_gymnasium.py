"""The single-agent view registered with Gymnasium (``goboom_env/GoBoom-v0``): made by id, it passes
Gymnasium's and stable-baselines3's env checkers without a warning, and exposes the legal actions through
``action_masks()`` (sb3-contrib) and ``info["action_mask"]``."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import goboom_env
from goboom_env.training.sb3.selfplay import SelfPlayEnv


def _make(**kwargs: object) -> gymnasium.Env:
    return gymnasium.make(goboom_env.GYM_ID, **{"variant": "jokers", "num_players": 4, "opponents": ["heuristic"],
                                                "seat": "random", **kwargs})


@pytest.mark.parametrize("kwargs", [
    {"variant": "jokers", "num_players": 4, "opponents": ["heuristic"], "seat": "random"},
    {"variant": "classic", "num_players": 3, "opponents": {"random": 1, "heuristic": 3}, "episode": "match"},
    {"preset": "jokers-aces", "opponents": "heuristic", "seat": "rotate", "render_mode": "ansi"},
])
def test_gymnasium_and_sb3_checkers_pass_without_warnings(kwargs: dict) -> None:
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")  # the train extra
    env = gymnasium.make(goboom_env.GYM_ID, **kwargs)
    assert isinstance(env.unwrapped, SelfPlayEnv) and env.spec.id == "goboom_env/GoBoom-v0"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)  # Gymnasium's checker wants the env without make's wrappers
        sb3_checker.check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


def test_the_mask_is_in_info_and_action_masks_every_step() -> None:
    env = _make()
    obs, info = env.reset(seed=4)
    masks = env.action_masks  # gymnasium.make returns the env itself: no wrapper hides the method
    assert str(env) == "<SelfPlayEnv<goboom_env/GoBoom-v0>>"
    steps = 0
    terminated = False
    rng = np.random.default_rng(4)
    while not terminated:
        assert obs in env.observation_space
        np.testing.assert_array_equal(info["action_mask"], masks())
        assert info["action_mask"].dtype == bool and info["action_mask"].any()
        obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps += 1
    assert not truncated and not info["action_mask"].any() and "won" in info and steps > 0


def test_sb3_contrib_finds_the_mask_through_a_vec_env() -> None:
    get_action_masks = pytest.importorskip("sb3_contrib.common.maskable.utils").get_action_masks  # train extra
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec = DummyVecEnv([lambda: gymnasium.make(goboom_env.GYM_ID, opponents="heuristic")] * 2)
    vec.seed(0)
    vec.reset()
    masks = get_action_masks(vec)
    assert masks.shape == (2, 54) and masks.any(axis=1).all()
    vec.close()


def test_same_seed_same_game() -> None:
    first = _make().reset(seed=11)[0]
    again = _make().reset(seed=11)[0]
    np.testing.assert_array_equal(first, again)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"opponents": []}, "opponents must be a non-empty list of agent specs"),
    ({"opponents": [3]}, "opponents must be a non-empty list of agent specs"),
    ({"seat": "left"}, "seat must be 'rotate' or 'random'"),
    ({"render_mode": "human"}, "render_mode must be None or one of"),
    ({"num_players": 13}, "num_players"),
])
def test_bad_arguments_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _make(**kwargs)


@pytest.mark.parametrize(("config", "expected"), [
    (goboom_env.GameConfig(), 199 + 340),  # classic: below the target of 200, plus one hand's points (R1.10)
    (goboom_env.GameConfig(num_players=8), 199 + 2 * 340),  # two decks (R1.1)
    (goboom_env.GameConfig(scoring="reverse"), 99 + 340),
    (goboom_env.GameConfig(variant="jokers"), 4 * (4 * 99 + 2 * 20)),  # four rounds of every card's points (R2.11)
    (goboom_env.GameConfig(variant="jokers", num_jokers=0, rounds=2), 2 * 4 * 99),
])
def test_the_scores_block_is_bounded_by_the_rules(config: goboom_env.GameConfig, expected: int) -> None:
    from goboom_env.observation import ObservationEncoder, max_score

    assert max_score(config) == expected
    encoder = ObservationEncoder(config)
    scale = config.target_score or 100
    assert np.all(np.isfinite(encoder.high))
    np.testing.assert_allclose(encoder.high[encoder.slices["scores"]], expected / scale, rtol=1e-6)
