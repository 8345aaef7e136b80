"""Statistics for tournaments: Wilson intervals for win rates and paired tests on duplicate deals (the Evaluation
guide's "Statistics" section says what each figure means and when to read ``p_t`` rather than the rank tests).

Why ``p_t`` in 1-vs-(n-1) with n > 2: simulated equal agents (4 players, 500 deals of 4 games, independent 1/4 win
chances, 300 runs) at the 5% level: the sign test rejected in 32% of the runs, Wilcoxon in 5.7%, the t-test in 5.3%.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations

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


def paired_tests(specs: Sequence[str], scores: Mapping[str, Mapping[int, float]]) -> list[PairedTest]:
    """:func:`paired_test` of every pair of distinct ``specs`` over the deals both played (``scores[spec][deal]``)."""
    out = []
    for a, b in combinations(specs, 2):
        deals = sorted(set(scores.get(a, {})) & set(scores.get(b, {})))
        if deals:
            out.append(paired_test(a, b, [scores[a][d] for d in deals], [scores[b][d] for d in deals]))
    return out

# -- aggregates over tasks and training runs (the benchmark) --------------------------------------------------

BOOTSTRAP_RESAMPLES = 2000
"""Resamples of the stratified bootstrap of :func:`aggregate_scores`."""
PROFILE_TAUS = np.linspace(0.0, 2.0, 81)
"""The thresholds of the performance profile: normalized scores 0 (random) to 2 (twice the heuristic's edge)."""


def iqm(scores: np.ndarray, axis: int | None = None) -> np.ndarray:
    """The interquartile mean (rliable's ``scipy.stats.trim_mean(scores, 0.25)``): robust to one outlying task or
    run, less noisy than the median."""
    with needs_extra("the benchmark's aggregate scores"):
        from scipy import stats

    return np.asarray(stats.trim_mean(scores, 0.25, axis=axis))


@dataclass(frozen=True)
class Aggregate:
    """Scores of several tasks (and runs) in one figure each, with 95% stratified bootstrap intervals."""

    runs: int
    """Score rows pooled: the sum over tasks of the runs of each task."""
    tasks: int
    iqm: float
    iqm_ci: tuple[float, float]
    mean: float
    mean_ci: tuple[float, float]
    median: float
    median_ci: tuple[float, float]
    taus: list[float]
    profile: list[float]
    """Per threshold ``tau``: the fraction of task scores above it (the performance profile)."""
    profile_low: list[float]
    profile_high: list[float]

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def aggregate_scores(scores: Mapping[str, Sequence[Sequence[float]]], resamples: int = BOOTSTRAP_RESAMPLES,
                     seed: int = 0, points: Mapping[str, Sequence[float]] | None = None) -> Aggregate:
    """IQM, mean and median of the run scores of every task with 95% percentile intervals, and the performance profile.

    ``scores[task]``: per run (a training seed, or the one agent evaluated) its per-deal scores; ``points[task]``:
    the run scores as computed elsewhere (default: the means of their deals). The bootstrap resamples each task's
    runs (as rliable does), then each drawn run's deals, so the intervals hold the noise of the games too."""
    if not scores or any(not runs or any(not len(d) for d in runs) for runs in scores.values()):
        raise ValueError("every task needs at least one run with at least one deal")
    rng = np.random.default_rng(seed)
    columns = []
    for task, runs in scores.items():
        if len({len(d) for d in runs}) > 1:
            raise ValueError(f"the runs of task {task} have different numbers of deals")
        deals = np.asarray(runs, np.float64)  # (runs, deals of the task)
        picked = deals[rng.integers(len(deals), size=(resamples, len(deals)))]  # (resamples, runs, deals)
        draws = rng.integers(deals.shape[1], size=picked.shape)
        columns.append(np.take_along_axis(picked, draws, axis=-1).mean(-1))
    boot = np.concatenate(columns, axis=1)  # (resamples, every run of every task)
    point = np.array([s for task, runs in scores.items()
                      for s in (points[task] if points else [float(np.mean(d)) for d in runs])])
    stats_of = {"iqm": lambda m: iqm(m, axis=-1), "mean": lambda m: m.mean(-1),
                "median": lambda m: np.median(m, -1)}
    figures: dict[str, object] = {}
    for name, f in stats_of.items():
        low, high = np.percentile(f(boot), [2.5, 97.5])
        figures[name] = float(f(point[None])[0])
        figures[f"{name}_ci"] = (float(low), float(high))
    above = (boot[:, :, None] > PROFILE_TAUS).mean(1)
    low, high = np.percentile(above, [2.5, 97.5], axis=0)
    return Aggregate(len(point), len(scores), taus=PROFILE_TAUS.tolist(),
                     profile=(point[:, None] > PROFILE_TAUS).mean(0).tolist(), profile_low=low.tolist(),
                     profile_high=high.tolist(), **figures)  # type: ignore[arg-type]
