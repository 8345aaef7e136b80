"""The fast trainer on the history observation (``--observation history``) and the ``ppo:`` agent of its models."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from helpers import goboom  # noqa: E402

import goboom_env  # noqa: E402
from goboom_env.agents import make_agent  # noqa: E402
from goboom_env.config import GameConfig  # noqa: E402
from goboom_env.history import history_size  # noqa: E402
from goboom_env.observation import OBSERVATION_LAYOUTS, observation_size  # noqa: E402
from goboom_env.player_view import PlayerView  # noqa: E402
from goboom_env.training.fast.ppo import train  # noqa: E402
from goboom_env.training.settings import VectorArgs  # noqa: E402

JOKERS = GameConfig(variant="jokers", num_players=4)


def tiny_args(out: Path, **kw: object) -> VectorArgs:
    """A jokers 4p history run of 600 decisions with a small network, against itself, snapshots and the heuristic."""
    return VectorArgs(**{"variant": "jokers", "observation": "history", "timesteps": 600, "num_envs": 16,
                         "num_steps": 16, "minibatch_size": 128, "eval_every": -1, "checkpoint_every": 10_000,
                         "snapshot_every": 300, "net_arch": [32], "opponents": ["learner=1", "self=1", "heuristic=1"],
                         "out": str(out), "progress": False, "threads": 1, **kw})


@pytest.fixture(scope="module")
def history_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model trained briefly on the history layout, warm-started from the batched heuristic."""
    out = tmp_path_factory.mktemp("history") / "run"
    return train(tiny_args(out, bc_games=20, bc_epochs=1))


def meta_of(path: Path) -> dict:
    with zipfile.ZipFile(path) as zf:
        return json.loads(zf.read("goboom_meta.json"))


def test_a_history_run_records_the_layout_and_its_actor_reads_it(history_model: Path) -> None:
    meta = meta_of(history_model)
    assert meta["observation_version"] == OBSERVATION_LAYOUTS["history"]
    assert meta["train_args"]["observation"] == "history"
    agent = make_agent(f"ppo:{history_model}", JOKERS)
    assert agent.needs_view and agent.net.input_size == history_size(4) > observation_size(4)


def test_a_snapshot_run_keeps_the_snapshot_version(tmp_path: Path) -> None:
    model = train(tiny_args(tmp_path / "snap", observation="snapshot", timesteps=256, bc_games=0))
    assert meta_of(model)["observation_version"] == OBSERVATION_LAYOUTS["snapshot"]
    assert not make_agent(f"ppo:{model}", JOKERS).needs_view


def test_the_agent_plays_from_the_view_as_from_the_history_env(history_model: Path) -> None:
    """Handed the snapshot and the seat's view (a tournament) or the history observation (``raw_env``), the agent
    reads the same input and so plays the same moves, state for state."""
    from_view = make_agent(f"ppo:{history_model}", JOKERS)
    from_env = make_agent(f"ppo:{history_model}", JOKERS)
    snapshot_env = goboom_env.raw_env(config=JOKERS, episode="match")
    history_env = goboom_env.raw_env(config=JOKERS, episode="match", observation="history")
    moves = 0
    for seed in range(3):
        snapshot_env.reset(seed=seed)
        history_env.reset(seed=seed)
        while not all(history_env.terminations.values()):
            agent = history_env.agent_selection
            seat = history_env.agent_name_mapping[agent]
            view = PlayerView.of(snapshot_env.match, seat)
            action = from_view.act(snapshot_env.observe(agent), view)
            assert action == from_env.act(history_env.observe(agent))
            snapshot_env.step(action)
            history_env.step(action)
            moves += 1
    assert moves > 100


def test_without_a_view_the_agent_says_what_it_needs(history_model: Path) -> None:
    agent = make_agent(f"ppo:{history_model}", JOKERS)
    env = goboom_env.raw_env(config=JOKERS)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"reads the history layout: give it the seat's view"):
        agent.act(env.observe(env.agent_selection))


def test_a_history_model_plays_whole_tournaments(history_model: Path) -> None:
    from goboom_env.evaluation.tournament import run_tournament

    spec = f"ppo:{history_model}"
    result = run_tournament(JOKERS, [spec, "jokers-boom", "random", "jokers-boom"], 8, duplicate=True,
                            episode="match", progress=False)
    assert next(r for r in result.table() if r["agent"] == spec)["games"] == 8


@pytest.mark.parametrize(("changes", "message"), [
    ({"variant": "classic", "player_counts": [2, 3]}, r"observation history is for one table size"),
    ({"bc_games": 10, "bc_teacher": "random"}, r"warm-starts from the batched heuristic only"),
    ({"observation": "memory"}, r"observation in the arguments must be one of 'snapshot', 'history', got 'memory'"),
])
def test_history_settings_that_cannot_work_are_refused(tmp_path: Path, changes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tiny_args(tmp_path / "x", **changes).validate()


@pytest.mark.slow
def test_goboom_train_fast_takes_the_option(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    proc = goboom("train-fast", "--preset", "jokers", "--observation", "history", "--timesteps", "128", "--num-envs",
                  "8", "--num-steps", "16", "--net-arch", "16", "--bc-games", "0", "--eval-every", "-1",
                  "--no-progress", "--out", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert meta_of(out / "model.zip")["observation_version"] == OBSERVATION_LAYOUTS["history"]
    bad = goboom("train-fast", "--observation", "memory", "--out", str(tmp_path / "bad"), timeout=60)
    assert bad.returncode == 2 and "invalid choice 'memory' for argument '--observation'" in bad.stderr
