"""The OpenSpiel game ``python_goboom`` (goboom_env/openspiel.py) and the ``openspiel-ismcts`` agent: OpenSpiel's
random simulation test on every rule system, the same deal and moves give the same observations, legal moves
and returns as the env, resampling keeps the information state, OpenSpiel's ISMCTSBot plays in our
tournament runner, and a state string is an action history, replayed and checked, never unpickled."""

from __future__ import annotations

import base64
import dataclasses
import pickle
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyspiel")  # the openspiel extra
import pyspiel
from helpers import Payload, python_output

import goboom_env
from goboom_env import GameConfig
from goboom_env.agents import make_agent
from goboom_env.cards import code_of
from goboom_env.evaluation.tournament import run_tournament
from goboom_env.openspiel import DEFAULT_PARAMS, SHORT_NAME, deserialize_game_and_state, params_of, read_params

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


def _random_step(state: pyspiel.State, rng: np.random.Generator) -> None:
    """Apply one random action: a chance outcome by its odds, else a uniformly random legal action."""
    if state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(outcomes, p=probs)))
    else:
        state.apply_action(int(rng.choice(state.legal_actions())))


def _random_game(game: pyspiel.Game, seed: int, moves: int | None = None) -> pyspiel.State:
    """A state after ``moves`` random actions (chance nodes by their odds), or at the end of the game."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal() and (moves is None or len(state.history()) < moves):
        _random_step(state, rng)
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
        _random_step(state, rng)
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
    ("openspiel-ismcts:depth=3",
     "unknown option 'depth' for agent 'openspiel-ismcts' in spec 'openspiel-ismcts:depth=3'; its options: sims, "
     "rollouts, c"),
    ("openspiel-ismcts:sim=3", r"unknown option 'sim' .* \(did you mean 'sims'\?\)"),
])
def test_bad_openspiel_ismcts_options_are_named(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_agent(spec, GameConfig(), seed=0)


def test_the_core_and_the_agents_do_not_import_pyspiel() -> None:
    code = ("import sys, goboom_env, goboom_env.agents, goboom_env.training.sb3.selfplay, goboom_env.global_state; "
            "assert 'pyspiel' not in sys.modules, 'pyspiel imported'")
    python_output(code)


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
        _random_step(clone, rng)
    assert (str(state), state.history(), state.information_state_string(0)) == before
    assert clone.match.hands_played == 2 and state.match.hands_played == 0 and not state.is_terminal()


def _played(params: dict, seed: int, moves: int | None = None) -> pyspiel.State:
    """:func:`_random_game` of the game of ``params``."""
    return _random_game(pyspiel.load_game(SHORT_NAME, params), seed, moves)


def test_a_pickle_planted_in_a_state_string_never_runs(tmp_path: Path) -> None:
    state = _played({"players": 3, "variant": "jokers"}, 0, moves=70)
    game = state.get_game()
    marker = tmp_path / "marker"
    payload = base64.b64encode(pickle.dumps({"match": Payload(marker)})).decode()
    history = ",".join(f"{p}:{a}" for p, a in zip(_players(state), state.history()))
    planted = f"history={history}\nmove_number={len(state.history())}\n__dict__={payload}"  # pyspiel's layout
    with pytest.raises(ValueError, match=r"__dict__= field is not what its history= gives .*never unpickles"):
        game.deserialize_state(planted)
    text = pyspiel.serialize_game_and_state(game, state)
    crafted = text[:text.index("__dict__=")] + f"__dict__={payload}\n"
    with pytest.raises(ValueError, match="never unpickles"):
        deserialize_game_and_state(crafted)
    assert not marker.exists()


def _players(state: pyspiel.State) -> list[int]:
    """Who made each action of the history (-1 for chance), as pyspiel's serialization writes it."""
    replay = state.get_game().new_initial_state()
    players = []
    for action in state.history():
        players.append(replay.current_player())
        replay.apply_action(action)
    return players


@pytest.mark.parametrize(("params", "moves"), [
    ({"players": 4}, None),
    ({"players": 3, "variant": "jokers", "reward": "points"}, None),  # returns are summed floats
    ({"players": 2, "variant": "jokers", "hand_size": 5, "rounds": 2, "episode": "match"}, None),
    ({"players": 3, "variant": "jokers"}, 70),  # mid-hand, a player to move
    ({"players": 4}, 0),  # the initial state
], ids=["classic", "jokers-points", "jokers-match", "mid-hand", "initial"])
def test_a_state_serializes_to_its_actions_and_loads_by_replaying_them(params: dict, moves: int | None) -> None:
    state = _played(params, 4, moves)
    game = state.get_game()
    assert state.serialize() == "".join(f"{a}\n" for a in state.history())  # OpenSpiel's format for C++ games
    for text in (state.serialize(), pyspiel.serialize_game_and_state(game, state).split("[State]\n")[1]):
        loaded = game.deserialize_state(text)
        assert (loaded.history(), str(loaded), loaded.returns()) == (state.history(), str(state), state.returns())
    state.legal_actions()  # the engine caches them; pyspiel's pickle of the state then holds the cache
    for original in (state, state.clone()):
        loaded_game, loaded = deserialize_game_and_state(pyspiel.serialize_game_and_state(game, original))
        assert loaded_game.config == game.config and loaded.history() == state.history()
        assert str(loaded) == str(state) and loaded.returns() == state.returns()


@pytest.mark.parametrize(("text", "message"), [
    ("x\n", r"line 1 is not an action id \(a non-negative integer\), got 'x'"),
    ("1\n-3\n", r"line 2 is not an action id"),
    ("1\n" + "9" * 30 + "\n", r"line 2 is not an action id"),
    ("3\n", r"history entry 0 \(action 3\): chance action 3 is not a legal outcome: the first chance node draws "
             r"the dealer, a seat in 0\.\.2"),
    ("1\n5\n5\n", rf"history entry 2 \(action 5\): chance action 5 is not a legal outcome: every {code_of(5)} of the "
                   r"deck \(1\) is dealt already"),
    ("1\n52\n", r"history entry 1 \(action 52\): .*this deck holds no JK"),
    ("1\n99\n", r"history entry 1 \(action 99\): .*a dealt card is a face in 0\.\.52"),
    ("history=-1:1,-1:5\nmove_number=2\n", r"pyspiel's form is three lines"),
    ("history=-1:1,0:5\nmove_number=2\n__dict__=AAAA", r"history entry 1 \(action 5\): the history says player 0 "
                                                        r"moved; player -1 is to move"),
    ("history=-1:1,-1:x\nmove_number=2\n__dict__=AAAA", r"history entry 1 is not player:action, got '-1:x'"),
])
def test_a_bad_state_string_is_refused_naming_the_problem(text: str, message: str) -> None:
    game = pyspiel.load_game(SHORT_NAME, {"players": 3})
    with pytest.raises(ValueError, match=rf"^{SHORT_NAME}: cannot load the state: {message}"):
        game.deserialize_state(text)


def test_a_tampered_history_or_move_number_is_refused() -> None:
    state = _played({"players": 3}, 1, moves=70)
    game = state.get_game()
    text = pyspiel.serialize_game_and_state(game, state).split("[State]\n")[1]
    lines = text.split("\n")
    history = lines[0].split(",")
    bottom = game.config.deck_size  # history[0] draws the dealer, history[1:53] the deck from the top
    swapped = [*history[:bottom - 1], history[bottom], history[bottom - 1], *history[bottom + 1:]]
    tampered = [",".join(swapped), *lines[1:]]  # the two bottom cards of the stock swapped, the same pickle
    with pytest.raises(ValueError, match="never unpickles"):
        game.deserialize_state("\n".join(tampered))
    renumbered = [lines[0], "move_number=3", *lines[2:]]
    with pytest.raises(ValueError, match="move_number= or __dict__= field is not what its history= gives"):
        game.deserialize_state("\n".join(renumbered))
    with pytest.raises(ValueError, match=r"need a \[Game\] line python_goboom\(\.\.\.\) and a \[State\]"):
        deserialize_game_and_state(pyspiel.serialize_game_and_state(*_kuhn()))


def _kuhn() -> tuple[pyspiel.Game, pyspiel.State]:
    game = pyspiel.load_game("kuhn_poker")
    return game, game.new_initial_state()


def test_chance_actions_must_be_legal_outcomes() -> None:
    game = pyspiel.load_game(SHORT_NAME, {"players": 3})
    state = game.new_initial_state()
    with pytest.raises(ValueError, match=r"chance action 7 is not a legal outcome: .*a seat in 0\.\.2"):
        state.apply_action(7)  # no seat 7 at 3 players
    with pytest.raises(ValueError, match="chance action 99 is not a legal outcome"):
        state.apply_action(99)
    state.apply_action(0)
    state.apply_action(5)
    twice = rf"chance action 5 is not a legal outcome: every {code_of(5)} of the deck \(1\) is dealt already"
    with pytest.raises(ValueError, match=twice):
        state.apply_action(5)  # the same card twice from one deck
    with pytest.raises(ValueError, match="chance action 99 is not a legal outcome: a dealt card is a face"):
        state.apply_action(99)
    assert state.history() == [0, 5] and all(p > 0 for _, p in state.chance_outcomes())
    assert sum(p for _, p in state.chance_outcomes()) == pytest.approx(1.0)


def test_player_actions_must_be_legal_and_none_after_the_end() -> None:
    state = _played({"players": 3, "variant": "jokers"}, 2, moves=60)
    assert not state.is_chance_node()
    before = (state.history(), str(state))
    illegal = next(a for a in range(54) if a not in state.legal_actions())
    for action in (illegal, 99):
        with pytest.raises(ValueError, match=rf"action {action} is not legal for seat {state.current_player()}"):
            state.apply_action(action)
    assert (state.history(), str(state)) == before
    over = _played({"players": 2}, 3)
    with pytest.raises(ValueError, match=r"the game is over; no action is legal \(got 53\)"):
        over.apply_action(53)


def test_a_resampled_state_does_not_serialize_as_its_history() -> None:
    state = _played({"players": 3, "variant": "jokers"}, 5, moves=80)
    assert not state.is_chance_node() and not state.is_terminal()
    sample = state.resample_from_infostate(state.current_player(), pyspiel.UniformProbabilitySampler(0.0, 1.0))
    with pytest.raises(ValueError, match="resampled or built from a view"):
        sample.serialize()
    with pytest.raises(ValueError, match="resampled or built from a view"):
        sample.clone().serialize()
    assert state.get_game().deserialize_state(state.serialize()).history() == state.history()
