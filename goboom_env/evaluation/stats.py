"""Statistics for tournaments: Wilson intervals for win rates and paired tests on duplicate deals.

Paired tests: ``p_t`` (paired t-test on the per-deal differences) compares means and is the one to
read in general. The Wilcoxon signed-rank and sign tests assume the differences are symmetric
around 0 when the agents are equally strong; that holds when both agents fill equally many seats
(2 players, 2-vs-2) but not in a 1-vs-(n-1) benchmark with n > 2, where the single agent's per-deal
difference is skewed. Simulated equal agents (4 players, 500 deals of 4 games, independent 1/4 win
chances, 300 runs): at the 5% level the sign test rejected in 32% of the runs, Wilcoxon in 5.7% and
the t-test in 5.3%.

Win counting: a hand or match shared by ``k`` co-winners (R1.12, R2.10, R2.12) counts ``1/k`` of a
win for each of them, so the win shares of one game always sum to 1 and the expected win rate of
equally strong agents is exactly ``1/n``. The Wilson interval is applied to these (possibly
fractional) win counts; co-wins are rare, so it stays a close approximation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from goboom_env.hints import needs_extra

Z95 = 1.959963984540054
"""Two-sided 95% normal quantile."""


def wilson_interval(wins: float, games: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``wins / games`` (95% by default)."""
    if games <= 0:
        raise ValueError(f"games must be positive for a confidence interval, got {games}")
    if not 0 <= wins <= games:
        raise ValueError(f"wins must be in 0..games={games}, got {wins}")
    p = wins / games
    z2 = z * z
    centre = (p + z2 / (2 * games)) / (1 + z2 / games)
    half = z * math.sqrt(p * (1 - p) / games + z2 / (4 * games * games)) / (1 + z2 / games)
    # the interval always holds p; clamping to it keeps float rounding (0 wins: a low bound of 5e-17) out
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


@dataclass(frozen=True)
class PairedTest:
    """A paired comparison of two agents over the same deals (``a`` minus ``b`` per deal)."""

    a: str
    b: str
    deals: int
    mean_diff: float
    """Mean per-deal difference (win share of ``a`` minus that of ``b``)."""
    ci_low: float
    ci_high: float
    """95% t-interval of the mean difference."""
    p_t: float
    """Two-sided paired t-test p-value (compares means; valid for skewed differences)."""
    a_better: int
    b_better: int
    ties: int
    p_wilcoxon: float
    """Two-sided Wilcoxon signed-rank p-value (zero differences dropped; 1.0 when all are zero);
    assumes symmetric differences under the null hypothesis (see the module docstring)."""
    p_sign: float
    """Two-sided exact sign test p-value on the non-zero differences (same caveat)."""

    def to_dict(self) -> dict[str, float | int | str]:
        """Plain dict for JSON / CSV / tables."""
        return asdict(self)


def paired_test(a: str, b: str, a_scores: Sequence[float], b_scores: Sequence[float]) -> PairedTest:
    """Compare per-deal scores of two agents (paired by deal): Wilcoxon, sign test and t-interval."""
    with needs_extra("TournamentResult.paired() and paired_test()"):
        from scipy import stats  # imported here: scipy takes a second to import and most callers never need it

    x = np.asarray(a_scores, np.float64)
    y = np.asarray(b_scores, np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired scores need equal 1-d lengths, got {x.shape} and {y.shape}")
    if len(x) == 0:
        raise ValueError("paired_test needs at least one deal")
    raw = x - y
    d = np.round(raw, 9)  # equal magnitudes must tie in the signed ranks despite float noise
    better, worse = int((d > 0).sum()), int((d < 0).sum())
    nonzero = d[d != 0]
    p_wilcoxon = float(stats.wilcoxon(nonzero).pvalue) if len(nonzero) else 1.0
    p_sign = float(stats.binomtest(better, better + worse, 0.5).pvalue) if better + worse else 1.0
    mean = float(raw.mean())
    if len(d) > 1 and d.std(ddof=1) > 0:
        sem = float(raw.std(ddof=1) / math.sqrt(len(d)))
        half = float(stats.t.ppf(0.975, len(d) - 1)) * sem
        p_t = float(2 * stats.t.sf(abs(mean) / sem, len(d) - 1))
    else:  # no spread: the mean difference is certain (or there is a single deal)
        half = 0.0
        p_t = 1.0 if mean == 0 or len(d) == 1 else 0.0
    return PairedTest(a, b, len(d), mean, mean - half, mean + half, p_t, better, worse,
                      len(d) - better - worse, p_wilcoxon, p_sign)
