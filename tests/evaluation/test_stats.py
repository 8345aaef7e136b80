"""Statistics against known values: Wilson intervals and paired tests (goboom_env.evaluation.stats)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from goboom_env.evaluation.stats import paired_test, wilson_interval


@pytest.mark.parametrize(
    ("wins", "games", "low", "high"),
    [
        (50, 100, 0.403832, 0.596168),  # textbook value for 50/100
        (0, 10, 0.0, 0.277533),  # upper bound z^2 / (n + z^2)
        (10, 10, 0.722467, 1.0),
        (1, 4, 0.045587, 0.699358),
    ],
)
def test_wilson_interval_known_values(wins: int, games: int, low: float, high: float) -> None:
    assert wilson_interval(wins, games) == pytest.approx((low, high), abs=1e-6)


@pytest.mark.parametrize("games", [1, 3, 7, 100, 4001])
@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_wilson_interval_holds_the_rate_exactly_even_at_zero_and_all_wins(games: int, share: float) -> None:
    wins = share * games
    low, high = wilson_interval(wins, games)
    assert 0.0 <= low <= wins / games <= high <= 1.0  # error bars rate - low, high - rate are never negative


def test_pairwise_match_report_plots_a_seat_without_wins(tmp_path) -> None:
    from goboom_env.cli import main

    out = tmp_path / "pw"
    assert main(["evaluate", "--preset", "classic-2p", "--pairwise", "--agents", "heuristic", "random",
                 "--games", "3", "--no-progress", "--out", str(out)]) == 0
    assert (out / "report.md").exists()


def test_wilson_interval_fractional_wins_and_shrinking_width() -> None:
    lo1, hi1 = wilson_interval(25.5, 100)
    assert lo1 < 0.255 < hi1
    lo2, hi2 = wilson_interval(255, 1000)
    assert hi2 - lo2 < hi1 - lo1


@pytest.mark.parametrize(("wins", "games"), [(5, 0), (-1, 10), (11, 10)])
def test_wilson_interval_rejects_bad_counts(wins: float, games: int) -> None:
    with pytest.raises(ValueError, match=r"games|wins"):
        wilson_interval(wins, games)


def _exact_wilcoxon_p(diffs: list[float]) -> float:
    """Two-sided exact signed-rank p by enumerating every sign assignment (no ties, no zeros)."""
    ranks = stats.rankdata(np.abs(diffs))
    observed = sum(r for r, d in zip(ranks, diffs) if d > 0)
    counts = [sum(r for r, s in zip(ranks, signs) if s) for signs in itertools.product((0, 1), repeat=len(diffs))]
    low = sum(1 for c in counts if c <= observed) / len(counts)
    high = sum(1 for c in counts if c >= observed) / len(counts)
    return min(1.0, 2 * min(low, high))


def test_paired_test_on_a_constructed_example() -> None:
    a = [0.9, 0.8, 1.0, 0.7, 0.95, 0.6, 0.85, 0.4, 0.75, 0.65]
    b = [0.8, 0.6, 0.7, 0.3, 0.45, 0.0, 0.15, 0.5, 0.0, 0.0]
    diffs = [x - y for x, y in zip(a, b)]  # nine positive differences and one -0.1
    rounded = [round(d, 9) for d in diffs]
    test = paired_test("a", "b", a, b)
    assert (test.deals, test.a_better, test.b_better, test.ties) == (10, 9, 1, 0)
    assert test.mean_diff == pytest.approx(np.mean(diffs))
    # sign test: 9 of 10 positive, two-sided exact binomial = 2 * (1 + 10) / 1024
    assert test.p_sign == pytest.approx(22 / 1024)
    assert len(set(map(abs, rounded))) == 9  # +0.1 and -0.1 tie in rank
    assert test.p_wilcoxon == pytest.approx(stats.wilcoxon(rounded).pvalue)
    half = stats.t.ppf(0.975, 9) * np.std(diffs, ddof=1) / math.sqrt(10)
    assert (test.ci_low, test.ci_high) == pytest.approx((np.mean(diffs) - half, np.mean(diffs) + half))
    assert test.p_t == pytest.approx(stats.ttest_rel(a, b).pvalue)


def test_paired_t_statistic_by_hand() -> None:
    # differences 1, 2, 3: mean 2, sd 1, t = 2 / (1 / sqrt 3) = 3.4641 with 2 degrees of freedom
    test = paired_test("a", "b", [1, 2, 3], [0, 0, 0])
    assert test.p_t == pytest.approx(2 * stats.t.sf(2 * math.sqrt(3), 2))
    assert test.p_t == pytest.approx(0.07418, abs=1e-5)


def test_paired_wilcoxon_matches_exact_enumeration() -> None:
    diffs = [1, 2, 3, 4, 5, 6, 7, 8, 9, -10]
    test = paired_test("a", "b", diffs, [0] * 10)
    assert test.p_wilcoxon == pytest.approx(_exact_wilcoxon_p(diffs))


def test_paired_ties_survive_float_noise() -> None:
    # per-deal win shares of a 1-vs-3 duplicate deal: 0.5 - 1/6 and 0 - 1/3 have equal magnitudes
    a = [0.5, 0.0, 0.5, 0.0, 0.5, 0.5, 0.5, 0.0]
    b = [1 / 6, 1 / 3, 1 / 6, 1 / 3, 1 / 6, 1 / 6, 1 / 6, 1 / 3]
    exact = [1 / 3, -1 / 3, 1 / 3, -1 / 3, 1 / 3, 1 / 3, 1 / 3, -1 / 3]
    assert paired_test("a", "b", a, b).p_wilcoxon == pytest.approx(stats.wilcoxon(exact).pvalue)


def test_paired_test_all_equal_and_bad_input() -> None:
    same = paired_test("a", "b", [0.25, 0.5], [0.25, 0.5])
    assert (same.p_t, same.p_wilcoxon, same.p_sign, same.ties, same.mean_diff) == (1.0, 1.0, 1.0, 2, 0.0)
    assert paired_test("a", "b", [1.0, 1.0], [0.0, 0.0]).p_t == 0.0
    with pytest.raises(ValueError, match="equal 1-d lengths"):
        paired_test("a", "b", [1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="at least one deal"):
        paired_test("a", "b", [], [])
