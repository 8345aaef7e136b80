"""MaskablePPO training (goboom_env/training/sb3/, goboom train): the numpy actor equals the torch policy,
saved models carry metadata and refuse another configuration, and `goboom train` trains, saves, resumes
and evaluates end to end in a subprocess."""

from __future__ import annotations

import csv
import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")  # the train extra
pytest.importorskip("sb3_contrib")
import torch
from helpers import ROOT, ctrl_c_once_started, goboom, python_output, save_untrained_model, tiny_train_args

from goboom_env import GameConfig, __version__
from goboom_env.agents import make_agent
from goboom_env.agents.ppo import META_NAME, check_compatible, load_actor, read_metadata
from goboom_env.cli.options import parse as parse_options
from goboom_env.env import raw_env
from goboom_env.observation import observation_size
from goboom_env.training.artifacts.model_files import average_policies, export_policy, model_metadata
from goboom_env.training.artifacts.run_folder import RunFiles
from goboom_env.training.imitation import clone, collect
from goboom_env.training.sb3 import load_ppo_agent
from goboom_env.training.sb3.model import build_model, frozen_actor, make_vec_env, resolve_device, save_model
from goboom_env.training.settings import TrainArgs, parse_opponents

CLASSIC = GameConfig(variant="classic", num_players=4)


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    args = tiny_train_args()
    vec = make_vec_env(args, CLASSIC)
    model = build_model(args, vec, None)
    model.learn(128)
    path = save_model(model, tmp_path_factory.mktemp("model") / "m.zip", model_metadata(CLASSIC, args, 128))
    vec.close()
    return path


def test_numpy_actor_matches_the_torch_policy(untrained_model: Callable) -> None:
    model, vec = untrained_model(tiny_train_args(), CLASSIC)
    with torch.no_grad():  # perturb the weights so the output layer is not near zero
        for p in model.policy.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    actor = frozen_actor(model)
    obs = vec.reset()
    masks = np.stack(vec.env_method("action_masks"))
    with torch.no_grad():
        dist = model.policy.get_distribution(torch.as_tensor(obs))
        dist.apply_masking(masks)
        torch_logits = dist.distribution.logits.numpy()
        expected, _ = model.predict(obs, action_masks=masks, deterministic=True)
    got = [actor.act(o, m) for o, m in zip(obs, masks)]
    assert got == expected.tolist()
    raw = actor.logits(obs)
    finite = masks.astype(bool)
    # torch normalises the masked logits (log-softmax); compare after the same normalisation
    ours = raw - np.log(np.sum(np.exp(raw - raw.max(1, keepdims=True)) * finite, 1, keepdims=True)) - raw.max(
        1, keepdims=True)
    np.testing.assert_allclose(ours[finite], torch_logits[finite], rtol=1e-4, atol=1e-4)


def test_saved_model_carries_metadata_and_plays_as_ppo_spec(saved_model: Path) -> None:
    meta = read_metadata(saved_model)
    assert meta["config"] == CLASSIC.to_dict()
    assert meta["observation_version"] == 1 and meta["package_version"] == __version__
    assert meta["timesteps"] == 128 and meta["train_args"]["num_envs"] == 2
    play_legally(make_agent(f"ppo:{saved_model}", CLASSIC, seed=0), CLASSIC, games=5)


def play_legally(agent: object, config: GameConfig, games: int) -> None:
    """``agent`` plays every seat of ``games`` env games; each of its moves must be in the action mask."""
    env = raw_env(config=config)
    for game in range(games):
        env.reset(seed=game)
        while not all(env.terminations.values()):
            obs = env.observe(env.agent_selection)
            action = agent.act(obs)
            assert obs["action_mask"][action] == 1
            env.step(action)


def test_exported_policy_is_small_and_plays_like_the_model(saved_model: Path, tmp_path: Path) -> None:
    small = export_policy(saved_model, tmp_path / "small.zip")
    assert small.stat().st_size < saved_model.stat().st_size / 3
    assert read_metadata(small)["exported_from"] == str(saved_model)
    assert make_agent(f"ppo:{small}", CLASSIC).rng is None  # greedy by default
    sampling = export_policy(saved_model, tmp_path / "sampling.zip", deterministic=False)
    assert make_agent(f"ppo:{sampling}", CLASSIC).rng is not None
    assert make_agent(f"ppo:path={sampling},deterministic=true", CLASSIC).rng is None
    full, slim = (make_agent(f"ppo:{p}", CLASSIC, seed=0) for p in (saved_model, small))
    env = raw_env(config=CLASSIC)
    env.reset(seed=0)
    while not all(env.terminations.values()):
        obs = env.observe(env.agent_selection)
        assert full.act(obs) == slim.act(obs)
        env.step(full.act(obs))


def test_averaged_policy_has_the_mean_weights(saved_model: Path, tmp_path: Path) -> None:
    other = save_untrained_model(tiny_train_args(seed=7), CLASSIC, tmp_path / "other.zip", timesteps=64)
    same = load_actor(average_policies([saved_model, saved_model], tmp_path / "same.zip"))
    for (w, b), (w0, b0) in zip(same.layers, load_actor(saved_model).layers):
        np.testing.assert_allclose(w, w0, rtol=1e-6)
        np.testing.assert_allclose(b, b0, rtol=1e-6)
    mean = average_policies([saved_model, other], tmp_path / "mean.zip")
    a, b_, m = load_actor(saved_model), load_actor(other), load_actor(mean)
    for (wa, ba), (wb, bb), (wm, bm) in zip(a.layers, b_.layers, m.layers):
        np.testing.assert_allclose(wm, (wa + wb) / 2, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(bm, (ba + bb) / 2, rtol=1e-5, atol=1e-7)
    meta = read_metadata(mean)
    assert meta["averaged_from"] == [str(saved_model), str(other)] and meta["timesteps"] == 64
    assert make_agent(f"ppo:{mean}", CLASSIC).rng is None  # plays like any exported model


def test_averaging_refuses_mixed_models(saved_model: Path, tmp_path: Path) -> None:
    narrow = save_untrained_model(tiny_train_args(net_arch=[16]), CLASSIC, tmp_path / "narrow.zip")
    with pytest.raises(ValueError, match="another network shape"):
        average_policies([saved_model, narrow], tmp_path / "x.zip")
    three = GameConfig(variant="classic", num_players=3)
    other = save_untrained_model(tiny_train_args(), three, tmp_path / "three.zip")
    with pytest.raises(ValueError, match="another configuration"):
        average_policies([saved_model, other], tmp_path / "y.zip")
    with pytest.raises(ValueError, match="at least one model"):
        average_policies([], tmp_path / "z.zip")


def test_loading_into_a_mismatched_config_fails_clearly(saved_model: Path) -> None:
    with pytest.raises(ValueError, match=r"4 players; the requested game is classic Go Boom, 3 players \(different: "
                                         r"players\)"):
        load_ppo_agent(GameConfig(variant="classic", num_players=3), 0, str(saved_model))
    with pytest.raises(ValueError, match=r"classic Go Boom, .*; the requested game is jokers Go Boom, .*\(different: "
                                         r"variant"):
        make_agent(f"ppo:{saved_model}", GameConfig(variant="jokers", num_players=4))
    with pytest.raises(ValueError, match=r"standard scoring, target score 200; the requested game is .*reverse "
                                         r"scoring, target score 100 \(different: scoring, target score\)"):
        load_ppo_agent(CLASSIC.replace(scoring="reverse"), 0, str(saved_model))


def test_observation_version_and_foreign_files_are_refused(saved_model: Path, tmp_path: Path) -> None:
    meta = read_metadata(saved_model)
    with pytest.raises(ValueError, match="observation layout version 0"):
        check_compatible({**meta, "observation_version": 0}, CLASSIC)
    plain = tmp_path / "plain.zip"
    with zipfile.ZipFile(saved_model) as src, zipfile.ZipFile(plain, "w") as dst:
        for item in src.namelist():
            if item != META_NAME:
                dst.writestr(item, src.read(item))
    with pytest.raises(ValueError, match="stable-baselines3 model without goboom metadata"):  # train's zip less
        load_ppo_agent(CLASSIC, 0, str(plain))                                                 # its metadata
    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(foreign, "w") as dst:
        dst.writestr("notes.txt", "not a model")
    with pytest.raises(ValueError, match="not a goboom-env model"):
        load_ppo_agent(CLASSIC, 0, str(foreign))
    with pytest.raises(ValueError, match="does not exist"):
        load_ppo_agent(CLASSIC, 0, str(tmp_path / "missing.zip"))
    with pytest.raises(ValueError, match="needs a model path"):
        load_ppo_agent(CLASSIC, 0, None)


def test_behaviour_cloning_copies_the_teacher(untrained_model: Callable) -> None:
    data = collect(CLASSIC, "heuristic", 60, seed=1)
    assert len(data) == len(data.masks) == len(data.returns) > 60 * 4
    assert all(data.masks[i, a] for i, a in enumerate(data.actions))  # every recorded move was legal
    assert set(np.round(data.returns.astype(float), 4).tolist()) == {1.0, -0.3333}  # the mover's hand win reward
    model, _ = untrained_model(tiny_train_args(net_arch=[64, 64]), CLASSIC)
    before = clone(model, data, epochs=1, learning_rate=0.0)["bc_agreement"]
    after = clone(model, data, epochs=8)["bc_agreement"]
    assert after > before + 0.05


def parse(argv: list[str]) -> TrainArgs:
    """``goboom train``'s arguments from a command line, checked as ``goboom train`` checks them."""
    args = parse_options(TrainArgs, argv, "goboom train")
    args.validate()
    return args


def test_arguments_from_toml_then_flags(tmp_path: Path) -> None:
    toml = tmp_path / "run.toml"
    toml.write_text('variant = "jokers"\ntimesteps = 5000\nopponents = ["random=2", "self=1"]\nnet_arch = [64]\n')
    args = parse(["--config", str(toml), "--timesteps", "7000", "--no-progress"])
    assert (args.variant, args.timesteps, args.opponents, args.net_arch, args.progress) == (
        "jokers", 7000, ["random=2", "self=1"], [64], False)
    assert args.game_config() == GameConfig(variant="jokers", num_players=4, after_joker="match")
    toml.write_text("timestep = 5\n")
    with pytest.raises(ValueError, match=r"unknown keys \['timestep'\]"):
        parse(["--config", str(toml)])
    with pytest.raises(ValueError, match=r"invalid choice 'threads' for argument '--vec-env'\. Expected one of "
                                         r"\('dummy', 'subproc'\)"):
        parse(["--vec-env", "threads"])
    with pytest.raises(ValueError, match="SPEC=WEIGHT"):
        parse_opponents(["heuristic"])
    assert parse_opponents(["mc:budget=20=0.5", "self=2"]) == [("mc:budget=20", 0.5), ("self", 2.0)]


TINY = ["--timesteps", "1024", "--bc-games", "0", "--num-envs", "2", "--num-steps", "128", "--minibatch-size", "128",
        "--n-epochs", "2", "--net-arch", "32", "32", "--snapshot-every", "256", "--checkpoint-every", "512",
        "--no-progress"]


def test_train_help_lists_the_documented_fields() -> None:
    result = goboom("train", "--help")
    assert result.returncode == 0
    assert "Add a frozen copy of the learner to the opponent pool" in " ".join(result.stdout.split())
    assert "--resume" in result.stdout and "--config" in result.stdout


def test_a_small_budget_sizes_the_warm_start_and_the_evaluations_and_the_plan_says_so() -> None:
    small = TrainArgs(timesteps=20_000)
    assert (small.sized().bc_games, small.sized().eval_games) == (500, 200)  # one hand per 40, one game per 100 steps
    assert (TrainArgs().sized().bc_games, TrainArgs().sized().eval_games) == (5000, 2000)  # the budget they fit
    assert TrainArgs(timesteps=1000, bc_games=3000, eval_games=7).sized().bc_games == 3000  # given: kept
    assert small.plan(16_384, exact=True) == (
        "plan: 32,768 steps (--timesteps 20,000 rounded up to whole rollouts of 16,384); a warm start on 500 hands of "
        "heuristic (one per 40 steps); evaluation: 200 games against each of random, heuristic at the end (one per "
        "100 steps)")
    assert TrainArgs(timesteps=1000, bc_games=0, eval_every=-1).plan(1000, exact=True) == (
        "plan: 1,000 steps; no warm start; evaluation: none")


@pytest.mark.slow
def test_train_save_evaluate_resume_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = goboom("train", *TINY, "--opponents", "random=1", "self=1", "--eval-every", "512", "--eval-games",
                    "40", "--eval-opponents", "random", "--bc-games", "20", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert f"model: {out / 'model.zip'}" in result.stdout
    assert ("plan: 1,024 steps; a warm start on 20 hands of heuristic; evaluation: 40 games against each of random "
            "every 512 steps and at the end") in result.stdout + result.stderr
    for name in ("model.zip", "best_model.zip", "progress.csv", "eval.csv", "args.json", "learning_curve.png"):
        assert (out / name).is_file(), name
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["model_1024.zip", "model_512.zip"]
    assert len(list((out / "snapshots").glob("*.npz"))) == 5  # steps 0, 256, 512, 768, 1024
    assert any((out / "tensorboard").rglob("events.out.tfevents.*"))
    rows = list(csv.DictReader((out / "progress.csv").open()))
    assert [int(r["timesteps"]) for r in rows] == [256, 512, 768, 1024]
    assert {"win_rate/random", "win_rate/self", "value_loss", "ep_len_mean"} <= set(rows[0])
    evals = list(csv.DictReader((out / "eval.csv").open()))
    assert [int(r["timesteps"]) for r in evals] == [512, 1024]
    assert all(0.0 <= float(r["ci_low/random"]) <= float(r["win_rate/random"]) <= float(r["ci_high/random"])
               for r in evals)
    assert read_metadata(out / "model.zip")["timesteps"] == 1024
    bc = json.loads((out / "bc.json").read_text())
    assert bc["teacher"] == "heuristic" and bc["games"] == 20 and 0 < bc["bc_agreement"] <= 1

    again = goboom("train", *TINY, "--out", str(out))  # an existing run is not silently overwritten
    assert again.returncode == 2 and "--resume" in again.stderr

    (out / "checkpoints" / "model_1024.zip").unlink()  # resume from step 512: later log rows are replayed
    resumed = goboom("train", *TINY, "--timesteps", "1536", "--opponents", "random=1", "self=1",
                     "--eval-every", "-1", "--out", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert read_metadata(out / "model.zip")["timesteps"] == 1536
    rows = list(csv.DictReader((out / "progress.csv").open()))
    assert [int(r["timesteps"]) for r in rows] == [256, 512, 768, 1024, 1280, 1536]
    assert [int(r["timesteps"]) for r in csv.DictReader((out / "eval.csv").open())] == [512]
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["model_1024.zip", "model_1536.zip",
                                                                      "model_512.zip"]
    assert json.loads((out / "args.json").read_text())["timesteps"] == 1536
    history = (out / "commands.txt").read_text().splitlines()
    assert len(history) == 2 and history[-1].endswith("--resume") and "goboom train" in history[0]


@pytest.mark.slow
def test_privileged_critic_with_shaping_trains_resumes_and_plays(tmp_path: Path) -> None:
    out = tmp_path / "run"
    flags = [*TINY, "--variant", "jokers", "--privileged-critic", "--shaping", "0.05", "--opponents", "heuristic=1",
             "self=1", "--eval-every", "0", "--eval-games", "40", "--eval-opponents", "heuristic", "--out", str(out)]
    result = goboom("train", *flags, "--bc-games", "20")
    assert result.returncode == 0, result.stderr
    meta = read_metadata(out / "model.zip")
    assert meta["train_args"]["privileged_critic"] and meta["train_args"]["shaping"] == 0.05
    assert json.loads((out / "bc.json").read_text())["decisions"] > 20 * 4
    resumed = goboom("train", *flags, "--timesteps", "1536", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert read_metadata(out / "model.zip")["timesteps"] == 1536
    switched = goboom("train", *[f for f in flags if f != "--privileged-critic"], "--timesteps", "2048", "--resume")
    assert switched.returncode == 2 and "privileged_critic=False differs" in switched.stderr
    jokers = GameConfig(variant="jokers", num_players=4)
    checkpoints = sorted((out / "checkpoints").glob("*.zip"))
    averaged = load_actor(average_policies(checkpoints, tmp_path / "avg.zip"))
    actors = [load_actor(path) for path in checkpoints]
    assert len(actors) >= 2 and averaged.input_size == observation_size(4)  # the actor never reads the hidden cards
    for i, (w, b) in enumerate(averaged.layers):
        np.testing.assert_allclose(w, np.mean([a.layers[i][0] for a in actors], axis=0), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(b, np.mean([a.layers[i][1] for a in actors], axis=0), rtol=1e-5, atol=1e-7)
    play_legally(make_agent(f"ppo:{tmp_path / 'avg.zip'}", jokers, seed=0), jokers, games=3)


def test_train_rejects_bad_arguments_with_exit_code_2(tmp_path: Path) -> None:
    result = goboom("train", "--opponents", "heuristic", "--out", str(tmp_path / "x"))
    assert result.returncode == 2 and "SPEC=WEIGHT" in result.stderr
    result = goboom("train", "--opponents", "nobody=1", "--out", str(tmp_path / "y"), *TINY[:2])
    assert result.returncode == 2 and "unknown agent 'nobody'" in result.stderr
    assert not (tmp_path / "y").exists()  # a refused invocation leaves no args.json / commands.txt behind
    (tmp_path / "z").mkdir()
    result = goboom("train", "--opponents", "nobody=1", "--out", str(tmp_path / "z"), *TINY[:2])
    assert result.returncode == 2 and list((tmp_path / "z").iterdir()) == []


def test_every_agent_spec_of_a_run_is_checked_before_training(tmp_path: Path) -> None:
    out = ["--out", str(tmp_path / "run")]
    with pytest.raises(ValueError, match="bc_teacher: unknown agent 'nobody'"):
        parse(["--bc-teacher", "nobody", *out])
    parse(["--bc-teacher", "nobody", "--bc-games", "0", *out])  # no warm start: the teacher is never used
    with pytest.raises(ValueError, match="eval_opponents: unknown agent 'nobody'"):
        parse(["--eval-opponents", "random", "nobody", *out])
    with pytest.raises(ValueError, match="eval_opponents must name at least one"):
        parse(["--config", str(_toml(tmp_path, "eval_opponents = []")), *out])
    with pytest.raises(ValueError,
                       match=r"opponents: .*jokers-4p-hands.zip was trained for a different game configuration"):
        parse(["--opponents", "ppo:jokers-4p-hands=1", "self=1", *out])
    assert not (tmp_path / "run").exists()


def _toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.toml"
    path.write_text(text + "\n")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('timesteps = "abc"', "timesteps in .*run.toml must be an integer, got 'abc'"),
        ("timesteps = 1.5", "timesteps in .*run.toml must be an integer, got 1.5"),
        ('net_arch = "256"', "net_arch in .*run.toml must be a list of integers, got '256'"),
        ('net_arch = [256, "64"]', "net_arch in .*run.toml must be a list of integers"),
        ('resume = "yes"', "resume in .*run.toml must be true or false, got 'yes'"),
        ("learning_rate = true", "learning_rate in .*run.toml must be a number, got True"),
        ('opponents = "random=1"', "opponents in .*run.toml must be a list of strings"),
        ("scoring = 3", "scoring in .*run.toml must be one of 'standard', 'reverse', 'penalty', got 3"),
        ("timesteps = ", "run.toml is not valid TOML"),
    ],
)
def test_config_file_values_of_the_wrong_type_name_the_field(tmp_path: Path, text: str, message: str) -> None:
    toml = tmp_path / "run.toml"
    toml.write_text(text + "\n")
    with pytest.raises(ValueError, match=message):
        parse(["--config", str(toml)])


def test_config_file_types_on_the_command_line_and_in_python(tmp_path: Path) -> None:
    toml = tmp_path / "run.toml"
    toml.write_text('timesteps = "abc"\n')
    result = goboom("train", "--config", str(toml), "--out", str(tmp_path / "run"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("goboom train: error: timesteps in ") and not (tmp_path / "run").exists()
    toml.write_text("learning_rate = 1\nscoring = \"reverse\"\n")
    args = parse(["--config", str(toml), "--out", str(tmp_path / "run")])
    assert args.learning_rate == 1.0 and isinstance(args.learning_rate, float) and args.scoring == "reverse"
    with pytest.raises(ValueError, match="num_envs in the arguments must be an integer, got '2'"):
        tiny_train_args(num_envs="2").validate()


def test_unusable_out_folder_is_refused_before_any_work(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for out, message in [(a_file, f"--out {a_file} is a file, not a folder"),
                         (a_file / "run", f"--out {a_file / 'run'} lies under {a_file}, which is a file")]:
        result = goboom("train", *TINY, "--out", str(out))
        assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    # refused before any work: neither torch nor stable-baselines3 was imported, no environment was built
    code = (f"import sys; from goboom_env.cli import main; code = main(['train', '--out', {str(a_file)!r}]); "
            "print(code, 'torch' in sys.modules, 'stable_baselines3' in sys.modules)")
    assert python_output(code) == "2 False False"
    demo = goboom("demo", "--timesteps", "64", "--out", str(a_file / "demo"))
    assert demo.returncode == 2 and "goboom demo: error: --out" in demo.stderr and "Traceback" not in demo.stderr
    assert a_file.read_text() == "x"


def test_out_folder_without_write_permission_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != tmp_path and real_access(path, mode))
    with pytest.raises(ValueError, match=f"--out {tmp_path / 'a' / 'run'} is not writable: no write permission "
                                         f"in {tmp_path}"):
        tiny_train_args(out=str(tmp_path / "a" / "run")).validate()


def test_device_must_be_usable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for spec in ("cuda", "cuda:0"):
        with pytest.raises(ValueError, match=f"--device {spec}: torch sees no CUDA GPU here"):
            resolve_device(spec)
    assert resolve_device("auto") == "cpu" and resolve_device("cpu") == "cpu"
    with pytest.raises(ValueError, match="'gpu' is not a torch device"):
        resolve_device("gpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert resolve_device("auto") == "cuda" and resolve_device("cuda:0") == "cuda:0"
    with pytest.raises(ValueError, match="torch sees 1 CUDA GPU"):
        resolve_device("cuda:1")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without a GPU")
def test_train_on_cuda_without_a_gpu_exits_2(tmp_path: Path) -> None:
    result = goboom("train", *TINY, "--device", "cuda", "--out", str(tmp_path / "run"))
    assert result.returncode == 2 and "torch sees no CUDA GPU" in result.stderr
    assert not (tmp_path / "run").exists()
    help_text = goboom("train", "--help").stdout.replace("\u2502", " ")  # without the help panel's borders
    assert "auto (the GPU when torch sees one" in " ".join(help_text.split())


@pytest.mark.slow  # an interrupted run and its resume, each a process
@pytest.mark.parametrize("vec_env", ["dummy", "subproc"])
def test_ctrl_c_saves_a_checkpoint_that_resume_continues(tmp_path: Path, vec_env: str) -> None:
    out = tmp_path / "run"
    flags = [*TINY, "--checkpoint-every", "10000000", "--snapshot-every", "10000000", "--eval-every", "-1",
             "--opponents", "random=1", "--vec-env", vec_env, "--out", str(out)]
    # progress.csv is written after the first rollout: training is under way
    returncode, stderr = ctrl_c_once_started(["train", *flags, "--timesteps", "10000000"], out / "progress.csv", ROOT)
    assert returncode == 130, stderr
    checkpoint = RunFiles(out).latest_checkpoint()
    assert checkpoint is not None and not (out / "model.zip").exists()
    # one line from the interrupt, after the run's phase lines: it names the checkpoint and how to continue
    *phases, last = stderr.splitlines()
    assert last == f"goboom train: interrupted; kept the checkpoint {checkpoint}; continue with --resume --out {out}"
    assert not [line for line in phases if "interrupted" in line or "Traceback" in line], stderr
    steps = read_metadata(checkpoint)["timesteps"]
    assert steps >= 256 and checkpoint.name == f"model_{steps}.zip"
    resumed = goboom("train", *flags, "--timesteps", str(steps + 256), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert read_metadata(out / "model.zip")["timesteps"] >= steps + 256
    assert len((out / "commands.txt").read_text().splitlines()) == 2


@pytest.mark.slow
def test_demo_trains_evaluates_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = goboom("demo", "--timesteps", "2048", "--bc-games", "20", "--games", "80", "--out", str(out),
                    "--no-progress")
    assert result.returncode == 0, result.stderr
    assert f"report: {out / 'report.md'}" in result.stdout
    lines = result.stdout.splitlines()
    rows = [line.split() for line in lines if line.startswith(("random ", "heuristic "))]
    assert [r[0] for r in rows] == ["random", "heuristic"] and all(r[1] == "80" for r in rows)
    report = json.loads((out / "report.json").read_text())
    for row in report["evaluation"]:
        assert row["games"] == 80 and row["ci_low"] <= row["win_rate"] <= row["ci_high"]
        assert row["beats"] == (row["ci_low"] > 0.25)
    assert (out / "eval_vs_heuristic.json").is_file() and (out / "learning_curve.png").is_file()
    assert "one hand a game: the unit it trained on" in result.stdout  # the evaluation names its unit
    assert json.loads((out / "eval_vs_heuristic.json").read_text())["summary"]["episode"] == "hand"
    assert result.stderr.startswith("plan: 2,048 steps or up to one rollout more")
    again = goboom("demo", "--timesteps", "2048", "--out", str(out))
    assert again.returncode == 2 and "already exists" in again.stderr


@pytest.mark.parametrize("name, variant", [("classic-4p-hands", "classic"), ("jokers-4p-hands", "jokers")])
def test_shipped_models_load_and_play_legally(name: str, variant: str) -> None:
    config = GameConfig(variant=variant, num_players=4)
    play_legally(make_agent(f"ppo:{name}", config, seed=0), config, games=3)


SHIPPED_GAMES = json.loads((ROOT / "tests" / "data" / "shipped_models_tournament.json").read_text())
"""Fixed-seed duplicate tournaments of the shipped models (40 games against each baseline, seed 7): every
game's seats, deal, winners, points and placings, as the models play them."""


@pytest.mark.parametrize("matchup", sorted(SHIPPED_GAMES))
def test_shipped_models_play_their_recorded_games(matchup: str) -> None:
    """A shipped model (loaded by ``ppo:NAME``) plays exactly the recorded games: any change to the model file,
    its loader, the observation or the rules shows up as a different game."""
    from goboom_env.evaluation.tournament import run_tournament

    name, baseline = matchup.split("/")
    config = GameConfig(variant={"classic-4p-hands": "classic", "jokers-4p-hands": "jokers"}[name], num_players=4)
    recorded = SHIPPED_GAMES[matchup]
    result = run_tournament(config, [f"ppo:{name}"] + [baseline] * 3, len(recorded), seed=7, duplicate=True,
                            progress=False)
    played = [{key: game[key] for key in recorded[0]} for game in json.loads(json.dumps(result.to_dict()["games"]))]
    assert played == recorded


def test_evaluate_vs_baselines_meets_every_baseline_on_the_same_deals() -> None:
    """One tournament per baseline, the agent in one seat and the baseline in every other, seats rotating over
    the same duplicate deals for every baseline; the eval.csv columns are the agent's rows."""
    from goboom_env.evaluation.baselines import agent_rows, evaluate_vs_baselines, win_rate_columns

    results = evaluate_vs_baselines(CLASSIC, "ppo:classic-4p-hands", ["random", "heuristic"], 8, seed=3)
    assert list(results) == ["random", "heuristic"]
    games = {b: result.to_dict()["games"] for b, result in results.items()}
    for baseline, played in games.items():
        assert len(played) == 8 and all(sorted(g["seats"]).count("ppo:classic-4p-hands") == 1 for g in played)
        assert {s for g in played for s in g["seats"]} == {"ppo:classic-4p-hands", baseline}
        assert [g["seats"].index("ppo:classic-4p-hands") for g in played[:4]] == [0, 1, 2, 3]  # seats rotate per deal
    assert [g["deck"] for g in games["random"]] == [g["deck"] for g in games["heuristic"]]
    for baseline, row in agent_rows(results, "ppo:classic-4p-hands").items():
        wins = sum(w for g in games[baseline] for w in win_shares(g, "ppo:classic-4p-hands"))
        assert row["agent"] == "ppo:classic-4p-hands" and row["games"] == 8
        assert row["win_rate"] == pytest.approx(wins / 8)
    columns = win_rate_columns(results, "ppo:classic-4p-hands")
    assert sorted(columns) == sorted(f"{k}/{b}" for k in ("win_rate", "ci_low", "ci_high") for b in games)
    assert all(columns[f"ci_low/{b}"] <= columns[f"win_rate/{b}"] <= columns[f"ci_high/{b}"] for b in games)


def win_shares(game: dict, agent: str) -> list[float]:
    """The agent's share of a recorded game's win (1/k when k seats share it)."""
    return [1 / len(game["winners"]) for seat in game["winners"] if game["seats"][seat] == agent]
