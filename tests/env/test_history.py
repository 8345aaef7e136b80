"""The history observation (``observation="history"``, :mod:`goboom_env.history`): its layout, the proofs of
RULES.md R1.6 and R2.7 on fixed decks, the window of moves, and the env and spaces built on it. The no-leak
test of R4.1 runs over both layouts in tests/env/test_observation.py."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import ROOT, deck_for

import goboom_env
from goboom_env import GameConfig, Hand
from goboom_env.cards import ACES_MASK, DRAW_OR_PASS, JOKER, MATCH_MASKS, face_of, faces_in
from goboom_env.history import (
    HISTORY_PADDED_SIZE,
    HistoryEncoder,
    history_layout,
    history_padded_index,
    history_size,
    pad_history,
    window_size,
)
from goboom_env.observation import ObservationEncoder, layout, observation_size, pad_observations

NOT_BOOM = (1 << 52) - 1  # the non-joker faces


def _hand(config: GameConfig, hands: list[list[str]], stock: list[str], dealer: int) -> Hand:
    return Hand(config, [face_of(c) for c in deck_for(config, hands, stock, dealer)], dealer)


def _blocks(enc: HistoryEncoder, hand: Hand, seat: int) -> dict[str, np.ndarray]:
    """The history blocks seen from ``seat``, decoded: per relative seat ``played`` and ``void`` as faces, ``since``
    as a count, and the window as (relative mover, face or -1, drew, passed) per move, the most recent first."""
    n = enc.n
    vector = enc.encode(hand, seat)
    counts = enc.counts(vector)
    rows = enc.describe(vector)["window"].reshape(window_size(n), n + 55)
    window = []
    for row in rows:
        if not row.any():
            continue
        faces = np.flatnonzero(row[n:n + 53])
        window.append((int(np.flatnonzero(row[:n])[0]), int(faces[0]) if faces.size else -1,
                       int(row[n + 53]), int(row[n + 54])))
    return {
        "played": [faces_in(sum(1 << int(f) for f in np.flatnonzero(r))) for r in counts["played"].reshape(n, 53)],
        "void": [sum(1 << int(f) for f in np.flatnonzero(r)) for r in counts["void"].reshape(n, 53)],
        "since": counts["since"].tolist(),
        "window": window,
    }


def test_history_blocks_follow_the_snapshot_at_every_table_size() -> None:
    for n in (2, 4, 12):
        slices = history_layout(n)
        sizes = {"played": n * 53, "void": n * 53, "since": n, "window": 2 * n * (n + 55)}
        assert {name: sl.stop - sl.start for name, sl in slices.items() if name not in layout(n)} == sizes
        assert slices["played"].start == observation_size(n)
        assert history_size(n) == 5 * 53 + 60 * n + 12 + 107 * n + 2 * n * (n + 55)


def test_env_docstring_table_lists_the_history_blocks() -> None:
    section = (ROOT / "docs" / "environment.md").read_text().split("#### History observation")[1].split("###")[0]
    rows = re.findall(r"^\| (\d+)(?:-(\d+))?\s*\| (\w+)\s*\|", section, re.MULTILINE)
    documented = {name: (int(lo), int(hi or lo) + 1) for lo, hi, name in rows}
    assert documented == {name: (sl.start, sl.stop) for name, sl in history_layout(4).items()
                          if name not in layout(4)}


def test_the_snapshot_part_is_the_snapshot_observation() -> None:
    config = GameConfig(variant="jokers", num_players=4)
    env = goboom_env.raw_env(config=config, observation="history")
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    snapshot = ObservationEncoder(config)
    for _ in range(30):
        seat = env.match.hand.current
        vector = env.observe(env.agent_selection)["observation"]
        assert vector.shape == (history_size(4),)
        assert vector[:observation_size(4)].tobytes() == snapshot.encode(env.match.hand, seat, env.match).tobytes()
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))


def test_jokers_draw_proves_a_void_and_counts_the_cards_taken_since() -> None:
    config = GameConfig(variant="jokers", num_players=3, hand_size=2)
    hand = _hand(config, [["9C", "2D"], ["JK", "7H"], ["4C", "6C"]], ["5H", "3H", "8S", "QS", "2C"], dealer=2)
    enc = HistoryEncoder(config)
    hearts_or_fives = MATCH_MASKS[face_of("5H")] & NOT_BOOM
    hand.apply(DRAW_OR_PASS)  # seat 0 holds no heart and no 5: draws 3H (R2.7)
    seen = _blocks(enc, hand, 1)  # seat 0 is relative seat 2 of seat 1
    assert seen["void"] == [0, 0, hearts_or_fives] and seen["since"] == [0, 0, 1]
    hand.apply(JOKER)  # seat 1 booms: seats 2 and 0 draw one card each (R2.6)
    seen = _blocks(enc, hand, 1)
    assert seen["void"][2] == hearts_or_fives and seen["since"] == [0, 0, 2]
    assert seen["void"][1] == 0 and seen["since"][1] == 0  # seat 2 took a card, but has proved nothing
    hand.apply(DRAW_OR_PASS)  # seat 2 draws: the joker on top leaves 5H the match card
    seen = _blocks(enc, hand, 0)
    assert seen["void"] == [hearts_or_fives, 0, hearts_or_fives] and seen["since"] == [2, 0, 1]
    hand.apply(face_of("3H"))  # seat 0 plays a heart: it must be one of the two cards it took since
    seen = _blocks(enc, hand, 0)
    assert seen["void"][0] == hearts_or_fives and seen["since"][0] == 1
    assert seen["played"] == [[face_of("3H")], [JOKER], []]
    assert seen["window"] == [(0, face_of("3H"), 0, 0), (2, -1, 1, 0), (1, JOKER, 0, 0), (0, -1, 1, 0)]
    assert _blocks(enc, hand, 2)["window"][:2] == [(1, face_of("3H"), 0, 0), (0, -1, 1, 0)]  # relative movers


def test_a_proof_is_cleared_once_no_card_it_covered_is_left() -> None:
    config = GameConfig(variant="jokers", num_players=2, hand_size=2)
    hand = _hand(config, [["9C", "9D"], ["9H", "2S"]], ["5H", "JD", "7D"], dealer=1)
    enc = HistoryEncoder(config)
    hand.apply(DRAW_OR_PASS)  # seat 0: no heart, no 5
    hand.apply(face_of("9H"))
    hand.apply(face_of("9C"))  # one of the two cards held at the proof
    assert _blocks(enc, hand, 1)["void"][1] == MATCH_MASKS[face_of("5H")] & NOT_BOOM
    hand.apply(DRAW_OR_PASS)  # seat 1: no club, no 9
    hand.apply(face_of("9D"))  # the last card held at the proof: only the unknown card is left
    seen = _blocks(enc, hand, 0)
    assert seen["void"] == [0, MATCH_MASKS[face_of("9C")] & NOT_BOOM] and seen["since"] == [0, 1]


def test_jokers_after_any_a_draw_on_a_joker_proves_no_plain_card() -> None:
    config = GameConfig(variant="jokers", num_players=3, hand_size=2, num_jokers=4, after_joker="any")
    hand = _hand(config, [["JK", "9C"], ["JK", "JK"], ["4H", "5H"]], ["7D", "JK", "8D"], dealer=2)
    hand.apply(JOKER)  # seat 0 booms: seat 1 draws a joker, seat 2 draws 8D
    hand.apply(DRAW_OR_PASS)  # seat 1 holds only jokers: any plain card would have to be played (R2.6, R2.7)
    seen = _blocks(HistoryEncoder(config), hand, 0)
    assert seen["void"] == [0, NOT_BOOM, 0] and seen["since"] == [0, 1, 0]


def test_aces_mode_proves_no_matching_card_that_is_not_an_ace() -> None:
    config = GameConfig(variant="jokers", num_players=3, hand_size=2, num_jokers=0)
    hand = _hand(config, [["AC", "9S"], ["2D", "3D"], ["4D", "5D"]], ["6S", "7H", "8H"], dealer=2)
    hand.apply(face_of("AC"))  # an ace booms and becomes the match card (R2.8)
    hand.apply(DRAW_OR_PASS)  # seat 1: no club
    assert _blocks(HistoryEncoder(config), hand, 1)["void"][0] == MATCH_MASKS[face_of("AC")] & ~ACES_MASK


def test_classic_draw_proves_the_led_void_and_kept_cards_share_it() -> None:
    config = GameConfig(variant="classic", num_players=3, hand_size=3)
    hand = _hand(config, [["5H", "2C", "3C"], ["9S", "4D", "KD"], ["KH", "6C", "7C"]], ["8D", "5S", "6D"],
                 dealer=2)
    enc = HistoryEncoder(config)
    hand.apply(face_of("5H"))  # seat 0 leads
    hand.apply(DRAW_OR_PASS)  # seat 1: no heart, no 5: draws 8D (kept), then 5S, played (R1.6)
    seen = _blocks(enc, hand, 0)
    assert seen["void"] == [0, MATCH_MASKS[face_of("5H")], 0] and seen["since"] == [0, 0, 0]
    assert seen["played"] == [[face_of("5H")], [face_of("5S")], []]
    assert seen["window"] == [(1, face_of("5S"), 1, 0), (0, face_of("5H"), 0, 0)]
    hand.apply(face_of("KH"))  # seat 2 wins the trick and leads
    hand.apply(face_of("6C"))
    hand.apply(face_of("2C"))
    hand.apply(DRAW_OR_PASS)  # seat 1: no club, no 6: draws 6D and plays it; it kept nothing new
    assert _blocks(enc, hand, 2)["void"][2] == MATCH_MASKS[face_of("5H")] | MATCH_MASKS[face_of("6C")]


def test_classic_kept_cards_replace_an_older_proof_and_passes_prove_too() -> None:
    config = GameConfig(variant="classic", num_players=2, hand_size=2)
    hand = _hand(config, [["5H", "6H"], ["9S", "4D"]], ["8C", "7H"], dealer=1)
    enc = HistoryEncoder(config)
    hand.apply(face_of("5H"))
    hand.apply(DRAW_OR_PASS)  # seat 1 draws 8C (kept, no heart, no 5), then 7H: played
    assert _blocks(enc, hand, 0)["void"][1] == MATCH_MASKS[face_of("5H")]
    hand = _hand(config, [["5H", "6H"], ["9S", "4D"]], ["8C"], dealer=1)
    del hand.stock[:-1]  # a stock of one card, 8C (the top is the list's end)
    hand.apply(face_of("5H"))
    hand.apply(DRAW_OR_PASS)  # seat 1 draws 8C, finds no match, and passes on the empty stock
    seen = _blocks(enc, hand, 0)
    assert seen["void"][1] == MATCH_MASKS[face_of("5H")] and seen["window"][0] == (1, -1, 1, 1)


def test_unknown_observation_is_refused() -> None:
    with pytest.raises(ValueError, match="observation must be one of"):
        goboom_env.raw_env(observation="full")


@pytest.mark.parametrize("n", [2, 5, 12])
def test_padded_history_keeps_every_entry(n: int) -> None:
    index = history_padded_index(n)
    assert len(set(index.tolist())) == history_size(n) and index.max() < HISTORY_PADDED_SIZE
    config = GameConfig(variant="jokers", num_players=n, hand_size=3)
    env = goboom_env.raw_env(config=config, observation="history")
    env.reset(seed=n)
    rng = np.random.default_rng(n)
    for _ in range(3 * n):
        if env.match.hand.over:
            break
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    vector = env.observe(env.agent_selection)["observation"]
    wide = pad_history(vector, n)
    assert np.array_equal(wide[index], vector)
    assert np.array_equal(wide[:observation_size(12)], pad_observations(vector[:observation_size(n)], n))
    big = history_layout(12)
    rows = wide[big["window"]].reshape(24, 12 + 55)
    small = vector[history_layout(n)["window"]].reshape(2 * n, n + 55)
    assert np.array_equal(rows[:2 * n, :n], small[:, :n]) and np.array_equal(rows[:2 * n, 12:], small[:, n:])
