"""The byte-level observation encoder against a plain reference computed value by value from the layout
table of :mod:`goboom_env.observation`, in every state of random matches, including a deck big enough
for counts above 255 (the encoder's non-byte path)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RULE_CONFIGS, random_match_states

from goboom_env import GameConfig, Match
from goboom_env.cards import NUM_FACES
from goboom_env.engine import PASSED
from goboom_env.observation import ObservationEncoder, layout

ENCODER_CONFIGS = [
    *RULE_CONFIGS,  # every rule option; classic 7p has two decks: hand and seen counts of 2
    GameConfig(variant="classic", num_players=4),
    GameConfig(variant="classic", num_players=12),  # the most seats
    # 4 decks + 200 jokers = 408 cards: sizes, drawn and stock can pass 255, the non-byte path
    GameConfig(variant="jokers", num_players=2, num_decks=4, num_jokers=200, hand_size=1, rounds=2),
]


def reference_encode(config: GameConfig, hand, seat: int, match: Match | None) -> np.ndarray:
    """The observation computed value by value from the module docstring's table (float64)."""
    n = config.num_players
    sl = layout(n)
    out = np.zeros(sl["flags"].stop)
    copies = [config.num_decks] * 52 + [max(config.num_jokers, 1)]
    rel = [(seat + k) % n for k in range(n)]  # relative seat k -> absolute seat
    for f in range(NUM_FACES):
        out[sl["hand"].start + f] = hand.counts[seat][f] / copies[f]
        out[sl["seen"].start + f] = hand.seen[f] / copies[f]
    if hand.classic and hand.led >= 0:
        out[sl["led"].start + hand.led] = 1
        out[sl["leader"].start + rel.index(hand.leader)] = 1
        for k, other in enumerate(rel):
            if hand.trick[other] >= 0:
                out[sl["trick"].start + k * NUM_FACES + hand.trick[other]] = 1
            elif hand.trick[other] == PASSED:
                out[sl["trick_passed"].start + k] = 1
    if not hand.classic:
        out[sl["top"].start + hand.top] = 1
        out[sl["match"].start + hand.match_face] = 1
        out[sl["passes"]] = hand.passes / n
    deck = config.deck_size
    for k, other in enumerate(rel):
        out[sl["hand_sizes"].start + k] = hand.sizes[other] / deck
        out[sl["drawn"].start + k] = hand.drawn[other] / deck
        if match is not None:
            out[sl["scores"].start + k] = match.scores[other] / (config.target_score or 100)
        if not hand.over and other == hand.current:
            out[sl["to_move"].start + k] = 1
        if other == hand.dealer:
            out[sl["dealer"].start + k] = 1
    out[sl["stock"]] = len(hand.stock) / deck
    if match is not None and config.rounds:
        out[sl["progress"]] = match.hands_played / config.rounds
    out[sl["flags"]] = ObservationEncoder.flags(config)
    return out


def _config_id(config: GameConfig) -> str:
    return f"{config.variant}{config.num_players}-{config.deck_size}cards-{config.num_jokers}jk-{config.after_joker}"


@pytest.mark.parametrize("config", ENCODER_CONFIGS, ids=_config_id)
def test_encoder_matches_the_reference_in_every_state_of_random_matches(config: GameConfig) -> None:
    rng = np.random.default_rng(7)
    encoder = ObservationEncoder(config)
    checked = 0
    for _ in range(3):
        match = Match(config, rng)
        for hand in random_match_states(match, rng):
            for seat in range(config.num_players):
                for m in (match, None):
                    got = encoder.encode(hand, seat, m)
                    assert got.dtype == np.float32
                    np.testing.assert_allclose(got, reference_encode(config, hand, seat, m), rtol=1e-6, atol=0)
                    checked += 1
    assert checked > 500


def test_big_deck_config_really_reaches_counts_above_255() -> None:
    """The non-byte path of the encoder is exercised: a stock of more than 255 cards."""
    config = ENCODER_CONFIGS[-1]
    hand = Match(config, np.random.default_rng(0)).hand
    assert len(hand.stock) > 255
    got = ObservationEncoder(config).encode(hand, 0)
    assert got[layout(2)["stock"]][0] == pytest.approx(len(hand.stock) / config.deck_size)
