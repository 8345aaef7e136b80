"""The runnable scripts in ``training/`` and ``evaluation/``: their written-out settings are the defaults of the
command they mirror, and each runs end to end with a tiny budget, taking that command's options."""

from __future__ import annotations

import dataclasses
import json
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

from goboom_env.config import GameConfig


def script(*argv: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def settings_of(path: str) -> object:
    return runpy.run_path(str(ROOT / path))["SETTINGS"]


def test_the_folders_hold_only_scripts() -> None:
    for folder in ("training", "evaluation"):
        assert not (ROOT / folder / "__init__.py").exists()
    assert {p.name for p in (ROOT / "training").glob("*.py")} >= {"train_sb3.py", "train_fast.py", "train_rllib.py"}


def test_written_out_settings_are_the_command_defaults() -> None:
    from goboom_env.cli.evaluate import EvaluateArgs
    from goboom_env.training.settings import RLlibArgs, TrainArgs

    assert settings_of("training/train_sb3.py") == TrainArgs()
    assert settings_of("training/train_rllib.py") == RLlibArgs()
    shown = settings_of("evaluation/evaluate.py")
    assert dataclasses.replace(shown, agents=[]) == EvaluateArgs()  # goboom evaluate's default agents, spelled out
    pytest.importorskip("numba")
    from goboom_env.training.settings import VectorArgs

    assert settings_of("training/train_fast.py") == VectorArgs()


def test_evaluate_script_writes_a_report_with_the_command_options(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "results"
    done = script("evaluation/evaluate.py", "--preset", "jokers-3p", "--agents", "jokers-shed", "random",
                  "--games", "12", "--duplicate", "--save-games", "2", "--no-progress", "--out", str(out))
    assert done.returncode == 0, done.stderr
    from goboom_env.records import read, verify

    saved = read(out / "games.jsonl")  # --save-games is honoured, as by goboom evaluate
    assert [r.meta["game"] for r in saved] == [0, 1] and all(verify(r) == r.result for r in saved)
    data = json.loads((out / "results.json").read_text())
    assert data["summary"]["config"]["num_players"] == 3 and data["summary"]["games"] == 12
    assert {r["agent"] for r in data["table"]} == {"jokers-shed", "random"}
    bad = script("evaluation/evaluate.py", "--players", "13")
    assert bad.returncode == 2 and bad.stderr == "evaluate.py: error: num_players must be an integer in 2..12, got 13\n"


@pytest.mark.slow  # a MaskablePPO run in a subprocess
def test_train_sb3_script_trains_a_loadable_model(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    out = tmp_path / "run"
    done = script("training/train_sb3.py", "--timesteps", "256", "--bc-games", "0", "--num-envs", "2", "--num-steps",
                  "128", "--minibatch-size", "128", "--n-epochs", "1", "--net-arch", "16", "--eval-every", "-1",
                  "--no-progress", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == f"model: {out / 'model.zip'}"
    from goboom_env.agents import make_agent

    make_agent(f"ppo:{out / 'model.zip'}", GameConfig(num_players=4))


@pytest.mark.slow  # a fast-trainer run in a subprocess
def test_train_fast_script_trains_a_loadable_model(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("numba")
    out = tmp_path / "run"
    done = script("training/train_fast.py", "--timesteps", "256", "--num-envs", "16", "--num-steps", "16",
                  "--minibatch-size", "128", "--net-arch", "16", "--eval-every", "-1", "--no-progress",
                  "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == f"model: {out / 'model.zip'}"
    from goboom_env.agents import make_agent

    make_agent(f"ppo:{out / 'model.zip'}", GameConfig(num_players=4))


@pytest.mark.slow
def test_train_rllib_script_trains_a_policy(tmp_path: Path) -> None:
    pytest.importorskip("ray.rllib")
    out = tmp_path / "run"
    done = script("training/train_rllib.py", "--timesteps", "256", "--num-env-runners", "0",
                  "--num-envs", "2", "--train-batch-size", "256", "--minibatch-size", "128",
                  "--n-epochs", "1", "--net-arch", "16", "--pool-size", "2", "--num-cpus", "2", "--no-progress",
                  "--out", str(out), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (out / "policy").is_dir() and f"rllib:{out}" in done.stdout

