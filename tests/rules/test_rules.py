"""Hand-built scenario tests, at least one per rule number of RULES.md (R0.1 ... R4.1).

Every test is named ``test_r<section>_<rule>_...`` after the rule it checks; scenarios use fixed
deck orders (:func:`helpers.deck_for`) or hand-built mid-round states
(:func:`helpers.jokers_state`) and scripted actions, and assert exact legal-action sets,
events and results. :func:`test_every_rule_has_a_scenario` keeps the list complete.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
from helpers import codes, deck_for, jokers_state, legal_codes, make_hand, play, random_hand_steps

from goboom_env import GameConfig, Hand, IllegalActionError, Match, Phase
from goboom_env.cards import (
    CLASSIC_POINTS,
    DRAW_OR_PASS,
    JOKER,
    JOKERS_POINTS,
    NUM_ACTIONS,
    RANKS,
    SUITS,
    code_of,
    deck_faces,
    face_of,
)
from goboom_env.engine import NOT_PLAYED, PASSED, match_winners, score_deltas, win_rewards

RULE_NUMBERS = (
    [f"R0.{i}" for i in range(1, 6)]
    + [f"R1.{i}" for i in range(1, 13)]
    + [f"R2.{i}" for i in range(1, 13)]
    + ["R3.1", "R3.2", "R4.1"]
)
"""Every rule number of RULES.md."""

CLASSIC3 = GameConfig(variant="classic", num_players=3, hand_size=2)
JOKERS3 = GameConfig(variant="jokers", num_players=3, hand_size=2)
ACES3 = GameConfig(variant="jokers", num_players=3, hand_size=2, num_jokers=0)
OTHERS = [["9C", "TC"], ["JC", "QC"]]
"""Seats 1 and 2 in the table-driven jokers scenarios (cards no test hand of seat 0 uses)."""


def ev(kind: str, *args: object) -> tuple:
    """An engine event written with card codes: ``ev("play", 0, "5H") == ("play", 0, 29)``."""
    if kind in ("play", "upcard", "bury"):
        args = (*args[:-1], face_of(args[-1]))
    return (kind, *args)


def stock_codes(hand: Hand) -> list[str]:
    """The stock as codes, top first (the engine keeps the top at the end of its list)."""
    return [code_of(f) for f in reversed(hand.stock)]


def test_every_rule_has_a_scenario() -> None:
    names = [n for n in dir(sys.modules[__name__]) if n.startswith("test_r")]
    covered = {f"R{m[1]}.{m[2]}" for n in names if (m := re.match(r"test_r(\d)_(\d+)_", n))}
    assert sorted(set(RULE_NUMBERS) - covered) == []


# -- R0: cards, codes, seating -------------------------------------------------------------------


def test_r0_1_deck_and_codes() -> None:
    deck = [code_of(f) for f in deck_faces(1, 0)]
    assert len(deck) == len(set(deck)) == 52
    assert {c[1] for c in deck} == set("CDHS") and {c[0] for c in deck} == set("23456789TJQKA")
    assert {"7D", "TS", "AH"} <= set(deck)
    assert code_of(JOKER) == "JK" and face_of("JK") == JOKER
    assert face_of("10h") == face_of("TH")
    for bad in ("1C", "7X", "", "7DD", 7, None):
        with pytest.raises(ValueError, match="card code"):
            face_of(bad)
    with pytest.raises(ValueError, match=r"face must be in 0\.\.52"):
        code_of(53)


@pytest.mark.parametrize(
    ("led", "follow", "winner"),
    [("2H", "3H", 1), ("KH", "AH", 1), ("AH", "KH", 0), ("TH", "JH", 1), ("9H", "TH", 1), ("QH", "2H", 0)],
)
def test_r0_2_rank_order_decides_tricks(led: str, follow: str, winner: int) -> None:
    cfg = GameConfig(variant="classic", num_players=2, hand_size=2)
    hand = make_hand(cfg, [[led, "3C"], [follow, "4C"]], dealer=1)
    play(hand, led, follow)
    assert hand.events[-1] == ("trick", winner)
    assert hand.current == winner and hand.phase == Phase.LEAD


def test_r0_3_face_numbering() -> None:
    assert [face_of(c) for c in ("2C", "AC", "2D", "AS", "JK")] == [0, 12, 13, 51, 52]
    assert all(code_of(s * 13 + r) == RANKS[r] + SUITS[s] for s in range(4) for r in range(13))
    two = deck_faces(2, 3)
    assert len(two) == 107 and all(two.count(f) == 2 for f in range(52)) and two.count(JOKER) == 3


def test_r0_4_play_goes_clockwise() -> None:
    cfg = GameConfig(variant="jokers", num_players=4, hand_size=2)
    hand = make_hand(cfg, [["5D", "9C"], ["6D", "9S"], ["7D", "TC"], ["8D", "TS"]], ["4D"], dealer=1)
    order = []
    for card in ("7D", "8D", "5D", "6D"):  # seat 2 (left of dealer 1), then 3, 0, 1
        order.append(hand.current)
        play(hand, card)
    assert order == [2, 3, 0, 1] and hand.current == 2


def test_r0_5_deck_index_zero_is_top() -> None:
    top = ["AS", "2D", "QS", "3D", "7C", "8H", "KS"]
    deck = top + [code_of(f) for f in range(52) if code_of(f) not in top]
    hand = Hand(GameConfig(variant="classic", num_players=2, hand_size=2), [face_of(c) for c in deck], dealer=1)
    assert codes(hand, 0) == ["AS", "QS"] and codes(hand, 1) == ["2D", "3D"]  # first card to dealer's left
    play(hand, "AS", "draw")  # seat 1 draws 7C, 8H from the top, then KS matches and is played
    assert codes(hand, 1) == ["2D", "3D", "7C", "8H"]
    assert hand.events[-3:] == [ev("draw", 1, 3), ev("play", 1, "KS"), ev("trick", 0)]  # AS beats KS
    jokers = Hand(GameConfig(variant="jokers", num_players=2, hand_size=2), [face_of(c) for c in [*deck, "JK", "JK"]],
                  dealer=1)
    assert jokers.events == [ev("upcard", "7C")] and jokers.stock[-1] == face_of("8H")


# -- R1: classic Go Boom ---------------------------------------------------------------------------


def test_r1_1_classic_players_and_decks() -> None:
    for n in range(2, 13):
        cfg = GameConfig(variant="classic", num_players=n)
        assert (cfg.num_decks, cfg.num_jokers, cfg.deck_size) == ((1, 0, 52) if n <= 6 else (2, 0, 104))
    assert GameConfig(variant="classic", num_players=4, num_decks=2).deck_size == 104
    for bad in ({"num_players": 13}, {"num_players": 1}, {"num_jokers": 2}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            GameConfig(variant="classic", **bad)
    hand = Match(GameConfig(variant="classic", num_players=7), np.random.default_rng(0)).hand
    assert sum(hand.sizes) + len(hand.stock) == 104 and JOKER not in hand.stock


def test_r1_2_dealer_random_then_passes_left() -> None:
    cfg = GameConfig(variant="classic", num_players=4, target_score=100_000)
    firsts = {Match(cfg, np.random.default_rng(seed)).hand.dealer for seed in range(40)}
    assert firsts == {0, 1, 2, 3}
    rng = np.random.default_rng(7)
    match = Match(cfg, rng, dealer=2)
    for _ in range(6):
        assert match.hand.current == (match.hand.dealer + 1) % 4
        for _ in random_hand_steps(match.hand, rng):
            pass
        match.finish_hand()
    assert [r.dealer for r in match.results] == [2, 3, 0, 1, 2, 3] and match.hand.dealer == 0


def test_r1_3_deal_one_at_a_time_from_dealers_left() -> None:
    cfg = GameConfig(variant="classic", num_players=3, hand_size=5)
    hand = Hand(cfg, list(range(52)), dealer=0)
    assert hand.hand_faces(1) == [0, 3, 6, 9, 12]
    assert hand.hand_faces(2) == [1, 4, 7, 10, 13]
    assert hand.hand_faces(0) == [2, 5, 8, 11, 14]
    assert hand.stock[::-1] == list(range(15, 52))  # the rest is the stock, deck order kept
    assert (hand.top, hand.match_face, sum(hand.seen), hand.events) == (-1, -1, 0, [])  # no up-card
    assert Hand(GameConfig(variant="classic", num_players=3), list(range(52)), 0).sizes == [7, 7, 7]


def test_r1_4_left_of_dealer_leads_any_card() -> None:
    cfg = GameConfig(variant="classic", num_players=7, hand_size=3)
    hands = [["KH", "KH", "2C"]] + [[f"{r}S", f"{r}D", f"{r}C"] for r in "3456789"[:6]]
    hand = make_hand(cfg, hands, dealer=6)
    assert (hand.current, hand.phase) == (0, Phase.LEAD)
    assert legal_codes(hand) == ["2C", "KH"]  # any card, one action per face, no drawing
    with pytest.raises(IllegalActionError):
        hand.apply(DRAW_OR_PASS)


def test_r1_5_follow_the_card_led_not_the_previous_card() -> None:
    cfg = GameConfig(variant="classic", num_players=3, hand_size=3)
    hand = make_hand(cfg, [["5H", "KC", "2D"], ["5S", "9H", "3C"], ["7S", "QH", "5D"]], dealer=2)
    play(hand, "5H")
    assert set(legal_codes(hand)) == {"5S", "9H"}  # same rank or same suit; no drawing
    with pytest.raises(IllegalActionError, match=r"legal actions: \[33, 42\]"):
        hand.apply(DRAW_OR_PASS)
    play(hand, "5S")
    assert set(legal_codes(hand)) == {"5D", "QH"}  # 7S matches the previous 5S, not the led 5H


def test_r1_6_draw_until_a_match_and_play_it() -> None:
    hand = make_hand(CLASSIC3, [["5H", "KC"], ["2C", "3D"], ["9H", "4S"]], ["7C", "8S", "JH", "6D"], dealer=2)
    play(hand, "5H")
    assert legal_codes(hand) == ["draw"]
    play(hand, "draw")
    assert hand.events[-2:] == [ev("draw", 1, 3), ev("play", 1, "JH")]
    assert codes(hand, 1) == ["2C", "3D", "7C", "8S"] and hand.drawn == [0, 3, 0]
    assert hand.trick[1] == face_of("JH") and hand.stock[-1] == face_of("6D")
    assert legal_codes(hand) == ["9H"]


def _stock_runs_out_hand() -> Hand:
    """Classic 3 players x 34 cards from two decks, two cards left in the stock: P0 leads AC and
    holds every other club and ace, so nobody else can follow."""
    non_matching = [r + s for s in "DHS" for r in RANKS[:-1]] * 2  # no club, no ace: 72 cards
    p0 = [*(["AC", *[r + "C" for r in RANKS[:-1]], "AD", "AH", "AS"] * 2), *non_matching[:2]]
    hands = [p0, non_matching[2:36], non_matching[36:70]]
    cfg = GameConfig(variant="classic", num_players=3, hand_size=34, num_decks=2)
    return make_hand(cfg, hands, non_matching[70:], dealer=2)


def test_r1_6_stock_runs_out_mid_draw_then_pass_on_empty_stock() -> None:
    hand = _stock_runs_out_hand()
    play(hand, "AC")
    assert legal_codes(hand) == ["draw"] and stock_codes(hand) == ["QS", "KS"]
    play(hand, "draw")
    assert hand.events[-2:] == [ev("draw", 1, 2), ev("pass", 1)]  # drew QS and KS, neither matched
    assert {"QS", "KS"} <= set(codes(hand, 1)) and hand.sizes[1] == 36 and hand.drawn[1] == 2
    assert hand.trick[1] == PASSED and not hand.stock
    assert legal_codes(hand) == ["draw"]
    play(hand, "draw")  # the stock is empty: a plain pass, no draw event
    assert hand.events[-2:] == [ev("pass", 2), ev("trick", 0)] and hand.sizes[2] == 34 and hand.drawn[2] == 0


def test_r1_7_leader_wins_when_every_other_player_passed() -> None:
    hand = _stock_runs_out_hand()
    play(hand, "AC", "draw", "draw")
    assert hand.events[-1] == ("trick", 0)
    assert (hand.current, hand.phase) == (0, Phase.LEAD)


def test_r1_7_two_identical_cards_first_played_wins() -> None:
    cfg = GameConfig(variant="classic", num_players=7, hand_size=2)
    assert cfg.num_decks == 2
    hands = [["9H", "2C"], ["KH", "3C"], ["KH", "4C"], ["2H", "5C"], ["3H", "6C"], ["4H", "7C"], ["5H", "8C"]]
    hand = make_hand(cfg, hands, dealer=6)
    play(hand, "9H", "KH")
    assert legal_codes(hand) == ["KH"]
    play(hand, "KH", "2H", "3H", "4H", "5H")
    assert hand.events[-1] == ("trick", 1)


@pytest.mark.parametrize(
    ("cards", "winner"),
    [(["9H", "9S", "9D"], 0), (["3H", "3S", "2H"], 0), (["3H", "3S", "4H"], 2), (["5D", "5S", "5C"], 0)],
)
def test_r1_7_off_suit_card_never_wins(cards: list[str], winner: int) -> None:
    filler = ["2C", "3C", "4C"] if "5C" not in cards else ["2S", "3S", "4S"]
    filler = [f for f in filler if f not in cards]
    hands = [[card, filler[i % len(filler)]] for i, card in enumerate(cards)]
    hand = make_hand(CLASSIC3, hands, dealer=2)
    play(hand, *cards)
    assert hand.events[-1] == ("trick", winner)


def test_r1_8_trick_cards_are_public_and_winner_leads() -> None:
    hand = make_hand(CLASSIC3, [["5H", "KC"], ["2C", "3D"], ["9H", "4S"]], ["7C", "8S", "JH", "6D"], dealer=2)
    play(hand, "5H", "draw", "9H")
    assert hand.events[-1] == ("trick", 1)
    assert sorted(code_of(f) for f in range(53) if hand.seen[f]) == ["5H", "9H", "JH"]
    assert (hand.current, hand.phase, hand.trick) == (1, Phase.LEAD, [NOT_PLAYED] * 3)
    assert set(legal_codes(hand)) == {"2C", "3D", "7C", "8S"}


def test_r1_9_hand_ends_on_the_lead() -> None:
    hand = make_hand(CLASSIC3, [["5H", "2C"], ["9H", "3C"], ["KH", "4D"]], dealer=2)
    play(hand, "5H", "9H", "KH", "4D")  # P2 wins the trick and leads its last card
    assert hand.events[-3:] == [ev("trick", 2), ev("play", 2, "4D"), ev("out", 2)]
    assert (hand.over, hand.winner, hand.winners(), hand.legal_actions()) == (True, 2, [2], [])
    with pytest.raises(IllegalActionError, match="the hand is over"):
        hand.apply(0)


def _mid_trick_hand(cfg: GameConfig = CLASSIC3) -> list[str]:
    """Deck where P2 goes out in the middle of the second trick (P0 never plays to it)."""
    return deck_for(cfg, [["5H", "8D"], ["3C", "2S"], ["9H", "4C"]], ["7C", "KH"], dealer=2)


def test_r1_9_hand_ends_mid_trick() -> None:
    hand = Hand(CLASSIC3, [face_of(c) for c in _mid_trick_hand()], dealer=2)
    play(hand, "5H", "draw", "9H")
    assert hand.events[-1] == ("trick", 1) and set(legal_codes(hand)) == {"2S", "3C", "7C"}
    play(hand, "3C")
    assert legal_codes(hand) == ["4C"]
    play(hand, "4C")
    assert hand.events[-3:] == [ev("play", 1, "3C"), ev("play", 2, "4C"), ev("out", 2)]
    assert hand.over and hand.winner == 2 and hand.trick[0] == NOT_PLAYED  # trick abandoned
    assert hand.seen[face_of("3C")] == hand.seen[face_of("4C")] == 1  # its cards stay out of the game
    assert hand.hand_points() == [8, 9, 0]


def test_r1_10_classic_card_points() -> None:
    expected = {"2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "T": 10, "J": 10, "Q": 10,
                "K": 10, "A": 1}
    for s in SUITS:
        for r, pts in expected.items():
            assert CLASSIC_POINTS[face_of(r + s)] == pts
    hand = make_hand(GameConfig(variant="classic", num_players=2, hand_size=4), [["AS", "KD", "TC", "9H"],
                                                                                ["2C", "QH", "JS", "5D"]])
    assert hand.hand_points() == [30, 27]


def _play_mid_trick(match: Match) -> None:
    play(match.hand, "5H", "draw", "9H", "3C", "4C")


def test_r1_11_standard_scoring_winner_takes_all() -> None:
    assert score_deltas(GameConfig(), 1, [5, 0, 7, 3]) == [0, 15, 0, 0]
    cfg = CLASSIC3.replace(target_score=17)
    match = Match(cfg, np.random.default_rng(0), deck=_mid_trick_hand(cfg), dealer=2)
    _play_mid_trick(match)
    result = match.finish_hand()
    assert (result.score_deltas, result.winners, match.scores) == ((0, 0, 17), (2,), [0, 0, 17])
    assert match.over and match.winners == [2]  # 17 >= target 17
    not_yet = Match(CLASSIC3.replace(target_score=18), np.random.default_rng(0), deck=_mid_trick_hand(cfg), dealer=2)
    _play_mid_trick(not_yet)
    not_yet.finish_hand()
    assert not not_yet.over and not_yet.winners == [] and not_yet.hand.dealer == 0
    assert match_winners(GameConfig(), [150, 200, 10, 0], 9) == [1]
    assert match_winners(GameConfig(), [150, 199, 10, 0], 9) == []
    assert GameConfig().target_score == 200


def test_r1_12_reverse_scoring_lowest_total_wins() -> None:
    cfg = CLASSIC3.replace(scoring="reverse", target_score=9)
    assert GameConfig(scoring="reverse").target_score == 100
    match = Match(cfg, np.random.default_rng(0), deck=_mid_trick_hand(cfg), dealer=2)
    _play_mid_trick(match)
    assert match.finish_hand().score_deltas == (8, 9, 0)  # own points; the winner adds 0
    assert match.over and match.winners == [2]
    tied = Match(cfg, np.random.default_rng(0), deck=_mid_trick_hand(cfg), dealer=2)
    tied.scores = [0, 0, 8]  # forced earlier totals
    _play_mid_trick(tied)
    tied.finish_hand()
    assert tied.scores == [8, 9, 8] and tied.winners == [0, 2]  # co-winners
    later = Match(cfg.replace(target_score=10), np.random.default_rng(0), deck=_mid_trick_hand(cfg), dealer=2)
    _play_mid_trick(later)
    later.finish_hand()
    assert not later.over
    assert match_winners(cfg.replace(target_score=100), [100, 40, 40, 99], 3) == [1, 2]


# -- R2: jokers Go Boom ------------------------------------------------------------------------------


def test_r2_1_jokers_setup_and_stock_limit() -> None:
    cfg = GameConfig(variant="jokers", num_players=4)
    assert (cfg.num_jokers, cfg.num_decks, cfg.deck_size, cfg.scoring) == (2, 1, 54, "penalty")
    assert GameConfig(variant="jokers", num_players=2).num_players == 2
    assert GameConfig(variant="jokers", num_players=3, num_jokers=9).deck_size == 61
    assert GameConfig(variant="jokers", num_players=4, hand_size=12).hand_size == 12
    with pytest.raises(ValueError, match=r"hand_size must be in 1\.\.12"):
        GameConfig(variant="jokers", num_players=4, hand_size=13)
    # 3 x 17 = 51 cards dealt leaves exactly one non-joker: five jokers above it are all buried
    big = GameConfig(variant="jokers", num_players=3, hand_size=17, num_jokers=5)
    deck = [code_of(f) for f in range(51)] + ["JK"] * 5 + ["AS"]
    hand = Hand(big, [face_of(c) for c in deck], dealer=0)
    assert hand.events == [ev("bury", "JK")] * 5 + [ev("upcard", "AS")] and hand.stock == [JOKER] * 5


def test_r2_2_rounds_rotation_and_blocked_rounds_count() -> None:
    cfg = GameConfig(variant="jokers", num_players=3)
    assert cfg.rounds == 3 and cfg.target_score is None
    rng = np.random.default_rng(3)
    blocked_seen = False
    for _ in range(60):
        match = Match(cfg, rng)
        first = match.hand.dealer
        while not match.over:
            for _ in random_hand_steps(match.hand, rng):
                pass
            match.finish_hand()
        assert match.hands_played == 3 and match.winners
        assert [r.dealer for r in match.results] == [(first + i) % 3 for i in range(3)]
        blocked_seen |= any(r.blocked for r in match.results)
    assert blocked_seen
    one = Match(cfg.replace(rounds=1), rng)
    one.hand = _blocked_state()
    play(one.hand, "draw", "draw", "draw")
    one.finish_hand()
    assert one.over and one.results[0].blocked and one.winners == [0, 1]


def test_r2_3_joker_upcards_are_buried_at_the_bottom() -> None:
    hand = make_hand(JOKERS3, [["2C", "3C"], ["4C", "5C"], ["6C", "7C"]], ["JK", "JK", "7D", "8C"], dealer=2)
    assert hand.events == [ev("bury", "JK"), ev("bury", "JK"), ev("upcard", "7D")]
    assert hand.stock[:2] == [JOKER, JOKER] and hand.stock[-1] == face_of("8C") and len(hand.stock) == 47
    assert (hand.top, hand.match_face) == (face_of("7D"), face_of("7D"))
    assert [code_of(f) for f in range(53) if hand.seen[f]] == ["7D"]


def test_r2_3_ace_upcard_in_aces_mode_is_an_ordinary_match_card() -> None:
    hand = make_hand(ACES3, [["5H", "9D"], ["4C", "5C"], ["6C", "7C"]], ["AH", "8C"], dealer=2)
    assert hand.events == [ev("upcard", "AH")]
    assert (hand.sizes, hand.drawn, hand.match_face) == ([2, 2, 2], [0, 0, 0], face_of("AH"))
    assert legal_codes(hand) == ["5H"]


@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_r2_4_left_of_dealer_plays_first(dealer: int) -> None:
    hand = make_hand(JOKERS3, [["2C", "3C"], ["4C", "5C"], ["6C", "7C"]], ["8C"], dealer=dealer)
    assert hand.current == (dealer + 1) % 3 and hand.phase == Phase.DISCARD


def test_r2_5_match_the_topmost_non_joker() -> None:
    cfg = GameConfig(variant="jokers", num_players=3, hand_size=3)
    hand = make_hand(cfg, [["7S", "2D", "KC"], ["JK", "9D", "3H"], ["QD", "4S", "5C"]], ["7D", "8H", "9H"], dealer=2)
    assert set(legal_codes(hand)) == {"7S", "2D"}
    play(hand, "2D")
    assert set(legal_codes(hand)) == {"9D", "JK"}
    play(hand, "JK")
    assert hand.events[-4:] == [ev("play", 1, "JK"), ev("boom", 1), ev("draw", 2, 1), ev("draw", 0, 1)]
    assert (hand.top, hand.match_face) == (JOKER, face_of("2D"))
    assert codes(hand, 2) == ["4S", "5C", "8H", "QD"] and legal_codes(hand) == ["QD"]
    play(hand, "QD")
    assert (hand.top, hand.match_face) == (face_of("QD"), face_of("QD"))


def _boom_hand() -> Hand:
    """Jokers 3 x 17 cards, 3 jokers: up-card 2C, then KS, AS, JK in the stock. P0 and P1 cannot
    match, P2 holds every matching card plus two jokers."""
    non_matching = [r + s for s in "DHS" for r in RANKS[1:]]  # no club, no 2: 36 cards
    matching = [r + "C" for r in RANKS[1:]] + ["2D", "2H", "2S"]
    cfg = GameConfig(variant="jokers", num_players=3, hand_size=17, num_jokers=3)
    hands = [non_matching[:17], non_matching[17:34], ["JK", "JK", *matching]]
    return make_hand(cfg, hands, ["2C", *non_matching[34:], "JK"], dealer=2)


def test_r2_6_boom_draws_clockwise_while_the_stock_lasts() -> None:
    hand = _boom_hand()
    play(hand, "draw", "draw")  # P0 draws KS, P1 draws AS: one JK left in the stock
    assert len(hand.stock) == 1 and legal_codes(hand)[-1] == "JK" and len(legal_codes(hand)) == 16  # no draw
    play(hand, "JK")
    assert hand.events[-3:] == [ev("play", 2, "JK"), ev("boom", 2), ev("draw", 0, 1)]  # P1 gets nothing
    assert hand.sizes == [19, 18, 16] and not hand.stock
    assert (hand.top, hand.match_face) == (JOKER, face_of("2C"))
    assert legal_codes(hand) == ["JK", "draw"]  # P0 drew the joker; never compulsory
    play(hand, "JK")  # a boom on an empty stock makes nobody draw
    assert hand.events[-2:] == [ev("play", 0, "JK"), ev("boom", 0)] and hand.sizes == [18, 18, 16]
    assert hand.match_face == face_of("2C") and legal_codes(hand) == ["draw"]


def _after_joker_state(after_joker: str, stock: list[str]) -> Hand:
    cfg = GameConfig(variant="jokers", num_players=3, hand_size=2, num_jokers=3, after_joker=after_joker)
    return jokers_state(cfg, [["JK", "JK"], ["2C", "3S"], ["4H", "KS"]], stock, top="JK", match="7D")


def test_r2_6_after_joker_any_lets_any_card_follow() -> None:
    hand = _after_joker_state("any", ["8C", "9C"])
    assert legal_codes(hand) == ["JK", "draw"]
    play(hand, "draw")  # drew 8C; the turn ends even though it could be played
    assert hand.current == 1 and set(legal_codes(hand)) == {"2C", "3S"}  # a joker is still on top
    play(hand, "3S")
    assert (hand.top, hand.match_face) == (face_of("3S"), face_of("3S")) and legal_codes(hand) == ["KS"]
    empty = _after_joker_state("any", [])
    play(empty, "draw")  # a pass on the empty stock keeps the joker on top too
    assert empty.events[-1] == ev("pass", 0) and set(legal_codes(empty)) == {"2C", "3S"}
    rules = _after_joker_state("match", ["8C", "9C"])
    play(rules, "draw")
    assert legal_codes(rules) == ["draw"]  # default: follow the 7D under the joker


def test_r2_6_after_joker_any_has_no_effect_in_aces_mode() -> None:
    cfg = GameConfig(variant="jokers", num_players=3, hand_size=2, num_jokers=0, after_joker="any")
    hand = jokers_state(cfg, [["2C", "5H"], ["3C", "4C"], ["6C", "7C"]], ["8C"], top="AH")
    assert legal_codes(hand) == ["5H"]


@pytest.mark.parametrize(
    ("cfg", "seat0", "upcard", "legal"),
    [
        (JOKERS3, ["2C", "3S"], "7D", ["draw"]),
        (JOKERS3, ["JK", "3S"], "7D", ["JK", "draw"]),  # a boom card never forces a play
        (JOKERS3, ["7S", "JK"], "7D", ["7S", "JK"]),  # a matching non-boom card forbids drawing
        (JOKERS3, ["8D", "3S"], "7D", ["8D"]),
        (ACES3, ["AH", "3S"], "5H", ["AH", "draw"]),  # the ace matches by suit, yet may be kept
        (ACES3, ["AH", "5S"], "5H", ["AH", "5S"]),
        (ACES3, ["AD", "AH"], "5H", ["AD", "AH", "draw"]),
    ],
    ids=["no-match", "joker-only", "match-and-joker", "match", "ace-suit", "ace-and-match", "two-aces"],
)
def test_r2_7_draw_only_without_a_matching_non_boom_card(
    cfg: GameConfig, seat0: list[str], upcard: str, legal: list[str]
) -> None:
    hand = make_hand(cfg, [seat0, *OTHERS], [upcard, "8H"], dealer=2)
    assert legal_codes(hand) == legal


def test_r2_7_draw_one_card_and_end_the_turn() -> None:
    hand = make_hand(JOKERS3, [["2C", "3S"], *OTHERS], ["7D", "8D", "9D"], dealer=2)
    play(hand, "draw")  # 8D would match 7D, but the turn is over
    assert hand.events[-1] == ev("draw", 0, 1) and hand.current == 1
    assert codes(hand, 0) == ["2C", "3S", "8D"] and hand.drawn == [1, 0, 0] and hand.stock[-1] == face_of("9D")


def test_r2_8_aces_boom_and_become_the_match_card() -> None:
    hand = make_hand(ACES3, [["AS", "9C"], ["KS", "2D"], ["4H", "6C"]], ["5H", "8S", "3D"], dealer=2)
    assert legal_codes(hand) == ["AS", "draw"]
    play(hand, "AS")
    assert hand.events[-4:] == [ev("play", 0, "AS"), ev("boom", 0), ev("draw", 1, 1), ev("draw", 2, 1)]
    assert (hand.top, hand.match_face) == (face_of("AS"), face_of("AS"))
    assert legal_codes(hand) == ["8S", "KS"]
    play(hand, "KS")
    assert legal_codes(hand) == ["draw"]


@pytest.mark.parametrize(("cfg", "boom"), [(JOKERS3.replace(hand_size=1), "JK"), (ACES3.replace(hand_size=1), "AS")])
def test_r2_9_boom_as_last_card_others_draw_first(cfg: GameConfig, boom: str) -> None:
    hand = make_hand(cfg, [[boom], ["2C"], ["3C"]], ["7D", "8D", "9D"], dealer=2)
    play(hand, boom)
    assert hand.events[1:] == [ev("play", 0, boom), ev("boom", 0), ev("draw", 1, 1), ev("draw", 2, 1), ev("out", 0)]
    assert hand.over and hand.winner == 0 and hand.hand_points() == [0, 2 + 8, 3 + 9]


def _blocked_state() -> Hand:
    """Jokers, empty stock, match card 2C: nobody can match; P2 may still boom."""
    return jokers_state(JOKERS3, [["3S", "4S"], ["4H", "3D"], ["8H", "JK"]], [], top="2C")


def test_r2_10_blocked_after_n_consecutive_passes() -> None:
    hand = _blocked_state()
    assert [legal_codes(hand)] == [["draw"]]
    play(hand, "draw", "draw")
    assert legal_codes(hand) == ["JK", "draw"] and hand.passes == 2
    play(hand, "JK")  # any play resets the count
    assert hand.passes == 0 and hand.events[-2:] == [ev("play", 2, "JK"), ev("boom", 2)]
    play(hand, "draw", "draw")
    assert not hand.over and hand.winners() == []
    play(hand, "draw")
    assert hand.events[-2:] == [ev("pass", 2), ("blocked",)]
    assert hand.over and hand.blocked and hand.winner is None and hand.legal_actions() == []
    assert hand.hand_points() == [7, 7, 8] and hand.winners() == [0, 1]  # fewest points: co-winners
    assert win_rewards(3, hand.winners()) == [0.25, 0.25, -0.5]


def test_r2_11_penalty_points() -> None:
    expected = {"A": 15, "K": 10, "Q": 10, "J": 10, "T": 10, "9": 9, "2": 2}
    assert all(JOKERS_POINTS[face_of(r + s)] == p for r, p in expected.items() for s in SUITS)
    assert JOKERS_POINTS[JOKER] == 20
    hand = jokers_state(JOKERS3, [["JK", "AS", "KD"], ["TC", "9H", "2S"], ["5C"]], ["8C"], top="7D")
    assert hand.hand_points() == [45, 21, 5]
    cfg = JOKERS3.replace(hand_size=1)
    out = make_hand(cfg, [["JK"], ["2C"], ["3C"]], ["7D", "8D", "9D"], dealer=2)
    play(out, "JK")
    assert score_deltas(cfg, out.winner, out.hand_points()) == [0, 10, 12]
    blocked = _blocked_state()
    play(blocked, "draw", "draw", "draw")
    assert score_deltas(JOKERS3, None, blocked.hand_points()) == [7, 7, 28]  # everybody adds


def test_r2_12_lowest_total_after_the_last_round_wins() -> None:
    cfg = JOKERS3.replace(hand_size=1, rounds=1)
    deck = deck_for(cfg, [["JK"], ["2C"], ["3C"]], ["7D", "8D", "9D"], dealer=2)
    match = Match(cfg, np.random.default_rng(0), deck=deck, dealer=2)
    play(match.hand, "JK")
    match.finish_hand()
    assert match.over and match.scores == [0, 10, 12] and match.winners == [0]
    tied = Match(cfg, np.random.default_rng(0), deck=deck, dealer=2)
    tied.scores = [10, 0, 0]  # forced earlier totals
    play(tied.hand, "JK")
    tied.finish_hand()
    assert tied.scores == [10, 10, 12] and tied.winners == [0, 1]
    two = Match(cfg.replace(rounds=2), np.random.default_rng(0), deck=deck, dealer=2)
    play(two.hand, "JK")
    two.finish_hand()
    assert not two.over and two.hand.dealer == 0
    assert match_winners(cfg.replace(rounds=4), [30, 12, 12, 40], 4) == [1, 2]
    assert match_winners(cfg.replace(rounds=4), [30, 12, 12, 40], 3) == []


# -- R3: actions; R4: information ------------------------------------------------------------------


def test_r3_1_action_layout() -> None:
    assert (NUM_ACTIONS, DRAW_OR_PASS, JOKER) == (54, 53, 52)
    cfg = GameConfig(variant="classic", num_players=7, hand_size=3)
    hands = [["KH", "KH", "2C"]] + [[f"{r}S", f"{r}D", f"{r}C"] for r in "345678"]
    hand = make_hand(cfg, hands, dealer=6)
    hand.apply(np.int64(face_of("KH")))  # face actions: one of the two identical cards
    assert codes(hand, 0) == ["2C", "KH"] and hand.trick[0] == face_of("KH")
    for bad in ("KH", True, 1.0, None):
        with pytest.raises(IllegalActionError, match="must be an integer"):
            hand.apply(bad)
    for bad in (-1, 54, 99):
        with pytest.raises(IllegalActionError, match="not legal for seat 1"):
            hand.apply(bad)


def test_r3_2_legal_actions_exact_and_never_empty() -> None:
    hand = make_hand(CLASSIC3, [["5H", "KC"], ["2C", "3D"], ["9H", "4S"]], ["7C", "8S", "JH", "6D"], dealer=2)
    with pytest.raises(IllegalActionError, match=r"action 51 is not legal for seat 0; legal actions: \[11, 29\]"):
        hand.apply(face_of("AS"))
    assert hand.legal_mask() == (1 << face_of("KC")) | (1 << face_of("5H"))
    rng = np.random.default_rng(5)
    for cfg in (GameConfig(variant="classic", num_players=5), GameConfig(variant="jokers", num_players=4)):
        for _ in range(30):
            game = Match(cfg, rng).hand
            while not game.over:
                legal = game.legal_actions()
                assert legal and all(0 <= a <= DRAW_OR_PASS for a in legal)
                game.apply(legal[int(rng.integers(len(legal)))])
            assert game.legal_actions() == [] and game.legal_mask() == 0


def test_r4_1_draw_events_never_name_the_drawn_cards() -> None:
    def events(stock: list[str]) -> list[tuple]:
        hand = make_hand(CLASSIC3, [["5H", "KC"], ["2C", "3D"], ["9H", "4S"]], stock, dealer=2)
        play(hand, "5H", "draw", "9H")
        return hand.events

    assert events(["7C", "8S", "JH", "6D"]) == events(["8S", "7C", "JH", "6D"])  # only counts are public
    for stock in (["7D", "8D"], ["7D", "QS"]):
        hand = make_hand(JOKERS3, [["2C", "3S"], *OTHERS], stock, dealer=2)
        play(hand, "draw")
        assert hand.events == [ev("upcard", "7D"), ev("draw", 0, 1)]
