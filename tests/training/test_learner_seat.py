"""The learner-seat base (training/seats.py) and the views built on it: the Gymnasium env of ``goboom train``, the
SB3 VecEnv of the batched engine, the RLlib env and the fast trainer's seat plan.

Each view must give a seat what it received since its last move, other seats' moves included (R1.9: the hand ends
when another player goes out), apply the one illegal-action rule (R3.2), and start a finished game's seats again.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from helpers import LowestLegal

from goboom_env import GameConfig, IllegalActionError
from goboom_env.agents import register_agent, unregister_agent
from goboom_env.cards import NUM_ACTIONS, code_of, deck_faces
from goboom_env.training.seats import ILLEGAL_REWARD, LearnerSeats

CLASSIC = GameConfig(num_players=4, hand_size=2)
# Dealer 3: seat 0 gets 2C 3H, seat 1 AC 9D, seat 2 4C 8H, seat 3 5C 7S (R1.3). Every seat playing its lowest legal
# card: seat 0 leads 2C, seats 1-3 follow clubs (R1.5), seat 1's AC wins (R1.7), leads 9D and goes out (R1.9), so
# seats 0, 2 and 3 lose on seat 1's move.
HEAD = ["2C", "AC", "4C", "5C", "3H", "9D", "8H", "7S"]
DEALER = 3
WINNER = 1
LOSS = -1 / 3


def scripted_deck() -> list[str]:
    rest = [code_of(f) for f in deck_faces(1, 0)]
    for code in HEAD:
        rest.remove(code)
    return HEAD + rest


def lowest_legal(mask: np.ndarray) -> np.ndarray:
    """The lowest legal action of each row of ``mask``."""
    return np.asarray(mask, bool).argmax(axis=-1)


class BatchedLowestLegal:
    """A batched opponent that plays the lowest legal action: the scripted hand's moves (as :class:`LowestLegal`
    does, the Gymnasium view's opponent)."""

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return lowest_legal(mask)


# -- the base ------------------------------------------------------------------------------------------------------


def test_a_seat_takes_what_it_received_since_its_last_move() -> None:
    seats = LearnerSeats(2, 3, np.random.default_rng(0))
    seats.credit(np.array([[0.0, 0.5, 0.0], [1.0, 0.0, 0.0]]))
    seats.credit(np.array([[0.25, 0.0, -2.0], [9.0, 9.0, 9.0]]), games=np.array([True, False]))  # game 1 held
    np.testing.assert_array_equal(seats.take(np.array([0, 0]), np.array([0, 1])), [0.25, 0.5])
    np.testing.assert_array_equal(seats.take(np.array([0, 1]), np.array([0, 0])), [0.0, 1.0])  # counted again
    seats.credit(np.array([[0.125, 0.0, 1.0], [0.0, 0.0, 0.0]]))
    np.testing.assert_array_equal(seats.take(0), [0.125, 0.0, -1.0])  # every seat of game 0


def test_redraw_is_the_autoreset_of_the_marked_games_only() -> None:
    table = np.array([2, 3, 12] * 50)
    seats = LearnerSeats(len(table), 12, np.random.default_rng(1), table=table)
    seats.credit(np.ones((len(table), 12)))
    redrawn = seats.redraw(np.arange(len(table)) % 3 != 2)
    assert set(redrawn) == set(np.flatnonzero(np.arange(len(table)) % 3 != 2))
    assert (seats.seat[redrawn] < table[redrawn]).all()
    assert (seats.learner[redrawn].sum(1) == 1).all()
    assert (seats.learner[redrawn, seats.seat[redrawn]]).all()
    assert not seats.reward[redrawn].any() and (seats.reward[table == 12] == 1).all()  # the others keep counting
    assert {int(s) for s in seats.seat[redrawn][table[redrawn] == 3]} == {0, 1, 2}


def test_the_illegal_action_rule() -> None:
    mask = np.zeros((4, NUM_ACTIONS), bool)
    mask[:, [3, 53]] = True
    assert LearnerSeats.illegal(np.array([3, 53, 4, -1]), mask).tolist() == [False, False, True, True]
    assert LearnerSeats.illegal(np.array([NUM_ACTIONS]), mask[:1]).tolist() == [True]
    seats = LearnerSeats(4, 4)
    seats.refuse_illegal(np.array([3, 53, 3, 3]), mask, np.zeros(4, np.int64))
    with pytest.raises(
        IllegalActionError,
        match=r"game 2, seat 1: action 4 is not legal; legal actions: \[3, 53\] "
        r"\(R3\.2\)",
    ):
        seats.refuse_illegal(np.array([3, 53, 4, 99]), mask, np.array([0, 0, 1, 0]))


# -- the views -----------------------------------------------------------------------------------------------------


def selfplay_env(seat: int) -> Any:
    """The Gymnasium view of the scripted hand, the learner in ``seat``."""
    pytest.importorskip("stable_baselines3")
    from goboom_env.training.sb3.selfplay import SelfPlayEnv

    register_agent("test-lowest-legal", LowestLegal)
    try:
        env = SelfPlayEnv(CLASSIC, [("test-lowest-legal", 1.0)], seed=0)
    finally:
        unregister_agent("test-lowest-legal")
    env.reset(options={"deck": scripted_deck(), "dealer": DEALER, "seat": seat})
    return env


@pytest.mark.parametrize("seat", [0, 2, 3])
def test_gymnasium_view_credits_the_loss_that_another_seat_causes(seat: int) -> None:
    env = selfplay_env(seat)
    assert env.seats.seat[0] == seat
    _, reward, terminated, _, info = env.step(int(lowest_legal(env.action_masks())))
    assert terminated and info["winners"] == [WINNER]
    assert reward == pytest.approx(LOSS)  # it arrived on seat 1's move, after the learner's last one


def centred_gains(match: Any, seat: int) -> float:
    """The ``reward="points"`` return of ``seat`` over a match: each hand's score change minus the mean, / 100."""
    n = len(match.scores)
    return sum(r.score_deltas[seat] - sum(r.score_deltas) / n for r in match.results) / 100.0


def random_step_rewards(env: Any, rng: np.random.Generator) -> Iterator[float]:
    """A new episode of the Gymnasium view played with random legal actions: the reward of each step."""
    env.reset()
    terminated = False
    while not terminated:
        _, reward, terminated, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        yield reward


def test_gymnasium_view_counts_each_hands_reward_once_over_a_match() -> None:
    pytest.importorskip("stable_baselines3")
    from goboom_env.training.sb3.selfplay import SelfPlayEnv

    env = SelfPlayEnv(CLASSIC, [("random", 1.0)], episode="match", reward="points", seed=4)
    rng = np.random.default_rng(4)
    hands = []
    for _ in range(6):
        assert sum(random_step_rewards(env, rng)) == pytest.approx(centred_gains(env.aec.match, env.seat))
        hands.append(len(env.aec.match.results))
    assert max(hands) > 1


def test_gymnasium_view_ends_the_episode_on_an_illegal_action() -> None:
    env = selfplay_env(2)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert (reward, terminated, info["illegal_action"]) == (ILLEGAL_REWARD, True, illegal)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def scripted_vecenv(num_envs: int) -> Any:
    """The SB3 VecEnv of the batched engine, every game dealt the scripted hand first."""
    pytest.importorskip("stable_baselines3")
    from goboom_env.training.sb3.vecenv import VectorGameVecEnv

    venv = VectorGameVecEnv(CLASSIC, num_envs=num_envs, opponent=BatchedLowestLegal(), seed=2)
    venv.set_options({"deck": scripted_deck(), "dealer": DEALER})
    return venv


def test_vecenv_credits_every_seat_and_starts_a_finished_game_again() -> None:
    venv = scripted_vecenv(24)
    venv.reset()
    learner = venv.learner_seat.copy()
    assert set(learner.tolist()) == {0, 1, 2, 3}
    # the scripted hand ends on seat 1's second move: the winner's second action, the losers' first
    _, reward, done, _ = venv.step(lowest_legal(venv.action_masks()))
    np.testing.assert_array_equal(done, learner != WINNER)
    np.testing.assert_allclose(reward, np.where(done, LOSS, 0.0), atol=1e-6)
    _, again, done_again, _ = venv.step(lowest_legal(venv.action_masks()))
    np.testing.assert_allclose(again[learner == WINNER], 1.0, atol=1e-6)
    assert done_again[learner == WINNER].all()
    # the losers' games were dealt anew: their rewards start from zero (none of the last hand's loss again)
    assert not again[(learner != WINNER) & ~done_again].any()
    assert venv.action_masks().any(axis=1).all()  # the learner is to move in every game


def test_vecenv_refuses_an_illegal_action() -> None:
    venv = scripted_vecenv(3)
    venv.reset()
    actions = lowest_legal(venv.action_masks())
    actions[1] = int(np.flatnonzero(~venv.action_masks()[1])[0])
    with pytest.raises(IllegalActionError, match=rf"game 1, seat {venv.learner_seat[1]}: action {actions[1]} .*R3\.2"):
        venv.step(actions)


def test_rllib_view_reports_each_seats_reward_on_the_move_that_causes_it() -> None:
    pytest.importorskip("ray")
    from goboom_env.training.rllib.env import MASK_KEY, GoBoomMultiAgentEnv, make_env_config

    env = GoBoomMultiAgentEnv(make_env_config(CLASSIC))
    obs, _ = env.reset(options={"deck": scripted_deck(), "dealer": DEALER})
    steps = []
    terminated = {"__all__": False}
    while not terminated["__all__"]:
        (agent,) = obs
        obs, rewards, terminated, _, _ = env.step({agent: int(lowest_legal(obs[agent][MASK_KEY]))})
        steps.append((agent, rewards))
    assert all(not any(r.values()) for _, r in steps[:-1])
    last_mover, rewards = steps[-1]
    assert last_mover == f"player_{WINNER}"
    assert rewards == pytest.approx({f"player_{s}": 1.0 if s == WINNER else LOSS for s in range(4)})
    match_env = GoBoomMultiAgentEnv(make_env_config(CLASSIC, "match", "points"))
    obs, _ = match_env.reset(seed=3)
    rng = np.random.default_rng(3)
    returns = dict.fromkeys(match_env.possible_agents, 0.0)
    terminated = {"__all__": False}
    while not terminated["__all__"]:
        (agent,) = obs
        obs, rewards, terminated, _, _ = match_env.step({agent: int(rng.choice(np.flatnonzero(obs[agent][MASK_KEY])))})
        returns = {a: returns[a] + r for a, r in rewards.items()}
    assert len(match_env.aec.match.results) > 1
    assert [returns[f"player_{s}"] for s in range(4)] == pytest.approx(
        [centred_gains(match_env.aec.match, s) for s in range(4)]
    )
    obs, _ = env.reset(seed=0)
    (agent,) = obs
    with pytest.raises(IllegalActionError, match=r"R3\.2"):
        env.step({agent: int(np.flatnonzero(obs[agent][MASK_KEY] == 0)[0])})


def test_fast_seat_plan_redraws_only_the_finished_games() -> None:
    from goboom_env.training.fast.rollout import SeatPlan
    from goboom_env.training.league import League

    pool = League([("learner", 1.0), ("random", 1.0)], size=2, rng=np.random.default_rng(3))
    plan = SeatPlan(pool, 64, 4)
    plan.redraw(np.ones(64, bool))
    everyone = plan.learner.all(1)
    assert (everyone == np.array([plan.spec_of(b) == "learner" for b in range(64)])).all()
    assert 10 < everyone.sum() < 54 and (plan.learner[~everyone].sum(1) == 1).all()
    before = plan.learner.copy(), plan.kind.copy()
    finished = np.arange(64) < 32
    plan.redraw(finished)
    np.testing.assert_array_equal(plan.learner[~finished], before[0][~finished])
    np.testing.assert_array_equal(plan.kind[~finished], before[1][~finished])
    assert (plan.kind[finished] != before[1][finished]).any()
