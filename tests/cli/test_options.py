"""One option vocabulary for every ``goboom`` command: the game fields, ``--config`` and ``--preset`` mean the
same to each, the trainers share their PPO names, and a bad command line is one line on stderr."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from helpers import goboom, needs_extra_of

from goboom_env import __version__
from goboom_env.cli import main
from goboom_env.cli.demo import DemoArgs
from goboom_env.cli.evaluate import EvaluateArgs
from goboom_env.cli.options import parse, print_error, run_command
from goboom_env.cli.play import PlayArgs
from goboom_env.config import GameConfig
from goboom_env.outdir import OutputError
from goboom_env.process import WorkerLostError
from goboom_env.training.settings import (
    GameArgs,
    PPOArgs,
    RLlibArgs,
    TrainArgs,
    check_bounds,
    load_config_file,
    rllib_ppo_kwargs,
    sb3_ppo_kwargs,
)

COMMANDS = {"play": PlayArgs, "evaluate": EvaluateArgs, "train": TrainArgs, "train-rllib": RLlibArgs,
            "demo": DemoArgs}
"""The options dataclass of each command (train-fast's VectorArgs needs numba: checked where it is installed)."""
GAME_FIELDS = [f.name for f in dataclasses.fields(GameConfig) if f.init and f.name != "extra"]


def vector_args() -> type:
    pytest.importorskip("numba")
    from goboom_env.training.settings import VectorArgs

    return VectorArgs


def test_every_gameconfig_field_is_a_game_option() -> None:
    assert [f.name for f in dataclasses.fields(GameArgs)] == [*GAME_FIELDS, "episode"]
    assert all(issubclass(cls, GameArgs) for cls in COMMANDS.values())


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_one_config_file_one_preset_the_same_options_for_every_command(command: str, tmp_path: Path) -> None:
    cls = COMMANDS[command]
    toml = tmp_path / "game.toml"
    toml.write_text('variant = "jokers"\nnum_players = 3\nhand_size = 5\nrounds = 2\n')
    args = parse(cls, ["--config", str(toml), "--num-jokers", "0"], f"goboom {command}")
    assert args.game_config() == GameConfig(variant="jokers", num_players=3, hand_size=5, rounds=2, num_jokers=0)
    # later layers win: defaults < file < preset < options; --players is --num-players
    toml.write_text('variant = "jokers"\nnum_players = 3\nhand_size = 5\n')
    args = parse(cls, ["--config", str(toml), "--preset", "classic-reverse", "--players", "5"], f"goboom {command}")
    assert args.game_config() == GameConfig(variant="classic", num_players=5, hand_size=5, scoring="reverse")
    flags = ["--variant", "classic", "--num-players", "7", "--hand-size", "6", "--num-decks", "2",
             "--scoring", "reverse", "--target-score", "50", "--episode", "match"]
    args = parse(cls, flags, f"goboom {command}")
    assert args.game_config() == GameConfig(num_players=7, hand_size=6, num_decks=2, scoring="reverse",
                                            target_score=50)
    assert args.episode == "match"


def test_train_fast_reads_the_same_game_options(tmp_path: Path) -> None:
    toml = tmp_path / "game.toml"
    toml.write_text('variant = "jokers"\nnum_players = 3\n')
    args = parse(vector_args(), ["--config", str(toml), "--after-joker", "any"], "goboom train-fast")
    assert args.game_config() == GameConfig(variant="jokers", num_players=3, after_joker="any")


def test_the_trainers_share_their_ppo_settings_with_one_unit() -> None:
    shared = [f.name for f in dataclasses.fields(PPOArgs)]
    for cls in (TrainArgs, RLlibArgs, vector_args()):
        assert [f.name for f in dataclasses.fields(cls)][:len(shared)] == shared, cls.__name__
    assert {"learning_rate", "ent_coef", "clip_range", "net_arch", "n_epochs", "minibatch_size",
            "snapshot_every", "checkpoint_every"} <= set(shared)


def test_each_backend_gets_the_shared_settings_under_its_own_names() -> None:
    args = RLlibArgs(learning_rate=0.1, n_epochs=3, minibatch_size=64, gamma=0.9, gae_lambda=0.8, ent_coef=0.05,
                     vf_coef=0.7, clip_range=0.3)
    assert rllib_ppo_kwargs(args) == {"lr": 0.1, "num_epochs": 3, "minibatch_size": 64, "gamma": 0.9,
                                      "lambda_": 0.8, "entropy_coeff": 0.05, "vf_loss_coeff": 0.7,
                                      "clip_param": 0.3}
    assert sb3_ppo_kwargs(args) == {"learning_rate": 0.1, "n_epochs": 3, "batch_size": 64, "gamma": 0.9,
                                    "gae_lambda": 0.8, "ent_coef": 0.05, "vf_coef": 0.7, "clip_range": 0.3}



def test_settings_files_are_toml_or_json_with_the_field_names(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps({"num_players": 3, "games": 10}))
    assert load_config_file(tmp_path / "a.json", EvaluateArgs) == {"num_players": 3, "games": 10}
    (tmp_path / "b.toml").write_text("players = 3\n")
    with pytest.raises(ValueError, match=r"unknown keys \['players'\] in .*b.toml; allowed: \["):
        load_config_file(tmp_path / "b.toml", TrainArgs)
    (tmp_path / "c.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="must hold a table of settings, got list"):
        load_config_file(tmp_path / "c.json", EvaluateArgs)


def test_a_runs_saved_arguments_are_a_config_file(tmp_path: Path) -> None:
    run = TrainArgs(variant="jokers", num_players=3, num_jokers=0, timesteps=5000, net_arch=[64], out="runs/x",
                    opponents=["random=1", "self=2"], learning_rate=1e-3)
    saved = tmp_path / "args.json"
    saved.write_text(json.dumps(dataclasses.asdict(run)))  # what the run folder keeps
    again = parse(TrainArgs, ["--config", str(saved), "--out", "runs/y"], "goboom train")
    assert again == dataclasses.replace(run, out="runs/y")


@pytest.mark.parametrize(("field", "value", "message"), [
    ("minibatch_size", 0, "minibatch_size must be >= 1, got 0"),
    ("learning_rate", 0.0, "learning_rate must be > 0, got 0.0"),
    ("gamma", 1.5, "gamma must be in (0, 1], got 1.5"),
    ("gae_lambda", float("nan"), "gae_lambda must be in (0, 1], got nan"),
    ("ent_coef", -0.1, "ent_coef must be >= 0, got -0.1"),
])
def test_each_numeric_setting_is_checked_against_its_rule(field: str, value: float, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        dataclasses.replace(PPOArgs(), **{field: value}).validate()
    PPOArgs().validate()
    check_bounds(PPOArgs(gamma=1.0, ent_coef=0.0), "in (0, 1]", "gamma")  # a bound itself is allowed


@pytest.mark.parametrize("trainer", ["train", "train-fast"])
@pytest.mark.parametrize(("changes", "message"), [
    ({"bc_games": -1}, "bc_games must be >= 0, got -1"),
    ({"eval_every": -2}, "eval_every must be >= -1, got -2"),
    ({"pool_size": 0}, "pool_size must be >= 1, got 0"),
    ({"eval_opponents": []}, "eval_opponents must name at least one agent spec"),
])
def test_both_self_play_trainers_check_pool_warm_start_and_evaluation(trainer: str, changes: dict,
                                                                        message: str) -> None:
    cls = TrainArgs if trainer == "train" else vector_args()
    with pytest.raises(ValueError, match=re.escape(message)):
        cls(**changes).validate()


@pytest.mark.parametrize(("argv", "message"), [
    (["train", "--timesteps", "many"], "goboom train: error: --timesteps must be an integer, got 'many'"),
    (["evaluate", "--bogus", "1"], "goboom evaluate: error: Unrecognized options: --bogus"),
    (["play", "--preset", "nope"], "goboom play: error: unknown preset 'nope'; choose one of ["),
    (["play", "--players", "13"], "goboom play: error: num_players must be an integer in 2..12, got 13"),
    (["train-rllib", "--hidden", "32"], "goboom train-rllib: error: Unrecognized options: --hidden"),
    (["leaderboard", "--preset", "classic", "results"], "goboom leaderboard: error: Unrecognized options: --preset"),
    (["replay", "--preset", "classic", "games.jsonl"], "goboom replay: error: Unrecognized options: --preset"),
    (["play", "--seed", "-5"], "goboom play: error: --seed must be a non-negative integer, got -5"),
    (["evaluate", "--games", "9" * 5000], "goboom evaluate: error: --games must be an integer of at most 20 digits"),
    (["evaluate", "--games", "0"], "goboom evaluate: error: --games must be a positive integer, got 0"),
    (["train", "--threads", "0"], "goboom train: error: threads must be in 1..1024, got 0"),
    (["train-fast", "--seed", "-3"], "goboom train-fast: error: seed must be >= 0, got -3"),
    (["train-fast", "--net-arch", "100000", "100000"], "goboom train-fast: error: net_arch [100000, 100000] makes a "
                                                       "network of 10,057,300,054 weights, more than the 33,554,432"),
])
def test_a_bad_command_line_is_one_line_and_exit_code_2(argv: list[str], message: str, capsys) -> None:
    needs_extra_of(argv[0])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err


def test_version_and_help_list_every_command() -> None:
    done = goboom("--version", timeout=60)
    assert done.returncode == 0 and done.stdout == f"goboom-env {__version__}\n"
    needs_extra_of("train")
    shown = goboom("train", "--help", timeout=60)
    assert shown.returncode == 0
    for words in ("--config FILE", "--preset", "--num-players", "--learning-rate", "Adam learning rate",
                  "(default: 0.0005)", "--no-progress"):
        assert words in shown.stdout, words


def test_an_error_line_echoes_a_value_short_and_never_a_control_character(tmp_path: Path, capsys) -> None:
    """A 10 MB value of a settings file is echoed as an excerpt; an error message that carries control characters
    (a key of a crafted checkpoint in torch's message) prints them escaped, on one line."""
    config = tmp_path / "big.toml"
    config.write_text(f'variant = "{"x" * 10_000_000}"\n')
    assert main(["evaluate", "--config", str(config)]) == 2
    assert capsys.readouterr().err == f"goboom evaluate: error: config file {config} is larger than 1 MiB, more than " \
                                      "any file goboom-env writes; refused, not read\n"
    config.write_text(f'variant = "{"x" * 900_000}"\n')
    assert main(["evaluate", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"goboom evaluate: error: variant in {config} must be one of 'classic', 'jokers', got 'xxx")
    assert len(err) < 300 and err.count("\n") == 1
    print_error("goboom x", ValueError("key \x1b]52;c;cHduZWQ=\x07 in\r\nstate_dict\x9b2J"))
    assert capsys.readouterr().err == "goboom x: error: key \\x1b]52;c;cHduZWQ=\\x07 in\\r\\nstate_dict\\x9b2J\n"


@pytest.mark.parametrize(("error", "code"), [(ValueError("--games 0: must be >= 1"), 2),
                                              (OutputError("runs/x: no space left on device"), 1),
                                              (WorkerLostError("a worker process ended without its games"), 1)])
def test_every_command_ends_an_expected_failure_with_one_line(error: Exception, code: int,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    def body() -> int:
        raise error

    assert run_command("goboom train", body) == code
    assert capsys.readouterr().err == f"goboom train: error: {error}\n"
