"""The batched single-agent env (``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``) against the
scalar one: Gymnasium's sync vector env of ``goboom_env/GoBoom-v0`` reset with the same seed and fed the same actions
must return the same observations, rewards, terminations, truncations and infos (the mask among them) step by step,
on every standard configuration, in hand and match episodes, in each autoreset mode; and the vector env's own
contract: spaces, seeding, autoreset, Gymnasium's checks, its errors."""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.utils.passive_env_checker import check_obs, check_space
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from helpers import soak, soak_count

import goboom_env

pytest.importorskip("goboom_env.vector", reason="numba is not installed (goboom-env[vector])")

from goboom_env.training.vector_env import SelfPlayVectorEnv

STANDARD = {
    "classic-2p": {"preset": "classic-2p"},
    "classic-4p": {"preset": "classic"},
    "classic-6p": {"variant": "classic", "num_players": 6},
    "classic-12p": {"preset": "classic-12p"},
    "classic-reverse": {"preset": "classic-reverse"},
    "jokers-4p": {"preset": "jokers"},
    "jokers-3p": {"preset": "jokers-3p"},
    "jokers-aces": {"preset": "jokers-aces"},
    "jokers-any": {"preset": "jokers-any"},
}
"""The standard configurations: classic at 2, 4, 6 and 12 players, reverse scoring, jokers, aces mode."""
OPPONENTS = {"heuristic": 2.0, "random": 1.0}
"""A pool of both kinds of batched opponent, drawn per episode (the pool's draw is compared too)."""
GAMES = 4
STEPS = 100
"""Fast tier: steps of ``GAMES`` games per configuration and episode (30 to 50 hands, or 2 to 30 matches, end)."""
SOAK_GAMES = 8
SOAK_STEPS = soak_count(4000, 300)
"""Slow tier: steps of ``SOAK_GAMES`` games per configuration, episode and reward (``make soak``: 4,000)."""


def make_both(num_envs: int, mode: AutoresetMode = AutoresetMode.NEXT_STEP, **kwargs: Any) -> tuple:
    """The batched env and Gymnasium's sync env of the scalar view, with the same arguments."""
    kwargs = {"opponents": OPPONENTS, **kwargs}
    batched = gymnasium.make_vec(goboom_env.GYM_ID, num_envs=num_envs, vectorization_mode="vector_entry_point",
                                 autoreset_mode=mode, **kwargs)
    sync = gymnasium.make_vec(goboom_env.GYM_ID, num_envs=num_envs, vectorization_mode="sync",
                              vector_kwargs={"autoreset_mode": mode}, **kwargs)
    return batched, sync


def assert_same_info(got: dict, expected: dict, where: str) -> None:
    """Two vector infos hold the same keys, dtypes and values (object arrays element by element)."""
    assert sorted(got) == sorted(expected), f"{where}: info keys {sorted(got)} != {sorted(expected)}"
    for key, value in expected.items():
        mine = got[key]
        if isinstance(value, dict):
            assert_same_info(mine, value, f"{where} {key}")
        elif value.dtype == object:
            assert mine.dtype == object and len(mine) == len(value), f"{where}: {key}"
            for i, (a, b) in enumerate(zip(mine, value)):
                assert (a is None and b is None) or np.array_equal(a, b), f"{where}: {key}[{i}] {a!r} != {b!r}"
        else:
            assert mine.dtype == value.dtype and np.array_equal(mine, value), f"{where}: {key} {mine} != {value}"


def random_actions(mask: np.ndarray, rng: np.random.Generator, step: int) -> np.ndarray:
    """A random legal action per game (0 where nothing is legal); every 23rd step one game plays an illegal one."""
    actions = np.array([rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in mask])
    if step % 23 == 11:
        b = step % len(mask)
        actions[b] = int(np.flatnonzero(~mask[b])[0]) if not mask[b].all() else 99
    return actions


def run_differential(batched: gymnasium.vector.VectorEnv, sync: gymnasium.vector.VectorEnv, steps: int,
                     seed: int) -> int:
    """Reset both with ``seed`` and step them with the same actions, comparing every output; returns the number of
    episodes that ended."""
    obs, info = batched.reset(seed=seed)
    expected_obs, expected_info = sync.reset(seed=seed)
    assert obs.dtype == expected_obs.dtype and np.array_equal(obs, expected_obs), "reset: observations"
    assert_same_info(info, expected_info, "reset")
    rng = np.random.default_rng(seed)
    ended = 0
    for step in range(steps):
        np.testing.assert_array_equal(batched.unwrapped.action_masks(), info["action_mask"])
        actions = random_actions(info["action_mask"], rng, step)
        got, expected = batched.step(actions), sync.step(actions)
        for name, mine, theirs in zip(("obs", "reward", "terminated", "truncated"), got[:4], expected[:4]):
            assert mine.dtype == theirs.dtype, f"step {step}: {name} dtype {mine.dtype} != {theirs.dtype}"
            assert np.array_equal(mine, theirs), f"step {step}: {name}\n{mine}\n!=\n{theirs}"
        assert_same_info(got[4], expected[4], f"step {step}")
        info = got[4]
        ended += int(got[2].sum())
    return ended


@pytest.mark.parametrize(("episode", "reward"), [("hand", "win"), ("match", "points")])
@pytest.mark.parametrize("name", list(STANDARD))
def test_each_game_plays_what_the_scalar_env_seeded_alike_plays(name: str, episode: str, reward: str) -> None:
    batched, sync = make_both(GAMES, episode=episode, reward=reward, **STANDARD[name])
    assert run_differential(batched, sync, STEPS, seed=len(name)) > 0


@soak
@pytest.mark.parametrize("reward", ["win", "points"])
@pytest.mark.parametrize("episode", ["hand", "match"])
@pytest.mark.parametrize("name", list(STANDARD))
def test_each_game_plays_what_the_scalar_env_plays_soak(name: str, episode: str, reward: str) -> None:
    """Longer runs of more games, both rewards, the learner's seat rotated."""
    batched, sync = make_both(SOAK_GAMES, episode=episode, reward=reward, seat="rotate", **STANDARD[name])
    assert run_differential(batched, sync, SOAK_STEPS, seed=1000 + len(name)) > SOAK_GAMES


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_the_other_autoreset_modes_match_the_sync_env(mode: AutoresetMode) -> None:
    """``SAME_STEP``: the ended episode's ``final_obs`` and ``final_info`` and the new episode's first view in one
    step. ``DISABLED``: ended games are reset with ``reset_mask`` (the sync env's reset of those envs only)."""
    batched, sync = make_both(5, mode, preset="jokers", episode="hand", seat="rotate")
    if mode == AutoresetMode.SAME_STEP:
        assert run_differential(batched, sync, STEPS, seed=9) > 0
        return
    obs, info = batched.reset(seed=9)
    sync.reset(seed=9)
    rng = np.random.default_rng(9)
    resets = 0
    for step in range(STEPS):
        actions = random_actions(info["action_mask"], rng, step)
        got, expected = batched.step(actions), sync.step(actions)
        for mine, theirs in zip(got[:4], expected[:4]):
            np.testing.assert_array_equal(mine, theirs)
        assert_same_info(got[4], expected[4], f"step {step}")
        info = got[4]
        if got[2].any():
            with pytest.raises(RuntimeError, match=r"are over: reset them with reset\(options=\{'reset_mask'"):
                batched.step(actions)
            seeds = [100 + step + b if b % 2 else None for b in range(5)]  # some seeded, some going on
            obs, info = batched.reset(seed=seeds, options={"reset_mask": got[2]})
            expected_obs, expected_info = sync.reset(seed=seeds, options={"reset_mask": got[2]})
            np.testing.assert_array_equal(obs, expected_obs)
            assert_same_info(info, expected_info, f"reset at step {step}")
            resets += 1
    assert resets > 0


def test_next_step_starts_the_new_episode_on_the_step_after_the_end_and_ignores_its_action() -> None:
    envs = gymnasium.make_vec(goboom_env.GYM_ID, num_envs=6, vectorization_mode="vector_entry_point",
                              preset="classic-2p", opponents=["heuristic"])
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    _, info = envs.reset(seed=1)
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(200):
        _, reward, terminated, truncated, info = envs.step(random_actions(info["action_mask"], rng, 1))
        assert not truncated.any()
        if not terminated.any():
            continue
        ended = terminated.copy()
        assert not info["action_mask"][ended].any() and info["_won"][ended].all()
        actions = random_actions(info["action_mask"], rng, 1)
        actions[ended] = 99  # ignored: no illegal-action end
        obs, reward, terminated, _, info = envs.step(actions)
        assert not reward[ended].any() and not terminated[ended].any()
        assert info["action_mask"][ended].any(axis=1).all()  # the learner's first move of a new hand
        assert obs[ended].any(axis=1).all()
        checked += 1
    assert checked > 3


def test_seeding_reproduces_the_trajectories_and_different_seeds_differ() -> None:
    def play(envs: SelfPlayVectorEnv, seed: int | None, steps: int = 60) -> list:
        obs, info = envs.reset(seed=seed)
        rng = np.random.default_rng(0)
        out = [obs]
        for _ in range(steps):
            result = envs.step(random_actions(info["action_mask"], rng, 1))
            out.append(result[:4])
            info = result[4]
        return out

    kwargs = {"num_envs": 5, "vectorization_mode": "vector_entry_point", "preset": "jokers", "opponents": OPPONENTS}
    first, second = (gymnasium.make_vec(goboom_env.GYM_ID, **kwargs) for _ in range(2))
    run = play(first, 21)
    assert data_equivalence(run, play(second, 21), exact=True)  # a fresh env, the same seed
    assert data_equivalence(run, play(first, 21), exact=True)  # the same env reset again with the seed
    assert data_equivalence(play(first, [21 + i for i in range(5)]), run, exact=True)  # seeds given one by one
    assert not data_equivalence(play(first, 22), run)
    assert not data_equivalence(play(first, None), play(second, None))  # unseeded generators go on


def test_spaces_are_the_scalar_envs_and_their_batches() -> None:
    kwargs = {"variant": "jokers", "num_players": 3, "opponents": "heuristic"}
    scalar = gymnasium.make(goboom_env.GYM_ID, **kwargs)
    envs = gymnasium.make_vec(goboom_env.GYM_ID, num_envs=7, vectorization_mode="vector_entry_point", **kwargs)
    assert envs.single_observation_space == scalar.observation_space
    assert envs.single_action_space == scalar.action_space
    assert envs.observation_space == batch_space(scalar.observation_space, 7)
    assert envs.action_space == batch_space(scalar.action_space, 7)
    check_space(envs.single_observation_space, "observation", lambda space: None)
    check_space(envs.single_action_space, "action", lambda space: None)
    obs, info = envs.reset(seed=0)
    assert obs in envs.observation_space
    for row in obs:
        check_obs(row, envs.single_observation_space, "reset")
    obs, *_ = envs.step(envs.action_space.sample(mask=tuple(m.astype(np.int8) for m in info["action_mask"])))
    assert obs in envs.observation_space


def test_make_vec_builds_it_without_warnings_and_gymnasiums_vector_wrappers_run_on_it() -> None:
    from gymnasium.wrappers.vector import DictInfoToList, RecordEpisodeStatistics

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        envs = gymnasium.make_vec(goboom_env.GYM_ID, num_envs=4, preset="classic")  # the default mode: this one
    assert [str(w.message) for w in caught] == []
    assert isinstance(envs.unwrapped, SelfPlayVectorEnv)
    assert envs.spec.id == goboom_env.GYM_ID and envs.spec.kwargs["vectorization_mode"] == "vector_entry_point"
    wrapped = DictInfoToList(RecordEpisodeStatistics(envs))
    _, infos = wrapped.reset(seed=3)
    rng = np.random.default_rng(3)
    returns = []
    for _ in range(120):
        actions = random_actions(np.stack([info["action_mask"] for info in infos]), rng, 1)
        _, reward, terminated, _, infos = wrapped.step(actions)
        returns += [(infos[b]["episode"]["r"], reward[b]) for b in np.flatnonzero(terminated)]
    assert returns and all(np.isclose(r, last) for r, last in returns)  # the win reward arrives at the end only


def test_the_masks_are_where_sync_code_finds_them() -> None:
    """``info["action_mask"]``, ``action_masks()`` (sb3-contrib's name) and ``call("action_masks")`` (the sync env's
    way to reach each env's method) agree."""
    batched, sync = make_both(3, preset="jokers")
    _, info = batched.reset(seed=0)
    sync.reset(seed=0)
    np.testing.assert_array_equal(batched.unwrapped.action_masks(), info["action_mask"])
    assert data_equivalence(batched.call("action_masks"), sync.call("action_masks"), exact=True)
    with pytest.raises(AttributeError, match=r"call\('render'\): the batched env's games answer only"):
        batched.call("render")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"opponents": ["mc"]}, r"opponent 'mc': the batched env plays 'random' and the heuristics .*vectorization_mode"),
    ({"render_mode": "ansi"}, r"render_mode='ansi': the batched env does not render"),
    ({"autoreset_mode": "Sometimes"}, r"autoreset_mode must be one of \['NextStep', 'SameStep', 'Disabled'\]"),
    ({"seat": "left"}, r"seat must be 'rotate' or 'random', got 'left'"),
    ({"opponents": []}, r"opponents must be a non-empty list"),
    ({"num_envs": 0}, r"num_envs must be an integer >= 1, got 0"),
])
def test_bad_arguments_are_refused_with_one_line(kwargs: dict, message: str) -> None:
    kwargs = {"num_envs": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        gymnasium.make_vec(goboom_env.GYM_ID, vectorization_mode="vector_entry_point", **kwargs)


def test_bad_calls_are_refused_with_one_line() -> None:
    envs = gymnasium.make_vec(goboom_env.GYM_ID, num_envs=2, vectorization_mode="vector_entry_point").unwrapped
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        envs.step(np.zeros(2, np.int64))
    with pytest.raises(RuntimeError, match="without reset_mask first"):
        envs.reset(options={"reset_mask": np.array([True, False])})
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions must be 2 integers \(one per game\), got float64 \(2,\)"):
        envs.step(np.zeros(2))
    with pytest.raises(ValueError, match=r"unknown reset options \['decks'\]"):
        envs.reset(options={"decks": []})
    with pytest.raises(ValueError, match=r"seat must be in 0..3, got 4"):
        envs.reset(options={"seat": 4})
    with pytest.raises(ValueError, match=r"opponent 'heuristic' is not in the pool; known: \['random'\]"):
        envs.reset(options={"opponent": "heuristic"})
    with pytest.raises(ValueError, match=r"seed must be an int or 2 seeds \(one per game\), got 3"):
        envs.reset(seed=[1, 2, 3])
