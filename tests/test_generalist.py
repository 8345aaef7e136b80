"""One network for every table size: the padded observation, the mixed-count engine, the trainer's
``--player-counts`` and the ``ppo:`` loader of such a generalist."""

from __future__ import annotations

import numpy as np
import pytest

import goboom_env
from goboom_env import GameConfig
from goboom_env.config import MAX_PLAYERS
from goboom_env.observation import (
    PADDED_SIZE,
    layout,
    observation_size,
    pad_observations,
    padded_index,
    unpad_observations,
)
from goboom_env.vector import MixedVectorGame, VectorGame, random_legal_actions

PER_SEAT = ("trick_passed", "leader", "hand_sizes", "drawn", "to_move", "dealer", "scores")


def _scalar_observation(n: int, moves: int) -> np.ndarray:
    """The observation of the seat to move after ``moves`` random legal moves of an ``n``-player match."""
    env = goboom_env.raw_env(config=GameConfig(num_players=n), episode="match")
    env.reset(seed=n)
    rng = np.random.default_rng(n)
    for _ in range(moves):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    return env.observe(env.agent_selection)["observation"]


@pytest.mark.parametrize("n", [2, 5, 12])
def test_padding_places_every_block(n: int) -> None:
    obs = _scalar_observation(n, moves=3 * n + 1)  # inside a trick: the trick rows are set
    padded = pad_observations(obs[None], n)[0]
    small, wide = layout(n), layout(MAX_PLAYERS)
    assert padded.shape == (PADDED_SIZE,) and padded.dtype == obs.dtype
    assert obs[small["trick"]].any() and obs[small["hand"]].any()
    for name, sl in small.items():
        block, into = obs[sl], padded[wide[name]]
        if name == "trick":
            rows = into.reshape(MAX_PLAYERS, -1)
            np.testing.assert_array_equal(rows[:n].ravel(), block)
            assert not rows[n:].any()
        elif name in PER_SEAT:
            np.testing.assert_array_equal(into[:n], block)
            assert not into[n:].any()
        else:
            np.testing.assert_array_equal(into, block)
    assert np.count_nonzero(padded) == np.count_nonzero(obs)
    np.testing.assert_array_equal(unpad_observations(padded, n), obs)


def test_padding_of_twelve_players_is_the_identity_and_bad_counts_are_refused() -> None:
    np.testing.assert_array_equal(padded_index(MAX_PLAYERS), np.arange(observation_size(MAX_PLAYERS)))
    with pytest.raises(ValueError, match="num_players"):
        padded_index(13)
    with pytest.raises(ValueError, match="4 players have 517"):
        pad_observations(np.zeros((2, 10)), 4)


def test_mixed_engine_equals_separate_vector_games() -> None:
    counts = [3, 2, 7]
    mixed = MixedVectorGame(GameConfig(), counts, num_envs=8, seed=5, episode="match")
    alone = [VectorGame(GameConfig(num_players=k), num_envs=rows.stop - rows.start, seed=s, episode="match")
             for k, rows, s in zip(counts, mixed.rows, mixed.seeds)]
    assert [r.stop - r.start for r in mixed.rows] == [3, 3, 2]
    np.testing.assert_array_equal(mixed.num_players, [3, 3, 3, 2, 2, 2, 7, 7])
    rng = np.random.default_rng(0)
    obs, mask, seat = mixed.reset()
    views = [game.reset() for game in alone]
    finished = 0
    for _ in range(300):
        for k, rows, (o, m, s) in zip(counts, mixed.rows, views):
            np.testing.assert_array_equal(unpad_observations(obs[rows], k), o)
            np.testing.assert_array_equal(mask[rows], m)
            np.testing.assert_array_equal(seat[rows], s)
        actions = random_legal_actions(mask, rng)
        obs, mask, seat, rewards, done = mixed.step(actions)
        views = []
        for k, rows, game in zip(counts, mixed.rows, alone):
            o, m, s, r, d = game.step(actions[rows])
            views.append((o, m, s))
            np.testing.assert_array_equal(rewards[rows, :k], r)
            assert not rewards[rows, k:].any()
            np.testing.assert_array_equal(done[rows], d)
        finished += int(done.sum())
    assert finished > 0


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"player_counts": []}, "at least one"),
    ({"player_counts": [2, 13]}, "13 is not a player count"),
    ({"player_counts": [1]}, "1 is not a player count"),
    ({"player_counts": [3, 3]}, "must not repeat"),
    ({"player_counts": [2, 3, 4], "num_envs": 2}, "num_envs"),
    ({"player_counts": [2, 3], "weights": [1, 0]}, "weights"),
    ({"player_counts": [2, 3], "weights": [1]}, "weights"),
])
def test_mixed_engine_refuses_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        MixedVectorGame(GameConfig(), **{"num_envs": 8, **kwargs})


def test_mixed_engine_splits_by_weights() -> None:
    game = MixedVectorGame(GameConfig(), [2, 12], num_envs=10, weights=[1, 3])
    assert [r.stop - r.start for r in game.rows] == [3, 7]
