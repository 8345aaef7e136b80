"""The SB3 VecEnv view of the batched engine (training/sb3/vecenv.py): API, held games, MaskablePPO on it."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import GameConfig
from goboom_env.training.sb3.vecenv import VectorGameVecEnv


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


@pytest.mark.parametrize("config", [GameConfig(), GameConfig(variant="jokers", num_players=3)],
                         ids=["classic4", "jokers3"])
def test_vecenv_api_shapes_rewards_and_episode_infos(config: GameConfig) -> None:
    venv = VectorGameVecEnv(config, num_envs=16, opponent="random", seed=3)
    obs = venv.reset()
    n = config.num_players
    assert obs.shape == (16, *venv.observation_space.shape) and obs.dtype == np.float32
    assert all(venv.observation_space.contains(o) for o in obs)
    assert venv.action_space.n == NUM_ACTIONS
    assert venv.has_attr("action_masks")
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(150):
        masks = venv.action_masks()
        assert masks.shape == (16, NUM_ACTIONS) and masks.dtype == bool and masks.any(1).all()
        np.testing.assert_array_equal(np.stack(venv.env_method("action_masks")), masks)
        obs, rewards, dones, infos = venv.step(random_legal(masks, rng))
        assert obs.shape == (16, venv.observation_space.shape[0]) and rewards.dtype == np.float32
        assert not rewards[~dones].any()  # the win reward arrives only at the end of the hand
        for b in np.flatnonzero(dones):
            wins = [(n / k - 1) / (n - 1) for k in range(1, n)]  # k co-winners after a blocked round (R2.10)
            assert min(abs(rewards[b] - r) for r in [*wins, -1 / (n - 1)]) < 1e-6
            assert infos[b]["won"] == (rewards[b] > 0)
            assert infos[b]["episode"]["r"] == pytest.approx(rewards[b]) and infos[b]["episode"]["l"] >= 1
            assert infos[b]["terminal_observation"].shape == obs[b].shape
            finished += 1
    assert finished > 50


def test_learner_moves_in_every_game_after_each_step() -> None:
    venv = VectorGameVecEnv(GameConfig(num_players=5), num_envs=12, opponent="random", seed=1)
    from goboom_env.observation import layout

    venv.reset()
    rng = np.random.default_rng(1)
    for _ in range(60):
        obs, _, _, _ = venv.step(random_legal(venv.action_masks(), rng))
        # the observation says it is the observer's turn: relative seat 0 of the to_move block
        assert (obs[:, layout(5)["to_move"]][:, 0] == 1).all()
        assert venv.action_masks().any(axis=1).all()


def test_step_some_moves_only_the_chosen_games_and_holds_the_others_exactly() -> None:
    """``VectorGame.step_some`` against ``step``: the games are independent, so each game of an engine whose
    games move at random times must see, move by move, what the same game sees in an engine where every game
    moves on every call with the same per-game actions; a held game reports no reward and no end."""
    from goboom_env.vector import VectorGame

    config = GameConfig(variant="jokers", num_players=3)
    some, every = (VectorGame(config, num_envs=6, seed=4) for _ in range(2))
    rng = np.random.default_rng(4)
    obs, mask, seat = (a.copy() for a in some.reset())
    every.reset()
    moves: list[list[int]] = [[] for _ in range(6)]
    seen: list[list[tuple]] = [[] for _ in range(6)]
    for _ in range(120):
        moving = rng.random(6) < 0.5
        actions = random_legal(mask.astype(bool), rng)
        out = [a.copy() for a in some.step_some(actions, moving)]
        for g in np.flatnonzero(moving):
            moves[g].append(int(actions[g]))
            seen[g].append(tuple(a[g].tobytes() for a in out))
        held = ~moving
        for before, after in zip((obs, mask, seat), out[:3]):
            np.testing.assert_array_equal(after[held], before[held])
        assert not out[3][held].any() and not out[4][held].any()
        obs, mask, seat = out[:3]
    for k in range(min(len(m) for m in moves)):
        out = every.step(np.array([m[k] for m in moves]))
        for g in range(6):
            assert tuple(a[g].tobytes() for a in out) == seen[g][k], (g, k)
    with pytest.raises(ValueError, match="games must be a bool array of shape"):
        some.step_some(actions, np.ones(5, bool))


def test_unknown_opponent_is_refused() -> None:
    with pytest.raises(ValueError, match="opponent 'mc': the batched env plays 'random' and the heuristics"):
        VectorGameVecEnv(GameConfig(), num_envs=2, opponent="mc")


def test_maskable_ppo_learns_a_few_steps_on_the_vecenv() -> None:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    venv = VectorGameVecEnv(GameConfig(), num_envs=16, opponent="heuristic", seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=256, n_epochs=1, seed=0, verbose=0)
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(1024)
    assert model.num_timesteps >= 1024
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters()))
    assert len(model.ep_info_buffer) > 0  # episode infos reached SB3's logger
    obs = venv.reset()
    actions, _ = model.predict(obs, action_masks=venv.action_masks(), deterministic=True)
    assert venv.action_masks()[np.arange(16), actions].all()
