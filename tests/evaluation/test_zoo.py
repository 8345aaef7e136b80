"""Every shipped model loads by its name and beats random play in the game it was trained for."""

from __future__ import annotations

import pytest

from goboom_env.agents.ppo import read_metadata, spec_config
from goboom_env.evaluation.baselines import agent_rows, evaluate_vs_baselines
from goboom_env.models import model_path, shipped_models

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", shipped_models())
def test_shipped_model_loads_by_name_and_beats_random(name: str) -> None:
    config = spec_config(f"ppo:{name}")
    episode = read_metadata(model_path(name))["train_args"].get("episode", "hand")  # the unit it was trained on
    results = evaluate_vs_baselines(config, f"ppo:{name}", ["random"], 1000, seed=20261201, episode=episode)
    row = agent_rows(results, f"ppo:{name}")["random"]
    assert row["games"] >= 1000
    assert row["ci_low"] > 1 / config.num_players, row
