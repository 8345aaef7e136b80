"""The speed-ups keep behaviour: the byte-level observation encoder against a plain
reference written from the layout table, fresh (non-aliasing) observations and masks, the skipped
reward bookkeeping of ``raw_env.step``, numpy action types, and the throughput script end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import goboom_env
from goboom_env import GameConfig, IllegalActionError, Match
from goboom_env.cards import NUM_FACES
from goboom_env.engine import PASSED
from goboom_env.env import points_rewards
from goboom_env.observation import ObservationEncoder, layout

ROOT = Path(__file__).resolve().parent.parent

ENCODER_CONFIGS = [
    GameConfig(variant="classic", num_players=4),
    GameConfig(variant="classic", num_players=12),  # two decks: hand and seen counts of 2
    GameConfig(variant="classic", num_players=3, scoring="reverse"),
    GameConfig(variant="jokers", num_players=4),
    GameConfig(variant="jokers", num_players=3, num_jokers=0),
    GameConfig(variant="jokers", num_players=4, after_joker="any"),
    # 4 decks + 200 jokers = 408 cards: sizes, drawn and stock can pass 255, the non-byte path
    GameConfig(variant="jokers", num_players=2, num_decks=4, num_jokers=200, hand_size=1, rounds=2),
]


def reference_encode(config: GameConfig, hand, seat: int, match: Match | None) -> np.ndarray:
    """The observation computed value by value from the module docstring's table (float64)."""
    n = config.num_players
    sl = layout(n)
    out = np.zeros(sl["flags"].stop)
    copies = [config.num_decks] * 52 + [max(config.num_jokers, 1)]
    rel = [(seat + k) % n for k in range(n)]  # relative seat k -> absolute seat
    for f in range(NUM_FACES):
        out[sl["hand"].start + f] = hand.counts[seat][f] / copies[f]
        out[sl["seen"].start + f] = hand.seen[f] / copies[f]
    if hand.classic and hand.led >= 0:
        out[sl["led"].start + hand.led] = 1
        out[sl["leader"].start + rel.index(hand.leader)] = 1
        for k, other in enumerate(rel):
            if hand.trick[other] >= 0:
                out[sl["trick"].start + k * NUM_FACES + hand.trick[other]] = 1
            elif hand.trick[other] == PASSED:
                out[sl["trick_passed"].start + k] = 1
    if not hand.classic:
        out[sl["top"].start + hand.top] = 1
        out[sl["match"].start + hand.match_face] = 1
        out[sl["passes"]] = hand.passes / n
    deck = config.deck_size
    for k, other in enumerate(rel):
        out[sl["hand_sizes"].start + k] = hand.sizes[other] / deck
        out[sl["drawn"].start + k] = hand.drawn[other] / deck
        if match is not None:
            out[sl["scores"].start + k] = match.scores[other] / (config.target_score or 100)
        if not hand.over and other == hand.current:
            out[sl["to_move"].start + k] = 1
        if other == hand.dealer:
            out[sl["dealer"].start + k] = 1
    out[sl["stock"]] = len(hand.stock) / deck
    if match is not None and config.rounds:
        out[sl["progress"]] = match.hands_played / config.rounds
    out[sl["flags"]] = ObservationEncoder.flags(config)
    return out


def _config_id(config: GameConfig) -> str:
    return f"{config.variant}{config.num_players}-{config.deck_size}cards-{config.num_jokers}jk-{config.after_joker}"


@pytest.mark.parametrize("config", ENCODER_CONFIGS, ids=_config_id)
def test_encoder_matches_the_reference_in_every_state_of_random_matches(config: GameConfig) -> None:
    rng = np.random.default_rng(7)
    encoder = ObservationEncoder(config)
    checked = 0
    for _ in range(3):
        match = Match(config, rng)
        while not match.over:
            hand = match.hand
            while True:
                for seat in range(config.num_players):
                    for m in (match, None):
                        got = encoder.encode(hand, seat, m)
                        assert got.dtype == np.float32
                        np.testing.assert_allclose(got, reference_encode(config, hand, seat, m), rtol=1e-6, atol=0)
                        checked += 1
                if hand.over:
                    break
                hand.apply(int(rng.choice(hand.legal_actions())))
            match.finish_hand()
    assert checked > 500


def test_big_deck_config_really_reaches_counts_above_255() -> None:
    """The non-byte path of the encoder is exercised: a stock of more than 255 cards."""
    config = ENCODER_CONFIGS[-1]
    hand = Match(config, np.random.default_rng(0)).hand
    assert len(hand.stock) > 255
    got = ObservationEncoder(config).encode(hand, 0)
    assert got[layout(2)["stock"]][0] == pytest.approx(len(hand.stock) / config.deck_size)


@pytest.mark.parametrize("make", [goboom_env.raw_env, goboom_env.env], ids=["raw_env", "env"])
def test_observations_and_masks_are_fresh_arrays(make) -> None:
    """Returned arrays never alias buffers that later steps or observations write."""
    env = make(variant="classic", num_players=4)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    kept = []
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].flags.writeable
        kept.append((obs, {k: v.copy() for k, v in obs.items()}))
        if term or trunc:
            env.step(None)
            continue
        action = rng.choice(np.flatnonzero(obs["action_mask"]))
        again = env.observe(agent)
        obs["observation"][:] = -5.0  # scribbling on a returned observation changes nothing inside
        obs["action_mask"][:] = 0
        after = env.observe(agent)
        for key in ("observation", "action_mask"):
            np.testing.assert_array_equal(after[key], again[key])
        kept[-1] = (again, {k: v.copy() for k, v in again.items()})
        env.step(action)
    assert len(kept) > 20
    for obs, snapshot in kept:  # nothing returned earlier was overwritten by later steps
        for key in ("observation", "action_mask"):
            np.testing.assert_array_equal(obs[key], snapshot[key])


@pytest.mark.parametrize("variant", ["classic", "jokers"])
def test_points_rewards_arrive_once_per_hand_and_are_cleared_next_step(variant: str) -> None:
    """``raw_env.step`` skips clearing/accumulating all-zero rewards; the signal stays exact."""
    env = goboom_env.raw_env(variant=variant, num_players=3, episode="match", reward="points")
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    nonzero_steps = hands_seen = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        hands_before = env.match.hands_played
        env.step(rng.choice(np.flatnonzero(obs["action_mask"])))
        if any(env.rewards.values()):
            nonzero_steps += 1
            assert sum(env.rewards.values()) == pytest.approx(0.0)
        hand_ended = env.match.hands_played > hands_before or all(env.terminations.values())
        hands_seen += hand_ended
        if not hand_ended:
            assert not any(env.rewards.values()), "rewards must be cleared on the step after a hand"
    expected = dict.fromkeys(env.possible_agents, 0.0)
    config = env.config
    for result in env.match.results:
        for seat, value in enumerate(points_rewards(config, result.winner, list(result.hand_points))):
            expected[f"player_{seat}"] += value
    assert hands_seen == len(env.match.results) >= 2
    assert nonzero_steps >= 1
    assert totals == pytest.approx(expected)


@pytest.mark.parametrize("cast", [int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint64])
def test_engine_accepts_every_integer_action_type(cast) -> None:
    env = goboom_env.raw_env()
    env.reset(seed=0)
    seat = env.match.hand.current
    lead = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])  # classic: any card leads
    env.step(cast(lead))
    assert env.match.hand.events[-1] == ("play", seat, lead)
    assert type(env.match.hand.events[-1][2]) is int


@pytest.mark.parametrize("action", [True, np.bool_(True), 2.0, np.float32(3), "5", None])
def test_engine_rejects_non_integer_actions_by_name(action) -> None:
    env = goboom_env.raw_env()
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"an action must be an integer in 0\.\.53"):
        env.match.hand.apply(action)


def test_throughput_script_end_to_end(tmp_path: Path) -> None:
    """``benchmarks/throughput.py`` runs every row, writes JSON and reports every target."""
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "throughput.py"), "--seconds", "0.05", "--repeat", "1",
         "--no-progress", "--json", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    keys = {f"{r['subject']} / {r['game']}" for r in data["rows"]}
    for game in ("classic 4p", "classic 12p", "jokers 4p"):
        assert {f"engine / {game}", f"raw_env / {game}", f"env / {game}"} <= keys
    assert {"pyspiel / crazy_eights 4p", "pyspiel+obs / crazy_eights 4p",
            "pettingzoo env / connect_four_v3", "pettingzoo env / texas_holdem_v4"} <= keys
    assert all(r["decisions_per_s"] > 0 and len(r["runs"]) == 1 for r in data["rows"])
    for game in ("classic 4p", "classic 12p", "jokers 4p"):
        assert {f"VectorGame B={b} / {game}" for b in (1, 64, 1024, 4096)} <= keys
    targets = [q for q in data["ratios"] if q["target"] is not None]
    assert [q["target"] for q in targets] == [0.5, 1.0, 2.0, 25.0, 25.0]
    assert [(t["row"], t["target"]) for t in data["absolute_targets"]] == [
        ("VectorGame B=4096 / classic 4p", 2_000_000), ("VectorGame B=4096 / jokers 4p", 2_000_000),
        ("VectorGame B=4096 / classic 12p", 1_000_000)]
    assert "ratios:" in proc.stdout and "decisions/s" in proc.stdout


def test_throughput_script_rejects_bad_options() -> None:
    script = str(ROOT / "benchmarks" / "throughput.py")
    bad = subprocess.run([sys.executable, script, "--seconds", "0"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--seconds must be > 0" in bad.stderr
    none = subprocess.run([sys.executable, script, "--only", "no-such-row", "--no-progress"],
                          capture_output=True, text=True, timeout=120)
    assert none.returncode == 2 and "no row matches" in none.stderr
