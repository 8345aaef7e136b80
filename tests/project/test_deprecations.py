"""The module paths of the earlier layout still work: each old path imports, and a name imported from it is
the very object of its new path, with a DeprecationWarning that names the new path and points at the caller."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
T = "goboom_env.training"

MOVED: list[tuple[str, str, list[str], str | None]] = [
    # old module, new module, names that moved there, the extra module the new one needs (None: none)
    ("config", "settings", ["GameArgs", "PPOArgs", "SelfPlayArgs", "TrainArgs", "build_args", "parse_opponents"], None),
    ("rllib_args", "settings", ["RLlibArgs", "cluster_endpoint"], None),
    ("rllib_args", "rllib.cluster", ["probe", "CONNECT_TIMEOUT_S"], None),
    ("run_folder", "artifacts.run_folder", ["RunFiles", "load_tensors", "append_csv"], None),
    ("model_files", "artifacts.model_files", ["check_compatible", "export_policy", "model_metadata"], None),
    ("numpy_actor", "artifacts.numpy_actor", ["FrozenMlp", "SnapshotAgent"], None),
    ("learning_curve", "artifacts.learning_curve", ["plot_learning_curve"], None),
    ("vector_ppo", "settings", ["VectorArgs", "PRECISIONS"], None),
    ("vector_ppo", "fast.ppo", ["train"], None),
    ("vector_ppo", "fast.run", ["RunPaths", "PROGRESS_COLUMNS"], None),
    ("vector_trainer", "fast.ppo", ["Trainer"], None),
    ("vector_trainer", "fast.run", ["save_play_only", "load_checkpoint"], None),
    ("vector_trainer", "fast.warm_start", ["warm_start", "collect_batched", "init_actor"], None),
    ("vector_trainer", "artifacts.model_files", ["read_init_actor"], None),
    ("vector_rollout", "fast.rollout", ["SeatPlan", "Pending", "seat_gae", "build_batch"], None),
    ("vector_rollout", "settings", ["LEARNER", "POOL_KINDS", "parse_pool"], None),
    ("vector_rollout", "shaping", ["hand_size_potential"], None),
    ("vector_policy", "fast.policy", ["ActorCritic", "NumpyTanh", "MASKED_LOGIT", "resolve_precision"], "torch"),
    ("vector_policy", "opponents", ["BatchOpponent", "RandomOpponent", "batched_heuristic", "sample_masked"], "torch"),
    ("vector_policy", "fast.rollout", ["SnapshotPool"], "torch"),
    ("selfplay", "sb3.selfplay", ["SelfPlayEnv", "single_agent_env"], None),
    ("sb3.league", "league", ["OpponentPool", "SELF", "PoolEntry"], None),
    ("vecenv", "sb3.vecenv", ["VectorGameVecEnv"], "stable_baselines3"),
    ("rllib_env", "rllib.env", ["GoBoomMultiAgentEnv", "make_env_config"], "ray"),
    ("rllib_league", "rllib.league", ["LeagueMapping", "league_ids"], "ray"),
    ("rllib_policy", "rllib.policy", ["MaskedPPOTorchRLModule", "load_rllib_agent", "save_module"], "ray"),
    ("rllib_run", "rllib.run", ["ProgressLog", "latest_checkpoint"], "ray"),
    ("rllib_train", "rllib.train", ["train", "build_config", "init_ray"], "ray"),
    ("exploit", "settings", ["ExploitArgs", "TRAINERS"], None),  # exploit stays; its settings moved
]
OLD_MODULES = sorted({old for old, *_ in MOVED} - {"exploit"})
PACKAGE_MOVED: list[tuple[str, str, list[str], str | None]] = [  # full module paths, outside training
    ("goboom_env.info", "goboom_env.player_view", ["PlayerView", "observe"], None),
    ("goboom_env.state", "goboom_env.global_state", ["StateEncoder", "state_layout", "state_encoder_for"], None),
    ("goboom_env.savestate", "goboom_env.state_reader", ["read_hand", "read_match"], None),
    ("goboom_env.search", "goboom_env.agents.montecarlo", ["MonteCarloAgent", "greedy_playout"], None),
]
ALL_MOVED = [(f"{T}.{old}", f"{T}.{new}", names, extra) for old, new, names, extra in MOVED] + PACKAGE_MOVED


@pytest.mark.parametrize("old, new, names, extra", ALL_MOVED, ids=[f"{o}->{n}" for o, n, *_ in ALL_MOVED])
def test_an_old_path_gives_the_new_object_with_a_deprecation_warning(old: str, new: str, names: list[str],
                                                                     extra: str | None) -> None:
    if extra is not None:
        pytest.importorskip(extra)
    old_module, new_module = importlib.import_module(old), importlib.import_module(new)
    for name in names:
        with pytest.warns(DeprecationWarning, match=rf"{re.escape(old)}\.{name} is deprecated: import {name} from "
                                                    rf"{re.escape(new)}$") as caught:
            value = getattr(old_module, name)
        assert value is getattr(new_module, name)
        assert caught[0].filename == __file__  # the warning points at the line that used the old path


def test_from_import_of_an_old_path_warns_too() -> None:
    with pytest.warns(DeprecationWarning, match="goboom_env.training.settings"):
        from goboom_env.training.config import TrainArgs
    from goboom_env.training import settings

    assert TrainArgs is settings.TrainArgs


@pytest.mark.parametrize("old", [f"{T}.{old}" for old in OLD_MODULES] + [old for old, *_ in PACKAGE_MOVED])
def test_an_old_path_has_no_other_names(old: str) -> None:
    module = importlib.import_module(old)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing name is an AttributeError, and warns nothing
        with pytest.raises(AttributeError, match=f"module '{old}' has no attribute 'no_such_name'"):
            module.no_such_name  # noqa: B018


def test_the_old_paths_list_the_new_modules_names() -> None:
    assert {"TrainArgs", "VectorArgs", "RLlibArgs"} <= set(dir(importlib.import_module(f"{T}.config")))
    assert {"SeatPlan", "hand_size_potential", "LEARNER"} <= set(dir(importlib.import_module(f"{T}.vector_rollout")))


def test_importing_an_old_path_imports_nothing_until_a_name_is_used() -> None:
    """An old module forwards lazily: importing every one of them loads no training library (torch, Ray)."""
    old_paths = [f"{T}.{old}" for old in OLD_MODULES] + [old for old, *_ in PACKAGE_MOVED]
    code = (f"import sys; import {', '.join(old_paths)}; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'stable_baselines3', 'ray'}))")
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_tournament_outcome_keeps_its_earlier_name_with_a_warning() -> None:
    from goboom_env.evaluation import tournament

    with pytest.warns(DeprecationWarning, match="use GameOutcome"):
        assert tournament.GameRecord is tournament.GameOutcome
