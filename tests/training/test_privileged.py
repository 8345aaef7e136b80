"""The privileged critic (training/privileged.py): the critic reads the global state (goboom_env.global_state),
the actor never reads them (so a trained agent plays on public information only, R4.1), and the option
trains, saves, exports and resumes like the plain policy."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from helpers import tiny_train_args

pytest.importorskip("torch")  # the train extra
pytest.importorskip("sb3_contrib")
import torch
from stable_baselines3.common.env_checker import check_env

from goboom_env import GameConfig
from goboom_env.global_state import StateEncoder, state_encoder_for, state_size
from goboom_env.training.artifacts.model_files import export_policy, model_metadata
from goboom_env.training.artifacts.run_folder import RunFiles, checkpoint_to_resume
from goboom_env.training.imitation import collect
from goboom_env.training.privileged import policy_class
from goboom_env.training.sb3 import load_ppo_agent
from goboom_env.training.sb3.loop import _resumable_train_args, train
from goboom_env.training.sb3.model import frozen_actor, make_vec_env, save_model
from goboom_env.training.sb3.selfplay import SelfPlayEnv
from goboom_env.training.settings import TrainArgs

JOKERS = GameConfig(variant="jokers", num_players=4)


def tiny_args(**changes: object) -> TrainArgs:
    return tiny_train_args(**{"variant": "jokers", "privileged_critic": True, **changes})


def test_selfplay_env_gives_the_critic_the_global_state() -> None:
    plain = SelfPlayEnv(JOKERS, [("random", 1.0)], seed=3)
    env = SelfPlayEnv(JOKERS, [("random", 1.0)], seed=3, privileged=True)
    obs, _ = env.reset()
    ref, _ = plain.reset()
    assert env.public_dim == plain.observation_space.shape[0] == len(ref)
    assert obs.shape == env.observation_space.shape == (state_size(4),)
    np.testing.assert_array_equal(obs[:env.public_dim], ref)
    # the one state encoder: what the env's state() gives, seen from the learner's seat instead of seat 0
    np.testing.assert_array_equal(obs, StateEncoder(JOKERS).encode(env.aec.match, env.seat))
    if env.seat == 0:
        np.testing.assert_array_equal(obs, env.aec.state())
    assert env.hidden is state_encoder_for(JOKERS)
    check_env(env, warn=True)


def test_the_actor_never_reads_the_hidden_cards(untrained_model: Callable) -> None:
    args = tiny_args()
    model, vec = untrained_model(args, JOKERS)
    assert isinstance(model.policy, policy_class())
    obs = torch.as_tensor(vec.reset(), dtype=torch.float32)
    public = vec.get_attr("public_dim", [0])[0]
    noisy = obs.clone()
    noisy[:, public:] = torch.rand_like(noisy[:, public:])
    with torch.no_grad():
        pi_a, vf_a = model.policy.mlp_extractor(obs)
        pi_b, vf_b = model.policy.mlp_extractor(noisy)
    torch.testing.assert_close(pi_a, pi_b)  # the actor's latent ignores the hidden block...
    assert not torch.allclose(vf_a, vf_b)  # ...the critic's does not
    actor = frozen_actor(model)
    assert actor.layers[0][0].shape[0] == public  # the numpy actor takes the public observation
    with torch.no_grad():
        logits = model.policy.action_net(pi_a).numpy()
    np.testing.assert_allclose(actor.logits(obs[:, :public].numpy()), logits, rtol=1e-5, atol=1e-5)


def test_privileged_model_saves_exports_and_plays(tmp_path: Path, untrained_model: Callable) -> None:
    args = tiny_args()
    model, _ = untrained_model(args, JOKERS)
    model.learn(128)
    path = save_model(model, tmp_path / "m.zip", model_metadata(JOKERS, args, 128))
    from sb3_contrib import MaskablePPO

    loaded = MaskablePPO.load(path)  # the policy class is found again by its module path
    assert isinstance(loaded.policy, policy_class())
    assert loaded.policy.public_dim == model.policy.public_dim
    small = export_policy(path, tmp_path / "small.zip")
    agent = load_ppo_agent(JOKERS, path=str(small))
    from goboom_env.env import raw_env

    env = raw_env(config=JOKERS)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent.act(obs)]


def test_resume_refuses_to_switch_the_critic(tmp_path: Path, untrained_model: Callable) -> None:
    args = tiny_args(out=str(tmp_path / "run"))
    model, _ = untrained_model(args, JOKERS)
    files = RunFiles(args.out)
    save_model(model, files.checkpoints / "model_64.zip", model_metadata(JOKERS, args, 64))
    plain = tiny_args(out=args.out, resume=True, privileged_critic=False)
    with pytest.raises(ValueError, match="privileged_critic=False differs from the checkpoint's True"):
        train(plain)
    same = tiny_args(out=args.out, resume=True)
    resumed = checkpoint_to_resume(same, files.latest_checkpoint, "model_STEPS.zip", files.checkpoints,
                                   lambda path: _resumable_train_args(path, JOKERS))
    assert resumed == files.checkpoints / "model_64.zip"


def test_demonstrations_carry_the_hidden_cards_for_the_critic() -> None:
    enc = state_encoder_for(JOKERS)
    data = collect(JOKERS, "heuristic", 5, seed=2, hidden=enc)
    plain = collect(JOKERS, "heuristic", 5, seed=2)
    assert data.obs.shape[1] == plain.obs.shape[1] + enc.hidden_size == enc.size
    np.testing.assert_array_equal(data.obs[:, :plain.obs.shape[1]], plain.obs)
    np.testing.assert_array_equal(data.actions, plain.actions)


def test_bad_public_dim_is_named() -> None:
    args = tiny_args()
    vec = make_vec_env(args, JOKERS)
    from sb3_contrib import MaskablePPO

    with pytest.raises(ValueError, match="public_dim must be in"):
        MaskablePPO(policy_class(), vec, policy_kwargs={"public_dim": 10_000,
                                                        "net_arch": {"pi": [8], "vf": [8]}})
    with pytest.raises(ValueError, match="net_arch="):
        MaskablePPO(policy_class(), vec, policy_kwargs={"public_dim": 10, "net_arch": [8]})
    vec.close()
