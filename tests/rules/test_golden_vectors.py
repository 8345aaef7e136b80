"""Replay the golden hands of an independent implementation (tests/data/hands.json) step by step,
through the engine and through the PettingZoo env (RULES.md R1, R2, R3)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import DATA, play_aec

import goboom_env
from goboom_env import GameConfig, Hand
from goboom_env.cards import codes_of_faces, faces_of_codes
from goboom_env.engine import event_to_json, win_rewards

VECTORS = json.loads((DATA / "hands.json").read_text())["vectors"]
IDS = [f"{i}-{v['config']['variant']}{v['config']['num_players']}-{'+'.join(v['features'])}"
       for i, v in enumerate(VECTORS)]


def test_vectors_cover_every_rare_event() -> None:
    features = {f for v in VECTORS for f in v["features"]}
    assert {"multi_draw", "stock_out_mid_draw", "pass", "two_decks", "end_on_lead", "end_mid_trick",
            "bury", "boom", "joker_last", "blocked", "after_any", "aces_mode"} <= features


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_engine_reproduces_vector(vector: dict) -> None:
    hand = Hand(GameConfig(**vector["config"]), faces_of_codes(vector["deck"]), vector["dealer"])
    for i, (seat, legal, action) in enumerate(vector["steps"]):
        assert (hand.current, hand.legal_actions()) == (seat, legal), f"step {i}"
        hand.apply(action)
    result = vector["result"]
    assert hand.over
    assert hand.winner == result["winner"]
    assert hand.blocked == result["blocked"]
    assert hand.hand_points() == result["hand_points"]
    assert [sorted(codes_of_faces(hand.hand_faces(s))) for s in range(hand.n)] == result["hands_left"]
    assert len(hand.stock) == result["stock_left"]
    assert win_rewards(hand.n, hand.winners()) == pytest.approx(result["win_rewards"])
    assert [event_to_json(e) for e in hand.events] == result["events"]


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_env_reproduces_vector(vector: dict) -> None:
    env = goboom_env.env(**vector["config"])
    env.reset(seed=0, options={"deck": vector["deck"], "dealer": vector["dealer"]})
    steps = iter(vector["steps"])

    def choose(observation: dict[str, np.ndarray]) -> int:
        seat, legal, action = next(steps)
        assert env.agent_selection == f"player_{seat}"
        assert np.flatnonzero(observation["action_mask"]).tolist() == legal
        return action

    totals = play_aec(env, choose)
    assert next(steps, None) is None, "the env ended the hand before the vector did"
    expected = vector["result"]["win_rewards"]
    got = [totals[f"player_{s}"] for s in range(len(expected))]
    assert got == pytest.approx(expected)
