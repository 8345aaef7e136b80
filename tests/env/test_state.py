"""The global state (goboom_env/global_state.py, ``raw_env.state()``): every hidden card, by absolute seat from
seat 0, in ``state_space``; it changes when hidden cards change while the observation does not; its
documented tables match the layout."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import ROOT, on_rule_configs, random_match_play

import goboom_env
from goboom_env import GameConfig, Hand, Match
from goboom_env.cards import NUM_FACES, deck_faces
from goboom_env.global_state import StateEncoder, state_layout, state_size
from goboom_env.hand_state import Phase
from goboom_env.observation import ObservationEncoder, observation_size

ENVIRONMENT_PAGE = (ROOT / "docs" / "environment.md").read_text()
JOKERS = GameConfig(variant="jokers", num_players=4)


def test_hidden_blocks_hold_the_other_hands_the_stock_and_the_phase() -> None:
    hand = Hand(JOKERS, deck_faces(1, 2), dealer=3)  # the deck in face order, seat 0 dealt first (R1.3)
    hand.apply(53)  # seat 0 draws one card (R2.7): hands and stock change
    enc = StateEncoder(JOKERS)
    blocks = enc.describe(enc.encode(hand, seat=1))
    scale = np.r_[np.ones(52), 0.5]  # per face count / copies; two jokers share face 52
    others = blocks["hands"].reshape(3, NUM_FACES)
    for rel in (1, 2, 3):  # relative seats 1..3 of seat 1 are seats 2, 3, 0 (R0.4)
        np.testing.assert_allclose(others[rel - 1], np.frombuffer(hand.counts[(1 + rel) % 4], np.uint8) * scale)
    assert others[2].sum() == 8  # seat 0 holds 7 + 1 drawn cards
    np.testing.assert_allclose(blocks["stock"], np.bincount(hand.stock, minlength=NUM_FACES) * scale)
    assert np.flatnonzero(blocks["stock_top"]).tolist() == [hand.stock[-1]]  # the next card drawn (R0.5)
    assert np.flatnonzero(blocks["phase"]).tolist() == [Phase.DISCARD]
    np.testing.assert_array_equal(enc.encode(hand, 1)[:observation_size(4)], ObservationEncoder(JOKERS).encode(hand, 1))


def test_two_decks_scale_to_one_and_every_card_is_counted() -> None:
    config = GameConfig(variant="classic", num_players=8)  # two decks (R1.1)
    hand = Hand(config, deck_faces(2, 0), dealer=0)
    enc = StateEncoder(config)
    blocks = enc.describe(enc.encode(hand))
    hidden = enc.hidden(hand)
    assert hidden.max() <= 1.0 and len(hidden) == enc.hidden_size == 9 * NUM_FACES + 4
    total = (blocks["hand"].sum() + blocks["hands"].sum() + blocks["stock"].sum()) * 2
    assert round(total) == 104  # each card in exactly one hand or the stock
    assert np.flatnonzero(blocks["phase"]).tolist() == [Phase.LEAD]


def test_state_is_by_absolute_seat() -> None:
    env = goboom_env.raw_env(variant="classic", num_players=4)
    env.reset(seed=4)
    hand = env.match.hand
    blocks = env.state_encoder.describe(env.state())
    assert [f for f in range(NUM_FACES) if blocks["hand"][f]] == hand.hand_faces(0)
    for seat in (1, 2, 3):
        row = blocks["hands"].reshape(3, NUM_FACES)[seat - 1]
        assert [f for f in range(NUM_FACES) if row[f]] == hand.hand_faces(seat)
    assert np.flatnonzero(blocks["to_move"]).tolist() == [hand.current]
    assert np.flatnonzero(blocks["dealer"]).tolist() == [hand.dealer]


def _swap_hidden(hand: Hand) -> Hand:
    """The hand with two cards of different faces swapped between seats 1 and 2: only hidden cards change
    for seat 0 (hand sizes, public cards and the stock stay)."""
    data = hand.to_dict()
    a, b = data["hands"][1], data["hands"][2]
    i = next(i for i, card in enumerate(a) if card not in b)
    j = next(j for j, card in enumerate(b) if card not in a)
    a[i], b[j] = b[j], a[i]
    return Hand.from_dict(data)


@on_rule_configs
def test_state_changes_with_hidden_cards_while_the_observation_does_not(config: GameConfig) -> None:
    rng = np.random.default_rng(7)
    match = Match(config, rng)
    for _ in range(5):
        match.hand.apply(int(rng.choice(match.hand.legal_actions())))
    enc = StateEncoder(config)
    before_obs, before_state = enc.observation.encode(match.hand, 0, match), enc.encode(match, 0)
    match.hand = _swap_hidden(match.hand)
    assert np.array_equal(enc.observation.encode(match.hand, 0, match), before_obs)
    assert not np.array_equal(enc.encode(match, 0), before_state)
    reordered = match.hand.copy()  # the stock's top card changes: so does the state
    reordered.stock[-1], reordered.stock[0] = reordered.stock[0], reordered.stock[-1]
    if reordered.stock[-1] != match.hand.stock[-1]:
        assert np.array_equal(enc.observation.encode(reordered, 0, match), before_obs)
        assert not np.array_equal(enc.encode(reordered, 0), enc.encode(match.hand, 0))


@on_rule_configs
def test_state_lies_in_the_state_space(config: GameConfig) -> None:
    env, steps = random_match_play(config, seed=3, max_iter=400)
    space = env.unwrapped.state_space
    assert space.shape == (state_size(config.num_players),)
    for i, _ in enumerate(steps):
        if i % 5 == 0:
            state = env.state()
            assert state.dtype == np.float32 and space.contains(state), f"step {i}"


def test_state_before_reset_is_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match=r"call reset\(\) before state\(\)"):
        goboom_env.raw_env().state()


@pytest.mark.parametrize("seat", [-1, 4])
def test_a_seat_outside_the_table_is_a_clear_error(seat: int) -> None:
    encoder = StateEncoder(GameConfig())
    match = Match(GameConfig(), np.random.default_rng(0))
    with pytest.raises(ValueError, match=rf"seat must be in 0\.\.3, got {seat}"):
        encoder.encode(match, seat)  # -1 would otherwise be seat 3 seen through Python's negative indexing
    with pytest.raises(ValueError, match="seat must be in"):
        encoder.hidden(match.hand, seat)


def test_env_docstring_state_table_matches_layout() -> None:
    section = ENVIRONMENT_PAGE.split("### State")[1].split("###")[0]
    rows = re.findall(r"^\| (\d+)-(\d+)\s*\| (\w+)\s*\|", section, re.MULTILINE)
    documented = {name: (int(lo), int(hi) + 1) for lo, hi, name in rows}
    actual = {name: (sl.start, sl.stop) for name, sl in state_layout(4).items()}
    assert documented == {"observation": (0, observation_size(4)), **actual}


@pytest.mark.parametrize("n", [2, 4, 12])
def test_state_blocks_at_every_table_size(n: int) -> None:
    sizes = {"hands": (n - 1) * 53, "stock": 53, "stock_top": 53, "phase": 4}
    assert {name: sl.stop - sl.start for name, sl in state_layout(n).items()} == sizes
    assert state_size(n) == observation_size(n) + sum(sizes.values())
