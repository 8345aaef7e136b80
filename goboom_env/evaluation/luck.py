"""Luck-adjusted evaluation (AIVAT, Burch et al. 2017, arXiv:1612.06915) for n-player Go Boom hands.

Go Boom is mostly luck: the deal and the cards drawn from the stock decide most hands. AIVAT removes that
part of each seat's outcome without biasing it: every event whose distribution is known gets a *control
variate*, the value after the event minus its expectation before it, and the sum of those terms is
subtracted from the outcome::

    adjusted[s] = outcome[s] - sum over corrected events e of (V_s(after e) - E[V_s(after e) | before e])

Corrected events:

* **the deal** (deck order and dealer, R1.2, R1.3, R2.3): expectation ``1/n`` for every seat (below);
* **every card drawn from the stock** (R1.6, R2.6, R2.7): given all the engine knows before the draw, the
  rest of the stock is in a uniformly random order (jokers buried under it, R2.3, stay at the bottom), so
  each remaining card is equally likely to be the next: the expectation is the mean over those cards;
* **the decisions of the baseline seats** (agents whose action distribution is known:
  ``action_distribution``, e.g. the heuristics' random tie-breaks, ``random``'s uniform choice): the
  expectation is the mean over that distribution. The evaluated agent's decisions are never corrected.

The value ``V_s`` of a state is a fixed estimator, chosen before the evaluation: by default (``value="fitted"``) a
deterministic function of the full state fitted on heuristic hands from a fixed seed
(:mod:`goboom_env.evaluation.luck_value`); with ``value="net"``, a small MLP of the full state trained the same
way (:mod:`goboom_env.evaluation.luck_net`); with ``value="rollouts"``, seat ``s``'s mean win share
(the tournament's outcome of a hand, :meth:`~goboom_env.evaluation.tournament.GameOutcome.win_shares`) over
``rollouts`` playouts of the variant's best heuristic for every seat
(:data:`~goboom_env.agents.rollout.HEURISTIC_MOVES`) from the true state: every hand known, the unknown part of
the stock in a random order. Playout ``k`` of every value of one deal uses the same random card keys (the stock
in key order, a card fixed on top taken out of it) and the same tie-breaks (common random numbers), seeded by
the tournament seed and the deal: values of states that differ by one card or one action then differ mostly
by that card or action, not by playout noise.

Each term has zero mean given the state before its event (the expectation is taken over exactly the
distribution the event is drawn from), hence ``E[adjusted] = E[outcome]``: the adjusted win rate estimates
the same quantity with less variance. The deal's expectation is ``1/n`` because rotating the dealer by one
seat with the same deck gives the same hand with every seat moved one place to the left, playouts
included (their seed does not depend on the deal), and the dealer is uniform: all seats have the same
expected value, and the win shares of a hand sum to 1. The proof in full is in docs/evaluation.md.

Only single hands (``episode="hand"``) are adjusted; a match's later deals would need estimated
expectations.
"""

from __future__ import annotations

import random
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
from tqdm import tqdm

from goboom_env.agents import Observation, make_agent
from goboom_env.agents.rollout import HEURISTIC_MOVES, play_out
from goboom_env.cards import JOKER, NUM_FACES
from goboom_env.config import GameConfig, check_int
from goboom_env.engine import Hand, Match
from goboom_env.evaluation.luck_net import DEFAULT_NET_HANDS, net_value
from goboom_env.evaluation.luck_value import DEFAULT_FIT_HANDS, FittedValue, fitted_value, win_shares
from goboom_env.evaluation.progress import bars_shown
from goboom_env.evaluation.stats import Z95, PairedTest, paired_test
from goboom_env.evaluation.tournament import TournamentResult, record_games
from goboom_env.events import EventKind
from goboom_env.observation import observe
from goboom_env.records import GameRecord

DEFAULT_ROLLOUTS = 8
"""Playouts per value of ``value="rollouts"``: under a second per classic 4p hand; more playouts, less noise."""
VALUES = ("fitted", "rollouts", "net")
"""The value estimators: the fitted value (:mod:`goboom_env.evaluation.luck_value`), heuristic playouts, or the net
value (:mod:`goboom_env.evaluation.luck_net`, trained in numpy at the start of the evaluation)."""
DEFAULT_VALUE = "fitted"
"""The default estimator: deterministic, about ten times cheaper than 8 playouts, and no noisier."""


class StateValue(Protocol):
    """A fixed value function of luck adjustment (:class:`RolloutValue`, :class:`FittedValue`)."""

    def values(self, hand: Hand, buried: int, action: int | None, drawn: Sequence[int],
               candidates: Sequence[int], seed: int) -> np.ndarray:
        """Every seat's value, one row per candidate card next on the stock (none: one row)."""
        ...


@runtime_checkable
class KnownPolicy(Protocol):
    """An agent whose decisions can be corrected: it says how likely each of its actions is."""

    def action_distribution(self, observation: Observation) -> dict[int, float]:
        """Action -> probability of :meth:`act` for this observation (the probabilities sum to 1)."""
        ...


@dataclass(frozen=True)
class GameLuck:
    """One hand's outcome per seat, raw and luck-adjusted."""

    index: int
    deal: int
    seats: tuple[str, ...]
    raw: tuple[float, ...]
    """Win shares (1/k for each of k winners)."""
    adjusted: tuple[float, ...]
    """``raw`` minus the corrections; they sum to 1 like the win shares."""
    chance_events: int
    """Deal and stock draws corrected (a draw with one possible card has nothing to correct)."""
    decision_events: int
    """Baseline decisions corrected (those with more than one possible action)."""
    seconds: float


@dataclass
class LuckAdjustment:
    """The luck-adjusted outcomes of a set of hands, with the tables derived from them."""

    config: GameConfig
    rollouts: int
    baselines: tuple[str, ...]
    """The specs whose decisions were corrected."""
    games: list[GameLuck]
    elapsed: float = field(default=0.0, compare=False)
    value: str = DEFAULT_VALUE
    """The value estimator (:data:`VALUES`)."""

    def specs(self) -> list[str]:
        """The distinct agent specs, in order of first appearance."""
        return list(dict.fromkeys(spec for g in self.games for spec in g.seats))

    def deal_scores(self, spec: str) -> tuple[np.ndarray, np.ndarray]:
        """Per deal (one game, or with duplicate deals the games replaying it): ``spec``'s mean raw and adjusted
        outcome over its seat-games there. The deal is the unit of the intervals (duplicate play's pairing)."""
        raw, adjusted = self._by_deal(spec, "raw"), self._by_deal(spec, "adjusted")
        deals = sorted(raw)
        return np.array([raw[d] for d in deals]), np.array([adjusted[d] for d in deals])

    def _by_deal(self, spec: str, outcome: str) -> dict[int, float]:
        """Deal -> ``spec``'s mean ``outcome`` (``raw`` or ``adjusted``) over its seat-games on that deal."""
        scores: dict[int, list[float]] = defaultdict(list)
        for g in self.games:
            for seat, name in enumerate(g.seats):
                if name == spec:
                    scores[g.deal].append(getattr(g, outcome)[seat])
        return {deal: float(np.mean(values)) for deal, values in scores.items()}

    def paired(self) -> list[PairedTest]:
        """Paired tests on the luck-adjusted outcomes, for every pair of distinct specs over the deals both played:
        the raw tests of :meth:`~goboom_env.evaluation.tournament.TournamentResult.paired` with each win share
        replaced by its adjusted value (the same mean difference, estimated with less variance)."""
        specs = self.specs()
        scores = {spec: self._by_deal(spec, "adjusted") for spec in specs}
        out = []
        for i, a in enumerate(specs):
            for b in specs[i + 1:]:
                deals = sorted(set(scores[a]) & set(scores[b]))
                if deals:
                    out.append(paired_test(a, b, [scores[a][d] for d in deals], [scores[b][d] for d in deals]))
        return out

    def table(self) -> list[dict[str, Any]]:
        """Per spec: raw and adjusted win rates with 95% normal intervals over the deals, and the variance
        reduction factor (raw variance / adjusted variance of the per-deal scores)."""
        rows = []
        for spec in self.specs():
            raw, adjusted = self.deal_scores(spec)
            games = sum(name == spec for g in self.games for name in g.seats)
            row: dict[str, Any] = {"agent": spec, "games": games, "deals": len(raw)}
            for key, scores in (("raw", raw), ("adjusted", adjusted)):
                low, high = mean_interval(scores)
                row |= {f"{key}_win_rate": float(scores.mean()), f"{key}_ci_low": low, f"{key}_ci_high": high}
            row["variance_reduction"] = variance_ratio(raw, adjusted)
            rows.append(row)
        return rows

    def label(self) -> str:
        """The value estimator in words: ``fitted value``, ``net value`` or ``8 playouts a value``."""
        return value_label(self.value, self.rollouts)

    def seconds_per_game(self) -> float:
        """The estimator's cost: wall-clock seconds per hand adjusted."""
        return sum(g.seconds for g in self.games) / max(1, len(self.games))

    def summary(self) -> dict[str, Any]:
        """The estimator's settings and cost."""
        return {"value": self.value, "rollouts": self.rollouts, "baselines": list(self.baselines),
                "games": len(self.games), "seconds_per_game": round(self.seconds_per_game(), 4),
                "elapsed_s": round(self.elapsed, 3)}

    def to_dict(self) -> dict[str, Any]:
        """Summary, table, the adjusted paired tests and every game as JSON-friendly data."""
        return {"summary": self.summary(), "table": self.table(), "paired": [t.to_dict() for t in self.paired()],
                "games": [asdict(g) for g in self.games]}


def value_label(value: str, rollouts: int) -> str:
    """``value`` (:data:`VALUES`) in words, with its playouts for ``"rollouts"``."""
    return f"{rollouts} playouts a value" if value == "rollouts" else f"{value} value"


def mean_interval(scores: np.ndarray, z: float = Z95) -> tuple[float, float]:
    """The 95% normal interval of the mean of ``scores`` (a point for fewer than two)."""
    mean = float(np.mean(scores))
    if len(scores) < 2:
        return mean, mean
    half = z * float(np.std(scores, ddof=1)) / np.sqrt(len(scores))
    return mean - half, mean + half


def variance_ratio(raw: np.ndarray, adjusted: np.ndarray) -> float | None:
    """Raw variance / adjusted variance (None when undefined: fewer than two scores or no adjusted spread)."""
    if len(raw) < 2:
        return None
    low = float(np.var(adjusted, ddof=1))
    return float(np.var(raw, ddof=1)) / low if low > 0 else None


# -- the value function ---------------------------------------------------------------------------------


class RolloutValue:
    """``V(state)``: every seat's mean win share over ``rollouts`` playouts of the variant's heuristic.

    A state is a hand before an action (or before none), plus cards fixed on top of the stock: the cards
    already drawn in that action and the one whose draw is being valued. The rest of the stock's unknown
    part is shuffled in each playout (from a canonical order, so the value depends only on the state), and
    ``buried`` jokers stay at the bottom (R2.3)."""

    def __init__(self, config: GameConfig, rollouts: int) -> None:
        self.config = config
        self.rollouts = check_int("rollouts", rollouts, 1)
        self.move = HEURISTIC_MOVES[config.variant]
        self.n = config.num_players
        self._cache: dict[tuple[int, int], tuple[list[float], Any]] = {}

    def values(self, hand: Hand, buried: int, action: int | None, drawn: Sequence[int],
               candidates: Sequence[int], seed: int) -> np.ndarray:
        """Values, one row per candidate: ``action`` applied (None: no action) with ``drawn`` and then the
        candidate card on top of the stock. An empty ``candidates`` = one row, nothing fixed beyond ``drawn``.

        Playout ``k`` orders the unknown cards by random keys drawn from ``(seed, k)`` (a uniformly random
        order), and breaks the heuristic's ties with its own stream of that seed: with one seed for a whole
        game, states that differ by a card or an action are valued on the same orders and tie-breaks."""
        bottom = min(buried, len(hand.stock))
        unknown = Counter(hand.stock[bottom:])
        unknown.subtract(drawn)
        rows = list(candidates) or [-1]
        out = np.zeros((len(rows), self.n))
        for k in range(self.rollouts):
            keys, ties = self._streams(seed, k)
            rest = sorted(unknown.elements(), key=keys.__getitem__)
            for i, card in enumerate(rows):
                if card >= 0:
                    mine = list(rest)
                    mine.remove(card)
                    order = [*drawn, card, *mine]
                else:
                    order = [*drawn, *rest]
                copy = hand.copy()
                copy.stock = [JOKER] * bottom + order[::-1]  # the engine's stock: top = last
                rng = random.Random()
                rng.setstate(ties)
                if action is not None:
                    copy.apply(action)
                play_out(copy, self.move, rng)
                out[i] += win_shares(copy)
        return out / self.rollouts

    def _streams(self, seed: int, k: int) -> tuple[list[float], Any]:
        """Playout ``k``'s card keys (one per face) and its tie-break generator state."""
        key = (seed, k)
        cached = self._cache.get(key)
        if cached is None:
            gen = random.Random(seed * 1_000_003 + k)
            cached = ([gen.random() for _ in range(NUM_FACES)], gen.getstate())
            self._cache = {key: cached} if len(self._cache) > 4 * self.rollouts else self._cache | {key: cached}
        return cached


# -- adjusting games --------------------------------------------------------------------------------------


def playout_seed(seed: int, deal: int) -> int:
    """The playout seed of every value of one deal's games: fixed before the game (it depends on the tournament
    seed and the deal's number, not on its cards), the same for every event and every seat rotation."""
    return int(np.random.SeedSequence([seed, 2, deal]).generate_state(1, np.uint64)[0])


def deal_term(value: StateValue, hand: Hand, buried: int, seed: int) -> np.ndarray:
    """The deal's correction: the value of the hand as dealt minus ``1/n`` (its mean over deals, by symmetry)."""
    return value.values(hand, buried, None, (), (), seed)[0] - 1.0 / hand.n


def draw_pool(hand: Hand, buried: int, drawn: Sequence[int]) -> Counter[int]:
    """The cards that could be the next one drawn, with their copies, once ``drawn`` are off the top: the
    stock but its known bottom (the jokers buried under it, R2.3). Each copy is equally likely."""
    pool = Counter(hand.stock[min(buried, len(hand.stock)):])
    pool.subtract(drawn)
    return +pool


def draw_term(value: StateValue, hand: Hand, buried: int, action: int, drawn: Sequence[int], card: int,
              seed: int) -> np.ndarray:
    """The correction of one card drawn during ``action`` (after ``drawn``): the value with ``card`` next
    minus the mean over every card that could be next (zero when only one can)."""
    pool = draw_pool(hand, buried, drawn)
    if len(pool) <= 1:
        return np.zeros(hand.n)
    cards = sorted(pool)
    rows = value.values(hand, buried, action, drawn, cards, seed)
    probs = np.array([pool[c] for c in cards], np.float64) / sum(pool.values())
    return rows[cards.index(card)] - probs @ rows


def decision_term(value: StateValue, hand: Hand, buried: int, distribution: Mapping[int, float], action: int,
                  seed: int) -> np.ndarray:
    """The correction of a baseline's decision: the value after ``action`` minus the mean over the policy's
    ``distribution`` (zero when it has one action)."""
    if action not in distribution:
        raise ValueError(f"seat {hand.current} played {action}, which its policy never plays here "
                         f"({sorted(distribution)}): is it the agent the record names?")
    if len(distribution) <= 1:
        return np.zeros(hand.n)
    actions = sorted(distribution)
    rows = np.stack([value.values(hand, buried, a, (), (), seed)[0] for a in actions])
    return rows[actions.index(action)] - np.array([distribution[a] for a in actions]) @ rows


def adjust_record(record: GameRecord, value: StateValue, known: Mapping[int, KnownPolicy],
                  seed: int = 0, game: int = 0, deal: int = 0) -> GameLuck:
    """The luck-adjusted outcome of one recorded hand; ``known[seat]`` is each corrected seat's policy, ``seed``
    and ``deal`` fix the playouts (:func:`playout_seed`)."""
    started = time.perf_counter()
    first = record.hands[0]
    match = Match(record.config, np.random.default_rng(0), first.deck, first.dealer)
    hand = match.hand
    buried = sum(1 for e in hand.events if e[0] == EventKind.BURY)
    rollout = playout_seed(seed, deal)
    correction = deal_term(value, hand, buried, rollout)
    chance = decisions = 0
    for move in first.moves:
        seat, action = move.seat, move.action
        policy = known.get(seat)
        if policy is not None:
            distribution = policy.action_distribution(observe(match, seat))
            try:
                correction += decision_term(value, hand, buried, distribution, action, rollout)
            except ValueError as exc:
                raise ValueError(f"game {game}: {exc}") from None
            decisions += len(distribution) > 1
        stock = hand.stock
        after = hand.copy()
        after.apply(action)
        order = stock[::-1][:len(stock) - len(after.stock)]  # the cards this action draws, first drawn first
        for j, card in enumerate(order):
            if len(draw_pool(hand, buried, order[:j])) > 1:
                correction += draw_term(value, hand, buried, action, order[:j], card, rollout)
                chance += 1
        hand.apply(action)
    raw = win_shares(hand)
    return GameLuck(game, deal, tuple(record.seats), tuple(raw.tolist()), tuple((raw - correction).tolist()),
                    chance + 1, decisions, time.perf_counter() - started)


def known_policies(config: GameConfig, specs: Iterable[str]) -> dict[str, KnownPolicy]:
    """An agent per baseline spec, checked to expose its action distribution (else ValueError)."""
    out = {}
    for spec in specs:
        agent = make_agent(spec, config, 0)
        if not isinstance(agent, KnownPolicy):
            raise ValueError(f"baseline {spec!r} does not say how likely its actions are (no action_distribution): "
                             "only agents with a known policy (the heuristics, random) can be baselines")
        out[spec] = agent
    return out


def luck_adjust_records(records: Sequence[GameRecord], *, value: str = DEFAULT_VALUE, rollouts: int = DEFAULT_ROLLOUTS,
                        fit_hands: int = DEFAULT_FIT_HANDS, baselines: Sequence[str] | None = None,
                        evaluated: str | None = None, progress: bool = True,
                        net_hands: int = DEFAULT_NET_HANDS) -> LuckAdjustment:
    """The luck-adjusted outcomes of recorded hands (e.g. ``goboom_env.records.read("games.jsonl")``).

    ``value``: ``"fitted"`` (fitted on ``fit_hands`` heuristic hands from a fixed seed, before any game is
    adjusted), ``"rollouts"`` (``rollouts`` heuristic playouts a value) or ``"net"`` (an MLP trained on
    ``net_hands`` heuristic hands from a fixed seed, before any game is adjusted).

    ``baselines``: the specs whose decisions are corrected (default: every spec except ``evaluated`` whose
    agent exposes ``action_distribution``); ``evaluated`` (default: the first seat's spec of the first
    record) is never one of them. The playout seeds come from each record's ``meta`` (``seed``, ``game``),
    as :func:`goboom_env.evaluation.tournament.record_games` writes them, so a saved tournament gives the
    same figures as :func:`luck_adjust`."""
    if not records:
        raise ValueError("no games to adjust")
    rollouts = check_int("rollouts", rollouts, 1)
    fit_hands = check_int("fit_hands", fit_hands, 1)
    net_hands = check_int("net_hands", net_hands, 1)
    if value not in VALUES:
        raise ValueError(f"value must be one of {VALUES}, got {value!r}")
    config = records[0].config
    for i, record in enumerate(records):
        if record.episode != "hand" or len(record.hands) != 1:
            raise ValueError(f"game {i}: luck adjustment values single hands (episode='hand'), this game is a "
                             f"{record.episode} of {len(record.hands)} hand(s); play with --episode hand")
        if record.config != config:
            raise ValueError(f"game {i}: all games must share one configuration")
    specs = list(dict.fromkeys(s for r in records for s in r.seats))
    evaluated = specs[0] if evaluated is None else evaluated
    if baselines is None:
        baselines = [s for s in specs if s != evaluated and _is_known(config, s)]
    baselines = list(dict.fromkeys(baselines))
    if evaluated in baselines:
        raise ValueError(f"the evaluated agent {evaluated!r} cannot be a baseline: its decisions are not corrected")
    unknown = [s for s in baselines if s not in specs]
    if unknown:
        raise ValueError(f"baselines {unknown} play no seat of these games (seats: {specs})")
    policies = known_policies(config, baselines)
    started = time.perf_counter()
    estimator: StateValue
    if value == "fitted":
        estimator = fitted_value(config, fit_hands)
    elif value == "net":
        estimator = net_value(config, net_hands)
    else:
        estimator = RolloutValue(config, rollouts)
    label = value_label(value, rollouts)
    games = []
    for i, record in enumerate(tqdm(records, desc=f"luck-adjusting ({label})",
                                    disable=not bars_shown(progress), unit="game", leave=False)):
        meta = record.meta
        known = {seat: policies[spec] for seat, spec in enumerate(record.seats) if spec in policies}
        games.append(adjust_record(record, estimator, known, int(meta.get("seed", 0)), int(meta.get("game", i)),
                                   int(meta.get("deal", meta.get("game", i)))))
    return LuckAdjustment(config, rollouts, tuple(baselines), games, time.perf_counter() - started, value)


def luck_adjust(result: TournamentResult, *, value: str = DEFAULT_VALUE, rollouts: int = DEFAULT_ROLLOUTS,
                fit_hands: int = DEFAULT_FIT_HANDS, baselines: Sequence[str] | None = None,
                progress: bool = True, net_hands: int = DEFAULT_NET_HANDS) -> LuckAdjustment:
    """The luck-adjusted outcomes of a finished tournament of single hands (``episode="hand"``).

    The games are played again with a recorder (:func:`~goboom_env.evaluation.tournament.record_games`: a
    tournament's games replay exactly from its seed), then adjusted by :func:`luck_adjust_records`; the
    evaluated agent is ``result.agents[0]``."""
    if result.episode != "hand":
        raise ValueError(f"luck adjustment values single hands: the tournament plays episode={result.episode!r}; "
                         "play it with episode='hand' (--episode hand)")
    records = record_games(result, len(result.games))
    return luck_adjust_records(records, value=value, rollouts=rollouts, fit_hands=fit_hands, baselines=baselines,
                               evaluated=result.agents[0], progress=progress, net_hands=net_hands)


def _is_known(config: GameConfig, spec: str) -> bool:
    return isinstance(make_agent(spec, config, 0), KnownPolicy)


__all__ = [
    "DEFAULT_ROLLOUTS",
    "DEFAULT_VALUE",
    "VALUES",
    "FittedValue",
    "GameLuck",
    "KnownPolicy",
    "LuckAdjustment",
    "RolloutValue",
    "StateValue",
    "adjust_record",
    "deal_term",
    "decision_term",
    "draw_pool",
    "draw_term",
    "known_policies",
    "luck_adjust",
    "luck_adjust_records",
    "mean_interval",
    "playout_seed",
    "value_label",
    "variance_ratio",
    "win_shares",
]
