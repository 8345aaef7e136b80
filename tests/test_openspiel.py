"""The OpenSpiel game ``python_goboom`` (goboom_env/openspiel.py) and the ``openspiel-ismcts`` agent: OpenSpiel's
random simulation test on every rule system, the same deal and moves give the same observations, legal moves
and returns as the env, resampling keeps the information state, and OpenSpiel's ISMCTSBot plays in our
tournament runner."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("pyspiel")  # the openspiel extra
import pyspiel

import goboom_env
from goboom_env import GameConfig
from goboom_env.agents import make_agent
from goboom_env.evaluation.tournament import run_tournament
from goboom_env.openspiel import DEFAULT_PARAMS, SHORT_NAME, params_of, read_params

SIM_GAMES = {
    "classic": {"players": 4},
    "classic-8p-two-decks": {"players": 8, "hand_size": 5},
    "jokers": {"players": 4, "variant": "jokers"},
    "jokers-aces": {"players": 3, "variant": "jokers", "num_jokers": 0},
    "jokers-any": {"players": 4, "variant": "jokers", "after_joker": "any", "reward": "points"},
    "classic-reverse-match": {"players": 3, "scoring": "reverse", "target_score": 25, "episode": "match"},
    "jokers-match": {"players": 2, "variant": "jokers", "hand_size": 5, "rounds": 2, "episode": "match",
                     "reward": "points"},
}


@pytest.mark.parametrize("params", SIM_GAMES.values(), ids=SIM_GAMES.keys())
def test_openspiel_random_simulation_test(params: dict) -> None:
    game = pyspiel.load_game(SHORT_NAME, params)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_every_config_field_is_a_game_parameter() -> None:
    fields = {f.name for f in dataclasses.fields(GameConfig) if f.init and f.name != "extra"}
    assert set(DEFAULT_PARAMS) == (fields - {"num_players"}) | {"players", "episode", "reward"}
    config = GameConfig(variant="classic", num_players=7, hand_size=5, scoring="reverse", target_score=50)
    game = pyspiel.load_game(SHORT_NAME, params_of(config))
    assert game.config == config and game.num_players() == 7
    assert game.config.num_decks == 2  # derived (R1.1): the derive value 0 was passed
    assert read_params({"variant": "jokers"})[0] == GameConfig(variant="jokers")


@pytest.mark.parametrize(("params", "message"), [
    ({"players": 13}, "python_goboom: players must be an integer in 2..12, got 13"),  # OpenSpiel's name for it
    ({"variant": "poker"}, "variant must be one of"),
    ({"episode": "season"}, "episode must be one of"),
    ({"reward": "money"}, "reward must be one of"),
    ({"variant": "classic", "rounds": 3}, "rounds applies to variant='jokers' only"),
])
def test_bad_parameters_are_named(params: dict, message: str) -> None:
    with pytest.raises((ValueError, pyspiel.SpielError), match=message):
        pyspiel.load_game(SHORT_NAME, params)


def _random_game(game: pyspiel.Game, seed: int) -> pyspiel.State:
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


@pytest.mark.parametrize("params", [{"players": 4}, {"players": 3, "variant": "jokers", "reward": "points"},
                                    {"players": 4, "variant": "jokers", "num_jokers": 0}],
                         ids=["classic", "jokers-points", "jokers-aces"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_openspiel_game_equals_the_env_on_the_same_deal_and_moves(params: dict, seed: int) -> None:
    game = pyspiel.load_game(SHORT_NAME, params)
    played = _random_game(game, seed)
    history = played.history()
    size = game.config.deck_size
    dealer, deck, moves = history[0], history[1:1 + size], history[1 + size:]
    env = goboom_env.raw_env(config=game.config, reward=game.reward)
    env.reset(options={"deck": deck, "dealer": dealer})
    state = game.new_initial_state()
    for action in history[:1 + size]:
        state.apply_action(action)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for action in moves:
        agent = env.agent_selection
        seat = env.agent_name_mapping[agent]
        assert state.current_player() == seat
        observation = env.observe(agent)
        np.testing.assert_array_equal(np.array(state.observation_tensor(seat), np.float32), observation["observation"])
        np.testing.assert_array_equal(np.array(state.information_state_tensor(seat), np.float32),
                                      observation["observation"])
        assert state.legal_actions() == np.flatnonzero(observation["action_mask"]).tolist()
        state.apply_action(action)
        env.step(action)
        for a in env.possible_agents:
            returns[a] += env.rewards[a]
    assert state.is_terminal() and all(env.terminations.values())
    assert state.returns() == pytest.approx(list(returns.values()))
    assert state.returns() == played.returns() and abs(sum(state.returns())) < 1e-9


def test_a_match_is_dealt_hand_after_hand_with_the_dealer_moving_left() -> None:
    game = pyspiel.load_game(SHORT_NAME, {"players": 2, "variant": "jokers", "hand_size": 5, "rounds": 3,
                                          "episode": "match"})
    state = _random_game(game, 5)
    match = state.match
    assert match.over and match.hands_played == 3
    assert [r.dealer for r in match.results] == [(match.results[0].dealer + k) % 2 for k in range(3)]
    winners = match.winners
    expected = [1.0 if s in winners else -1.0 for s in range(2)] if len(winners) == 1 else [0.0, 0.0]
    assert state.returns() == expected


def test_resampling_keeps_what_the_player_knows() -> None:
    game = pyspiel.load_game(SHORT_NAME, {"players": 3, "variant": "jokers"})
    state = game.new_initial_state()
    rng = np.random.default_rng(3)
    while state.is_chance_node() or len(state.history()) < 60:
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    player = state.current_player()
    other = (player + 1) % 3
    changed = 0
    for _ in range(10):
        sample = state.resample_from_infostate(player, pyspiel.UniformProbabilitySampler(0.0, 1.0))
        assert sample.information_state_string(player) == state.information_state_string(player)
        assert sample.observation_tensor(player) == state.observation_tensor(player)
        assert sample.legal_actions() == state.legal_actions()
        changed += sample.match.hand.hand_faces(other) != state.match.hand.hand_faces(other)
    assert changed >= 8


def test_observer_views_strings_and_serialization() -> None:
    game = pyspiel.load_game(SHORT_NAME, {"players": 4, "variant": "jokers"})
    state = game.new_initial_state()
    assert state.is_chance_node() and state.observation_tensor(0) == [0.0] * game.observation_tensor_size()
    state = _random_game(game, 8)
    observer = game.make_py_observer()
    observer.set_from(state, 2)
    assert observer.dict["hand"].base is observer.tensor  # the named blocks are views of the one tensor
    assert observer.tensor.tolist() == state.observation_tensor(2)
    assert "P2" in state.information_state_string(2) and state.observation_string(1) != state.observation_string(2)
    text = pyspiel.serialize_game_and_state(game, state)
    _, state2 = pyspiel.deserialize_game_and_state(text)
    assert state2.history() == state.history() and state2.returns() == state.returns()
    assert str(state2) == str(state)


def test_openspiel_ismcts_plays_in_the_tournament_runner() -> None:
    config = GameConfig(variant="jokers", num_players=3)
    result = run_tournament(config, ["openspiel-ismcts:sims=4", "heuristic", "random"], 3, seed=2, progress=False)
    assert len(result.games) == 3
    assert {row["agent"] for row in result.table()} == {"openspiel-ismcts:sims=4", "heuristic", "random"}
    again = run_tournament(config, ["openspiel-ismcts:sims=4", "heuristic", "random"], 3, seed=2, progress=False)
    assert again.games == result.games  # seeded: the same games again
    agent = make_agent("openspiel-ismcts:sims=4,rollouts=2,c=1.5", GameConfig(), seed=0)
    assert agent.name == "openspiel-ismcts:sims=4,rollouts=2,c=1.5" and agent.needs_view


@pytest.mark.parametrize(("spec", "message"), [
    ("openspiel-ismcts:sims=0", "sims must be an integer in 1..1000000"),
    ("openspiel-ismcts:c=-1", "c must be a non-negative number"),
    ("openspiel-ismcts:c=inf", "c must be a non-negative number, got inf"),
    ("openspiel-ismcts:depth=3", "unknown openspiel-ismcts option"),
])
def test_bad_openspiel_ismcts_options_are_named(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_agent(spec, GameConfig(), seed=0)


def test_the_core_and_the_agents_do_not_import_pyspiel() -> None:
    code = ("import sys, goboom_env, goboom_env.agents, goboom_env.training.selfplay, goboom_env.state; "
            "assert 'pyspiel' not in sys.modules, 'pyspiel imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_clone_is_independent_of_its_original() -> None:
    game = pyspiel.load_game(SHORT_NAME, {"players": 3, "variant": "jokers", "episode": "match", "rounds": 2})
    state = game.new_initial_state()
    rng = np.random.default_rng(6)
    while state.is_chance_node() or len(state.history()) < 70:
        outcomes = [o for o, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        state.apply_action(int(rng.choice(outcomes)))
    before = (str(state), state.history(), state.information_state_string(0))
    clone = state.clone()
    while not clone.is_terminal():
        if clone.is_chance_node():
            outcomes, probs = zip(*clone.chance_outcomes())
            clone.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            clone.apply_action(int(rng.choice(clone.legal_actions())))
    assert (str(state), state.history(), state.information_state_string(0)) == before
    assert clone.match.hands_played == 2 and state.match.hands_played == 0 and not state.is_terminal()
