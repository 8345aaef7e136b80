"""The net value of luck-adjusted evaluation (goboom_env.evaluation.luck_net): deterministic for a seed, values that
sum to 1 and rotate with the seats, blind to the stock's order, draw corrections of zero mean over random stocks,
and adjusted win rates that agree with the raw ones. Trained on few hands: the tests check the contract, not the
fit's quality."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from goboom_env.cards import deck_faces
from goboom_env.config import GameConfig
from goboom_env.engine import Hand
from goboom_env.evaluation.luck import ModelValue, deal_term, draw_term, luck_adjust
from goboom_env.evaluation.luck_net import NetValue, net_features, net_value, net_width, settle
from goboom_env.evaluation.tournament import run_tournament

CLASSIC4 = GameConfig(variant="classic", num_players=4)
JOKERS4 = GameConfig(variant="jokers", num_players=4)
NET_HANDS = 300
"""A quick training (about a second)."""


def dealt(config: GameConfig, seed: int, dealer: int = 0) -> Hand:
    rng = np.random.default_rng(seed)
    faces = deck_faces(config.num_decks, config.num_jokers)
    return Hand(config, [faces[i] for i in rng.permutation(len(faces))], dealer)


def played(config: GameConfig, seed: int, dealer: int, moves: int) -> Hand:
    """The hand dealt from ``seed`` and ``dealer`` after ``moves`` plays of the heuristic (settle's own)."""
    hand = dealt(config, seed, dealer)
    for _ in range(moves):
        hand = settle(hand, 1) if not hand.over else hand
    return hand


def test_the_net_value_is_deterministic_for_a_seed():
    first = net_value(CLASSIC4, NET_HANDS, 3)
    net_value.cache_clear()
    again = net_value(CLASSIC4, NET_HANDS, 3)
    assert first is not again and isinstance(first, NetValue)
    for (w, b), (w2, b2) in zip(first.layers, again.layers, strict=True):
        np.testing.assert_array_equal(w, w2)
        np.testing.assert_array_equal(b, b2)
    np.testing.assert_array_equal(first.skip, again.skip)
    other = net_value(CLASSIC4, NET_HANDS, 4)
    assert not np.array_equal(first.layers[0][0], other.layers[0][0])
    hand = dealt(CLASSIC4, 1)
    np.testing.assert_array_equal(first.value(hand), again.value(hand))


@pytest.mark.parametrize("config", [CLASSIC4, JOKERS4, GameConfig(variant="classic", num_players=2)],
                         ids=["classic 4p", "jokers 4p", "classic 2p"])
def test_the_values_sum_to_one_and_rotate_with_the_seats(config):
    """The same deck dealt by the next dealer is the same hand one seat on: the values (with and without the
    lookahead) move one seat on too, so the deal's correction averages to exactly zero over the dealers."""
    value = net_value(config, NET_HANDS)
    n = config.num_players
    assert net_features(dealt(config, 0)).shape == (n, net_width(n))
    for moves in (0, 3, 7):
        for look in (0, value.lookahead):
            v = replace(value, lookahead=look)
            rows = [v.value(played(config, 5, dealer, moves)) for dealer in range(n)]
            for dealer in range(n):
                assert rows[dealer].sum() == pytest.approx(1.0, abs=1e-9)
                np.testing.assert_allclose(np.roll(rows[0], dealer), rows[dealer], atol=1e-12)
    terms = [deal_term(ModelValue(value), dealt(config, 7, dealer), 0, 0) for dealer in range(n)]
    np.testing.assert_allclose(np.mean(terms, axis=0), 0.0, atol=1e-12)


def test_the_net_value_knows_the_stock_cards_not_their_order_and_draws_average_to_zero():
    value = net_value(CLASSIC4, NET_HANDS)
    hand = played(CLASSIC4, 2, 0, 4)
    shuffled = hand.copy()
    shuffled.stock = list(np.random.default_rng(2).permutation(shuffled.stock).tolist())
    assert shuffled.stock != hand.stock
    np.testing.assert_array_equal(value.value(hand), value.value(shuffled))
    while hand.legal_mask() != 1 << 53:  # up to a forced draw
        hand = settle(hand, 1) if not hand.over else dealt(CLASSIC4, 9)
    terms = []
    for seed in range(300):  # the actual stock uniformly random, the expectation's orders keyed from the seed
        state = hand.copy()
        state.stock = list(np.random.default_rng([seed, 99]).permutation(hand.stock).tolist())
        terms.append(draw_term(ModelValue(value, 8), state, 0, 53, seed))
    terms = np.array(terms)
    error = terms.std(axis=0, ddof=1) / np.sqrt(len(terms))
    assert np.all(np.abs(terms.mean(axis=0)) <= 5 * error) and np.abs(terms).max() > 0


@pytest.mark.slow  # hundreds of tournament hands, each replayed and valued at every event (5 s a configuration)
@pytest.mark.parametrize("config,evaluated,baseline", [(CLASSIC4, "classic-cover", "classic-tricks"),
                                                       (JOKERS4, "jokers-shed", "jokers-boom")],
                         ids=["classic 4p", "jokers 4p"])
def test_adjusted_and_raw_win_rates_agree(config, evaluated, baseline):
    """A few hundred duplicate hands: the adjusted and raw means agree within their intervals, every game's adjusted
    outcomes sum to 1."""
    n = config.num_players
    result = run_tournament(config, [evaluated] + [baseline] * (n - 1), 50 * n, seed=5, duplicate=True,
                            episode="hand", progress=False)
    luck = luck_adjust(result, value="net", net_hands=NET_HANDS, progress=False)
    assert luck.value == "net" and luck.corrected == (evaluated, baseline)
    for game in luck.games:
        assert abs(sum(game.adjusted) - 1) < 1e-9
    for row in luck.table():
        half = (row["raw_ci_high"] - row["raw_ci_low"] + row["adjusted_ci_high"] - row["adjusted_ci_low"]) / 2
        assert abs(row["adjusted_win_rate"] - row["raw_win_rate"]) <= half


def test_the_draw_consistency_pulls_the_value_before_a_draw_to_the_mean_after_it():
    """The training's draw term: the states before a draw come with settled states after it (the win shares where
    the hand ends), and weighting the term makes the value before a draw closer to the mean after it."""
    from goboom_env.evaluation.luck_net import _forward, train_mlp, training_pairs

    features, paired, targets, chains, fixed = training_pairs(CLASSIC4, 200, 1, keep_draws=0.5, successors=4)
    assert chains.shape[1:] == (5, 4, net_width(4)) and fixed.shape == chains.shape[:3]
    assert np.isnan(fixed[:, 0]).all()  # the state before a draw is running
    over = ~np.isnan(fixed[:, 1:, 0])
    np.testing.assert_allclose(fixed[:, 1:][over].sum(axis=-1), 1.0)

    def gap(draw_consistency: float) -> float:
        layers, skip = train_mlp(features, targets, 0, paired=paired, consistency=5.0, chains=(chains, fixed),
                                 draw_consistency=draw_consistency)
        params = [layers[0][0], layers[0][1], layers[1][0], layers[1][1], layers[2][0], layers[2][1], skip]
        p, _ = _forward(params, chains)
        v = np.where(np.isnan(fixed), p, np.nan_to_num(fixed))
        return float(((v[:, 0] - v[:, 1:].mean(axis=1)) ** 2).mean())

    assert gap(20.0) < 0.95 * gap(0.0)  # the rest is mostly the noise of a mean over four successors
