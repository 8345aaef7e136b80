"""Luck-adjusted evaluation (goboom_env.evaluation.luck): each correction has zero mean: the sampled stock orders are
uniformly random (counted over every order of a small stock), a draw's expectation is the mean over them, a
decision's over the policy, and on fixed states the terms average to zero over the event's outcomes; adjusted and raw
win rates agree on every family of configurations; known answers (parity of an agent against itself); the records
path gives the same figures; bad input is refused."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from goboom_env.agents import ClassicTricksAgent, JokersBoomAgent, RandomAgent, register_agent, unregister_agent
from goboom_env.agents.rollout import classic_cover_move
from goboom_env.cards import DRAW_OR_PASS, JOKER, deck_faces
from goboom_env.config import GameConfig
from goboom_env.engine import Hand, Match
from goboom_env.evaluation.luck import (
    RolloutValue,
    deal_term,
    decision_term,
    draw_term,
    keyed_stock,
    luck_adjust,
    luck_adjust_records,
    playout_seed,
    policy_move,
    stock_keys,
    uncertain_draw,
)
from goboom_env.evaluation.tournament import TournamentResult, record_games, run_tournament
from goboom_env.observation import observe
from goboom_env.records import read, write

CLASSIC4 = GameConfig(variant="classic", num_players=4)
FAMILIES = {
    "classic 4p": (CLASSIC4, "classic-cover", "classic-tricks"),
    "classic 2p": (GameConfig(variant="classic", num_players=2), "classic-cover", "classic-tricks"),
    "reverse": (GameConfig(variant="classic", num_players=3, scoring="reverse"), "random", "classic-tricks"),
    "jokers 4p": (GameConfig(variant="jokers", num_players=4), "jokers-shed", "jokers-boom"),
    "aces mode": (GameConfig(variant="jokers", num_players=3, num_jokers=0), "random", "jokers-boom"),
}


def against_baseline(config: GameConfig, evaluated: str, baseline: str, deals: int, seed: int) -> TournamentResult:
    """A duplicate tournament of single hands, ``evaluated`` in the first seat and ``baseline`` in every other:
    ``deals`` deals, each played once per seat rotation."""
    n = config.num_players
    return run_tournament(config, [evaluated] + [baseline] * (n - 1), deals * n, seed=seed, duplicate=True,
                          episode="hand", progress=False)


def dealt(config: GameConfig, seed: int, dealer: int = 0) -> Hand:
    rng = np.random.default_rng(seed)
    faces = deck_faces(config.num_decks, config.num_jokers)
    return Hand(config, [faces[i] for i in rng.permutation(len(faces))], dealer)


def with_top(hand: Hand, card: int) -> Hand:
    """The same state with ``card`` (one copy of it) next on the stock."""
    other = hand.copy()
    stock = list(other.stock)
    stock.remove(card)
    other.stock = [*stock, card]
    return other


def first_draw(config: GameConfig, seed: int) -> tuple[Hand, int]:
    """A classic hand played by ``classic-tricks`` up to the first time a seat must draw."""
    match = Match(config, np.random.default_rng(seed))
    hand, agent = match.hand, ClassicTricksAgent(config, seed)
    while hand.legal_mask() != 1 << DRAW_OR_PASS:
        hand.apply(agent.act(observe(match, hand.current)))
    return hand, DRAW_OR_PASS


def shuffled_draw_terms(value: RolloutValue, hand: Hand, action: int, seeds: range) -> np.ndarray:
    """The corrections of ``action``'s draw, once per seed: the actual stock in a uniformly random order and the
    expectation's orders keyed from that seed, ``(len(seeds), n)``."""
    terms = []
    for seed in seeds:
        state = hand.copy()
        state.stock = list(np.random.default_rng([seed, 99]).permutation(hand.stock).tolist())
        terms.append(draw_term(value, state, 0, action, seed))
    return np.array(terms)


def assert_zero_mean(terms: np.ndarray) -> None:
    """Each seat's mean term within five standard errors of zero (deterministic seeds: no flaky run), and the terms
    do move the values."""
    mean, error = terms.mean(axis=0), terms.std(axis=0, ddof=1) / np.sqrt(len(terms))
    assert np.all(np.abs(mean) <= 5 * error + 1e-12), (mean, error)
    assert np.abs(terms).max() > 0


def test_the_keyed_stock_orders_are_uniformly_random():
    """Every order of a small stock (two copies of one face among them, as with two decks) comes equally often, and
    the buried jokers stay at the bottom: what makes the mean over the sampled orders an unbiased expectation."""
    config = GameConfig(variant="classic", num_players=8)
    hand = dealt(config, 0)
    a, b, c = hand.stock[-1], hand.stock[-2], hand.stock[-3]
    hand.stock = [JOKER, JOKER, a, b, b, c]  # two buried jokers under four unknown cards
    counts = Counter(tuple(keyed_stock(hand, 2, stock_keys(seed, 0, 2))) for seed in range(6000))
    assert len(counts) == 12  # 4! / 2! orders of the unknown cards
    assert all(order[:2] == (JOKER, JOKER) for order in counts)
    expected, spread = 6000 / 12, np.sqrt(6000 / 12 * 11 / 12)
    assert all(abs(n - expected) < 5 * spread for n in counts.values()), counts
    assert keyed_stock(hand, 2, stock_keys(1, 0, 2)) == keyed_stock(hand, 2, stock_keys(1, 0, 2))
    assert keyed_stock(hand, 2, stock_keys(1, 0, 2)) != keyed_stock(hand, 2, stock_keys(1, 1, 2))


def test_a_value_knows_the_stock_cards_not_their_order():
    """The value of a state is a function of what the engine knows before a draw: which cards are in the stock,
    not in which order (else a draw's correction would see the card before it is drawn)."""
    hand, _ = first_draw(CLASSIC4, 1)
    shuffled = hand.copy()
    shuffled.stock = list(np.random.default_rng(2).permutation(shuffled.stock).tolist())
    assert shuffled.stock != hand.stock
    value = RolloutValue(CLASSIC4, 3)
    np.testing.assert_array_equal(value.value(hand, 0, 5), value.value(shuffled, 0, 5))
    np.testing.assert_array_equal(value.expected(hand, 0, DRAW_OR_PASS, 5),
                                  value.expected(shuffled, 0, DRAW_OR_PASS, 5))


@pytest.mark.parametrize("seed", [0, 3])
def test_a_draws_correction_averages_to_zero_over_the_cards_it_could_draw(seed):
    """One chance event, a whole classic draw (every card until one matches): over uniformly random stocks its
    correction averages to zero, and the corrections of the seats sum to zero (win shares sum to 1)."""
    hand, action = first_draw(CLASSIC4, seed)
    terms = shuffled_draw_terms(RolloutValue(CLASSIC4, 2), hand, action, range(300))
    assert_zero_mean(terms)
    assert np.abs(terms.sum(axis=1)).max() < 1e-12


@pytest.mark.parametrize("seed", [0, 3])
def test_seated_playouts_keep_a_draws_correction_at_zero_mean(seed):
    """The playouts with each seat's own agent (the engine form of a heuristic, or any agent on its observations)
    value states differently from the heuristic's, are still a function of the seed, and keep every draw's
    correction at zero mean over random stocks."""
    hand, action = first_draw(CLASSIC4, seed)
    plain = RolloutValue(CLASSIC4, 4)
    cover = plain.seated({s: classic_cover_move for s in range(1, 4)})
    randomly = plain.seated({hand.current: policy_move(RandomAgent(CLASSIC4, 0))})
    values = [v.value(hand, 0, 9) for v in (plain, cover, randomly)]
    assert np.abs(values[0] - values[1]).max() > 0 and np.abs(values[0] - values[2]).max() > 0
    np.testing.assert_array_equal(randomly.value(hand, 0, 9), values[2])
    for value in (cover, randomly):
        assert_zero_mean(shuffled_draw_terms(value, hand, action, range(200)))


def test_buried_jokers_are_known_to_be_drawn_last():
    """Jokers: the jokers buried under the stock at the deal (R2.3) come after every other card, so a draw that can
    only bring one face is no chance event and has no correction."""
    config = GameConfig(variant="jokers", num_players=4)
    for seed in range(200):
        hand = dealt(config, seed)
        buried = sum(1 for e in hand.events if e[0] == "bury")
        if buried:
            break
    else:
        pytest.fail("no deal buried a joker")
    assert keyed_stock(hand, buried, stock_keys(0, 0, 2))[:buried] == hand.stock[:buried]
    assert uncertain_draw(hand, buried, DRAW_OR_PASS)
    certain = hand.copy()
    certain.stock = certain.stock[:buried + 1]
    assert not uncertain_draw(certain, buried, DRAW_OR_PASS)
    np.testing.assert_array_equal(draw_term(RolloutValue(config, 1), certain, buried, DRAW_OR_PASS, 0), 0.0)


def test_the_deal_has_expectation_one_nth():
    """Rotating the dealer over the same deck gives the same values with the seats rotated: the deal's correction
    averages to zero over the dealers, whatever the deck (the uniform dealer makes its mean exactly 0)."""
    for config in (CLASSIC4, FAMILIES["jokers 4p"][0]):
        value = RolloutValue(config, 2)
        n = config.num_players
        terms = [deal_term(value, dealt(config, 7, dealer), 0, 11) for dealer in range(n)]
        for dealer in range(n):
            np.testing.assert_allclose(np.roll(terms[0], dealer), terms[dealer], atol=1e-12)
        np.testing.assert_allclose(np.mean(terms, axis=0), 0.0, atol=1e-12)


def test_a_baselines_decision_averages_to_zero_over_its_distribution():
    """A heuristic's distribution is its tied best cards (what act() draws from); the decision correction
    averages to zero over it. Random: every legal action."""
    config = GameConfig(variant="jokers", num_players=4)
    agent, value = JokersBoomAgent(config, 0), RolloutValue(config, 2)
    checked = 0
    for seed in range(40):
        match = Match(config, np.random.default_rng(seed))
        hand = match.hand
        while not hand.over and checked < 3:
            observation = observe(match, hand.current)
            dist = agent.action_distribution(observation)
            assert abs(sum(dist.values()) - 1) < 1e-12
            played = {JokersBoomAgent(config, s).act(observation) for s in range(12)}
            assert played <= set(dist)
            if len(dist) > 1:
                assert played == set(dist)
                expectations = {a: value.expected(hand, 0, a, 3) for a in dist}
                terms = [p * decision_term(expectations, dist, a) for a, p in dist.items()]
                np.testing.assert_allclose(np.sum(terms, axis=0), 0.0, atol=1e-12)
                checked += 1
            hand.apply(agent.act(observation))
    assert checked == 3
    match = Match(config, np.random.default_rng(0))
    dist = RandomAgent(config).action_distribution(observe(match, match.hand.current))
    assert sorted(dist) == match.hand.legal_actions() and len(set(dist.values())) == 1


def test_the_action_distribution_leaves_the_agent_generator_alone():
    match = Match(CLASSIC4, np.random.default_rng(0))
    agent = ClassicTricksAgent(CLASSIC4, 5)
    before = agent.rng.bit_generator.state
    agent.action_distribution(observe(match, match.hand.current))
    assert agent.rng.bit_generator.state == before


@pytest.mark.parametrize("family", list(FAMILIES))
def test_adjusted_and_raw_win_rates_agree_on_every_family(family):
    config, evaluated, baseline = FAMILIES[family]
    result = against_baseline(config, evaluated, baseline, deals=2, seed=1)
    luck = luck_adjust(result, rollouts=1, progress=False)
    assert luck.corrected == (evaluated, baseline)  # both say how likely their actions are
    for game in luck.games:
        assert abs(sum(game.adjusted) - 1) < 1e-9  # the corrections of one game sum to zero over the seats
    raw = {r["agent"]: r for r in result.table()}
    for row in luck.table():
        assert row["raw_win_rate"] == pytest.approx(raw[row["agent"]]["win_rate"])
    # two deals give no interval to compare the means in: test_many_games_adjusted_and_raw_agree does that
    assert luck.seconds_per_game() > 0


def test_the_saved_games_give_the_same_adjustment(tmp_path):
    """A tournament's games.jsonl is enough to recompute its adjustment later."""
    result = against_baseline(CLASSIC4, "classic-cover", "classic-tricks", deals=1, seed=2)
    write(tmp_path / "games.jsonl", record_games(result, 4), append=False)
    again = luck_adjust_records(read(tmp_path / "games.jsonl"), rollouts=4, progress=False)
    first = luck_adjust(result, rollouts=4, progress=False)
    assert [g.adjusted for g in again.games] == [g.adjusted for g in first.games]


def test_bad_input_is_refused():
    match_result = run_tournament(CLASSIC4, ["random"] * 4, 1, episode="match", progress=False)
    with pytest.raises(ValueError, match="single hands"):
        luck_adjust(match_result, progress=False)
    result = run_tournament(CLASSIC4, ["classic-cover"] + ["classic-tricks"] * 3, 1, episode="hand", progress=False)
    with pytest.raises(ValueError, match="rollouts"):
        luck_adjust(result, rollouts=0, progress=False)
    with pytest.raises(ValueError, match="play no seat"):
        luck_adjust(result, corrected=["random"], progress=False)
    mixed = run_tournament(CLASSIC4, ["classic-cover", "mc:budget=2", "classic-tricks", "classic-tricks"], 1,
                           episode="hand", progress=False)
    with pytest.raises(ValueError, match="does not say how likely"):
        luck_adjust(mixed, corrected=["mc:budget=2"], progress=False)
    mixed_luck = luck_adjust(mixed, rollouts=2, progress=False)
    assert mixed_luck.corrected == ("classic-cover", "classic-tricks")  # not the search: no known policy
    assert "no action_distribution" in mixed_luck.not_corrected["mc:budget=2"]
    assert mixed_luck.played["mc:budget=2"].startswith("classic-tricks in its place")  # a search: the heuristic
    assert mixed_luck.played["classic-cover"].startswith("classic-cover, on the engine")
    assert playout_seed(0, 1) != playout_seed(0, 2)


def test_an_agent_against_copies_of_itself_reads_parity():
    """``heuristic`` is ``classic-tricks`` under another name: its adjusted win rate is 1/n within its interval."""
    result = against_baseline(CLASSIC4, "heuristic", "classic-tricks", deals=4, seed=4)
    row = luck_adjust(result, rollouts=4, progress=False).table()[0]
    assert row["agent"] == "heuristic"
    assert row["adjusted_ci_low"] <= 1 / CLASSIC4.num_players <= row["adjusted_ci_high"]


@pytest.mark.slow
@pytest.mark.parametrize("family", list(FAMILIES))
def test_many_games_adjusted_and_raw_agree(family):
    result = against_baseline(*FAMILIES[family], deals=40, seed=5)
    for row in luck_adjust(result, progress=False).table():  # the default: 32 playouts a value
        half = (row["raw_ci_high"] - row["raw_ci_low"] + row["adjusted_ci_high"] - row["adjusted_ci_low"]) / 2
        assert abs(row["adjusted_win_rate"] - row["raw_win_rate"]) <= half


@pytest.mark.slow
def test_a_network_seated_in_the_playouts_keeps_the_mean_and_removes_variance():
    """A shipped network plays its own seat in the playouts (its sampling restarted from the playout's stream) and
    its decisions are not corrected: adjusted and raw agree within their intervals, with less variance."""
    config = GameConfig(variant="classic", num_players=2)
    result = against_baseline(config, "ppo:classic-2p", "heuristic", deals=60, seed=6)
    luck = luck_adjust(result, rollouts=8, progress=False)
    assert luck.played["ppo:classic-2p"].startswith("the agent itself") and luck.corrected == ("heuristic",)
    row = luck.table()[0]
    half = (row["raw_ci_high"] - row["raw_ci_low"] + row["adjusted_ci_high"] - row["adjusted_ci_low"]) / 2
    assert abs(row["adjusted_win_rate"] - row["raw_win_rate"]) <= half
    assert row["variance_reduction"] > 1.5


def test_the_adjusted_outcome_varies_less_where_a_draw_decides_the_hand():
    """Late in a hand (a short stock) the values are sharp: over the cards a draw could bring, the outcome minus the
    draw's correction varies less than the outcome itself (the variance over the cards, averaged over states)."""
    from goboom_env.agents.rollout import classic_tricks_move, play_out
    from goboom_env.evaluation.luck import win_shares

    agent = ClassicTricksAgent(CLASSIC4, 0)
    raw_var, adjusted_var = [], []
    value = RolloutValue(CLASSIC4, 16)
    for seed in range(1, 40):
        match = Match(CLASSIC4, np.random.default_rng(seed))
        hand = match.hand
        while not hand.over and not (hand.legal_mask() == 1 << DRAW_OR_PASS and 3 <= len(hand.stock) <= 8):
            hand.apply(agent.act(observe(match, hand.current)))
        if hand.over:
            continue
        seat, raw, adjusted = hand.current, [], []
        for card in hand.stock:
            state = with_top(hand, card)
            played = state.copy()
            play_out(played, classic_tricks_move, __import__("random").Random(seed))
            raw.append(win_shares(played)[seat])
            adjusted.append(raw[-1] - draw_term(value, state, 0, DRAW_OR_PASS, seed)[seat])
        raw_var.append(np.var(raw))
        adjusted_var.append(np.var(adjusted))
    assert len(raw_var) >= 10
    assert np.mean(adjusted_var) < 0.9 * np.mean(raw_var)


def test_goboom_evaluate_luck_adjusted(tmp_path):
    """The CLI path: raw and adjusted side by side in the report files; bad combinations refused before any game."""
    import json

    from helpers import goboom, goboom_evaluate

    from goboom_env.cli.evaluate import EvaluateArgs
    from goboom_env.evaluation.luck import DEFAULT_ROLLOUTS

    assert EvaluateArgs().rollouts == DEFAULT_ROLLOUTS
    done = goboom_evaluate(tmp_path / "out", "--variant", "classic", "--players", "2", "--agents", "classic-cover",
                           "classic-tricks", "--episode", "hand", "--duplicate", "--games", "4", "--luck-adjusted",
                           "--rollouts", "4")
    assert "Luck-adjusted win rates" in done.stdout
    data = json.loads((tmp_path / "out" / "luck.json").read_text())
    assert [r["agent"] for r in data["table"]] == ["classic-cover", "classic-tricks"]
    assert data["summary"]["rollouts"] == 4
    assert "variance_reduction" in (tmp_path / "out" / "luck.csv").read_text()
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Luck-adjusted win rates" in report
    assert "(4 playouts a value; decisions corrected: classic-cover, classic-tricks;" in report
    assert "### Paired comparisons, luck-adjusted" in report and data["paired"][0]["a"] == "classic-cover"
    for extra, problem in ((["--episode", "match"], "--episode hand"),
                           (["--episode", "hand", "--pairwise"], "--pairwise"),
                           (["--episode", "hand", "--rollouts", "0"], "--rollouts"),
                           (["--episode", "hand", "--value", "fitted"], "--value")):
        bad = goboom("evaluate", "--variant", "classic", "--games", "2", "--luck-adjusted", *extra,
                     "--out", str(tmp_path / "bad"))
        assert bad.returncode == 2 and problem in bad.stderr, bad.stderr
    for flags in (["--luck-adjusted"], ["--save-games", "1"]):  # a search with a time limit cannot be replayed
        bad = goboom("evaluate", "--variant", "classic", "--games", "2", "--episode", "hand", "--agents",
                     "ismcts:ms=5", "classic-tricks", *flags, "--out", str(tmp_path / "bad"))
        assert bad.returncode == 2 and "ismcts:ms=5 decides by the clock" in bad.stderr and "iters=N" in bad.stderr
        assert "Traceback" not in bad.stderr and not (tmp_path / "bad").exists()


def test_a_search_with_a_time_limit_is_refused_before_its_games_are_replayed():
    """Luck adjustment plays the games again from the seed: an agent whose moves depend on the clock is named in a
    ValueError at once; the same search with an iteration budget is adjusted."""
    timed = run_tournament(CLASSIC4, ["ismcts:ms=1", "classic-tricks"], 4, episode="hand", progress=False)
    with pytest.raises(ValueError, match=r"ismcts:ms=1 decides by the clock.*iters=N"):
        luck_adjust(timed, rollouts=1, progress=False)
    counted = run_tournament(CLASSIC4, ["ismcts:iters=5", "classic-tricks"], 4, episode="hand", progress=False)
    assert len(luck_adjust(counted, rollouts=1, progress=False).games) == 4


def test_a_boom_is_one_chance_event_of_zero_mean():
    """Jokers: a boom gives a card to each other seat from the stock, one event whose correction averages to zero
    over random stocks; a random baseline's decision (draw or boom) averages to zero over its distribution."""
    config = FAMILIES["jokers 4p"][0]
    value = RolloutValue(config, 2)
    for seed in range(300):
        match = Match(config, np.random.default_rng(seed))
        hand = match.hand
        agent = RandomAgent(config, seed)
        while not hand.over:
            if hand.masks[hand.current] >> 52 & 1 and hand.sizes[hand.current] > 1 and len(hand.stock) > 3:
                break
            hand.apply(agent.act(observe(match, hand.current)))
        if not hand.over:
            break
    else:
        pytest.fail("no boom")
    buried = sum(1 for e in hand.events if e[0] == "bury")
    assert buried == 0 and uncertain_draw(hand, buried, 52)
    assert_zero_mean(shuffled_draw_terms(value, hand, 52, range(400)))
    dist = RandomAgent(config).action_distribution(observe(match, hand.current))
    expectations = {a: value.expected(hand, buried, a, 0) for a in dist}
    terms = [p * decision_term(expectations, dist, a) for a, p in dist.items()]
    np.testing.assert_allclose(np.sum(terms, axis=0), 0.0, atol=1e-12)
    with pytest.raises(ValueError, match="never plays here"):
        decision_term(expectations, dist, 99)


def test_adjusted_paired_tests_compare_the_adjusted_outcomes_per_deal():
    """The luck-adjusted paired test pairs the agents' mean adjusted outcomes deal by deal, not the raw ones."""
    from goboom_env.evaluation.luck import GameLuck, LuckAdjustment

    def game(index, deal, seats, raw, adjusted):
        return GameLuck(index, deal, seats, raw, adjusted, 1, 0, 0.0)

    games = [game(0, 0, ("a", "b"), (1.0, 0.0), (0.6, 0.4)), game(1, 0, ("b", "a"), (1.0, 0.0), (0.3, 0.7)),
             game(2, 1, ("a", "b"), (0.0, 1.0), (0.5, 0.5)), game(3, 1, ("b", "a"), (0.5, 0.5), (0.45, 0.55))]
    luck = LuckAdjustment(GameConfig(variant="classic", num_players=2), 8, ("b",), games)
    (test,) = luck.paired()
    assert (test.a, test.b, test.deals) == ("a", "b", 2)
    assert test.mean_diff == pytest.approx(((0.65 - 0.35) + (0.525 - 0.475)) / 2)  # raw: ((0.5-0.5)+(0.25-0.75))/2
    assert test.ci_low < test.mean_diff < test.ci_high


class FirstLegal(RandomAgent):
    """Overrides only act(): plays its first legal action, yet inherits RandomAgent's uniform action_distribution."""

    name = "first-legal"

    def act(self, observation, view=None):
        return int(np.flatnonzero(observation["action_mask"])[0])


class LastTied(ClassicTricksAgent):
    """Overrides only act(): the last of the heuristic's tied cards, never the random pick it declares."""

    def act(self, observation, view=None):
        return max(self.action_distribution(observation))


class SameAsHeuristic(ClassicTricksAgent):
    """Overrides act() with the heuristic's own act, and says so: its inherited distribution is trusted."""

    plays_declared_policy = True

    def act(self, observation, view=None):
        return super().act(observation, view)


class FalseDeclaration(RandomAgent):
    """Declares uniform play in the very class whose act always takes the first legal action."""

    name = "false-declaration"

    def act(self, observation, view=None):
        return int(np.flatnonzero(observation["action_mask"])[0])

    def action_distribution(self, observation):
        return super().action_distribution(observation)


class NamedLikeTheHeuristic(FirstLegal):
    """An agent of its own that calls itself classic-tricks."""

    name = "classic-tricks"


@pytest.fixture
def registered():
    """The agents above, registered as specs for the tournaments of the test."""
    agents = {"first-legal": FirstLegal, "last-tied": LastTied, "same-as-heuristic": SameAsHeuristic,
              "false-declaration": FalseDeclaration, "named-like-heuristic": NamedLikeTheHeuristic}
    for name, cls in agents.items():
        register_agent(name, cls)
    yield agents
    for name in agents:
        unregister_agent(name)


def test_a_subclass_that_overrides_only_act_is_not_corrected_with_the_inherited_policy(registered):
    """A RandomAgent or heuristic subclass that overrides act() alone plays another policy than the one it inherits:
    its decisions are not corrected (and asking for it is refused), and the report says why; one that vouches for its
    act (plays_declared_policy) is corrected."""
    result = against_baseline(CLASSIC4, "first-legal", "random", deals=1, seed=7)
    luck = luck_adjust(result, rollouts=1, progress=False)
    assert luck.corrected == ("random",)
    assert "act comes from FirstLegal but its action_distribution from RandomAgent" in luck.not_corrected["first-legal"]
    rows = {r["agent"]: r for r in luck.agent_rows()}
    assert rows["first-legal"]["corrected"] is False and rows["first-legal"]["decisions_corrected"] == 0
    assert rows["random"]["corrected"] is True and rows["random"]["decisions_corrected"] > 0
    with pytest.raises(ValueError, match="'first-legal' cannot have its decisions corrected"):
        luck_adjust(result, rollouts=1, corrected=["first-legal"], progress=False)
    tied = luck_adjust(against_baseline(CLASSIC4, "last-tied", "classic-tricks", deals=1, seed=7), rollouts=1,
                       progress=False)
    assert tied.corrected == ("classic-tricks",) and "LastTied" in tied.not_corrected["last-tied"]
    vouched = luck_adjust(against_baseline(CLASSIC4, "same-as-heuristic", "classic-tricks", deals=1, seed=7),
                          rollouts=1, progress=False)
    assert vouched.corrected == ("same-as-heuristic", "classic-tricks")


def test_a_declared_policy_that_act_does_not_play_is_caught_by_sampling(registered):
    """Declared and played in one class, but act always takes the first legal action: sampled at the games' own
    decisions, act does not play the declared uniform policy, so it is not corrected."""
    result = against_baseline(CLASSIC4, "false-declaration", "random", deals=2, seed=8)
    luck = luck_adjust(result, rollouts=1, progress=False)
    assert "does not play the probabilities" in luck.not_corrected["false-declaration"]
    assert luck.corrected == ("random",)


def test_the_playouts_choose_a_seats_agent_by_its_class_not_its_name(registered):
    """An agent that calls itself classic-tricks is played by itself in the playouts, and the report says so."""
    result = against_baseline(CLASSIC4, "named-like-heuristic", "classic-tricks", deals=1, seed=9)
    luck = luck_adjust(result, rollouts=1, progress=False)
    assert luck.played["named-like-heuristic"].startswith("the agent itself (NamedLikeTheHeuristic)")
    assert luck.played["classic-tricks"].startswith("classic-tricks, on the engine")
