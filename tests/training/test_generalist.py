"""One network for every table size: the padded observation, the mixed-count engine, the trainer's
``--player-counts`` and the ``ppo:`` loader of such a generalist."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT, goboom

import goboom_env
from goboom_env import GameConfig
from goboom_env.config import MAX_PLAYERS
from goboom_env.observation import (
    PADDED_SIZE,
    layout,
    observation_size,
    pad_observations,
    padded_index,
    unpad_observations,
)
from goboom_env.vector import MixedVectorGame, VectorGame, random_legal_actions

PER_SEAT = ("trick_passed", "leader", "hand_sizes", "drawn", "to_move", "dealer", "scores")


def _scalar_observation(n: int, moves: int) -> np.ndarray:
    """The observation of the seat to move after ``moves`` random legal moves of an ``n``-player match."""
    env = goboom_env.raw_env(config=GameConfig(num_players=n), episode="match")
    env.reset(seed=n)
    rng = np.random.default_rng(n)
    for _ in range(moves):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    return env.observe(env.agent_selection)["observation"]


@pytest.mark.parametrize("n", [2, 5, 12])
def test_padding_places_every_block(n: int) -> None:
    obs = _scalar_observation(n, moves=3 * n + 1)  # inside a trick: the trick rows are set
    padded = pad_observations(obs[None], n)[0]
    small, wide = layout(n), layout(MAX_PLAYERS)
    assert padded.shape == (PADDED_SIZE,) and padded.dtype == obs.dtype
    assert obs[small["trick"]].any() and obs[small["hand"]].any()
    for name, sl in small.items():
        block, into = obs[sl], padded[wide[name]]
        if name == "trick":
            rows = into.reshape(MAX_PLAYERS, -1)
            np.testing.assert_array_equal(rows[:n].ravel(), block)
            assert not rows[n:].any()
        elif name in PER_SEAT:
            np.testing.assert_array_equal(into[:n], block)
            assert not into[n:].any()
        else:
            np.testing.assert_array_equal(into, block)
    assert np.count_nonzero(padded) == np.count_nonzero(obs)
    np.testing.assert_array_equal(unpad_observations(padded, n), obs)


def test_padding_of_twelve_players_is_the_identity_and_bad_counts_are_refused() -> None:
    np.testing.assert_array_equal(padded_index(MAX_PLAYERS), np.arange(observation_size(MAX_PLAYERS)))
    with pytest.raises(ValueError, match="num_players"):
        padded_index(13)
    with pytest.raises(ValueError, match="4 players have 517"):
        pad_observations(np.zeros((2, 10)), 4)
    for width in (517, PADDED_SIZE + 1):  # an un-padded batch, or one too wide, is not silently indexed
        with pytest.raises(ValueError, match=rf"have {PADDED_SIZE} entries, got shape \(2, {width}\)"):
            unpad_observations(np.zeros((2, width)), 4)


def test_mixed_engine_equals_separate_vector_games() -> None:
    counts = [3, 2, 7]
    mixed = MixedVectorGame(GameConfig(), counts, num_envs=8, seed=5, episode="match")
    alone = [VectorGame(GameConfig(num_players=k), num_envs=rows.stop - rows.start, seed=s, episode="match")
             for k, rows, s in zip(counts, mixed.rows, mixed.seeds)]
    assert [r.stop - r.start for r in mixed.rows] == [3, 3, 2]
    np.testing.assert_array_equal(mixed.num_players, [3, 3, 3, 2, 2, 2, 7, 7])
    rng = np.random.default_rng(0)
    obs, mask, seat = mixed.reset()
    views = [game.reset() for game in alone]
    finished = 0
    for _ in range(300):
        for k, rows, (o, m, s) in zip(counts, mixed.rows, views):
            np.testing.assert_array_equal(unpad_observations(obs[rows], k), o)
            np.testing.assert_array_equal(mask[rows], m)
            np.testing.assert_array_equal(seat[rows], s)
        sizes = mixed.hand_sizes
        for k, rows, game in zip(counts, mixed.rows, alone):
            np.testing.assert_array_equal(sizes[rows, :k], game.hand_sizes)
            assert not sizes[rows, k:].any()
        actions = random_legal_actions(mask, rng)
        obs, mask, seat, rewards, done = mixed.step(actions)
        views = []
        for k, rows, game in zip(counts, mixed.rows, alone):
            o, m, s, r, d = game.step(actions[rows])
            views.append((o, m, s))
            np.testing.assert_array_equal(rewards[rows, :k], r)
            assert not rewards[rows, k:].any()
            np.testing.assert_array_equal(done[rows], d)
        finished += int(done.sum())
    assert finished > 0


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"player_counts": []}, "at least one"),
    ({"player_counts": [2, 13]}, "13 is not a player count"),
    ({"player_counts": [1]}, "1 is not a player count"),
    ({"player_counts": [3, 3]}, "must not repeat"),
    ({"player_counts": [2, 3, 4], "num_envs": 2}, "num_envs"),
    ({"player_counts": [2, 3], "weights": [1, 0]}, "weights"),
    ({"player_counts": [2, 3], "weights": [1]}, "weights"),
    ({"player_counts": [2, 3], "weights": ["a", "b"]}, "weights must be 2 positive numbers"),
])
def test_mixed_engine_refuses_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        MixedVectorGame(GameConfig(), **{"num_envs": 8, **kwargs})


def test_mixed_engine_refuses_an_illegal_action_before_any_game_moves() -> None:
    game, twin = (MixedVectorGame(GameConfig(), [3, 5], num_envs=4, seed=1, check=True) for _ in range(2))
    with pytest.raises(RuntimeError, match="reset"):
        game.step(np.zeros(4, np.int64))
    obs, mask, _ = game.reset()
    twin.reset()
    before = obs.copy()
    legal = np.argmax(mask, axis=1)
    actions = legal.copy()
    actions[3] = np.flatnonzero(mask[3] == 0)[0]  # the last game (a 5-player one) gets an illegal move
    with pytest.raises(ValueError, match=r"^game 3: action"):
        game.step(actions)
    np.testing.assert_array_equal(obs, before)  # the 3-player games did not move either
    np.testing.assert_array_equal(game.step(legal)[0], twin.step(legal)[0])


def test_mixed_engine_splits_by_weights() -> None:
    game = MixedVectorGame(GameConfig(), [2, 12], num_envs=10, weights=[1, 3])
    assert [r.stop - r.start for r in game.rows] == [3, 7]


# -- the trainer and the ppo: agent ------------------------------------------------------------------------

torch = pytest.importorskip("torch")

from goboom_env.agents import make_agent  # noqa: E402
from goboom_env.agents.batched import PaddedOpponent, batched_heuristic  # noqa: E402
from goboom_env.agents.ppo import ACTOR_NAME, metadata_problem, read_metadata  # noqa: E402
from goboom_env.cli.options import with_model_game  # noqa: E402
from goboom_env.evaluation.tournament import run_tournament  # noqa: E402
from goboom_env.training.artifacts.model_files import average_policies, write_play_only  # noqa: E402
from goboom_env.training.fast.ppo import train  # noqa: E402
from goboom_env.training.fast.rollout import SeatPlan  # noqa: E402
from goboom_env.training.fast.warm_start import collect_batched  # noqa: E402
from goboom_env.training.league import League  # noqa: E402
from goboom_env.training.settings import GameArgs, VectorArgs  # noqa: E402

COUNTS = [2, 3, 7]


def tiny_args(out: Path, **kw: object) -> VectorArgs:
    base = dict(player_counts=COUNTS, timesteps=600, num_envs=12, num_steps=16, minibatch_size=128, eval_every=-1,
                checkpoint_every=10_000, snapshot_every=300, bc_games=12, bc_epochs=1,
                opponents=["learner=1", "self=1", "random=1", "heuristic=1"], out=str(out), progress=False)
    return VectorArgs(**{**base, **kw})


@pytest.fixture(scope="module")
def generalist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generalist trained for a few hundred decisions at 2, 3 and 7 players, evaluated at 2 and 7."""
    out = tmp_path_factory.mktemp("generalist") / "run"
    return train(tiny_args(out, eval_every=0, eval_games=4, eval_player_counts=[2, 7]))


def test_generalist_metadata_and_evaluation_per_count(generalist: Path) -> None:
    meta = read_metadata(generalist)
    assert meta["player_counts"] == COUNTS and meta["observation_size"] == PADDED_SIZE
    assert [c["num_players"] for c in meta["player_configs"]] == COUNTS
    assert meta["player_configs"][2]["num_decks"] == 2  # each count's own derived rules (R1.1)
    assert meta["config"]["num_players"] == 2  # the default table: 4 players is not among the counts
    header = (generalist.parent / "eval.csv").read_text().splitlines()[0].split(",")
    assert {"win_rate/heuristic@2p", "ci_low/random@7p", "win_rate/heuristic@mean"} <= set(header)
    assert "win_rate/heuristic" not in header and not any("@3p" in h for h in header)
    assert (generalist.parent / "best_model.zip").exists()


@pytest.mark.parametrize("count", COUNTS)
def test_generalist_plays_legally_at_each_trained_count(generalist: Path, count: int) -> None:
    config = GameConfig(num_players=count)
    spec = f"ppo:{generalist}"
    assert make_agent(spec, config).pad_players == count
    result = run_tournament(config, [spec] + ["random"] * (count - 1), count, duplicate=True, progress=False)
    assert next(r for r in result.table() if r["agent"] == spec)["games"] == count  # an illegal move would raise


@pytest.mark.parametrize(("config", "match"), [
    (GameConfig(num_players=5), r"generalist trained for classic Go Boom at 2, 3, 7 players: it does not play 5"),
    (GameConfig(variant="jokers", num_players=3), r"at 2, 3, 7 players, for another game configuration: at 3 "
                                                r"players it plays classic Go Boom, .*\(different: variant"),
    (GameConfig(num_players=3, scoring="reverse"), r"at 3 players it plays classic Go Boom, 3 players, standard "
                                                      r"scoring.*reverse scoring.*\(different: scoring"),
])
def test_generalist_refuses_other_games(generalist: Path, config: GameConfig, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make_agent(f"ppo:{generalist}", config)


def test_commands_play_the_generalists_default_game_or_any_trained_count(generalist: Path) -> None:
    spec = f"ppo:{generalist}"
    assert with_model_game(GameArgs(), [], [spec]).num_players == 2
    assert with_model_game(GameArgs(num_players=7), ["--players", "7"], [spec]).num_players == 7
    with pytest.raises(ValueError, match=r"trained for another game .* num_players: model 2, 3, 7 \(a generalist\), "
                                         r"options 5;"):
        with_model_game(GameArgs(num_players=5), ["--players", "5"], [spec])
    with pytest.raises(ValueError, match=r"scoring: model 'standard', options 'reverse'.* \(a generalist of 2, 3, 7"):
        with_model_game(GameArgs(num_players=3, scoring="reverse"), ["--players", "3", "--scoring", "reverse"], [spec])


@pytest.mark.parametrize(("change", "problem"), [
    ({"player_configs": []}, "not a non-empty list"),
    ({"player_configs": [{"num_players": 99}]}, "invalid game configuration in 'player_configs'"),
    ({"player_counts": [2, 3]}, "'player_counts' [2, 3] that do not match"),
    ({"observation_size": 517}, "'observation_size' 517, not the padded 997"),
    ({"config": GameConfig(num_players=5).to_dict()}, "'config' that is none of its 'player_configs'"),
])
def test_damaged_generalist_metadata_is_named(generalist: Path, change: dict, problem: str) -> None:
    meta = read_metadata(generalist)
    assert metadata_problem(meta) is None
    assert problem in metadata_problem({**meta, **change})


def test_generalists_of_other_player_counts_are_not_averaged(generalist: Path, tmp_path: Path) -> None:
    meta = read_metadata(generalist)
    narrower = {**meta, "player_counts": COUNTS[:2], "player_configs": meta["player_configs"][:2]}
    with zipfile.ZipFile(generalist) as zf:
        other = write_play_only(tmp_path / "narrower.zip", narrower, zf.read(ACTOR_NAME))
    assert metadata_problem(narrower) is None
    average_policies([generalist, generalist], tmp_path / "same.zip")
    with pytest.raises(ValueError, match=r"narrower\.zip was trained for another configuration"):
        average_policies([generalist, other], tmp_path / "mixed.zip")


def test_commands_name_the_model_that_refuses_the_chosen_game(generalist: Path, tmp_path: Path) -> None:
    meta = read_metadata(generalist)
    for key in ("player_counts", "player_configs", "observation_size"):
        del meta[key]  # a model of the generalist's default game (2 players) only
    with zipfile.ZipFile(generalist) as zf:
        specialist = write_play_only(tmp_path / "two.zip", meta, zf.read(ACTOR_NAME))
    specs = [f"ppo:{generalist}", f"ppo:{specialist}"]
    assert with_model_game(GameArgs(), [], specs).num_players == 2
    with pytest.raises(ValueError, match=rf"^ppo:{specialist} was trained .* num_players: model 2, options 3;"):
        with_model_game(GameArgs(num_players=3), ["--players", "3"], specs)
    meta["config"] = GameConfig(num_players=7).to_dict()  # now a 7-player model
    with zipfile.ZipFile(generalist) as zf:
        seven = write_play_only(tmp_path / "seven.zip", meta, zf.read(ACTOR_NAME))
    both = [f"ppo:{generalist}", f"ppo:{seven}"]
    with pytest.raises(ValueError, match="were trained for different games"):  # no option: no one game to pick
        with_model_game(GameArgs(), [], both)
    assert with_model_game(GameArgs(num_players=7), ["--players", "7"], both).num_players == 7  # the game both play


@pytest.mark.parametrize(("kw", "match"), [
    ({"player_counts": [2, 13]}, "player_counts: 13 is not a player count"),
    ({"player_counts": [2, 2]}, "player_counts must not repeat"),
    ({"variant": "jokers"}, "player_counts: a generalist plays classic Go Boom only"),
    ({"num_envs": 2}, "num_envs must be at least one game per player count"),
    ({"eval_player_counts": [4]}, r"eval_player_counts \[4\] are not among player_counts"),
    ({"eval_player_counts": [13]}, "eval_player_counts: 13 is not a player count"),
    ({"player_counts": [], "eval_player_counts": [4]}, "eval_player_counts applies to a generalist run only"),
    ({"player_counts": [2, 12], "hand_size": 9}, "player_counts: no valid game at 12 players"),
])
def test_bad_generalist_arguments_are_refused_with_the_field_named(tmp_path: Path, kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        train(tiny_args(tmp_path / "x", **kw))
    assert not (tmp_path / "x").exists()


def test_seat_plan_draws_the_learner_among_each_games_own_seats() -> None:
    table = np.array([2, 3, 7] * 100)
    plan = SeatPlan(League([("random", 1.0)], size=1, rng=np.random.default_rng(0)), len(table), MAX_PLAYERS, table)
    plan.redraw(np.ones(len(table), bool))
    seat = plan.learner.argmax(1)
    assert (plan.learner.sum(1) == 1).all() and (seat < table).all()
    assert {int(s) for s in seat[table == 7]} == set(range(7))


def test_padded_heuristic_plays_what_each_counts_heuristic_plays() -> None:
    game = MixedVectorGame(GameConfig(), COUNTS, num_envs=9, seed=3)
    obs, mask, _ = game.reset()
    rng = np.random.default_rng(1)
    for _ in range(40):
        padded = batched_heuristic(GameConfig(), COUNTS)
        assert isinstance(padded, PaddedOpponent)
        got = padded.act(obs, mask, np.random.default_rng(7))
        same = np.random.default_rng(7)  # the counts draw their tie-breaks from one stream, smallest count first
        for k, rows in zip(COUNTS, game.rows):
            alone = batched_heuristic(GameConfig(num_players=k)).act(unpad_observations(obs[rows], k), mask[rows], same)
            np.testing.assert_array_equal(got[rows], alone)
        assert (mask[np.arange(len(got)), got] == 1).all()
        obs, mask, *_ = game.step(random_legal_actions(mask, rng))


def test_mixed_demonstrations_are_padded_and_cover_every_count() -> None:
    data = collect_batched(GameConfig(), 12, seed=0, num_envs=6, player_counts=[2, 7])
    assert data.obs.shape[1] == PADDED_SIZE
    tables = np.rint(data.obs[:, layout(MAX_PLAYERS)["flags"].stop - 1].astype(np.float64) * MAX_PLAYERS)
    assert set(tables.tolist()) == {2.0, 7.0}
    assert data.masks[np.arange(len(data)), data.actions].all()


@pytest.mark.slow  # goboom train-fast in a subprocess
def test_cli_trains_a_generalist_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    proc = goboom("train-fast", "--player-counts", "2", "4", "--timesteps", "200", "--num-envs", "8", "--num-steps",
                  "16", "--bc-games", "0", "--eval-every", "-1", "--no-progress", "--out", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    meta = read_metadata(out / "model.zip")
    assert meta["player_counts"] == [2, 4] and meta["config"]["num_players"] == 4
    make_agent(f"ppo:{out / 'model.zip'}", GameConfig(num_players=2))


def test_the_batched_twin_of_a_generalist_pads_as_its_agent_does(generalist: Path) -> None:
    from goboom_env.training.exploit import batched_opponent

    config = GameConfig(num_players=3)
    agent = make_agent(f"ppo:{generalist}", config)
    obs, mask, _ = VectorGame(config, num_envs=6, seed=2).reset()
    twin = batched_opponent(agent, config).act(obs, mask, np.random.default_rng(0))
    np.testing.assert_array_equal(twin, [agent.act({"observation": o, "action_mask": m}) for o, m in zip(obs, mask)])


def test_resume_refuses_other_player_counts(generalist: Path, tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "run"
    shutil.copytree(generalist.parent, out)
    with pytest.raises(ValueError, match=r"--resume: player_counts=\[2, 3\] differs from the checkpoint's \[2, 3, 7\]"):
        train(tiny_args(out, player_counts=[2, 3], timesteps=1200, resume=True))


def test_other_teachers_demonstrations_are_padded_per_count() -> None:
    from goboom_env.training.fast.warm_start import _collect_padded

    data = _collect_padded(GameConfig(), "random", 4, 0, [2, 5])
    tables = np.rint(data.obs[:, layout(MAX_PLAYERS)["flags"].stop - 1].astype(np.float64) * MAX_PLAYERS)
    assert data.obs.shape[1] == PADDED_SIZE and set(tables.tolist()) == {2.0, 5.0}
    assert len(data.masks) == len(data.actions) == len(data.returns) == len(data)


def test_progress_logs_training_win_rates_per_count(generalist: Path) -> None:
    header = (generalist.parent / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"win_rate/heuristic", "win_rate/heuristic@2p", "win_rate/random@7p"} <= set(header)


def test_the_browser_table_offers_a_generalist_at_each_trained_count(generalist: Path, tmp_path: Path) -> None:
    pytest.importorskip("starlette")
    from goboom_env.web.catalog import Catalog

    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "general.zip").write_bytes(generalist.read_bytes())
    catalog = Catalog([folder])
    choice = next(c for c in catalog.public() if c["id"] == "model:general")
    assert choice["player_counts"] == COUNTS and "2, 3, 7 players" in choice["label"]
    assert catalog.spec("model:general", GameConfig(num_players=7)) == f"ppo:{folder / 'general.zip'}"
    with pytest.raises(ValueError, match="does not play 5 players"):
        catalog.spec("model:general", GameConfig(num_players=5))


def test_seed_band_evaluates_a_generalist_at_its_default_table(generalist: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "args.json").write_text(json.dumps({"player_counts": COUNTS, "num_players": 4, "seed": 1,
                                               "episode": "hand"}))
    (run / "progress.csv").write_text("timesteps,train_s\n1000,2.5\n")
    shutil.copyfile(generalist, run / "checkpoints" / "model_1000.zip")
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "seed_band.py"), str(run), "--every", "1000",
                           "--games", "2", "--opponent", "random", "--out", str(tmp_path / "band")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]  # its default table is 2 players, not --num-players 4
    assert "| 1,000 | 1 |" in (tmp_path / "band" / "band.md").read_text()
