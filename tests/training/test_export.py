"""export_model: a model file that every tool plays (``ppo:PATH``), of a MaskablePPO / PPO model, its saved zip or a
PyTorch MLP; the MaskablePPO is trained by docs/interop.md's own snippet, at a tiny budget."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import ROOT

pytest.importorskip("torch")  # the train extra
pytest.importorskip("sb3_contrib")
import sb3_contrib
import torch

from goboom_env import GameConfig
from goboom_env.agents import make_agent
from goboom_env.agents.ppo import load_actor, read_metadata
from goboom_env.cards import NUM_ACTIONS
from goboom_env.cli import main
from goboom_env.evaluation.tournament import run_tournament
from goboom_env.models import model_path
from goboom_env.observation import observation_size
from goboom_env.training import export_model
from goboom_env.training.artifacts import model_files

CLASSIC4 = GameConfig(variant="classic", num_players=4)
OBS = observation_size(4)


def interop_training_snippet() -> str:
    """The MaskablePPO block of docs/interop.md, at a tiny budget: one rollout of 64 steps, one epoch."""
    text = (ROOT / "docs" / "interop.md").read_text()
    block = next(code for code in re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
                 if "MaskablePPO(" in code and ".learn(" in code)
    tiny = {"n_steps=512": "n_steps=64", "batch_size=128": "batch_size=32, n_epochs=1"}
    for old, new in tiny.items():
        assert old in block, f"docs/interop.md's training snippet no longer says {old}"
        block = block.replace(old, new)
    block, count = re.subn(r"\.learn\(\s*[\d_]+", ".learn(64", block)
    assert count == 1 and 'model.save("runs/my_sb3_model")' in block
    return block


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """The docs' snippet run in a fresh folder: its MaskablePPO model and the zip its ``model.save`` wrote."""
    folder = tmp_path_factory.mktemp("interop")
    here = Path.cwd()
    namespace: dict[str, Any] = {}
    (folder / "runs").mkdir()  # the docs' run folder (model.save would warn that it creates it)
    os.chdir(folder)
    try:
        exec(compile(interop_training_snippet(), "docs/interop.md", "exec"), namespace)
    finally:
        os.chdir(here)
    namespace["env"].close()
    return namespace["model"], folder / "runs" / "my_sb3_model.zip"


def sb3_logits(policy: Any, obs: np.ndarray) -> np.ndarray:
    """The unmasked action logits of an SB3 actor-critic policy."""
    with torch.no_grad():
        latent = policy.mlp_extractor.forward_actor(policy.extract_features(torch.as_tensor(obs)))
        return policy.action_net(latent).numpy()


def random_observations(rows: int = 16, size: int = OBS) -> np.ndarray:
    return np.random.default_rng(0).random((rows, size)).astype(np.float32)


def test_the_saved_sb3_zip_is_refused_naming_the_export(trained: tuple[Any, Path]) -> None:
    _, saved = trained
    hint = (r"stable-baselines3 model without goboom metadata \(it has no goboom_meta\.json member\): export it with "
            r"`goboom export ")
    with pytest.raises(ValueError, match=hint):
        make_agent(f"ppo:{saved}", CLASSIC4)


def test_goboom_evaluate_of_a_saved_sb3_zip_names_the_export(trained: tuple[Any, Path],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The command a new user types first reads the model's game before loading it: the same hint, exit 2."""
    from goboom_env.cli import main

    _, saved = trained
    assert main(["evaluate", "--agents", f"ppo:{saved}", "heuristic", "--games", "4", "--no-progress"]) == 2
    assert "stable-baselines3 model without goboom metadata" in capsys.readouterr().err


@pytest.mark.parametrize("source", ["model", "zip", "policy"])
def test_the_docs_model_exports_and_plays_as_it_does_in_sb3(trained: tuple[Any, Path], tmp_path: Path,
                                                             source: str) -> None:
    model, saved = trained
    given = {"model": model, "zip": saved, "policy": model.policy}[source]
    out = export_model(given, CLASSIC4, tmp_path / "my_model.zip")
    meta = read_metadata(out)
    assert meta["config"] == CLASSIC4.to_dict() and meta["observation_version"] == 1 and meta["deterministic"]
    assert model.num_timesteps > 0 and meta["timesteps"] == (0 if source == "policy" else model.num_timesteps)
    actor = load_actor(out)
    assert actor.activation == "tanh" and [w.shape for w, _ in actor.layers] == [(OBS, 64), (64, 64), (64, 54)]
    obs = random_observations()
    np.testing.assert_allclose(actor.logits(obs), sb3_logits(model.policy, obs), atol=1e-5)
    # the masked greedy action is MaskablePPO's own deterministic prediction
    masks = np.random.default_rng(1).random((len(obs), NUM_ACTIONS)) < 0.3
    masks[:, -1] = True
    agent = make_agent(f"ppo:{out}", CLASSIC4)
    for row, mask in zip(obs, masks):
        expected, _ = model.predict(row, action_masks=mask, deterministic=True)
        assert agent.act({"observation": row, "action_mask": mask.astype(np.int8)}) == int(expected)
    result = run_tournament(CLASSIC4, [f"ppo:{out}", "heuristic", "heuristic", "heuristic"], 8, duplicate=True,
                            progress=False)
    assert sum(row["games"] for row in result.table()) == 32


def test_goboom_export_then_goboom_evaluate(trained: tuple[Any, Path], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The command line of the docs: what `goboom evaluate` refused (exit 2) plays once exported."""
    _, saved = trained
    out = tmp_path / "my_model.zip"
    assert main(["export", str(saved), "--variant", "classic", "--num-players", "4", "--out", str(out)]) == 0
    assert f"play it as ppo:{out}" in capsys.readouterr().out
    assert main(["evaluate", "--agents", f"ppo:{out}", "heuristic", "--games", "4", "--no-progress",
                 "--out", str(tmp_path / "results")]) == 0
    assert (tmp_path / "results" / "report.md").exists()
    refused = tmp_path / "x.zip"
    assert main(["export", str(saved), "--variant", "jokers", "--num-players", "3", "--out", str(refused)]) == 2
    assert "reads 517 inputs, but the snapshot observations of jokers Go Boom at 3 players have 457" in \
        capsys.readouterr().err
    assert not refused.exists()


def test_relu_and_other_net_arch_export_from_the_object_and_the_zip(tmp_path: Path) -> None:
    import gymnasium

    env = gymnasium.make("goboom_env/GoBoom-v0", variant="jokers", num_players=3, opponents=["random"])
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, seed=0, policy_kwargs={
        "net_arch": {"pi": [32, 16, 8], "vf": [8]}, "activation_fn": torch.nn.ReLU})
    model.save(tmp_path / "relu")
    config = env.unwrapped.config
    obs = random_observations(size=observation_size(3))
    for given in (model, tmp_path / "relu.zip", str(tmp_path / "relu.zip")):
        actor = load_actor(export_model(given, config, tmp_path / "out.zip", deterministic=False))
        assert actor.activation == "relu" and [w.shape[1] for w, _ in actor.layers] == [32, 16, 8, 54]
        np.testing.assert_allclose(actor.logits(obs), sb3_logits(model.policy, obs), atol=1e-5)
    assert read_metadata(tmp_path / "out.zip")["deterministic"] is False
    env.close()


def test_a_torch_mlp_exports(tmp_path: Path) -> None:
    nn = torch.nn
    torch.manual_seed(0)
    nets = {
        "tanh": nn.Sequential(nn.Linear(OBS, 32), nn.Tanh(), nn.Sequential(nn.Linear(32, 16), nn.Tanh()),
                              nn.Dropout(0.1), nn.Linear(16, NUM_ACTIONS)).eval(),
        "relu": nn.Sequential(nn.Flatten(), nn.Linear(OBS, 32, bias=False), nn.ReLU(), nn.Linear(32, NUM_ACTIONS)),
        "linear": nn.Linear(OBS, NUM_ACTIONS),
    }
    obs = random_observations()
    for name, net in nets.items():
        out = export_model(net, "classic", tmp_path / f"{name}.zip")
        actor = load_actor(out)
        assert actor.activation == ("relu" if name == "relu" else "tanh")
        with torch.no_grad():
            expected = net(torch.as_tensor(obs)).numpy()
        np.testing.assert_allclose(actor.logits(obs), expected, atol=1e-5)
        assert make_agent(f"ppo:{out}", CLASSIC4).name == f"ppo:{out}"
        assert read_metadata(out)["exported_from"] == f"a torch nn.{type(net).__name__}"


@pytest.mark.parametrize(("net", "message"), [
    (lambda nn: nn.Sequential(nn.Conv1d(1, 4, 3), nn.Flatten(), nn.Linear(4, NUM_ACTIONS)),
     "holding a Conv1d: the numpy actor plays Linear layers with Tanh or ReLU"),
    (lambda nn: nn.Sequential(nn.Linear(OBS, 8), nn.Tanh(), nn.Linear(8, NUM_ACTIONS), nn.Tanh()),
     "ends in an activation"),
    (lambda nn: nn.Sequential(nn.Linear(OBS, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, NUM_ACTIONS)),
     r"mixing activations \(\['relu', 'tanh'\]\)"),
    (lambda nn: nn.Sequential(nn.Linear(OBS, 8), nn.Linear(8, NUM_ACTIONS)), "two Linear layers in a row"),
    (lambda nn: nn.Sequential(nn.Linear(OBS, 8), nn.GELU(), nn.Linear(8, NUM_ACTIONS)), "holding a GELU"),
    (lambda nn: nn.Sequential(nn.Linear(OBS, 8), nn.LayerNorm(8), nn.Linear(8, NUM_ACTIONS)), "holding a LayerNorm"),
    (lambda nn: nn.Sequential(nn.Linear(100, 8), nn.Tanh(), nn.Linear(8, NUM_ACTIONS)),
     "reads 100 inputs, but the snapshot observations of classic Go Boom at 4 players have 517"),
    (lambda nn: nn.Sequential(nn.Linear(OBS, 8), nn.Tanh(), nn.Linear(8, 10)), "gives 10 action logits, not 54"),
    (lambda nn: nn.LSTM(OBS, 8), "cannot export a LSTM: give a stable-baselines3 model"),
    (lambda nn: "not a model", "model file not a model does not exist"),
])
def test_what_the_numpy_actor_cannot_play_is_refused(tmp_path: Path, net: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        export_model(net(torch.nn), CLASSIC4, tmp_path / "out.zip")
    assert not (tmp_path / "out.zip").exists()


def test_an_sb3_policy_with_a_features_extractor_is_refused(tmp_path: Path) -> None:
    import gymnasium
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class TinyCnn(BaseFeaturesExtractor):
        """A features extractor with weights (what a CnnPolicy or a custom extractor has)."""

        def __init__(self, observation_space: Any, features_dim: int = 8) -> None:
            super().__init__(observation_space, features_dim)
            self.linear = torch.nn.Linear(observation_space.shape[0], features_dim)

        def forward(self, obs: Any) -> Any:
            return torch.tanh(self.linear(obs))

    env = gymnasium.make("goboom_env/GoBoom-v0", opponents=["random"])
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, seed=0,
                                    policy_kwargs={"features_extractor_class": TinyCnn})
    with pytest.raises(ValueError, match="features_extractor is a TinyCnn; the numpy actor plays an MLP"):
        export_model(model, CLASSIC4, tmp_path / "out.zip")
    state = {k: v.numpy() for k, v in model.policy.state_dict().items()}
    saved = model_files.SavedSb3Policy(state, "tanh", 0, "a saved CNN")  # the zip's weights, extractor unnamed
    with pytest.raises(ValueError, match=r"weights the numpy actor cannot play \(features_extractor\.linear\.bias"):
        export_model(saved, CLASSIC4, tmp_path / "out.zip")
    env.close()


def test_a_goboom_model_file_is_checked_then_copied_play_only(tmp_path: Path) -> None:
    shipped = model_path("classic-4p-hands")
    out = export_model(shipped, CLASSIC4, tmp_path / "copy.zip", deterministic=False)
    meta = read_metadata(out)
    assert meta["exported_from"] == str(shipped) and meta["deterministic"] is False
    assert meta["config"] == read_metadata(shipped)["config"]
    with pytest.raises(ValueError, match="trained for a different game configuration"):
        export_model(shipped, GameConfig(variant="jokers", num_players=4), tmp_path / "other.zip")


def test_a_network_records_its_training_run(tmp_path: Path) -> None:
    from goboom_env.agents.ppo import trained_episode
    from goboom_env.cli.evaluate import episode_note
    from goboom_env.training.settings import RecipeArgs

    net = torch.nn.Linear(OBS, NUM_ACTIONS)
    args = RecipeArgs(episode="match", net_arch=[16], out=str(tmp_path / "run"))
    out = export_model(net, CLASSIC4, tmp_path / "run.zip", args=args, timesteps=4096)
    meta = read_metadata(out)
    assert meta["timesteps"] == 4096 and meta["train_args"]["net_arch"] == [16] and trained_episode(meta) == "match"
    assert episode_note([f"ppo:{out}"], "match") is None  # goboom evaluate knows the unit it was trained on
    assert "was trained on whole matches" in episode_note([f"ppo:{out}"], "hand")
    plain = read_metadata(export_model(net, CLASSIC4, tmp_path / "plain.zip"))
    assert plain["timesteps"] == 0 and plain["train_args"] is None and trained_episode(plain) == "hand"
    with pytest.raises(ValueError, match="is a goboom model file: it keeps the args and timesteps of its own"):
        export_model(out, CLASSIC4, tmp_path / "copy.zip", timesteps=1)
    assert not (tmp_path / "copy.zip").exists()
