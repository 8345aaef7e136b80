"""The decision loop (goboom_env.game_loop) and episode results (goboom_env.episode.end_hand): what
the hook sees, what one hand or one match leaves behind, and agreement with the env's end of episode;
and the integer check the loop's callers (tournaments, agents) use for their arguments."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from helpers import config_id

import goboom_env
from goboom_env import GameConfig, IllegalActionError, Match
from goboom_env.agents import RandomAgent
from goboom_env.config import check_int
from goboom_env.episode import end_hand
from goboom_env.game_loop import Decision, HumanSeat, agents_around, play_episode, play_hand
from goboom_env.observation import observe
from goboom_env.scoring import win_rewards

CONFIGS = [
    GameConfig(variant="classic", num_players=4),
    GameConfig(variant="classic", num_players=3, scoring="reverse", target_score=30),
    GameConfig(variant="jokers", num_players=3),
]


def _agents(config: GameConfig, seed: int) -> list[RandomAgent]:
    return [RandomAgent(config, seed=seed + s) for s in range(config.num_players)]


def test_the_hook_sees_each_decision_before_it_is_applied() -> None:
    config = GameConfig(variant="jokers", num_players=4)
    match = Match(config, np.random.default_rng(1))
    seen: list[Decision] = []

    def check(decision: Decision) -> None:
        assert decision.hand is match.hand and decision.seat == decision.hand.current
        assert decision.view is None  # random agents do not ask for one
        assert np.array_equal(observe(match, decision.seat)["observation"], decision.observation["observation"])
        assert decision.observation["action_mask"][decision.action] == 1
        seen.append(decision)

    hand = play_hand(match, _agents(config, 0), check)
    assert hand.over and hand is match.hand and match.hands_played == 0
    replay = Match(config, np.random.default_rng(1)).hand  # the same deal, the recorded actions
    for decision in seen:
        replay.apply(decision.action)
    assert replay.events == hand.events and len(seen) > 4


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_a_hand_episode_leaves_the_match_and_its_generator_alone(config: GameConfig) -> None:
    match = Match(config, np.random.default_rng(2))
    state = match.rng.bit_generator.state
    result = play_episode(match, _agents(config, 0), "hand")
    hand = match.hand
    assert match.hands_played == 0 and match.rng.bit_generator.state == state
    assert (result.episode, result.hands, result.winners) == ("hand", 1, tuple(hand.winners()))
    assert result.hand_points == tuple(hand.hand_points()) == result.standing
    if config.scoring == "standard":  # the winner scores every point left (R1.11)
        assert result.points == tuple(sum(hand.hand_points()) if s == hand.winner else 0 for s in range(hand.n))
    else:  # everyone adds their own points (R1.12, R2.11)
        assert result.points == result.hand_points
    assert result.info() == {"winners": list(result.winners), "hand_points": list(hand.hand_points())}


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_a_match_episode_plays_to_the_end_of_the_match(config: GameConfig) -> None:
    match = Match(config, np.random.default_rng(3))
    hands: list[int] = []
    result = play_episode(match, _agents(config, 0), "match", lambda d: hands.append(match.hands_played))
    assert match.over and result.hands == match.hands_played == len(set(hands))
    assert (result.winners, result.points) == (tuple(match.winners), tuple(match.scores))
    assert result.last_hand_winners == match.results[-1].winners
    sign = -1 if config.scoring == "standard" else 1  # standard: the highest score is best
    assert result.standing == tuple(sign * s for s in match.scores)


def test_a_game_against_a_human_seats_the_agents_around_them_seeded_after_the_deal() -> None:
    def made(seat: int, spec: str, seed: int | None) -> Any:
        return seat, spec, seed

    assert agents_around(1, ["a", "b", "c"], 10, made) == {0: (0, "a", 11), 2: (2, "b", 13), 3: (3, "c", 14)}
    assert agents_around(0, ["a"], None, made) == {1: (1, "a", None)}
    config = GameConfig(variant="jokers", num_players=3)
    match = Match(config, np.random.default_rng(3))
    human = HumanSeat(lambda: match.hand.legal_actions()[0])  # plays its lowest legal action
    seats = [RandomAgent(config, seed=4), human, RandomAgent(config, seed=5)]
    seen: list[int] = []
    play_hand(match, seats, lambda decision: seen.append(decision.seat))
    assert match.hand.over and 1 in seen and human.name == "you" and not human.needs_view


def test_end_hand_refuses_a_running_hand_and_an_unknown_episode() -> None:
    match = Match(GameConfig(), np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="still being played"):
        end_hand(match, "hand")
    with pytest.raises(ValueError, match=r"episode must be one of \['hand', 'match'\], got 'set'"):
        play_episode(match, _agents(match.config, 0), "set")


def test_an_illegal_action_names_the_agent_and_its_seat() -> None:
    class Stubborn(RandomAgent):
        name = "stubborn"

        def act(self, observation: dict, view: object = None) -> int:
            return int(np.flatnonzero(observation["action_mask"] == 0)[0])

    config = GameConfig()
    match = Match(config, np.random.default_rng(0))
    seat = match.hand.current
    agents: list[RandomAgent] = _agents(config, 0)
    agents[seat] = Stubborn(config)
    before = match.hand.to_dict()
    with pytest.raises(IllegalActionError, match=rf"agent 'stubborn' in seat {seat}: action \d+ is not legal"):
        play_hand(match, agents)
    assert match.hand.to_dict() == before
    with pytest.raises(ValueError, match="need one agent per seat: 4 agents, got 3"):
        play_hand(match, agents[:3])


@pytest.mark.parametrize("episode", ["hand", "match"])
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_the_env_ends_an_episode_as_the_loop_does(config: GameConfig, episode: str) -> None:
    """The same deal and the same moves give the loop's result as the env's infos and win rewards."""
    match = Match(config, np.random.default_rng(4))  # what env.reset(seed=4) deals
    actions: list[int] = []
    result = play_episode(match, _agents(config, 7), episode, lambda d: actions.append(int(d.action)))
    env = goboom_env.raw_env(config=config, episode=episode)
    env.reset(seed=4)
    totals = dict.fromkeys(env.agents, 0.0)
    for action in actions:
        env.step(action)
        for agent, reward in env.rewards.items():
            totals[agent] += reward
    assert all(env.terminations.values()) and env.infos["player_0"] == result.info()
    assert list(totals.values()) == win_rewards(config.num_players, result.winners)


@pytest.mark.parametrize("value, expected", [(3, 3), (np.int8(3), 3), (np.array(3), 3)])
def test_check_int_takes_every_integer_type(value: object, expected: int) -> None:
    got = check_int("games", value, 1)
    assert got == expected and type(got) is int


@pytest.mark.parametrize("value, lo, hi, message", [
    (True, 0, None, "seed must be a non-negative integer, got True"),
    (2.0, 1, None, "seed must be a positive integer, got 2.0"),
    ("3", 1, 5, "seed must be an integer in 1..5, got '3'"),
    (0, 1, None, "seed must be a positive integer, got 0"),
    (1, 2, None, "seed must be an integer >= 2, got 1"),
])
def test_check_int_names_the_argument_and_the_range(value: object, lo: int, hi: int | None, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        check_int("seed", value, lo, hi)
