"""Save/restore: ``Hand.to_dict``/``from_dict`` and ``Match.to_dict``/``from_dict`` through JSON
restore a state that continues identically; malformed data raises ValueError."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

import numpy as np
import pytest
from conftest import config_id

from goboom_env import GameConfig, Hand, Match
from goboom_env.engine import event_to_json

CONFIGS = [
    GameConfig(variant="classic", num_players=3),
    GameConfig(variant="classic", num_players=7, scoring="reverse"),
    GameConfig(variant="jokers", num_players=4),
    GameConfig(variant="jokers", num_players=3, num_jokers=0),
    GameConfig(variant="jokers", num_players=4, after_joker="any"),
]


def through_json(data: dict) -> dict:
    """A JSON round trip: what a file or a socket would carry."""
    return json.loads(json.dumps(data))


def advance(hand: Hand, steps: int, seed: int) -> None:
    """Apply ``steps`` seeded random legal actions."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        legal = hand.legal_actions()
        hand.apply(legal[int(rng.integers(len(legal)))])


def finish(hand: Hand, seed: int) -> list[tuple]:
    """Play ``hand`` to the end with seeded random actions; the trace of (seat, legal, action)."""
    rng = np.random.default_rng(seed)
    trace = []
    while not hand.over:
        legal = hand.legal_actions()
        action = legal[int(rng.integers(len(legal)))]
        trace.append((hand.current, legal, action))
        hand.apply(action)
    return trace


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_hand_round_trip_continues_identically(config: GameConfig) -> None:
    rng = np.random.default_rng(17)
    for game in range(8):
        hand = Match(config, rng).hand
        total = len(finish(hand.copy(), game))
        for cut in sorted({0, total // 3, total // 2, max(total - 1, 0)}):
            original = hand.copy()
            advance(original, cut, game)
            data = through_json(original.to_dict())
            restored = Hand.from_dict(data)
            assert restored.to_dict() == data
            assert finish(restored, 1000 + cut) == finish(original, 1000 + cut)
            assert restored.events == original.events and restored.hand_points() == original.hand_points()


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_match_round_trip_continues_identically(config: GameConfig) -> None:
    rng = np.random.default_rng(23)
    match = Match(config, rng)
    for _ in range(2):  # into the second hand, so results and scores are non-trivial
        finish(match.hand, 5)
        match.finish_hand()
        if match.over:
            break
    data = through_json(match.to_dict())
    restored = Match.from_dict(data)
    assert restored.to_dict() == data

    def rest(m: Match) -> list:
        out = []
        while not m.over:
            out.append(finish(m.hand, len(out)))
            out.append([event_to_json(e) for e in m.hand.events])
            out.append(m.finish_hand())
        return [*out, m.scores, m.winners]

    assert rest(restored) == rest(match)


HAND_CORRUPTIONS: list[tuple[str, Callable[[dict], object], str]] = [
    ("missing-key", lambda d: d.pop("stock"), "malformed hand state: KeyError"),
    ("bad-phase", lambda d: d.update(phase="NOPE"), "malformed hand state: KeyError"),
    ("bad-card", lambda d: d["hands"][0].append("ZZ"), "invalid card code 'ZZ'"),
    ("duplicate-card", lambda d: d["hands"][0].append(d["hands"][1][0]), "unexpected"),
    ("lost-card", lambda d: d["stock"].pop(), "hands \\+ stock \\+ seen cards: .*missing"),
    ("extra-seat", lambda d: d["hands"].append([]), "malformed hand state"),
    ("missing-seat", lambda d: d["hands"].pop(), "need 4 entries"),
    ("short-trick", lambda d: d.update(trick=[]), "need 4 entries"),
    ("current-out-of-range", lambda d: d.update(current=9), "must be seats in 0..3"),
    ("dealer-out-of-range", lambda d: d.update(dealer=-1), "must be seats in 0..3"),
    ("winner-out-of-range", lambda d: d.update(winner=4), "must be seats in 0..3"),
    ("current-not-int", lambda d: d.update(current="a"), "invalid literal"),
    ("classic-phase-in-jokers", lambda d: d.update(phase="LEAD"), "phase LEAD does not fit variant 'jokers'"),
    ("no-match-card", lambda d: d.update(match_face=None), "needs a top and a match card"),
    ("config-not-dict", lambda d: d.update(config=5), "malformed hand state"),
    ("bad-config", lambda d: d["config"].update(num_players=13), "num_players must be an integer"),
]


@pytest.mark.parametrize(("name", "corrupt", "message"), HAND_CORRUPTIONS, ids=[c[0] for c in HAND_CORRUPTIONS])
def test_malformed_hand_data_raises_value_error(name: str, corrupt: Callable[[dict], object], message: str) -> None:
    hand = Match(GameConfig(variant="jokers", num_players=4), np.random.default_rng(1)).hand
    advance(hand, 6, 0)
    data = copy.deepcopy(hand.to_dict())
    corrupt(data)
    with pytest.raises(ValueError, match=message):
        Hand.from_dict(data)


@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        (lambda d: d.pop("rng"), "malformed match state: KeyError"),
        (lambda d: d.update(rng={"bit_generator": "MT"}), "PCG64"),
        (lambda d: d.update(scores=[1]), "scores and hand must fit"),
        (lambda d: d.update(results=[{}]), "malformed match state: KeyError"),
        (lambda d: d["hand"].update(hands=[]), "malformed hand state"),
        (lambda d: d.update(config=None), "malformed match state"),
    ],
    ids=["no-rng", "bad-rng", "short-scores", "bad-result", "bad-hand", "no-config"],
)
def test_malformed_match_data_raises_value_error(corrupt: Callable[[dict], object], message: str) -> None:
    data = copy.deepcopy(Match(GameConfig(), np.random.default_rng(2)).to_dict())
    corrupt(data)
    with pytest.raises(ValueError, match=message):
        Match.from_dict(data)


def test_copy_is_independent() -> None:
    hand = Match(GameConfig(variant="jokers", num_players=4), np.random.default_rng(4)).hand
    before = hand.to_dict()
    twin = hand.copy()
    finish(twin, 0)
    assert hand.to_dict() == before and not hand.over and twin.over
    assert finish(hand.copy(), 0) == finish(hand, 0)
