"""Ray RLlib path: the MultiAgentEnv adapter, the action-masking RLModule, league
matchmaking, the ``rllib:`` loader, and (slow) a tiny training run on a local Ray instance that is
checkpointed, resumed and benchmarked with the tournament runner."""

from __future__ import annotations

import dataclasses
import json
import pickle
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")  # the rllib extra
pytest.importorskip("ray.rllib")
import torch
from helpers import Payload, play_aec, python_output
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

from goboom_env import GameConfig, IllegalActionError
from goboom_env.agents import make_agent
from goboom_env.cards import DRAW_OR_PASS, NUM_ACTIONS, code_of, deck_faces, face_of
from goboom_env.cli import train_rllib as train_rllib_command
from goboom_env.engine import win_rewards
from goboom_env.env import raw_env
from goboom_env.observation import observation_size
from goboom_env.training.artifacts.model_files import model_metadata
from goboom_env.training.rllib.env import MASK_KEY, OBS_KEY, GoBoomMultiAgentEnv, make_env_config
from goboom_env.training.rllib.league import LEAGUE_PREFIX, LeagueMapping
from goboom_env.training.rllib.policy import (
    MAIN_MODULE,
    MODULE_FILE,
    RAY_NOISE,
    MaskedPPOTorchRLModule,
    RLlibAgent,
    load_rllib_agent,
    module_path,
    save_module,
)
from goboom_env.training.settings import RLlibArgs

REPO = Path(__file__).resolve().parents[2]


def full_deck(config: GameConfig, top: list[str]) -> list[str]:
    """``top`` (index 0 = top, R0.5) followed by the rest of the deck in face order."""
    rest = [code_of(f) for f in deck_faces(config.num_decks, config.num_jokers)]
    for code in top:
        rest.remove(code)
    return top + rest


def random_episode(env: GoBoomMultiAgentEnv, rng: np.random.Generator, seed: int) -> list[tuple]:
    """Play one episode with uniformly random legal actions; the (obs, action, step output) list."""
    obs, infos = env.reset(seed=seed)
    steps = []
    while True:
        (agent,) = obs
        action = int(rng.choice(np.flatnonzero(obs[agent][MASK_KEY])))
        out = env.step({agent: action})
        steps.append((obs, infos, agent, action, out))
        obs, _, terminateds, _, infos = out
        if terminateds["__all__"]:
            return steps


# -- the MultiAgentEnv adapter --------------------------------------------------------------------


def test_scripted_hand_every_seat_gets_its_payoff_and_the_end():
    """R1.5, R1.7, R1.9: P0 wins a trick with AS, then goes out on the lead with 2S. P1 and P2 did
    not make the last move but each receives -1/(n-1), a final observation and termination."""
    config = GameConfig(num_players=3, hand_size=2)
    env = GoBoomMultiAgentEnv(make_env_config(config))
    # dealer 2 deals from seat 0: P0 AS 2S, P1 KS 3H, P2 QS 4H
    obs, _ = env.reset(options={"deck": full_deck(config, ["AS", "KS", "QS", "2S", "3H", "4H"]), "dealer": 2})
    assert list(obs) == ["player_0"]
    assert np.flatnonzero(obs["player_0"][MASK_KEY]).tolist() == sorted([face_of("AS"), face_of("2S")])
    script = [("player_0", "AS", "player_1"), ("player_1", "KS", "player_2"), ("player_2", "QS", "player_0")]
    for agent, card, nxt in script:
        obs, rewards, terminateds, truncateds, _ = env.step({agent: face_of(card)})
        assert list(obs) == [nxt]
        assert rewards == {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0}
        assert terminateds == {"__all__": False} and truncateds == {"__all__": False}
    # R1.5: P1 had to follow the led spade, its heart was not legal
    obs, rewards, terminateds, truncateds, infos = env.step({"player_0": face_of("2S")})
    assert rewards == {"player_0": 1.0, "player_1": -0.5, "player_2": -0.5}
    assert terminateds == {"player_0": True, "player_1": True, "player_2": True, "__all__": True}
    assert truncateds == {"__all__": False}
    assert sorted(obs) == ["player_0", "player_1", "player_2"]
    assert all(not o[MASK_KEY].any() for o in obs.values())
    assert all(infos[a]["winners"] == [0] for a in obs)


def test_rllib_episode_credits_the_losers_reward_to_their_last_action():
    """The same hand fed into RLlib's MultiAgentEpisode: the losers' -0.5 arrives on a step where
    they did not act and must still land in their own returns."""
    config = GameConfig(num_players=3, hand_size=2)
    env = GoBoomMultiAgentEnv(make_env_config(config))
    obs, infos = env.reset(options={"deck": full_deck(config, ["AS", "KS", "QS", "2S", "3H", "4H"]), "dealer": 2})
    episode = MultiAgentEpisode(observation_space=env.observation_space, action_space=env.action_space)
    episode.add_env_reset(observations=obs, infos=infos)
    for card in ("AS", "KS", "QS", "2S"):
        (agent,) = obs
        obs, rewards, terminateds, truncateds, infos = env.step({agent: face_of(card)})
        episode.add_env_step(observations=obs, actions={agent: face_of(card)}, rewards=rewards, infos=infos,
                             terminateds=terminateds, truncateds=truncateds)
    assert episode.is_done
    returns = {aid: e.get_return() for aid, e in episode.agent_episodes.items()}
    assert returns == {"player_0": 1.0, "player_1": -0.5, "player_2": -0.5}
    assert {aid: len(e) for aid, e in episode.agent_episodes.items()} == {"player_0": 2, "player_1": 1, "player_2": 1}


@pytest.mark.parametrize("settings", [
    {"game": GameConfig(num_players=4), "episode": "hand", "reward": "win"},
    {"game": GameConfig(num_players=3, scoring="reverse", target_score=40), "episode": "match", "reward": "points"},
    {"game": GameConfig(variant="jokers", num_players=4), "episode": "hand", "reward": "win"},
    {"game": GameConfig(variant="jokers", num_players=3, num_jokers=0, rounds=2), "episode": "match",
     "reward": "win"},
], ids=["classic4-hand-win", "classic3-reverse-match-points", "jokers4-hand-win", "jokers3-aces-match-win"])
def test_random_episodes_keep_the_adapter_contract(settings):
    """Invariants over random games: only the seat to move observes, its mask is the AEC env's
    legal mask (R3.2) and non-empty, rewards cover every seat and sum to zero, the episode ends
    for every agent, and win rewards match the winners (R1.9, R2.9, R2.10, R1.11, R2.12)."""
    game = settings["game"]
    env = GoBoomMultiAgentEnv(make_env_config(game, settings["episode"], settings["reward"]))
    agents = env.possible_agents
    space = env.observation_spaces[agents[0]]
    rng = np.random.default_rng(5)
    for seed in range(12 if settings["episode"] == "hand" else 3):
        returns = dict.fromkeys(agents, 0.0)
        steps = random_episode(env, rng, seed)
        for obs, _, agent, _, (_, rewards, _, truncateds, _) in steps:
            assert space.contains(obs[agent])
            assert obs[agent][MASK_KEY].dtype == np.float32 and obs[agent][MASK_KEY].sum() >= 1
            assert sorted(rewards) == agents and abs(sum(rewards.values())) < 1e-9
            assert truncateds == {"__all__": False}
            for a, r in rewards.items():
                returns[a] += r
        final_obs, _, terminateds, _, infos = steps[-1][-1]
        assert terminateds == dict.fromkeys(agents, True) | {"__all__": True}
        assert sorted(final_obs) == agents
        if settings["reward"] == "win":
            expected = win_rewards(game.num_players, infos[agents[0]]["winners"])
            assert [returns[a] for a in agents] == pytest.approx(expected)


def test_observation_is_the_aec_observation_and_seeding_repeats_episodes():
    """The adapter shows exactly what ``raw_env.observe`` shows; ``reset(seed)`` fixes the deal."""
    config = GameConfig(variant="jokers", num_players=3)
    env = GoBoomMultiAgentEnv(make_env_config(config))
    aec = raw_env(config=config)
    obs, _ = env.reset(seed=11)
    aec.reset(seed=11)
    (agent,) = obs
    assert agent == aec.agent_selection
    expected = aec.observe(agent)
    np.testing.assert_array_equal(obs[agent][OBS_KEY], expected["observation"])
    np.testing.assert_array_equal(obs[agent][MASK_KEY], expected["action_mask"].astype(np.float32))
    first = [(a, act) for _, _, a, act, _ in random_episode(env, np.random.default_rng(1), 3)]
    again = [(a, act) for _, _, a, act, _ in random_episode(env, np.random.default_rng(1), 3)]
    assert first == again and len(first) > 3


def test_adapter_rejects_bad_input():
    env = GoBoomMultiAgentEnv(make_env_config(GameConfig(num_players=4)))
    obs, _ = env.reset(seed=0)
    (agent,) = obs
    other = next(a for a in env.possible_agents if a != agent)
    with pytest.raises(ValueError, match=f"expected an action for {agent}"):
        env.step({other: 0})
    illegal = int(np.flatnonzero(obs[agent][MASK_KEY] == 0)[0])
    with pytest.raises(IllegalActionError, match=r"R3\.2"):
        env.step({agent: illegal})
    with pytest.raises(ValueError, match="unknown env_config keys"):
        GoBoomMultiAgentEnv({"game": {}, "players": 4})
    with pytest.raises(ValueError, match="episode must be one of"):
        make_env_config(GameConfig(), episode="trick")


# -- the action-masking RLModule and the loader ---------------------------------------------------


def build_module(num_players: int = 4, hidden: int = 16) -> MaskedPPOTorchRLModule:
    env = GoBoomMultiAgentEnv(make_env_config(GameConfig(num_players=num_players)))
    return RLModuleSpec(
        module_class=MaskedPPOTorchRLModule,
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config=DefaultModelConfig(fcnet_hiddens=[hidden]),
    ).build()


def observation_batch(count: int) -> dict[str, torch.Tensor]:
    """Observations of ``count`` random decision points of 4-player classic."""
    env = GoBoomMultiAgentEnv(make_env_config(GameConfig(num_players=4)))
    rng = np.random.default_rng(2)
    found = []
    seed = 0
    while len(found) < count:
        found += [obs[agent] for obs, _, agent, _, _ in random_episode(env, rng, seed)]
        seed += 1
    found = found[:count]
    return {key: torch.as_tensor(np.stack([o[key] for o in found])) for key in (OBS_KEY, MASK_KEY)}


def test_masked_module_never_samples_an_illegal_action():
    module = build_module()
    batch = observation_batch(64)
    mask = batch[MASK_KEY].bool()
    for forward in (module.forward_exploration, module.forward_inference):
        logits = forward({Columns.OBS: dict(batch)})[Columns.ACTION_DIST_INPUTS]
        assert logits.shape == (64, NUM_ACTIONS)
        assert (logits[~mask] < -1e37).all() and (logits[mask] > -1e3).all()
        samples = torch.distributions.Categorical(logits=logits).sample((20,))
        assert mask.gather(1, samples.T).all()
    train_out = module.forward_train({Columns.OBS: dict(batch)})
    values = module.compute_values({Columns.OBS: dict(batch)})
    assert values.shape == (64,) and torch.isfinite(values).all()
    assert torch.allclose(module.compute_values({Columns.OBS: dict(batch)}, train_out[Columns.EMBEDDINGS]), values)


def test_masked_module_needs_the_dict_observation_space():
    env = GoBoomMultiAgentEnv(make_env_config(GameConfig(num_players=4)))
    with pytest.raises(ValueError, match="'observations' and 'action_mask'"):
        MaskedPPOTorchRLModule(observation_space=env.observation_spaces["player_0"][OBS_KEY],
                               action_space=env.action_spaces["player_0"],
                               model_config=DefaultModelConfig(fcnet_hiddens=[8]))


def ordered_logits(module: RLModule) -> None:
    """Make the policy head output logit ``a`` for action ``a``, whatever the input."""
    last = [m for m in module.pi.modules() if isinstance(m, torch.nn.Linear)][-1]
    with torch.no_grad():
        last.weight.zero_()
        last.bias.copy_(torch.arange(NUM_ACTIONS, dtype=torch.float32))


def one_observation(legal: list[int], num_players: int = 4) -> dict[str, np.ndarray]:
    mask = np.zeros(NUM_ACTIONS, np.int8)
    mask[legal] = 1
    return {"observation": np.zeros(observation_size(num_players), np.float32), "action_mask": mask}


def save_policy(module: RLModule, folder: Path, config: GameConfig, metadata_in: Path | None = None) -> None:
    """Save ``module`` in ``folder`` with the ``goboom.json`` that ``goboom train-rllib`` writes beside a policy
    (in ``metadata_in``, the folder itself by default)."""
    save_module(module, folder)
    (metadata_in or folder).joinpath("goboom.json").write_text(json.dumps(model_metadata(config)))


def test_loader_finds_policy_folders_and_plays_greedy_or_sampled(tmp_path, capfd):
    """``rllib:`` accepts an exported module folder, a run folder (``policy/``) and an algorithm
    checkpoint layout; greedy play is the arg-max over the *legal* actions only (R3.2)."""
    module = build_module()
    ordered_logits(module)
    config = GameConfig(num_players=4)
    save_policy(module, tmp_path / "run" / "policy", config)
    save_policy(module, tmp_path / "ckpt" / "learner_group" / "learner" / "rl_module" / MAIN_MODULE, config,
                metadata_in=tmp_path / "ckpt")
    for spec in (f"rllib:{tmp_path / 'run'}", f"rllib:{tmp_path / 'run' / 'policy'}", f"rllib:{tmp_path / 'ckpt'}"):
        agent = make_agent(spec, config, seed=0)
        assert isinstance(agent, RLlibAgent) and agent.needs_view is False
        assert agent.act(one_observation([3, 17, 40])) == 40  # 53 has the top logit but is illegal
        assert agent.act(one_observation([3, DRAW_OR_PASS])) == DRAW_OR_PASS
    sampler = make_agent(f"rllib:path={tmp_path / 'run'},greedy=false", config, seed=4)
    picks = [sampler.act(one_observation([50, 51, 52])) for _ in range(300)]
    assert set(picks) == {50, 51, 52}  # softmax of logits 50, 51, 52 over the legal three
    assert picks.count(52) > picks.count(50)
    sampler.reseed(4)
    assert [sampler.act(one_observation([50, 51, 52])) for _ in range(300)] == picks
    assert [start for start in RAY_NOISE.values() if start in capfd.readouterr().err] == []  # filtered


def test_loader_takes_a_path_relative_to_the_working_directory(tmp_path, monkeypatch):
    """``rllib:runs/x`` as the docs write it: Ray needs absolute paths (a relative one is read as a
    URI without a scheme), so the loader resolves it first."""
    module = build_module()
    ordered_logits(module)
    run = tmp_path / "runs" / "x"
    save_policy(module, run / "policy", GameConfig(num_players=4), metadata_in=run)
    monkeypatch.chdir(tmp_path)
    for spec in ("rllib:runs/x", "rllib:runs/x/policy", "rllib:path=./runs/../runs/x,greedy=false"):
        agent = make_agent(spec, GameConfig(num_players=4), seed=0)
        assert agent.act(one_observation([3, 17, 40])) in {3, 17, 40}
    assert module_path("runs/x") == (tmp_path / "runs" / "x" / "policy").resolve()


def test_loader_errors_name_the_problem(tmp_path):
    with pytest.raises(ValueError, match="no RLlib policy found"):
        module_path(tmp_path)
    with pytest.raises(ValueError, match="needs a path"):
        load_rllib_agent(GameConfig(), 0, "")
    save_module(build_module(num_players=4), tmp_path / "policy")
    with pytest.raises(ValueError, match=r"has no goboom\.json beside it"):
        make_agent(f"rllib:{tmp_path}", GameConfig(num_players=4), seed=0)


def test_loader_never_unpickles_a_crafted_policy_folder(tmp_path):
    """Ray's module files are pickles: a crafted ``class_and_ctor_args.pkl`` is never read, a folder with no
    module file of ours is refused, and a module file holding a pickled object is refused, naming the file."""
    config = GameConfig(num_players=4)
    marker = tmp_path / "ran"
    save_policy(build_module(num_players=4), tmp_path / "policy", config)
    for name in (RLModule.CLASS_AND_CTOR_ARGS_FILE_NAME, "module_state.pkl"):
        (tmp_path / "policy" / name).write_bytes(pickle.dumps(Payload(marker)))
    agent = make_agent(f"rllib:{tmp_path}", config, seed=0)  # plays from goboom_module.pt alone
    assert agent.act(one_observation([3, 17])) in {3, 17} and not marker.exists()

    module_file = tmp_path / "policy" / MODULE_FILE
    saved = torch.load(module_file, weights_only=True)
    torch.save({**saved, "extra": Payload(marker)}, module_file)
    with pytest.raises(ValueError, match=f"{module_file} is not tensors and plain data; refused, not loaded"):
        make_agent(f"rllib:{tmp_path}", config, seed=0)
    torch.save({**saved, "settings": {"fcnet_hiddens": [8]}}, module_file)
    with pytest.raises(ValueError, match=f"{module_file} does not fit a 4-player module"):
        make_agent(f"rllib:{tmp_path}", config, seed=0)
    torch.save({**saved, "settings": {"fcnet_activation": 3}}, module_file)
    with pytest.raises(ValueError, match=f"{module_file} is damaged: setting 'fcnet_activation'"):
        make_agent(f"rllib:{tmp_path}", config, seed=0)
    module_file.unlink()
    with pytest.raises(ValueError, match=f"has no {MODULE_FILE}: rllib: loads only policies saved by goboom "
                                         "train-rllib"):
        make_agent(f"rllib:{tmp_path}", config, seed=0)
    assert not marker.exists()


def test_loader_bounds_a_crafted_module_and_its_metadata(tmp_path):
    """A module file whose settings ask for layers of 65,536 units (17 GB a layer) is refused before any layer is
    built; a ``goboom.json`` nested 100,000 levels deep is one error naming it."""
    config = GameConfig(num_players=4)
    save_policy(build_module(num_players=4), tmp_path / "policy", config)
    module_file = tmp_path / "policy" / MODULE_FILE
    saved = torch.load(module_file, weights_only=True)
    torch.save({**saved, "settings": {"fcnet_hiddens": [65536, 65536]}}, module_file)
    with pytest.raises(ValueError, match=rf"{module_file} is damaged: fcnet_hiddens must be positive layer widths of "
                                         r"a network of at most 33,554,432 weights, got \[65536, 65536\]"):
        make_agent(f"rllib:{tmp_path}", config, seed=0)
    (tmp_path / "policy" / "goboom.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match=r"goboom\.json is damaged or from an older goboom-env: its metadata: not JSON "
                                         r"we read: nested more than 32 levels deep$"):
        make_agent(f"rllib:{tmp_path}", config, seed=0)


def test_loader_refuses_a_policy_trained_for_another_game(tmp_path):
    """The one compatibility check of ``ppo:`` and ``rllib:``: a classic 4-player policy does not load into a
    jokers 4-player game (same observation size), nor into 3 players, nor with another observation layout,
    nor with damaged metadata."""
    save_policy(build_module(num_players=4), tmp_path / "policy", GameConfig(num_players=4))
    spec = f"rllib:{tmp_path}"
    assert isinstance(make_agent(spec, GameConfig(num_players=4), seed=0), RLlibAgent)
    with pytest.raises(ValueError, match=r"different game configuration: classic Go Boom, 4 players, .*; the "
                                         r"requested game is jokers Go Boom, 4 players, .*\(different: variant"):
        make_agent(spec, GameConfig(variant="jokers", num_players=4), seed=0)
    with pytest.raises(ValueError, match=r"4 players; the requested game is classic Go Boom, 3 players \(different: "
                                         r"players\)"):
        make_agent(spec, GameConfig(num_players=3), seed=0)
    file = tmp_path / "policy" / "goboom.json"
    meta = json.loads(file.read_text())
    file.write_text(json.dumps({**meta, "observation_version": meta["observation_version"] + 1}))
    with pytest.raises(ValueError, match=f"observation layout version {meta['observation_version'] + 1}"):
        make_agent(spec, GameConfig(num_players=4), seed=0)
    file.write_text(json.dumps({**meta, "config": "classic"}))
    with pytest.raises(ValueError, match=r"goboom\.json is damaged .*has no game configuration \('config' object\)"):
        make_agent(spec, GameConfig(num_players=4), seed=0)
    file.write_text("{")
    with pytest.raises(ValueError, match=r"goboom\.json is damaged .*its metadata: not JSON"):
        make_agent(spec, GameConfig(num_players=4), seed=0)


def test_loaded_agent_plays_whole_games_legally(tmp_path):
    config = GameConfig(variant="jokers", num_players=3)
    save_policy(build_module(num_players=3), tmp_path / "policy", config)
    agent = make_agent(f"rllib:{tmp_path}", config, seed=1)
    env = raw_env(config=config)
    for seed in range(3):
        env.reset(seed=seed)
        play_aec(env, agent.act)  # raw_env raises on an illegal action


# -- league matchmaking ---------------------------------------------------------------------------


class FakeEpisode:
    def __init__(self, episode_id: str) -> None:
        self.id_ = episode_id


def test_league_mapping_is_consistent_per_episode_and_spreads_the_learner_seat():
    only_snapshots = LeagueMapping(num_players=4, pool_size=3, opponents=(("learner", 0.0), ("self", 1.0)))
    mapping = pickle.loads(pickle.dumps(only_snapshots))
    learner_seats = []
    for i in range(400):
        episode = FakeEpisode(f"ep{i}")
        modules = [mapping(f"player_{s}", episode) for s in range(4)]
        assert modules == [mapping(f"player_{s}", episode) for s in range(4)]  # same episode, same draw
        assert modules.count(MAIN_MODULE) == 1  # learner=0: only the learner seat
        assert all(m == MAIN_MODULE or m in {f"{LEAGUE_PREFIX}{k}" for k in range(3)} for m in modules)
        learner_seats.append(modules.index(MAIN_MODULE))
    assert min(np.bincount(learner_seats, minlength=4)) > 60
    everyone = LeagueMapping(num_players=4, pool_size=3, opponents=(("learner", 1.0),))
    assert [everyone(f"player_{s}", FakeEpisode("x")) for s in range(4)] == [MAIN_MODULE] * 4
    mixed = LeagueMapping(num_players=4, pool_size=3, opponents=(("learner", 1.0), ("self", 1.0)))
    mains = [sum(m == MAIN_MODULE for m in mixed.modules(f"e{i}")) for i in range(400)]
    assert min(mains) >= 1 and 2.0 < np.mean(mains) < 3.0  # 1 + 3 * 0.5 = 2.5 expected


# -- command line ---------------------------------------------------------------------------------


def train_rllib(*argv: str) -> int:
    """Run ``goboom train-rllib ARGV`` in-process."""
    return train_rllib_command.main(list(argv), "goboom train-rllib")


@pytest.mark.parametrize("flags, message", [
    (["--opponents", "heuristic=1"], "opponents entry 'heuristic': this trainer plays learner, self"),
    (["--minibatch-size", "9000"], "minibatch_size (9000) must be <= train_batch_size"),
    (["--episode", "trick"], "invalid choice 'trick' for argument '--episode'"),
    (["--players", "13"], "num_players must be an integer in 2..12"),
    (["--address", "127.0.0.1"], "address must be auto, HOST:PORT or ray://HOST:PORT"),
    (["--address", "127.0.0.1:99999"], "address must be auto, HOST:PORT or ray://HOST:PORT"),
])
def test_cli_rejects_bad_arguments(tmp_path, capsys, flags, message):
    assert train_rllib("--out", str(tmp_path / "run"), *flags) == 2
    assert message in capsys.readouterr().err


def test_cli_refuses_to_overwrite_a_run(tmp_path, capsys):
    (tmp_path / "progress.csv").write_text("x\n")
    assert train_rllib("--out", str(tmp_path), "--no-progress") == 2
    assert "--resume" in capsys.readouterr().err


def closed_loopback_port() -> int:
    """A loopback TCP port that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_cli_fails_fast_on_an_unreachable_address(tmp_path):
    """``--address`` where no cluster listens: one clear line and exit code 2 from goboom's own probe of the
    address (its message), before Ray is asked to join and retries for minutes; no run folder is left behind. Only
    the loopback address is tried. The timeout only guards against a hang."""
    port = closed_loopback_port()
    run = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "goboom_env.cli", "train-rllib", "--address", f"127.0.0.1:{port}",
                           "--out", str(run), "--no-progress"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 2, done.stderr[-3000:]
    assert f"no Ray cluster reachable at --address '127.0.0.1:{port}'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not run.exists()


def test_a_run_that_fails_before_its_first_checkpoint_leaves_no_folder(tmp_path, monkeypatch):
    """A crash before anything resumable was saved must not leave a folder that the rerun refuses
    as "not empty" (Ray and training are replaced by stand-ins: only the folder handling runs)."""
    from goboom_env.training.rllib import train as rllib_train

    class Algo:
        def stop(self) -> None:
            pass

    class Config:
        def build_algo(self) -> Algo:
            return Algo()

    def crash(*args: object) -> int:
        (run / "progress.csv").write_text("iteration\n")
        raise RuntimeError("worker died")

    monkeypatch.setattr(rllib_train, "init_ray", lambda args: False)
    monkeypatch.setattr(rllib_train, "build_config", lambda args: Config())
    monkeypatch.setattr(rllib_train, "_start_league", crash)
    run = tmp_path / "run"
    args = RLlibArgs(out=str(run), progress=False)
    with pytest.raises(RuntimeError, match="worker died"):
        rllib_train.train(args)
    assert not run.exists()
    run.mkdir()  # an empty folder given by the user stays, empty
    with pytest.raises(RuntimeError, match="worker died"):
        rllib_train.train(args)
    assert run.is_dir() and not any(run.iterdir())
    (run / "checkpoints" / "iter_000001").mkdir(parents=True)  # something resumable: kept
    with pytest.raises(RuntimeError, match="worker died"):
        rllib_train.train(dataclasses.replace(args, resume=True))
    assert (run / "progress.csv").exists()


def test_resume_refuses_another_game_before_ray_starts(tmp_path, monkeypatch):
    """``--resume`` continues a run with the game it was started with: another variant is refused, naming
    the difference, before Ray or any training starts."""
    from goboom_env.training.rllib import train as rllib_train

    def no_ray(args: object) -> bool:
        raise AssertionError("Ray was started")

    monkeypatch.setattr(rllib_train, "init_ray", no_ray)
    run = tmp_path / "run"
    run.mkdir()
    (run / "goboom.json").write_text(json.dumps(model_metadata(GameConfig(num_players=4))))
    args = RLlibArgs(out=str(run), resume=True, progress=False, variant="jokers")
    with pytest.raises(ValueError, match=r"--resume: the run .*requested game is jokers Go Boom.*\(different: variant"):
        rllib_train.train(args)


# -- training on a local Ray instance (slow) ------------------------------------------------------

TINY = ["--num-envs", "2", "--train-batch-size", "256", "--minibatch-size", "128",
        "--n-epochs", "1", "--net-arch", "32", "--pool-size", "2", "--snapshot-every", "1",
        "--checkpoint-every", "1", "--num-cpus", "2", "--seed", "3", "--no-progress"]


def module_weights(path: Path) -> dict[str, np.ndarray]:
    state = RLModule.from_checkpoint(path).get_state()
    return {k: np.asarray(v) for k, v in state.items() if k.startswith("pi")}


@pytest.mark.slow
def test_train_checkpoint_resume_and_benchmark(tmp_path):
    """Two iterations with one remote env runner, a league snapshot after each, checkpoints, then
    a resumed third iteration; the exported policy then plays a duplicate tournament."""
    from goboom_env.evaluation.tournament import run_tournament

    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "goboom_env.cli", "train-rllib", "--out", str(run), "--num-env-runners", "1", *TINY]
    done = subprocess.run([*cmd, "--timesteps", "512"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"rllib:{run}" in done.stdout
    rows = (run / "progress.csv").read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("iteration,env_steps")
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["iter_000001", "iter_000002"]
    assert any((run / "tensorboard").iterdir())
    meta = json.loads((run / "goboom.json").read_text())
    assert meta["config"] == GameConfig(num_players=4).to_dict() and meta["iteration"] == 2
    assert meta["timesteps"] >= 512 and meta["train_args"]["pool_size"] == 2
    # iteration 2 copied main into league_0 (round robin) right before the checkpoint; league_1
    # holds main as it was after iteration 1, and main has trained since
    modules = run / "checkpoints" / "iter_000002" / "learner_group" / "learner" / "rl_module"
    main, first, second = (module_weights(modules / m) for m in (MAIN_MODULE, "league_0", "league_1"))
    assert all(np.array_equal(main[k], first[k]) for k in main)
    assert not all(np.array_equal(main[k], second[k]) for k in main)

    resumed = subprocess.run([*cmd, "--timesteps", "768", "--resume"], cwd=REPO, capture_output=True, text=True,
                             timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert len((run / "progress.csv").read_text().splitlines()) == 4
    assert json.loads((run / "goboom.json").read_text())["iteration"] == 3

    config = GameConfig(num_players=4)
    spec = f"rllib:{run}"
    run_tournament(config, [spec, "random", "random", "random"], 8, seed=1, duplicate=True, progress=False)
    # the exported policy is the last checkpoint's main module, carries the run's metadata, and plays its argmax
    latest = run / "checkpoints" / "iter_000003" / "learner_group" / "learner" / "rl_module" / MAIN_MODULE
    exported, trained = module_weights(run / "policy"), module_weights(latest)
    assert exported.keys() == trained.keys() and all(np.array_equal(exported[k], trained[k]) for k in trained)
    assert json.loads((run / "policy" / "goboom.json").read_text()) == json.loads((run / "goboom.json").read_text())
    agent = make_agent(spec, config, seed=0)
    batch = observation_batch(32)
    with torch.no_grad():
        logits = RLModule.from_checkpoint(latest).forward_inference({Columns.OBS: dict(batch)})
    for i, best in enumerate(logits[Columns.ACTION_DIST_INPUTS].argmax(1).tolist()):
        assert agent.act({"observation": batch[OBS_KEY][i].numpy(), "action_mask": batch[MASK_KEY][i].numpy()}) == best
    with pytest.raises(ValueError, match=r"classic Go Boom, .*; the requested game is jokers Go Boom, .*\(different: "
                                         r"variant"):
        make_agent(spec, GameConfig(variant="jokers", num_players=4), seed=0)


@pytest.mark.slow
def test_cli_trains_in_the_driver_with_a_relative_out_and_evaluates(tmp_path, monkeypatch):
    """``--num-env-runners 0`` samples in the driver; ``--out runs/rllib3`` is relative to the
    working directory, as the docs write it (Ray needs absolute paths to save checkpoints);
    ``--eval-games`` benchmarks the policy against random and heuristic with the tournament runner
    and writes eval.json; the policy then loads by the same relative path."""
    cmd = [sys.executable, "-m", "goboom_env.cli", "train-rllib", "--out", "runs/rllib3", "--num-env-runners", "0",
           "--timesteps", "256", "--eval-games", "4", "--variant", "jokers", "--players", "3", *TINY]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    run = (tmp_path / "runs" / "rllib3").resolve()
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["iter_000001"]
    evaluation = json.loads((run / "eval.json").read_text())
    assert sorted(evaluation) == ["heuristic", "random"]
    for opponent, rows in evaluation.items():
        games = {row["agent"]: row["games"] for row in rows}
        assert games == {f"rllib:{run}": 6, opponent: 12}  # duplicate: 4 games round up to 2 deals x 3 seats
    assert "vs heuristic" in done.stdout
    assert [start for start in RAY_NOISE.values() if start in done.stderr] == []  # Ray's known warnings filtered
    monkeypatch.chdir(tmp_path)
    config = GameConfig(variant="jokers", num_players=3)
    agent = make_agent("rllib:runs/rllib3", config, seed=0)
    env = raw_env(config=config)
    env.reset(seed=0)
    play_aec(env, agent.act)  # raw_env raises on an illegal action


def test_core_package_sb3_path_and_cli_module_do_not_import_ray():
    """``ray[rllib]`` is an optional extra: the env, the agents registry, the SB3 training path and
    the ``train-rllib`` command's argument module import without it (``goboom --help`` stays fast)."""
    code = ("import sys, goboom_env, goboom_env.agents, goboom_env.training.sb3, goboom_env.cli.train_rllib; "
            "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))")
    assert python_output(code) == "[]"


@pytest.mark.slow
def test_measure_sampling_and_the_cpu_check(tmp_path):
    """``--measure-sampling`` reports env steps/s without training; asking for more env runners than
    the local Ray instance has CPUs fails with a message instead of waiting forever."""
    base = [sys.executable, "-m", "goboom_env.cli", "train-rllib", "--num-cpus", "2", "--num-envs", "2",
            "--net-arch", "16", "--no-progress"]
    done = subprocess.run([*base, "--measure-sampling", "200", "--num-env-runners", "0", "--out", str(tmp_path / "a")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert measured["num_env_runners"] == 0 and measured["env_steps"] >= 200 and measured["env_steps_per_s"] > 0
    too_many = subprocess.run([*base, "--num-env-runners", "3", "--out", str(tmp_path / "b")], cwd=REPO,
                              capture_output=True, text=True, timeout=600)
    assert too_many.returncode == 2
    assert "num_env_runners=3 needs 3 CPUs" in too_many.stderr
    assert not (tmp_path / "b").exists()  # refused before the run folder was made
