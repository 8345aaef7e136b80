"""The PettingZoo AEC env: conformance suites (api, seed, render), pickling, the registry entry,
reset options, determinism and error handling (RULES.md R3.1, R3.2; env.py docstring)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pettingzoo
import pytest
from helpers import ROOT, aec_steps, deck_for, random_legal, random_moves
from pettingzoo.test import api_test, render_test, seed_test

import goboom_env
from goboom_env import GameConfig, IllegalActionError
from goboom_env.cards import face_of

API_CONFIGS = [
    {"variant": "classic", "num_players": 2},
    {"variant": "classic", "num_players": 4, "scoring": "reverse"},
    {"variant": "classic", "num_players": 7},
    {"variant": "jokers", "num_players": 3},
    {"variant": "jokers", "num_players": 4, "num_jokers": 0},
    {"variant": "jokers", "num_players": 4, "after_joker": "any"},
]
API_IDS = ["-".join(str(v) for v in c.values()) for c in API_CONFIGS]


@pytest.mark.parametrize("fields", API_CONFIGS, ids=API_IDS)
@pytest.mark.parametrize("episode", ["hand", "match"])
@pytest.mark.parametrize("observation", ["snapshot", "history"])
def test_pettingzoo_api_test(fields: dict, episode: str, observation: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(goboom_env.env(episode=episode, observation=observation, **fields), num_cycles=300)
    # only api_test's own advisories about a Dict observation (as for every PettingZoo classic env with a mask)
    assert {str(w.message) for w in caught} <= {
        "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
        "Observation is not a NumPy array"}


@pytest.mark.parametrize("fields", API_CONFIGS, ids=API_IDS)
def test_pettingzoo_seed_test(fields: dict) -> None:
    seed_test(lambda **kw: goboom_env.env(episode="match", **fields, **kw), num_cycles=200)


@pytest.mark.parametrize("fields", API_CONFIGS[:1] + API_CONFIGS[3:4], ids=[API_IDS[0], API_IDS[3]])
def test_pettingzoo_render_test(fields: dict, capsys: pytest.CaptureFixture[str]) -> None:
    render_test(lambda render_mode=None: goboom_env.env(render_mode=render_mode, **fields),
                custom_tests={"ansi": lambda text: text.startswith(f"Go Boom ({fields['variant']}")})
    assert "Go Boom" in capsys.readouterr().out  # human mode printed the table


def test_registry_make() -> None:
    env = pettingzoo.make("aec", "goboom_v0", variant="jokers", num_players=3)
    env.reset(seed=1)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    assert env.unwrapped.config == GameConfig(variant="jokers", num_players=3)


def _random_steps(env: object, rng: np.random.Generator, steps: int) -> list[tuple]:
    """Play up to ``steps`` random legal actions; returns what each step observed."""
    return [(s.agent, s.observation["observation"].tobytes(), s.observation["action_mask"].tobytes(), s.reward,
             s.terminated, str(s.info)) for s in aec_steps(env, random_legal(rng), steps)]


@pytest.mark.parametrize("fields", API_CONFIGS, ids=API_IDS)
def test_pickle_mid_game_continues_identically(fields: dict) -> None:
    env = goboom_env.env(episode="match", **fields)
    env.reset(seed=3)
    _random_steps(env, np.random.default_rng(0), 25)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.unwrapped.state_dict() == env.unwrapped.state_dict()
    rest = _random_steps(env, np.random.default_rng(1), 100_000)
    assert _random_steps(clone, np.random.default_rng(1), 100_000) == rest
    assert len(rest) > 25 and not clone.agents  # it continued through later hands to the end


def test_same_seed_same_game_and_different_seed_differs() -> None:
    def run(seed: int) -> list[tuple]:
        env = goboom_env.env(variant="jokers", num_players=4, episode="match")
        env.reset(seed=seed)
        return _random_steps(env, np.random.default_rng(0), 100_000)

    assert run(11) == run(11)
    assert run(11) != run(12)


SMALL = GameConfig(variant="classic", num_players=3, hand_size=2)
SMALL_DECK = deck_for(SMALL, [["5H", "KC"], ["2C", "3D"], ["9H", "4S"]], ["7C", "8S", "JH"], dealer=2)
"""Dealt by seat 2: seat 0 holds 5H KC (it leads), seat 1 2C 3D, seat 2 9H 4S; the stock starts 7C 8S JH."""


def test_reset_with_a_fixed_deck_and_dealer() -> None:
    env = goboom_env.raw_env(config=SMALL)
    for options in ({"deck": SMALL_DECK, "dealer": 2}, {"deck": [face_of(c) for c in SMALL_DECK], "dealer": 2}):
        env.reset(seed=0, options=options)
        assert env.agent_selection == "player_0"
        assert env.match.hand.hand_faces(1) == sorted(face_of(c) for c in ("2C", "3D"))


@pytest.mark.parametrize(
    ("deck", "message"),
    [
        (lambda d: d[:-1], r"deck is not the configured multiset of 52 cards .* got 51 cards; missing \['"),
        (lambda d: [*d[:-1], d[0]], r"missing \['.*'\], unexpected \['5H'\]"),
        (lambda d: [*d, "JK"], r"unexpected \['JK'\]"),
        (lambda d: ["5X", *d[1:]], "invalid card code '5X'"),
        (lambda d: [None, *d[1:]], "card code must be a string|deck must be a list"),
    ],
    ids=["short", "duplicate", "joker-in-classic", "bad-code", "bad-type"],
)
def test_reset_rejects_an_invalid_deck(deck: object, message: str) -> None:
    env = goboom_env.raw_env(config=SMALL)
    with pytest.raises(ValueError, match=message):
        env.reset(options={"deck": deck(SMALL_DECK), "dealer": 2})


@pytest.mark.parametrize("dealer", [3, -1, "0", True])
def test_reset_rejects_an_invalid_dealer(dealer: object) -> None:
    env = goboom_env.raw_env(variant="classic", num_players=3)
    with pytest.raises(ValueError, match=r"dealer must be a seat in 0\.\.2"):
        env.reset(options={"dealer": dealer})


def test_a_misspelt_reset_option_warns_and_any_other_is_ignored() -> None:
    env = goboom_env.raw_env()
    with pytest.warns(UserWarning, match=r"ignoring unknown reset option 'dek' \(did you mean 'deck'\?\)"):
        env.reset(seed=0, options={"dek": []})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.reset(seed=0, options={"options": 1})  # what pettingzoo.test.api_test passes


def test_the_env_prints_its_name_and_short_spaces() -> None:
    env = goboom_env.env()
    assert str(env) == "goboom_v0"
    assert repr(env.observation_space("player_0")) == (
        "Dict('action_mask': Box(0, 1, (54,), int8), 'observation': Box(0, 1..2.695, (517,), float32))")


def test_a_step_before_any_reset_is_refused() -> None:
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        goboom_env.raw_env().step(0)


def test_raw_env_illegal_action_names_agent_action_and_legal_actions() -> None:
    env = goboom_env.raw_env(config=SMALL)
    env.reset(options={"deck": SMALL_DECK, "dealer": 2})
    before = env.state_dict()
    with pytest.raises(ValueError, match=r"player_0: action 53 is not legal .* legal actions: \[11, 29\]") as caught:
        env.step(53)  # callers may catch it as the ValueError it is
    assert type(caught.value) is IllegalActionError and env.state_dict() == before
    env.step(face_of("5H"))
    with pytest.raises(IllegalActionError, match=r"player_1: action 0 is not legal .* legal actions: \[53\]"):
        env.step(face_of("2C"))
    with pytest.raises(IllegalActionError, match="player_1: an action must be an integer"):
        env.step("draw")
    env.step(53)  # the state is unchanged by the rejected actions
    assert env.agent_selection == "player_2"


def test_wrapped_env_illegal_action_ends_the_game_with_minus_one() -> None:
    env = goboom_env.env(variant="classic", num_players=4)
    env.reset(seed=0)
    obs, *_ = env.last()
    offender = env.agent_selection
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the wrapper warns about the illegal move
        env.step(illegal)
    assert all(env.terminations.values())
    assert env.rewards[offender] == -1 and all(env.rewards[a] == 0 for a in env.agents if a != offender)
    assert not env.unwrapped.match.hand.over  # ended by the wrapper, not by the rules: no agent may act
    assert all(not env.observe(a)["action_mask"].any() for a in env.possible_agents)


def test_step_clears_a_hands_rewards_with_the_aec_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rewards of a finished hand are cleared by ``AECEnv._clear_rewards`` on the next step."""
    seen: list[dict[str, float]] = []
    clear = goboom_env.raw_env._clear_rewards

    def recording_clear(self: goboom_env.raw_env) -> None:
        seen.append(dict(self.rewards))
        clear(self)

    monkeypatch.setattr(goboom_env.raw_env, "_clear_rewards", recording_clear)
    env = goboom_env.raw_env(variant="jokers", num_players=3, episode="match", reward="points")
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    while env.match.hands_played == 0:
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    paid = dict(env.rewards)
    assert any(paid.values()) and seen == []
    env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    assert seen == [paid] and not any(env.rewards.values())


def test_envs_of_one_configuration_own_equal_spaces() -> None:
    """The spaces are built once per configuration and copied: each env owns its spaces (seeding one env's
    space leaves another's sampling alone), with the bounds of its own configuration."""
    first, second = (goboom_env.raw_env(variant="jokers", num_players=3) for _ in range(2))
    other = goboom_env.raw_env(variant="jokers", num_players=4)
    space, twin = first.observation_space("player_0"), second.observation_space("player_0")
    assert space is not twin and first.state_space is not second.state_space
    assert space == twin and first.state_space == second.state_space
    assert space["observation"].shape != other.observation_space("player_0")["observation"].shape
    space.seed(1)
    twin.seed(1)
    draw = space.sample()["observation"]
    space.seed(1)
    space.sample()  # the first env's generator moves on; the second's must not
    assert np.array_equal(twin.sample()["observation"], draw)


def test_wrapped_env_rejects_actions_outside_the_action_space() -> None:
    env = goboom_env.env()
    env.reset(seed=0)
    with pytest.raises(AssertionError, match="action is not in action space"):
        env.step(54)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"episode": "game"}, r"episode must be one of \['hand', 'match'\]"),
        ({"reward": "score"}, r"reward must be one of \['win', 'points'\]"),
        ({"render_mode": "video"}, "render_mode must be None or one of"),
        ({"render_seat": 4}, r"render_seat must be None or a seat in 0\.\.3"),
        ({"preset": "nope"}, "unknown preset 'nope'"),
    ],
)
def test_invalid_env_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        goboom_env.env(**kwargs)


def test_render_shows_only_the_chosen_seats_hand() -> None:
    env = goboom_env.raw_env(variant="jokers", num_players=3, render_mode="ansi", render_seat=1)
    env.reset(seed=4)
    text = env.render()
    lines = {line.split(":")[0].strip("-> "): line for line in text.splitlines() if ": " in line}
    assert "[" in lines["P1"] and "[" not in lines["P0"] and "[" not in lines["P2"]
    silent = goboom_env.raw_env()
    silent.reset(seed=4)
    with pytest.warns(UserWarning, match="render_mode"):
        assert silent.render() is None


@pytest.mark.parametrize("episode", ["hand", "match"])
def test_every_agent_can_be_observed_after_the_episode(episode: str) -> None:
    env = goboom_env.env(variant="jokers", num_players=3, episode=episode)
    random_moves(env, seed=0, max_iter=100_000)
    assert not env.agents  # every agent stepped out
    for agent in env.possible_agents:  # including the seat the finished hand left "to move"
        obs = env.observe(agent)
        assert not obs["action_mask"].any() and obs["observation"].shape == (5 * 53 + 60 * 3 + 12,)


# -- action types and calls before reset ---------------------------------------------------------------

NUMPY_INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.intp]


def _integer_forms(action: int) -> list[object]:
    """Every spelling of an integer action a caller may pass: numpy scalars and 0-d arrays of
    every integer type (``model.predict`` returns a 0-d array)."""
    return [t(action) for t in NUMPY_INT_TYPES] + [np.array(action, dtype=t) for t in NUMPY_INT_TYPES]


@pytest.mark.parametrize("make", [goboom_env.env, goboom_env.raw_env], ids=["env", "raw_env"])
def test_numpy_integer_actions_act_like_ints(make: object) -> None:
    def after_one_step(action: object) -> dict:
        env = make(variant="jokers", num_players=3)
        env.reset(seed=5)
        env.step(action)
        return env.unwrapped.state_dict()

    env = make(variant="jokers", num_players=3)
    env.reset(seed=5)
    legal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[-1])
    expected = after_one_step(legal)
    for form in _integer_forms(legal):
        assert after_one_step(form) == expected, repr(form)


@pytest.mark.parametrize("make", [goboom_env.env, goboom_env.raw_env], ids=["env", "raw_env"])
@pytest.mark.parametrize("action", [True, False, np.bool_(True), np.array(False), 3.0, "7"], ids=repr)
def test_non_integer_actions_are_rejected_by_name(make: object, action: object) -> None:
    env = make()
    env.reset(seed=0)
    before = env.unwrapped.state_dict()
    kind = "a bool, not an integer" if "rue" in repr(action) or "alse" in repr(action) else "of type"
    with pytest.raises(IllegalActionError, match=rf"player_\d: an action must be an integer in 0\.\.53 .*\({kind}"):
        env.step(action)
    assert env.unwrapped.state_dict() == before and not any(env.terminations.values())


@pytest.mark.parametrize(
    ("call", "method"),
    [
        (lambda e: e.observe("player_0"), "observe"),
        (lambda e: e.step(0), "step"),
        (lambda e: e.last(), "last"),
        (lambda e: list(e.agent_iter()), "agent_iter"),
        (lambda e: e.render(), "render"),
        (lambda e: e.state_dict(), "state_dict"),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_raw_env_methods_before_reset_say_so(call: object, method: str) -> None:
    env = goboom_env.raw_env(render_mode="ansi")
    with pytest.raises(RuntimeError, match=rf"call reset\(\) before {method}\(\)"):
        call(env)


@pytest.mark.parametrize("seat", [1, np.int64(1), np.array(1)], ids=repr)
def test_render_seat_accepts_numpy_integers(seat: object) -> None:
    env = goboom_env.raw_env(render_seat=seat)
    assert env.render_seat == 1 and type(env.render_seat) is int
    with pytest.raises(ValueError, match="render_seat must be None or a seat"):
        goboom_env.raw_env(render_seat=True)


# -- rewards: what the documentation promises ---------------------------------------------------------------


def _episode_totals(env: object, seed: int, illegal_at: int | None) -> tuple[dict[str, float], str | None]:
    """Play one episode with random legal moves (an illegal one at decision ``illegal_at``); each
    agent's total reward as read from ``last()``, and the offender."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    offender, decision = None, 0

    def choose(observation: dict[str, np.ndarray]) -> int:
        nonlocal offender, decision
        decision += 1
        if decision - 1 == illegal_at:
            offender = env.agent_selection
            return int(np.flatnonzero(observation["action_mask"] == 0)[0])
        return random_legal(rng)(observation)

    totals = dict.fromkeys(env.possible_agents, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo warns about the illegal move
        for step in aec_steps(env, choose):
            totals[step.agent] += step.reward
            if offender is not None:  # the illegal move ended every agent's episode
                assert step.terminated and step.truncated
    return totals, offender


def test_rewards_sum_as_the_documentation_says() -> None:
    import re

    doc = " ".join((ROOT / "docs" / "environment.md").read_text().split())
    assert "Rewards always sum to zero" not in doc
    assert "Rewards sum to zero over every episode that is played by the rules, in both reward modes" in doc
    found = re.search(r"The offender gets `(-?\d+)`, every other agent `(-?\d+)`, .* episode sum to `(-?\d+)`", doc)
    assert found, "the Rewards section no longer states the illegal-move exception"
    offender_reward, others_reward, episode_sum = (float(x) for x in found.groups())
    for reward in ("win", "points"):
        for episode in ("hand", "match"):
            for seed in range(3):
                env = goboom_env.env(variant="jokers", num_players=3, episode=episode, reward=reward)
                totals, _ = _episode_totals(env, seed, None)
                assert sum(totals.values()) == pytest.approx(0.0, abs=1e-9)
                for illegal_at in (0, 7 * seed + 3, 60):
                    totals, offender = _episode_totals(env, seed, illegal_at)
                    if offender is None:  # the episode ended before that decision
                        continue
                    assert sum(totals.values()) == pytest.approx(episode_sum, abs=1e-9)
                    if episode == "hand" or reward == "win":  # nothing was paid before the illegal move
                        assert totals[offender] == offender_reward
                        assert all(v == others_reward for a, v in totals.items() if a != offender)
