"""The single-agent self-play view (training/sb3/selfplay.py): rewards reach the right seat, masks are the
legal actions, seats rotate, pool opponents play, and SB3's check_env accepts it."""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest
from helpers import LowestLegal

pytest.importorskip("stable_baselines3")  # the train extra
from stable_baselines3.common.env_checker import check_env

from goboom_env import GameConfig
from goboom_env.agents import register_agent, unregister_agent
from goboom_env.agents.ppo import FrozenMlp
from goboom_env.cards import DRAW_OR_PASS, code_of, deck_faces, face_of
from goboom_env.engine import win_rewards
from goboom_env.training.league import SELF, OpponentPool
from goboom_env.training.sb3.selfplay import SelfPlayEnv

CLASSIC = GameConfig(variant="classic", num_players=4)
JOKERS = GameConfig(variant="jokers", num_players=4)


def fixed_deck(head: list[str], num_jokers: int = 0) -> list[str]:
    """``head`` on top, then the rest of the deck in face order."""
    rest = [code_of(f) for f in deck_faces(1, num_jokers)]
    for code in head:
        rest.remove(code)
    return head + rest


class FirstLegal(LowestLegal):
    """Plays the lowest legal action and counts its calls (a deterministic, observable opponent)."""

    name = "test-first-legal"

    def __init__(self, config: GameConfig, seed: int | None = None) -> None:
        super().__init__(config, seed)
        self.calls = 0

    def act(self, observation: dict, view: object = None) -> int:
        self.calls += 1
        return super().act(observation, view)


@pytest.fixture
def first_legal() -> Iterator[str]:
    """``test-first-legal`` in the agent registry for one test."""
    register_agent(FirstLegal.name, FirstLegal)
    yield FirstLegal.name
    unregister_agent(FirstLegal.name)


# Classic, hand size 2, dealer 3: seat 0 gets 2C 3H, seat 1 AC 9D, seat 2 4C 8H, seat 3 5C 7S (R1.3).
# Seat 0 leads 2C; seats 1-3 must follow clubs (R1.5); seat 1's AC wins (R1.7), it leads 9D and goes out (R1.9).
TWO_CARD_DECK = fixed_deck(["2C", "AC", "4C", "5C", "3H", "9D", "8H", "7S"])


def test_learner_loses_when_another_player_goes_out() -> None:
    env = SelfPlayEnv(CLASSIC.replace(hand_size=2), [("random", 1.0)], seed=0)
    env.reset(options={"deck": TWO_CARD_DECK, "dealer": 3, "seat": 0})
    assert np.flatnonzero(env.action_masks()).tolist() == [face_of("2C"), face_of("3H")]
    _, reward, terminated, truncated, info = env.step(face_of("2C"))
    assert terminated and not truncated
    assert reward == pytest.approx(-1 / 3)  # R1.9: seat 1 went out on its lead; the learner's loss
    assert info["winners"] == [1] and info["won"] is False and info["seat"] == 0
    assert env.aec.match.hand.events[-1] == ("out", 1)
    assert not env.action_masks().any()


def test_winner_seat_gets_the_win_when_an_opponent_ends_the_hand() -> None:
    env = SelfPlayEnv(CLASSIC.replace(hand_size=2), [("random", 1.0)], seed=0)
    # the learner is seat 1: seat 0 (an opponent) leads first, inside reset()
    env.reset(options={"deck": TWO_CARD_DECK, "dealer": 3, "seat": 1, "opponent": "random"})
    assert env.aec.match.hand.current == 1
    assert env.action_masks().nonzero()[0].tolist() == [face_of("AC")]  # follow clubs (R1.5)
    _, reward, terminated, _, _ = env.step(face_of("AC"))
    assert not terminated and reward == 0.0  # seats 2 and 3 followed; the learner leads next
    _, reward, terminated, _, info = env.step(face_of("9D"))
    assert terminated and info["won"] and reward == pytest.approx(1.0)


def test_learner_out_on_the_lead_in_jokers() -> None:
    # Jokers, hand size 1, dealer 3: seat 0 holds 5H, the upcard is 9H (R2.3); 5H matches by suit and goes out.
    env = SelfPlayEnv(JOKERS.replace(hand_size=1), [("random", 1.0)], seed=0)
    env.reset(options={"deck": fixed_deck(["5H", "2C", "3C", "4C", "9H"], 2), "dealer": 3, "seat": 0})
    _, reward, terminated, _, info = env.step(face_of("5H"))
    assert terminated and info["winners"] == [0] and reward == pytest.approx(1.0)


@pytest.mark.parametrize("config", [CLASSIC, JOKERS, GameConfig(variant="classic", num_players=3)],
                         ids=["classic4", "jokers4", "classic3"])
def test_masks_rewards_and_turns_over_random_games(config: GameConfig) -> None:
    env = SelfPlayEnv(config, [("random", 1.0)], seed=3)
    rng = np.random.default_rng(1)
    n = config.num_players
    for _ in range(60):
        env.reset()
        total, terminated = 0.0, False
        while not terminated:
            hand = env.aec.match.hand
            assert hand.current == env.seat  # opponents have played up to the learner's turn
            mask = env.action_masks()
            assert np.flatnonzero(mask).tolist() == hand.legal_actions()  # R3.2
            _, reward, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            total += reward
        winners = env.aec.match.hand.winners()
        assert info["winners"] == winners
        assert total == pytest.approx(win_rewards(n, winners)[env.seat])


def test_points_reward_reaches_the_learner_in_match_episodes() -> None:
    env = SelfPlayEnv(CLASSIC.replace(target_score=30), [("random", 1.0)], episode="match", reward="points", seed=5)
    rng = np.random.default_rng(0)
    for _ in range(10):
        env.reset()
        total, terminated, hands_rewarded = 0.0, False, 0
        while not terminated:
            _, reward, terminated, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            total += reward
            hands_rewarded += reward != 0.0
        match = env.aec.match
        gains = [r.score_deltas[env.seat] - sum(r.score_deltas) / 4 for r in match.results]
        assert total == pytest.approx(sum(gains) / 100.0)  # R1.11: every hand's points, including opponents' wins
        assert hands_rewarded >= 1


def test_seats_rotate_and_random_seats_cover_the_table() -> None:
    env = SelfPlayEnv(CLASSIC, [("random", 1.0)], seed=0)
    env.reset()
    seats = [env.seat]
    for _ in range(7):
        env.reset()
        seats.append(env.seat)
    assert seats == [(seats[0] + i) % 4 for i in range(8)]
    env = SelfPlayEnv(CLASSIC, [("random", 1.0)], seat="random", seed=0)
    assert {env.reset()[1] is not None and env.seat for _ in range(40)} == {0, 1, 2, 3}


def test_pool_opponents_are_used_with_their_weights(first_legal: str) -> None:
    env = SelfPlayEnv(CLASSIC, [("random", 0.0), (first_legal, 1.0)], seed=0)
    for _ in range(5):
        env.reset()
        assert env.opponent == first_legal
        while not env.step(int(np.flatnonzero(env.action_masks())[0]))[2]:
            pass
    assert env.pool.agent(first_legal).calls > 10
    pool = OpponentPool(CLASSIC, [("random", 1.0), (first_legal, 3.0)], seed=0)
    counts = Counter(pool.sample() for _ in range(4000))
    assert counts[first_legal] / 4000 == pytest.approx(0.75, abs=0.03)


def test_snapshots_join_the_pool_and_the_oldest_leave() -> None:
    pool = OpponentPool(CLASSIC, [("random", 1.0), (SELF, 1.0)], pool_size=2, seed=0)
    assert {pool.sample() for _ in range(50)} == {"random"}  # no snapshot yet: SELF is left out
    rng = np.random.default_rng(0)
    # a net without hidden layers whose logits prefer DRAW_OR_PASS, then low faces
    bias = -np.arange(54, dtype=np.float32)
    bias[DRAW_OR_PASS] = 100.0
    state = FrozenMlp([(np.zeros((54, 517), np.float32), bias)]).state()
    for step in (0, 10, 20):
        pool.add_snapshot(f"snapshot@{step}", state)
    assert list(pool.snapshots) == ["snapshot@10", "snapshot@20"]
    names = Counter(pool.sample() for _ in range(600))
    assert set(names) == {"random", "snapshot@10", "snapshot@20"}
    agent = pool.agent("snapshot@20")
    mask = np.zeros(54, np.int8)
    mask[[5, 9, DRAW_OR_PASS]] = 1
    assert agent.act({"observation": np.zeros(517, np.float32), "action_mask": mask}) == DRAW_OR_PASS
    mask[DRAW_OR_PASS] = 0
    assert agent.act({"observation": np.zeros(517, np.float32), "action_mask": mask}) == 5
    calls = []
    original = agent.act
    agent.act = lambda obs, view=None: calls.append(1) or original(obs, view)
    env = SelfPlayEnv(CLASSIC, pool, seed=0)
    env.reset(options={"opponent": "snapshot@20"})
    while not env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))[2]:
        pass
    assert env.opponent == "snapshot@20" and len(calls) >= 3


def test_a_snapshot_dropped_from_the_pool_finishes_its_episode() -> None:
    pool = OpponentPool(CLASSIC, [(SELF, 1.0)], pool_size=1, seed=0)
    state = FrozenMlp([(np.zeros((54, 517), np.float32), np.zeros(54, np.float32))]).state()
    pool.add_snapshot("snapshot@0", state)
    env = SelfPlayEnv(CLASSIC, pool, seed=0)
    env.reset()
    assert env.opponent == "snapshot@0"
    pool.add_snapshot("snapshot@1", state)  # evicts snapshot@0 while its episode runs
    assert list(pool.snapshots) == ["snapshot@1"]
    while not env.step(int(np.flatnonzero(env.action_masks())[0]))[2]:
        pass
    env.reset()
    assert env.opponent == "snapshot@1"
    with pytest.raises(ValueError, match="not in the pool"):
        env.reset(options={"opponent": "snapshot@0"})


def test_illegal_action_ends_the_episode_with_minus_one() -> None:
    env = SelfPlayEnv(CLASSIC, [("random", 1.0)], seed=0)
    env.reset()
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    before = dict(env.aec.terminations)
    _, reward, terminated, _, info = env.step(illegal)
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, illegal)
    assert env.aec.terminations == before  # the AEC env's own state is never written from outside
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset()
    assert env.action_masks().any()  # the next episode starts as usual


def test_self_play_env_uses_only_the_public_api_of_the_aec_env() -> None:
    """No ``aec._name`` access in the self-play env: PettingZoo's private bookkeeping may change between
    releases; the env reads ``rewards``, ``terminations``, ``infos``, ``observe`` and ``step`` instead."""
    import ast
    import inspect

    from goboom_env.training.sb3 import selfplay

    private = [node.attr for node in ast.walk(ast.parse(inspect.getsource(selfplay)))
               if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
               and "aec" in ast.unparse(node.value)]
    assert private == []


def test_same_seed_same_episodes() -> None:
    def trajectory(seed: int) -> list:
        env = SelfPlayEnv(JOKERS, [("random", 1.0)], seed=seed)
        out = []
        for _ in range(3):
            obs, _ = env.reset()
            out.append(obs.tobytes())
            done = False
            while not done:
                obs, r, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[-1]))
                out.append((obs.tobytes(), r))
        return out

    assert trajectory(4) == trajectory(4)
    assert trajectory(4) != trajectory(5)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="seat must be"):
        SelfPlayEnv(CLASSIC, seat="left")
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        SelfPlayEnv(CLASSIC, [("nobody", 1.0)])
    with pytest.raises(ValueError, match="positive weight"):
        SelfPlayEnv(CLASSIC, [("random", 0.0)])
    with pytest.raises(ValueError, match="the weight of opponent 'heuristic' must be a non-negative number, got -1"):
        SelfPlayEnv(CLASSIC, [("random", 1.0), ("heuristic", -1)])  # not silently left out
    with pytest.raises(ValueError, match="the weight of opponent 'random' must be a number, got 'x'"):
        SelfPlayEnv(CLASSIC, [("random", "x")])
    env = SelfPlayEnv(CLASSIC, seed=0)
    with pytest.raises(ValueError, match=r"seat must be in 0\.\.3"):
        env.reset(options={"seat": 4})


@pytest.mark.parametrize("config", [CLASSIC, JOKERS, GameConfig(variant="jokers", num_players=3, num_jokers=0)],
                         ids=["classic4", "jokers4", "aces3"])
def test_check_env_passes_without_a_warning(config: GameConfig) -> None:
    """SB3's env checker reports soft problems (spaces, dtypes, seeding) as warnings: each one fails here."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(SelfPlayEnv(config, [("random", 1.0)], seed=0), warn=True)


@pytest.mark.parametrize("seed", range(6))
def test_shaping_telescopes_to_the_plain_return(seed: int) -> None:
    """Potential-based shaping with gamma = 1 changes an episode's return by -phi(start) only, and
    each step's bonus is the change of `shaping x (opponents' mean hand size - own hand size)`."""
    returns, starts = [], []
    for shaping in (0.0, 0.05):
        env = SelfPlayEnv(JOKERS, [("jokers-boom", 1.0)], seed=seed, shaping=shaping, gamma=1.0)
        env.reset(seed=seed)
        starts.append(env._potential)
        rng, total, done = np.random.default_rng(seed), 0.0, False
        while not done:
            sizes_before = list(env.aec.match.hand.sizes)
            _, reward, done, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            total += reward
            if shaping and not done:
                sizes = env.aec.match.hand.sizes
                phi = [shaping * ((sum(s) - s[env.seat]) / 3 - s[env.seat]) for s in (sizes_before, sizes)]
                assert reward == pytest.approx(phi[1] - phi[0])  # nobody won yet: the bonus alone
        returns.append(total)
    assert starts[0] == 0.0
    assert returns[1] == pytest.approx(returns[0] - starts[1])


def test_shaping_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="shaping must be >= 0"):
        SelfPlayEnv(JOKERS, shaping=-1.0)
    with pytest.raises(ValueError, match=r"gamma in \(0, 1\]"):
        SelfPlayEnv(JOKERS, shaping=0.1, gamma=0.0)
