"""The recipes that train with TorchRL and Tianshou (training/train_torchrl.py, training/train_tianshou.py): the
Tianshou adapter (goboom_env/training/interop/tianshou.py), the reward credit each recipe relies on, and (slow) each
recipe trained on a tiny budget in a subprocess, its model played by ``goboom evaluate``."""

from __future__ import annotations

import dataclasses
import json
import runpy
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from helpers import ROOT, goboom_evaluate

import goboom_env
from goboom_env.agents.ppo import read_metadata
from goboom_env.outdir import mark

pytest.importorskip("tianshou")

import torch
from tianshou.data import Batch

from goboom_env.training.interop.tianshou import MaskedActor, MaskInObservation, ObservationCritic

TINY = ["--timesteps", "256", "--num-envs", "2", "--num-steps", "64", "--minibatch-size", "64", "--n-epochs", "1",
        "--net-arch", "16"]
"""A recipe's budget in the tests: two rollouts of 128 learner decisions, a 16-unit network."""


def recipe(name: str, *args: str) -> subprocess.CompletedProcess:
    """Run ``python training/NAME ARGS`` from the checkout."""
    return subprocess.run([sys.executable, str(ROOT / "training" / name), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


# -- the Tianshou adapter ---------------------------------------------------------------------------------------


def test_the_mask_joins_the_observation_and_the_info_stays_empty() -> None:
    plain = gymnasium.make(goboom_env.GYM_ID, opponents=["random"])
    masked = MaskInObservation(gymnasium.make(goboom_env.GYM_ID, opponents=["random"]))
    (obs, info), (inner, inner_info) = masked.reset(seed=3), plain.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(200):
        assert info == {} and masked.observation_space.contains(obs)
        np.testing.assert_array_equal(obs["obs"], inner)
        np.testing.assert_array_equal(obs["mask"], inner_info["action_mask"].astype(bool))
        action = int(rng.choice(np.flatnonzero(obs["mask"])))
        obs, reward, terminated, truncated, info = masked.step(action)
        inner, inner_reward, inner_terminated, _, inner_info = plain.step(action)
        assert (reward, terminated, truncated) == (inner_reward, inner_terminated, False)
        if terminated:
            (obs, info), (inner, inner_info) = masked.reset(), plain.reset()


def test_the_masked_actor_never_offers_an_illegal_action() -> None:
    torch.manual_seed(0)
    net = torch.nn.Linear(5, 54)
    mask = np.zeros((3, 54), bool)
    mask[0, [2, 53]] = mask[1, 7] = mask[2, :] = True
    obs = Batch(obs=np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32), mask=mask)
    logits, state = MaskedActor(net)(obs)
    assert state is None
    unmasked = net(torch.as_tensor(obs.obs))
    torch.testing.assert_close(logits[torch.as_tensor(mask)], unmasked[torch.as_tensor(mask)])
    probs = torch.distributions.Categorical(logits=logits).probs
    assert (probs[torch.as_tensor(~mask)] == 0).all() and torch.allclose(probs.sum(-1), torch.ones(3))
    probs[0, 2].backward()  # an illegal logit gets no gradient: it is a constant
    assert (net.weight.grad[torch.as_tensor(~mask[0])] == 0).all() and net.weight.grad[2].abs().sum() > 0


def test_the_critic_reads_the_observation_vector() -> None:
    net = torch.nn.Sequential(torch.nn.Linear(5, 1))
    obs = Batch(obs=np.ones((2, 5), np.float32), mask=np.ones((2, 54), bool))
    torch.testing.assert_close(ObservationCritic(net)(obs), net(torch.ones(2, 5)))


@pytest.mark.slow  # imports TorchRL
def test_the_recipes_networks_export_as_they_compute(tmp_path: Path) -> None:
    """TorchRL's ``MLP`` and Tianshou's ``MLP`` (its ``model``), the recipes' actors, play in numpy as in torch."""
    pytest.importorskip("torchrl")
    import tianshou.utils.net.common
    import torchrl.modules

    from goboom_env.agents.ppo import load_actor
    from goboom_env.observation import observation_size
    from goboom_env.training import export_model

    size, tanh = observation_size(4), torch.nn.Tanh
    torch.manual_seed(0)
    nets = {"torchrl": torchrl.modules.MLP(in_features=size, out_features=54, num_cells=[32, 16],
                                           activation_class=tanh),
            "tianshou": tianshou.utils.net.common.MLP(input_dim=size, output_dim=54, hidden_sizes=[32, 16],
                                                      activation=tanh).model}
    obs = np.random.default_rng(0).uniform(0, 1, (8, size)).astype(np.float32)
    for name, net in nets.items():
        actor = load_actor(export_model(net, "classic", tmp_path / f"{name}.zip"))
        with torch.no_grad():
            np.testing.assert_allclose(actor.logits(obs), net(torch.as_tensor(obs)).numpy(), atol=1e-5)


# -- the reward credit each recipe relies on ---------------------------------------------------------------------


def test_tianshou_pettingzoo_env_files_a_loss_under_the_winners_move() -> None:
    """Why the Tianshou recipe trains on the learner-seat view (docs/libraries.md): Tianshou's ``PettingZooEnv``
    returns each step's rewards with the observation of the seat to move next, and its multi-agent path gives a
    seat the rewards of the steps it took itself: a seat that loses on another player's move never sees its loss."""
    from tianshou.env import PettingZooEnv

    env = PettingZooEnv(goboom_env.env(num_players=4))
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    own = dict.fromkeys(env.agents, 0.0)  # what each seat's own moves were paid
    done = False
    while not done:
        mover = obs["agent_id"]
        obs, rewards, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(obs["mask"]))))
        own[mover] += rewards[env.agent_idx[mover]]
        done = terminated or truncated
    final = dict(zip(env.agents, rewards))
    assert sorted(final.values()) == pytest.approx([-1 / 3] * 3 + [1])
    assert [own[a] for a in env.agents if final[a] < 0] == [0.0] * 3  # the losses reached no loser's own move


@pytest.mark.slow  # imports TorchRL and plays a hand through it
@pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested:UserWarning")
def test_torchrl_gae_gives_every_seat_its_own_result() -> None:
    """The TorchRL recipe's reward credit: through ``PettingZooWrapper`` every seat's rows carry the rewards that
    reach it, so GAE (gamma = lambda = 1, a zero critic) gives every row of a seat that seat's own result of the
    hand, a loss on another player's move included."""
    pytest.importorskip("torchrl")
    from tensordict.nn import TensorDictModule
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType
    from torchrl.objectives.value import GAE

    env = PettingZooWrapper(goboom_env.env(num_players=4), use_mask=True, group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
                            seed=0)
    torch.manual_seed(0)
    data = env.rollout(1000, break_when_any_done=True)  # random legal actions (the spec's action mask)
    zero = TensorDictModule(lambda obs: torch.zeros(*obs.shape[:-1], 1), in_keys=[("agents", "observation",
                                                                                  "observation")],
                            out_keys=[("agents", "state_value")])
    gae = GAE(gamma=1.0, lmbda=1.0, value_network=zero)
    gae.set_keys(reward=("agents", "reward"), done=("agents", "done"), terminated=("agents", "terminated"),
                 value=("agents", "state_value"), advantage=("agents", "advantage"),
                 value_target=("agents", "value_target"))
    gae(data)
    assert bool(data["next", "done"][-1]) and not data["next", "done"][:-1].any()  # one whole hand
    result = data["next", "agents", "reward"][-1].squeeze(-1)
    assert sorted(result.tolist()) == pytest.approx([-1 / 3] * 3 + [1])
    targets = data["agents", "value_target"].squeeze(-1)  # [steps, seats]
    torch.testing.assert_close(targets, result.expand_as(targets))
    assert data["agents", "mask"].sum(-1).eq(1).all()  # one seat moves per step


# -- the recipes, end to end -------------------------------------------------------------------------------------


@pytest.mark.slow  # a TorchRL run in a subprocess, then goboom evaluate
def test_torchrl_recipe_trains_a_model_goboom_evaluate_plays(tmp_path: Path) -> None:
    done = recipe("train_torchrl.py", *TINY, "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == f"model: {tmp_path / 'run' / 'model.zip'}"
    check_model_plays(tmp_path, "train_torchrl.py")


@pytest.mark.slow  # a Tianshou run in a subprocess, then goboom evaluate
def test_tianshou_recipe_trains_a_model_goboom_evaluate_plays(tmp_path: Path) -> None:
    done = recipe("train_tianshou.py", *TINY, "--opponents", "random=1", "heuristic=1", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == f"model: {tmp_path / 'run' / 'model.zip'}"
    check_model_plays(tmp_path, "train_tianshou.py")


def check_model_plays(tmp_path: Path, name: str) -> None:
    """The model in ``tmp_path/run`` records its run and plays 8 hands against random in ``goboom evaluate``; a second
    run of recipe ``name`` into the same folder is refused in one line and leaves the model as it was."""
    model = tmp_path / "run" / "model.zip"
    written = model.read_bytes()
    again = recipe(name, *TINY, "--out", str(tmp_path / "run"))
    assert again.returncode == 2
    assert again.stderr == (f"{name}: error: --out {tmp_path / 'run'} already exists and is not empty; pass --force to "
                            "replace it, or choose another --out\n")
    assert model.read_bytes() == written
    meta = read_metadata(model)
    assert meta["timesteps"] == 256 and meta["train_args"]["net_arch"] == [16]
    assert meta["train_args"]["episode"] == "hand" and meta["config"]["num_players"] == 4
    goboom_evaluate(tmp_path / "eval", "--agents", f"ppo:{model}", "random", "--episode", "hand", "--games", "8")
    table = {row["agent"]: row for row in json.loads((tmp_path / "eval" / "results.json").read_text())["table"]}
    assert table[f"ppo:{model}"]["games"] == 8 and table["random"]["games"] == 24


@pytest.mark.parametrize("name", ["train_torchrl.py", "train_tianshou.py"])
def test_a_recipe_refuses_a_bad_setting(name: str, tmp_path: Path) -> None:
    settings = runpy.run_path(str(ROOT / "training" / name))["SETTINGS"]
    settings.validate()
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "model.zip").write_text("mine")
    bad = [({"out": str(tmp_path / "run")}, f"--out {tmp_path / 'run'} already exists and is not empty; pass --force "
                                            "to replace it, or choose another --out"),
           ({"minibatch_size": 4096}, "minibatch_size (4096) must be <= num_envs x num_steps (1024), the learner "
                                      "decisions of one rollout"),
           ({"timesteps": 0}, "timesteps must be >= 1, got 0"),
           ({"seed": -1}, "seed must be >= 0, got -1"),
           ({"threads": 5000}, "threads must be in 1..1024, got 5000"),
           ({"num_players": 13}, "num_players must be an integer in 2..12, got 13")]
    if name == "train_tianshou.py":
        bad += [({"opponents": ["random=x"]}, "opponents item 'random=x' must be SPEC=WEIGHT with a weight >= 0, e.g. "
                                              "heuristic=2"),
                ({"opponents": ["self=1"]}, "opponents: unknown agent 'self' in spec 'self'"),
                ({"seat": "left"}, "seat must be one of ['rotate', 'random'], got 'left'")]
    for change, error in bad:
        with pytest.raises(ValueError) as caught:
            dataclasses.replace(settings, **change).validate()
        assert str(caught.value).startswith(error), change
    with pytest.raises(ValueError, match=r"was not written by goboom .* it would remove model\.zip"):
        dataclasses.replace(settings, out=str(tmp_path / "run"), force=True).validate()  # a user's own model
    mark(tmp_path / "run")  # an earlier run's folder: --force replaces it
    dataclasses.replace(settings, out=str(tmp_path / "run"), force=True).validate()
