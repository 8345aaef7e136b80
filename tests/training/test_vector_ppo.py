"""The fast self-play trainer (goboom_env/training/fast/): per-seat GAE, the masked policy, short runs, resume."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import ROOT, ctrl_c_once_started, goboom  # noqa: E402
from helpers.training import masks_with_action  # noqa: E402

from goboom_env.agents import make_agent  # noqa: E402
from goboom_env.agents.batched import ClassicTricksOpponent, JokersBoomOpponent, batched_heuristic  # noqa: E402
from goboom_env.cards import NUM_ACTIONS  # noqa: E402
from goboom_env.config import GameConfig  # noqa: E402
from goboom_env.training.fast.policy import ActorCritic  # noqa: E402
from goboom_env.training.fast.ppo import train  # noqa: E402
from goboom_env.training.fast.rollout import Pending, seat_gae  # noqa: E402
from goboom_env.training.fast.warm_start import collect_batched  # noqa: E402
from goboom_env.training.opponents import sample_masked  # noqa: E402
from goboom_env.training.settings import VectorArgs  # noqa: E402
from goboom_env.training.shaping import hand_size_potential  # noqa: E402


def reference_gae(values: list[float], rewards: list[float], gamma: float, lam: float) -> list[float]:
    """Plain GAE over one seat's own decision sequence that ends its episode (reward after each decision)."""
    adv, out = 0.0, []
    for t in range(len(values) - 1, -1, -1):
        next_value = values[t + 1] if t + 1 < len(values) else 0.0
        adv = rewards[t] + gamma * next_value - values[t] + gamma * lam * adv
        out.append(adv)
    return out[::-1]


def two_seat_hand() -> dict[str, np.ndarray]:
    """One game, two seats moving 0,1,0,1,0; the hand ends on the 5th call (seat 0 wins: +1 / -1), then the
    next hand's seat 1 and seat 0 move once each (its end lies beyond the rollout)."""
    seats = np.array([[0], [1], [0], [1], [0], [1], [0]])
    values = np.array([[0.1], [-0.2], [0.3], [-0.4], [0.5], [0.6], [0.7]], np.float32)
    rewards = np.zeros((7, 1, 2), np.float32)
    rewards[4, 0] = [1.0, -1.0]
    dones = np.zeros((7, 1), bool)
    dones[4, 0] = True
    return {"values": values, "rewards": rewards, "dones": dones, "seats": seats, "learner": np.ones((7, 1), bool)}


def test_seat_gae_credits_the_end_of_hand_reward_to_each_seats_own_last_decision() -> None:
    seq = two_seat_hand()
    gamma, lam = 0.9, 0.8
    out = seat_gae(**seq, gamma=gamma, lam=lam)
    seat0 = reference_gae([0.1, 0.3, 0.5], [0.0, 0.0, 1.0], gamma, lam)
    seat1 = reference_gae([-0.2, -0.4], [0.0, -1.0], gamma, lam)
    np.testing.assert_allclose(out.advantages[[0, 2, 4], 0], seat0, rtol=1e-6)
    np.testing.assert_allclose(out.advantages[[1, 3], 0], seat1, rtol=1e-6)
    # the loser's last decision (call 3) gets -1 although seat 0 made the last move of the hand
    assert out.advantages[3, 0] == pytest.approx(-1.0 - (-0.4))
    # the next hand's decisions are still open: carried, not trained, with no reward of the old hand
    assert out.resolved[:5, 0].all() and not out.resolved[5:, 0].any()
    assert out.opened[5:, 0].all() and not out.opened[:5, 0].any()
    assert not out.opened_reward.any()


def test_seat_gae_open_decisions_resolve_in_the_next_rollout_as_in_one_long_rollout() -> None:
    seq = two_seat_hand()
    whole = seat_gae(**seq, gamma=0.9, lam=0.0)
    first = seat_gae(**{k: v[:3] for k, v in seq.items()}, gamma=0.9, lam=0.0)
    assert first.resolved[:, 0].tolist() == [True, False, False]  # seat 0 moved again; calls 1, 2 stay open
    pending = Pending.empty(1, 2, 1, np.float32)
    pending.active[0] = [True, True]
    pending.value[0] = [0.3, -0.2]
    pending.reward[0] = first.opened_reward[0]
    second = seat_gae(**{k: v[3:] for k, v in seq.items()}, gamma=0.9, lam=0.0, pending=pending)
    np.testing.assert_allclose(second.pending_advantages[0], [whole.advantages[2, 0], whole.advantages[1, 0]])
    np.testing.assert_allclose(second.advantages[:2, 0], whole.advantages[3:5, 0])
    assert first.advantages[0, 0] == pytest.approx(whole.advantages[0, 0])


def test_seat_gae_adds_the_shaping_potential_difference_to_each_decisions_reward() -> None:
    """Shaping turns the reward after each decision into reward + gamma x phi(the seat's next decision) - phi,
    with phi = 0 past the end; split over two rollouts, the open decisions carry their potential."""
    seq = two_seat_hand()
    phi = np.array([[0.5], [-0.25], [1.0], [0.75], [2.0], [-1.5], [3.0]], np.float32)
    gamma, lam = 0.9, 0.8
    out = seat_gae(**seq, gamma=gamma, lam=lam, potentials=phi)
    seat0 = reference_gae([0.1, 0.3, 0.5], [gamma * 1.0 - 0.5, gamma * 2.0 - 1.0, 1.0 - 2.0], gamma, lam)
    seat1 = reference_gae([-0.2, -0.4], [gamma * 0.75 + 0.25, -1.0 - 0.75], gamma, lam)
    np.testing.assert_allclose(out.advantages[[0, 2, 4], 0], seat0, rtol=1e-6)
    np.testing.assert_allclose(out.advantages[[1, 3], 0], seat1, rtol=1e-6)
    flat = seat_gae(**seq, gamma=1.0, lam=1.0, potentials=phi)  # gamma = 1: the potentials telescope
    plain = seat_gae(**seq, gamma=1.0, lam=1.0)
    np.testing.assert_allclose(flat.advantages[:5, 0], plain.advantages[:5, 0] - phi[:5, 0], rtol=1e-6)

    whole = seat_gae(**seq, gamma=gamma, lam=0.0, potentials=phi)
    first = seat_gae(**{k: v[:3] for k, v in seq.items()}, gamma=gamma, lam=0.0, potentials=phi[:3])
    pending = Pending.empty(1, 2, 1, np.float32)
    pending.active[0] = [True, True]
    pending.value[0] = [0.3, -0.2]
    pending.potential[0] = [1.0, -0.25]
    pending.reward[0] = first.opened_reward[0]
    second = seat_gae(**{k: v[3:] for k, v in seq.items()}, gamma=gamma, lam=0.0, pending=pending,
                      potentials=phi[3:])
    np.testing.assert_allclose(second.pending_advantages[0], [whole.advantages[2, 0], whole.advantages[1, 0]])
    np.testing.assert_allclose(second.advantages[:2, 0], whole.advantages[3:5, 0])


def test_hand_size_potential_is_the_opponents_mean_hand_size_minus_ones_own() -> None:
    sizes = np.array([[3, 5, 7, 0], [4, 4, 1, 9], [2, 6, 0, 0]])
    got = hand_size_potential(sizes, np.array([0, 3, 1]), np.array([3, 4, 2]))
    np.testing.assert_allclose(got, [(5 + 7) / 2 - 3, (4 + 4 + 1) / 3 - 9, 2 - 6])
    assert got.dtype == np.float32


def test_shaping_run_records_each_movers_potential_and_trains(tmp_path: Path) -> None:
    """With --shaping the rollout holds shaping x the mover's potential, read from its own observation (hand sizes
    in relative seats); without it, zeros. A short run with shaping trains, saves and plays."""
    from goboom_env.observation import layout
    from goboom_env.training.fast.ppo import Trainer

    start = layout(4)["hand_sizes"].start
    for shaping in (0.0, 0.05):
        args = tiny_args(tmp_path / f"x{shaping}", shaping=shaping, opponents=["heuristic=1", "learner=1"])
        trainer = Trainer(args, args.game_config())
        trainer.start()
        roll = trainer.collect()
        sizes = roll.obs[..., start:start + 4] * GameConfig().deck_size  # relative seats: the mover first
        expected = shaping * (sizes[..., 1:].mean(axis=-1) - sizes[..., 0])
        np.testing.assert_allclose(roll.potential, expected, atol=1e-5)
        assert roll.potential.any() == bool(shaping)
    out = tmp_path / "run"
    train(tiny_args(out, shaping=0.05, privileged_critic=True, opponents=["heuristic=1"]))
    assert json.loads((out / "args.json").read_text())["shaping"] == 0.05
    assert play_legally(out / "model.zip", GameConfig())["games"] > 0


def test_seat_gae_ignores_opponent_seats_but_still_pays_the_learner() -> None:
    seq = two_seat_hand()
    seq["learner"] = seq["seats"] == 1  # seat 0 is an opponent: its decisions are neither trained nor carried
    out = seat_gae(**seq, gamma=1.0, lam=1.0)
    assert out.resolved[:, 0].tolist() == [False, True, False, True, False, False, False]
    np.testing.assert_allclose(out.advantages[[1, 3], 0], [-1.0 + 0.2, -1.0 + 0.4], rtol=1e-6)
    assert out.opened[:, 0].tolist() == [False] * 5 + [True, False]


def test_masked_policy_never_samples_an_illegal_action() -> None:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    net = ActorCritic(20, [16])
    with torch.no_grad():  # make illegal actions by far the most likely if the mask were ignored
        net.actor[-1].bias.copy_(torch.linspace(50, -50, NUM_ACTIONS))
    mask = rng.random((4000, NUM_ACTIONS)) < 0.1
    mask[np.arange(4000), rng.integers(NUM_ACTIONS, size=4000)] = True
    obs = torch.randn(4000, 20)
    with torch.no_grad():
        actions, logp, _ = net.act(obs, torch.from_numpy(mask))
        entropy = net.evaluate(obs, torch.from_numpy(mask), actions).entropy
    assert mask[np.arange(4000), actions.numpy()].all()
    assert torch.isfinite(logp).all() and torch.isfinite(entropy).all()
    picks = sample_masked(rng.normal(size=(4000, NUM_ACTIONS)) * 30, mask, rng)
    assert mask[np.arange(4000), picks].all()


@pytest.mark.parametrize("config", [GameConfig(), GameConfig(num_players=7), GameConfig(num_players=3,
                                                                                      scoring="reverse")])
def test_batched_heuristic_plays_what_classic_tricks_plays(config: GameConfig) -> None:
    from goboom_env.vector import VectorGame, random_legal_actions

    game = VectorGame(config, num_envs=16, seed=1)
    obs, mask, _ = game.reset()
    rng = np.random.default_rng(0)
    batched = ClassicTricksOpponent(config)
    scalar = [make_agent("classic-tricks", config, seed) for seed in range(8)]  # their choices span the ties
    for _ in range(25):
        picks = batched.act(obs, mask, rng)
        for i in range(len(obs)):
            observation = {"observation": obs[i].copy(), "action_mask": mask[i].copy()}
            assert picks[i] in {agent.act(observation) for agent in scalar}
        obs, mask, _, _, _ = game.step(random_legal_actions(mask, rng))


JOKERS_CONFIGS = [GameConfig(variant="jokers"), GameConfig(variant="jokers", num_players=3),
                  GameConfig(variant="jokers", num_jokers=0),
                  GameConfig(variant="jokers", num_jokers=5, after_joker="any")]


@pytest.mark.parametrize("config", JOKERS_CONFIGS)
def test_batched_heuristic_plays_what_jokers_boom_plays(config: GameConfig) -> None:
    """Every batched pick is one of the scalar agent's best-scored cards (its ties recorded, not sampled)."""
    from goboom_env.vector import VectorGame, random_legal_actions

    scalar = make_agent("jokers-boom", config, 0)
    ties: list[set[int]] = []

    def record_ties(cards: list[int], scores: np.ndarray) -> int:
        scores = np.asarray(scores, np.float64)
        ties.append({cards[i] for i in np.flatnonzero(scores == scores.max())})
        return cards[int(np.argmax(scores))]

    scalar._argmax = record_ties
    game = VectorGame(config, num_envs=32, seed=3)
    obs, mask, _ = game.reset()
    rng = np.random.default_rng(0)
    batched, checked, booms = batched_heuristic(config), 0, 0
    for _ in range(60):
        picks = batched.act(obs, mask, rng)
        for i in range(len(obs)):
            ties.clear()
            single = scalar.act({"observation": obs[i].copy(), "action_mask": mask[i].copy()})
            assert picks[i] in (ties[0] if ties else {single}), (i, picks[i], ties, single)
            checked += 1
            booms += bool(ties) and all(batched.boom[c] for c in ties[0])
        obs, mask, _, _, _ = game.step(random_legal_actions(mask, rng))
    assert checked == 60 * 32 and booms > 0  # boom plays were among the checked decisions


def test_the_batched_heuristic_is_the_variants_best() -> None:
    assert isinstance(batched_heuristic(GameConfig()), ClassicTricksOpponent)
    assert isinstance(batched_heuristic(GameConfig(variant="jokers")), JokersBoomOpponent)
    with pytest.raises(ValueError, match="jokers variant"):
        JokersBoomOpponent(GameConfig())


def test_batched_demonstrations_hold_each_movers_final_reward() -> None:
    data = collect_batched(GameConfig(), 40, seed=0, num_envs=8)
    assert len(data) >= 40 * 20
    np.testing.assert_allclose(np.unique(data.returns), [-1 / 3, 1.0], rtol=1e-6)  # one winner per finished hand
    assert data.masks[np.arange(len(data)), data.actions].all()


def tiny_args(out: Path, **kw: object) -> VectorArgs:
    base = dict(timesteps=1200, num_envs=16, num_steps=16, minibatch_size=128, eval_every=-1, checkpoint_every=500,
                snapshot_every=400, opponents=["learner=2", "self=1", "random=1"], out=str(out), progress=False,
                threads=1)
    return VectorArgs(**{**base, **kw})


def play_legally(path: Path, config: GameConfig) -> dict[str, float]:
    """A short duplicate tournament of ``ppo:path`` (raises if it ever plays an illegal move)."""
    from goboom_env.evaluation.tournament import run_tournament

    spec = f"ppo:{path}"
    result = run_tournament(config, [spec, "random", "random", "random"], 8, duplicate=True, progress=False)
    return next(r for r in result.table() if r["agent"] == spec)


def test_short_run_writes_checkpoints_logs_and_a_model_ppo_loads(tmp_path: Path) -> None:
    out = tmp_path / "run"
    model = train(tiny_args(out, eval_every=0, eval_games=8))
    assert model == out / "model.zip"
    assert sorted(p.name for p in (out / "checkpoints").glob("*.zip"))  # play-only checkpoint models
    assert list((out / "checkpoints").glob("state_*.pt"))
    rows = list(csv.DictReader((out / "progress.csv").open()))
    assert int(rows[-1]["timesteps"]) >= 1200 and "win_rate/random" in rows[0]
    evals = list(csv.DictReader((out / "eval.csv").open()))
    assert {"win_rate/random", "ci_low/heuristic", "train_s"} <= set(evals[-1])
    assert any((out / "tensorboard").iterdir())
    config = GameConfig()
    make_agent(f"ppo:{model}", config)  # loads unchanged through the registry
    assert play_legally(model, config)["games"] == 8
    assert (out / "best_model.zip").exists()


def test_jokers_trains_against_the_batched_heuristic_from_its_warm_start(tmp_path: Path) -> None:
    out = tmp_path / "jokers"
    train(tiny_args(out, variant="jokers", opponents=["heuristic=1", "learner=1"], bc_games=30, bc_epochs=1))
    rows = list(csv.DictReader((out / "progress.csv").open()))
    assert "win_rate/heuristic" in rows[0] and int(rows[-1]["timesteps"]) >= 1200
    assert json.loads((out / "bc.json").read_text())["decisions"] > 30 * 10


def test_privileged_critic_reads_the_hidden_state_and_the_saved_actor_only_the_observation(tmp_path: Path) -> None:
    from goboom_env.agents.ppo import load_actor
    from goboom_env.global_state import state_size
    from goboom_env.observation import observation_size
    from goboom_env.training.fast.ppo import Trainer

    out = tmp_path / "x"
    args = tiny_args(out, variant="jokers", opponents=["heuristic=1", "learner=1", "self=1"], privileged_critic=True,
                     bc_games=20, bc_epochs=1)
    model = train(args)
    assert load_actor(model).input_size == observation_size(4)
    assert json.loads((out / "bc.json").read_text())["decisions"] > 20 * 10  # the warm start cloned both networks
    assert play_legally(model, args.game_config())["games"] == 8
    trainer = Trainer(args, args.game_config())
    assert (trainer.net.actor[0].in_features, trainer.net.critic[0].in_features) == (observation_size(4),
                                                                                      state_size(4))
    np.testing.assert_array_equal(trainer.obs[:, trainer.public_dim:], trainer.game.hidden())


def test_a_privileged_actor_ignores_the_hidden_entries_and_its_critic_reads_them() -> None:
    net = ActorCritic(10, [8], critic_dim=15)
    rows = torch.randn(4, 15)
    moved = rows.clone()
    moved[:, 10:] += 1.0
    mask, actions = torch.ones(4, NUM_ACTIONS, dtype=torch.bool), torch.zeros(4, dtype=torch.int64)
    logp, _, values, *_ = net.evaluate(rows, mask, actions)
    logp_moved, _, values_moved, *_ = net.evaluate(moved, mask, actions)
    assert torch.equal(logp, logp_moved) and not torch.equal(values, values_moved)
    assert torch.equal(net.masked_logits(rows, mask), net.masked_logits(moved, mask))
    with pytest.raises(ValueError, match="critic_dim"):
        ActorCritic(10, [8], critic_dim=9)


def test_privileged_critic_refused_for_a_generalist_and_on_a_resume_that_changes_it(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="privileged_critic is for one table size"):
        train(tiny_args(tmp_path / "g", player_counts=[2, 3], privileged_critic=True))
    assert not (tmp_path / "g").exists()
    out = tmp_path / "x"
    train(tiny_args(out, timesteps=600))
    with pytest.raises(ValueError, match="--resume: privileged_critic=True differs from the checkpoint's False"):
        train(tiny_args(out, timesteps=1200, resume=True, privileged_critic=True))


def test_resume_continues_the_step_count(tmp_path: Path) -> None:
    out = tmp_path / "run"
    train(tiny_args(out, timesteps=600))
    first = json.loads((out / "args.json").read_text())["timesteps"]
    steps_before = int(list(csv.DictReader((out / "progress.csv").open()))[-1]["timesteps"])
    with pytest.raises(ValueError, match="already exists and is not empty; pass --resume"):
        train(tiny_args(out, timesteps=1200))
    with pytest.raises(ValueError, match="give one of them"):
        train(tiny_args(out, timesteps=1200, resume=True, force=True))
    train(tiny_args(out, timesteps=1200, resume=True))
    rows = list(csv.DictReader((out / "progress.csv").open()))
    steps = [int(r["timesteps"]) for r in rows]
    assert first == 600 and steps == sorted(steps) and steps[-1] >= 1200
    assert min(s for s in steps if s > steps_before) > steps_before  # counting went on from the checkpoint
    from goboom_env.agents.ppo import read_metadata

    assert read_metadata(out / "model.zip")["timesteps"] == steps[-1]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("num_envs", 0, "num_envs must be >= 1"),
    ("gamma", 1.5, r"gamma must be in \(0, 1\]"),
    ("opponents", ["mc=1"], "opponents entry 'mc': this trainer plays learner, self, random, heuristic"),
    ("opponents", ["learner"], "SPEC=WEIGHT"),
    ("num_players", 13, "num_players"),
    ("net_arch", [], "net_arch"),
    ("precision", "fp16", "precision in the arguments must be one of 'auto', 'fp32', 'bf16'"),
    ("shaping", -0.1, "shaping must be >= 0"),
])
def test_bad_arguments_are_refused_with_the_field_named(tmp_path: Path, field: str, value: object,
                                                         message: str) -> None:
    with pytest.raises(ValueError, match=message):
        train(tiny_args(tmp_path / "x", **{field: value}))
    assert not (tmp_path / "x").exists()


def test_auto_precision_is_bf16_exactly_where_the_cpu_has_native_bfloat16() -> None:
    from goboom_env.training.fast.policy import resolve_precision

    native = torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()
    assert resolve_precision("auto") == ("bf16" if native else "fp32")
    assert resolve_precision("fp32") == "fp32" and resolve_precision("bf16") == "bf16"


def test_bf16_networks_compute_in_bfloat16_and_return_float32_close_to_fp32() -> None:
    torch.manual_seed(0)
    net = ActorCritic(40, [64, 64], "bf16")
    obs = (torch.rand(256, 40) < 0.2).float()
    mask, actions = masks_with_action(256, 0.3, action=0)
    logp16, entropy16, value16, *_ = net.evaluate(obs, mask, actions)
    net.bf16 = False
    logp32, entropy32, value32, *_ = net.evaluate(obs, mask, actions)
    assert logp16.dtype == entropy16.dtype == value16.dtype == torch.float32
    assert not torch.equal(logp16, logp32)  # the products really ran in bfloat16
    torch.testing.assert_close(logp16, logp32, atol=0.02, rtol=0.02)
    torch.testing.assert_close(value16, value32, atol=0.02, rtol=0.02)
    torch.testing.assert_close(entropy16, entropy32, atol=0.02, rtol=0.02)
    logp16.sum().backward()  # gradients reach the float32 weights
    assert all(p.grad is None or p.grad.dtype == torch.float32 for p in net.parameters())
    assert net.actor[0].weight.grad is not None


def test_precision_changes_the_run_and_each_precision_is_reproducible(tmp_path: Path) -> None:
    def weights(name: str, precision: str) -> np.ndarray:
        out = tmp_path / name
        from goboom_env.agents.ppo import load_actor

        train(tiny_args(out, timesteps=400, opponents=["learner=1"], precision=precision))
        return np.concatenate([a.ravel() for layer in load_actor(out / "model.zip").layers for a in layer])

    bf16_a, bf16_b, fp32 = weights("a", "bf16"), weights("b", "bf16"), weights("c", "fp32")
    np.testing.assert_array_equal(bf16_a, bf16_b)
    assert not np.array_equal(bf16_a, fp32)


@pytest.mark.parametrize("warmup", [0, 10**9])
def test_critic_warmup_trains_only_the_critic_until_it_ends(tmp_path: Path, warmup: int) -> None:
    from goboom_env.training.fast.ppo import Trainer

    args = tiny_args(tmp_path / "x", opponents=["heuristic=1"], critic_warmup=warmup)
    trainer = Trainer(args, args.game_config())
    trainer.start()
    before = {k: v.clone() for k, v in trainer.net.state_dict().items()}
    for _ in range(3):
        trainer.iteration()
    after = trainer.net.state_dict()
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert any(k.startswith("critic.") for k in changed)
    assert any(k.startswith("actor.") for k in changed) == (warmup == 0)


def test_the_actor_starts_learning_once_the_critic_warmup_is_over(tmp_path: Path) -> None:
    from goboom_env.training.fast.ppo import Trainer

    def actor_moves(trainer: Trainer) -> bool:
        before = {k: v.clone() for k, v in trainer.net.actor.state_dict().items()}
        trainer.iteration()
        return any(not torch.equal(v, trainer.net.actor.state_dict()[k]) for k, v in before.items())

    probe = Trainer(tiny_args(tmp_path / "p", opponents=["heuristic=1"]), GameConfig())
    probe.start()
    probe.iteration()
    args = tiny_args(tmp_path / "x", opponents=["heuristic=1"], critic_warmup=probe.steps)  # one iteration long
    trainer = Trainer(args, args.game_config())
    trainer.start()
    assert not actor_moves(trainer) and trainer.steps == probe.steps
    assert actor_moves(trainer)


def test_critic_warmup_must_not_be_negative(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="critic_warmup must be >= 0"):
        train(tiny_args(tmp_path / "x", critic_warmup=-1))


def test_resume_without_a_checkpoint_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no checkpoint"):
        train(tiny_args(tmp_path / "x", resume=True))


def test_cli_reports_bad_arguments_without_a_traceback(tmp_path: Path) -> None:
    proc = goboom("train-fast", "--num-envs", "0", "--out", str(tmp_path / "x"))
    assert proc.returncode == 2
    assert "num_envs must be >= 1" in proc.stderr and "Traceback" not in proc.stderr


def test_time_limit_stops_the_run_early(tmp_path: Path) -> None:
    out = tmp_path / "run"
    train(tiny_args(out, timesteps=10_000_000, time_limit=0.001))
    rows = list(csv.DictReader((out / "progress.csv").open()))
    assert len(rows) == 1 and int(rows[0]["timesteps"]) < 10_000_000
    with pytest.raises(ValueError, match="time_limit must be >= 0"):
        tiny_args(tmp_path / "y", time_limit=-1).validate()


@pytest.mark.slow
def test_a_longer_run_beats_random(tmp_path: Path) -> None:
    from goboom_env.evaluation.baselines import agent_rows, evaluate_vs_baselines

    out = tmp_path / "run"
    model = train(tiny_args(out, timesteps=300_000, num_envs=256, minibatch_size=1024, bc_games=500,
                            opponents=["heuristic=3", "learner=1"], checkpoint_every=100_000))
    spec = f"ppo:{model}"
    row = agent_rows(evaluate_vs_baselines(GameConfig(), spec, ["random"], 2000, seed=12345), spec)["random"]
    assert row["ci_low"] > 0.25, row


def test_force_replaces_an_earlier_run(used_run_folder: Path) -> None:
    out = used_run_folder
    with pytest.raises(ValueError, match="--force to replace it"):
        train(tiny_args(out, timesteps=300))
    train(tiny_args(out, timesteps=300, force=True))
    assert not (out / "notes.txt").exists() and (out / "model.zip").is_file()


@pytest.mark.slow  # a run interrupted, then resumed: two processes
def test_ctrl_c_saves_a_state_that_resume_continues(tmp_path: Path) -> None:
    out = tmp_path / "run"
    flags = ["--num-envs", "16", "--num-steps", "16", "--minibatch-size", "128", "--eval-every", "-1",
             "--checkpoint-every", "10000000", "--bc-games", "0", "--threads", "1", "--no-progress", "--out", str(out)]
    # progress.csv is written after the first iteration: training is under way
    returncode, stderr = ctrl_c_once_started(["train-fast", *flags, "--timesteps", "100000000"],
                                             out / "progress.csv", ROOT)
    assert returncode == 130, stderr
    states = sorted((out / "checkpoints").glob("state_*.pt"))
    assert len(states) == 1 and not (out / "model.zip").exists()
    # one line from the interrupt, after the run's phase lines: it names the checkpoint and how to continue
    *phases, last = stderr.splitlines()
    assert last == (f"goboom train-fast: interrupted; kept the checkpoint {states[0]}; "
                    f"continue with --resume --out {out}")
    assert not [line for line in phases if "interrupted" in line or "Traceback" in line], stderr
    assert not list((out / "checkpoints").glob(".*.partial"))
    steps = int(states[0].stem.split("_")[1])
    assert steps >= 256
    resumed = goboom("train-fast", *flags, "--resume", "--timesteps", str(steps + 256))
    assert resumed.returncode == 0, resumed.stderr
    from goboom_env.agents.ppo import read_metadata

    assert read_metadata(out / "model.zip")["timesteps"] >= steps + 256


def test_init_actor_starts_from_the_zoo_agent_of_another_game(tmp_path: Path) -> None:
    """Fine-tuning classic-4p to reverse scoring: while the critic warms up, the saved actor is the zoo agent's."""
    from goboom_env.agents.ppo import load_actor, read_metadata
    from goboom_env.models import model_path

    out = tmp_path / "x"
    train(tiny_args(out, num_players=4, scoring="reverse", init_actor="classic-4p", critic_warmup=10**9,
                    net_arch=[256, 256]))
    zoo, tuned = load_actor(model_path("classic-4p")), load_actor(out / "model.zip")
    for (w0, b0), (w1, b1) in zip(zoo.layers, tuned.layers, strict=True):
        np.testing.assert_array_equal(w0, w1)
        np.testing.assert_array_equal(b0, b1)
    assert read_metadata(out / "model.zip")["config"]["scoring"] == "reverse"
    assert json.loads((out / "init_actor.json").read_text())["config"]["scoring"] == "standard"


@pytest.mark.parametrize(("settings", "message"), [
    ({"init_actor": "classic-2p"}, "reads 397 observation entries"),
    ({"init_actor": "classic-4p", "net_arch": [64, 64]}, r"this run has 517 with \[64, 64\]"),
    ({"init_actor": "classic-4p", "bc_games": 10}, "two warm starts"),
    ({"init_actor": "no-such-agent"}, "no model 'no-such-agent'"),
])
def test_init_actor_that_does_not_fit_is_refused_before_the_run_folder(tmp_path: Path, settings: dict,
                                                                        message: str) -> None:
    with pytest.raises(ValueError, match=message):
        train(tiny_args(tmp_path / "x", num_players=4, **{"net_arch": [256, 256], **settings}))
    assert not (tmp_path / "x").exists()


def test_threads_caps_torch_and_numpys_blas(tmp_path: Path) -> None:
    """--threads 1 means one compute thread: numpy's BLAS would otherwise start a spinning worker per core."""
    from threadpoolctl import threadpool_info, threadpool_limits

    with threadpool_limits(limits=2, user_api="blas"):
        train(tiny_args(tmp_path / "x", timesteps=200, threads=1))
        assert torch.get_num_threads() == 1
        numpys = [pool["num_threads"] for pool in threadpool_info()
                  if pool["user_api"] == "blas" and "numpy" in Path(pool["filepath"]).parent.name]
        assert numpys == [1]
