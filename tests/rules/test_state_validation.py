"""Saved states are validated, not trusted: every state the engine reaches loads back unchanged, and a
saved state changed in any way either raises ValueError or loads into a state that plays on (legal
actions, apply, observe) with observations inside the declared observation space."""

from __future__ import annotations

import copy
import json
from functools import cache
from itertools import islice

import numpy as np
import pytest
from helpers import RULE_CONFIGS, on_matrix, random_hand_steps, random_match_states, soak, soak_count, through_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goboom_env import GameConfig, Hand, Match, raw_env
from goboom_env.cards import NUM_FACES, code_of
from goboom_env.observation import ObservationEncoder


def _reached_states(config: GameConfig, games: int, seed: int, every: int = 1) -> list[tuple[dict, dict]]:
    """(saved match, saved hand) at every ``every``-th decision of ``games`` random matches, through
    JSON; the ends of hands (before and after scoring) and of the match are always included."""
    rng = np.random.default_rng(seed)
    states, step = [], 0
    for _ in range(games):
        match = Match(config, rng)
        for hand in random_match_states(match, rng):
            if step % every == 0 or hand.over:
                states.append((through_json(match.to_dict()), through_json(hand.to_dict())))
            step += 1
        states.append((through_json(match.to_dict()), through_json(match.hand.to_dict())))
    return states


def _check_round_trips(config: GameConfig, games: int, seed: int) -> int:
    states = _reached_states(config, games, seed)
    for saved_match, saved_hand in states:
        assert Hand.from_dict(saved_hand).to_dict() == saved_hand
        assert Match.from_dict(saved_match).to_dict() == saved_match
    return len(states)


@on_matrix
def test_every_reached_state_loads_back_unchanged(config: GameConfig) -> None:
    assert _check_round_trips(config, games=1, seed=5) > 10


@soak
@on_matrix
def test_every_reached_state_loads_back_unchanged_many_games(config: GameConfig) -> None:
    """25 games per configuration (``make soak``; 5 in CI)."""
    games = soak_count(25, 5)
    assert _check_round_trips(config, games=games, seed=6) > 10 * games


# -- mutations of saved states ---------------------------------------------------------------------------


@cache
def _saved_states() -> tuple[tuple[str, str], ...]:
    """JSON of saved hands and matches from several configs and phases (hand ends included)."""
    out = []
    for i, config in enumerate(RULE_CONFIGS):
        for saved_match, saved_hand in _reached_states(config, games=1, seed=i, every=7):
            out.append(("hand", json.dumps(saved_hand)))
            out.append(("match", json.dumps(saved_match)))
    return tuple(out)


@cache
def _observation_space(config: GameConfig) -> object:
    return raw_env(config=config).observation_space("player_0")["observation"]


CODES = [code_of(f) for f in range(NUM_FACES)]
SMALL_INTS = st.integers(-3, 12)
SCALARS = st.one_of(
    SMALL_INTS, SMALL_INTS, SMALL_INTS, st.sampled_from(CODES), st.sampled_from(CODES), st.integers(13, 400),
    st.none(), st.booleans(),
    st.sampled_from([1.0, 0.5, -1.5, float("nan"), "1", "", "x", "LEAD", "FOLLOW", "DISCARD", "OVER", "play", "draw"]),
)
"""Mostly plausible values in the wrong range or of the wrong kind: small integers (seats, counts),
card codes, large integers, null, bools, floats, phase and event names."""
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=4), st.dictionaries(st.sampled_from(["a", "state"]), SCALARS,
                                                                            max_size=2))


def _children(node: object) -> list:
    """Keys (dict) or indices (list) of the non-empty containers directly inside ``node``."""
    items = node.items() if isinstance(node, dict) else enumerate(node)
    return [key for key, value in items if isinstance(value, (dict, list)) and value]


def _pick_container(draw: st.DrawFn, data: dict) -> dict | list:
    """The dict or list a mutation changes: mostly the hand's (or the match's) own fields, sometimes
    an entry one to three levels down (a seat's hand, an event, a result, a generator state)."""
    node = data
    if isinstance(data.get("hand"), dict) and draw(st.booleans()):
        node = data["hand"]
    for _ in range(draw(st.sampled_from([0, 0, 0, 0, 1, 2, 3]))):
        children = _children(node)
        if not children:
            break
        node = node[draw(st.sampled_from(children))]
    return node


def _card_lists(data: dict) -> list[list]:
    """The places a card can be: each hand, the stock and the cards out of play (seen)."""
    hand = data.get("hand", data)
    if not isinstance(hand, dict):
        return []
    places = [hand.get("stock"), hand.get("seen")]
    if isinstance(hand.get("hands"), list):
        places += hand["hands"]
    return [p for p in places if isinstance(p, list)]


@st.composite
def mutated_states(draw: st.DrawFn) -> tuple[str, dict]:
    """A saved hand or match with one to three mutations: a value replaced (another type or range),
    a key dropped or added, a list entry removed or duplicated, or an entry moved to a hand, the
    stock or the seen cards."""
    kind, text = draw(st.sampled_from(_saved_states()))
    data = json.loads(text)
    for _ in range(draw(st.integers(1, 3))):
        target = _pick_container(draw, data)
        action = draw(st.sampled_from(["set", "set", "drop", "add", "move"]))
        if isinstance(target, dict):
            if action == "add" or not target:
                target[draw(st.text(max_size=6))] = draw(VALUES)
                continue
            key = draw(st.sampled_from(sorted(target)))
            if action == "drop":
                del target[key]
            else:
                target[key] = draw(VALUES)
        elif target:
            index = draw(st.integers(0, len(target) - 1))
            if action == "drop":
                del target[index]
            elif action == "add":
                target.insert(draw(st.integers(0, len(target))), copy.deepcopy(target[index]))
            elif action == "move" and _card_lists(data):  # e.g. a card from the stock into a hand
                destination = draw(st.sampled_from(_card_lists(data)))
                destination.insert(draw(st.integers(0, len(destination))), target.pop(index))
            else:
                target[index] = draw(VALUES)
    return kind, data


def _check_plays_on(hand: Hand, match: Match | None) -> None:
    """A loaded state works: it saves back to the same data, the player to move has a legal action
    unless the hand is over, each one applies, the hand plays on to an end with winners, and every
    observation on the way lies in the observation space."""
    encoder = ObservationEncoder(hand.config)
    space = _observation_space(hand.config)

    def observe_all(h: Hand) -> None:
        for seat in range(h.n):
            obs = encoder.encode(h, seat, match)
            assert space.contains(obs), (seat, obs[~((obs >= space.low) & (obs <= space.high))])

    assert Hand.from_dict(hand.to_dict()).to_dict() == hand.to_dict()
    assert all(type(v) is int for v in (hand.dealer, hand.current, hand.passes, hand.turns, *hand.drawn))
    assert type(hand.blocked) is bool and (hand.winner is None or type(hand.winner) is int)
    assert hand.over == bool(hand.winners())
    observe_all(hand)
    legal = hand.legal_actions()
    assert bool(legal) != hand.over
    for action in legal:
        after = hand.copy()
        after.apply(action)
        observe_all(after)
        Hand.from_dict(after.to_dict())  # what the engine makes of an accepted state is accepted too
    rest = hand.copy()
    for _ in islice(random_hand_steps(rest, np.random.default_rng(0)), 10_000):
        observe_all(rest)
    assert rest.over and rest.winners()
    if match is not None and hand.over and not match.over:
        match.finish_hand()
        observe_all(match.hand)


def _load_or_reject(kind: str, data: dict) -> None:
    try:
        loaded = Hand.from_dict(data) if kind == "hand" else Match.from_dict(data)
    except ValueError:
        return
    if isinstance(loaded, Match):
        _check_plays_on(loaded.hand, loaded)
    else:
        _check_plays_on(loaded, None)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_states())
def test_mutated_states_are_rejected_or_play_on(state: tuple[str, dict]) -> None:
    _load_or_reject(*state)


@soak
@settings(max_examples=soak_count(10_000, 2000), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_states())
def test_mutated_states_are_rejected_or_play_on_many(state: tuple[str, dict]) -> None:
    _load_or_reject(*state)


def test_card_moves_between_hands_load_and_play_on() -> None:
    """Moving a card between two hands keeps a consistent state (sizes are not saved separately):
    such states load and play on, so the mutation test above is not all rejections."""
    hand = Match(GameConfig(variant="jokers", num_players=3), np.random.default_rng(0)).hand
    data = hand.to_dict()
    data["hands"][1].append(data["hands"][0].pop())
    moved = Hand.from_dict(data)
    assert moved.sizes == [hand.sizes[0] - 1, hand.sizes[1] + 1, hand.sizes[2]]
    _check_plays_on(moved, None)


WRONG_VALUES = [
    None, True, False, -3, -2, -1, 0, 1, 2, 3, 4, 5, 7, 12, 52, 53, 99, 300, 1.0, 0.5, "1", "", "JK", "AS", "2C",
    "OVER", "LEAD", "FOLLOW", "DISCARD", [], [1], ["AS"], {}, {"a": 1},
]
"""Values each field of a saved state is set to in turn: other types, edge and out-of-range numbers,
card codes, phase names."""


def _some_saved_states(kind: str) -> list[dict]:
    """Per mutation config: the first saved state, one from the middle, and the first finished hand."""
    states = [json.loads(text) for k, text in _saved_states() if k == kind]
    out = []
    for config in RULE_CONFIGS:
        own = [s for s in states if s["config"] == config.to_dict()]
        over = [s for s in own if (s["phase"] if kind == "hand" else s["hand"]["phase"]) == "OVER"]
        out += [own[0], own[len(own) // 2], over[0]]
    return out


@pytest.mark.parametrize("kind", ["hand", "match"])
def test_every_field_set_to_a_wrong_value_is_rejected_or_plays_on(kind: str) -> None:
    rejected = 0
    for data in _some_saved_states(kind):
        for key in data:
            for value in WRONG_VALUES:
                changed = {**copy.deepcopy(data), key: value}
                try:
                    loaded = Hand.from_dict(changed) if kind == "hand" else Match.from_dict(changed)
                except ValueError as exc:
                    if kind == "hand" and key != "config":  # the message names the field
                        assert key in str(exc), (key, value, exc)
                    rejected += 1
                    continue
                _check_plays_on(loaded if kind == "hand" else loaded.hand, None if kind == "hand" else loaded)
    assert rejected > 0.9 * len(_some_saved_states(kind)) * len(data) * len(WRONG_VALUES)
