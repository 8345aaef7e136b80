"""Luck-adjusted evaluation (AIVAT, Burch et al. 2017, arXiv:1612.06915) for n-player Go Boom hands.

``adjusted[s] = outcome[s] - sum over corrected events e of (V_s(after e) - E[V_s(after e) | before e])``, over the
deal, the draws from the stock and the decisions of agents that play the policy they declare, ``V_s`` valued by
playouts (:class:`RolloutValue`). Each term has zero mean, so ``E[adjusted] = E[outcome]`` with less variance;
docs/evaluation.md has the method and the proof. Only single hands (``episode="hand"``) are adjusted.
"""

from __future__ import annotations

import random
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from itertools import chain
from typing import Any, Protocol, runtime_checkable

import numpy as np

from goboom_env.agents import (
    BEST_HEURISTIC,
    HEURISTIC_AGENTS,
    Observation,
    Policy,
    RandomAgent,
    SpecSource,
    check_spec_source,
    make_agent,
)
from goboom_env.agents.rollout import AGENT_MOVES, HEURISTIC_MOVES, Move, play_out
from goboom_env.cards import DRAW_OR_PASS, NUM_FACES, boom_mask
from goboom_env.config import GameConfig, check_int, errors_prefixed
from goboom_env.engine import Hand, Match
from goboom_env.evaluation.stats import Z95, PairedTest, paired_tests
from goboom_env.evaluation.tournament import TournamentResult, record_games
from goboom_env.events import EventKind
from goboom_env.hints import needs_extra
from goboom_env.observation import observe
from goboom_env.process import bar
from goboom_env.records import GameRecord

DEFAULT_ROLLOUTS = 32
"""Playouts per value of ``value="rollouts"``: 0.04 to 0.2 s per hand on one core; fewer, more noise (the variance
reduction grows up to about 32 playouts and little beyond, docs/evaluation.md)."""


@runtime_checkable
class KnownPolicy(Protocol):
    """An agent whose decisions can be corrected: it says how likely each of its actions is."""

    def action_distribution(self, observation: Observation) -> dict[int, float]:
        """Action -> probability of :meth:`act` for this observation (the probabilities sum to 1)."""
        ...


PLAYS_DECLARED_POLICY = "plays_declared_policy"
"""The class attribute (``plays_declared_policy = True``) by which the class that defines an agent's ``act`` vouches
that an ``action_distribution`` it inherits is the distribution of that ``act``."""
SAMPLED_DECISIONS = 12
"""Decisions with several possible actions on which a declared policy is checked against ``act``."""
SAMPLES = 48
"""Seeds ``act`` is sampled with at each of those decisions."""
MISMATCH_P = 1e-6
"""A chi-square p-value below this, over the sampled decisions, shows that ``act`` does not play the declared
probabilities (a true declaration fails it about once in a million checks)."""


def _owner(cls: type, member: str) -> type | None:
    """The class of ``cls``'s method resolution order that defines ``member`` (None: none does)."""
    return next((c for c in cls.__mro__ if member in vars(c)), None)


def untrusted_policy(agent: Policy) -> str | None:
    """Why ``agent``'s decisions cannot be corrected with the distribution it declares, or None when they can: it must
    expose ``action_distribution`` from the class that defines its ``act`` (or that class must set
    :data:`PLAYS_DECLARED_POLICY`), and play from its observation alone."""
    if not isinstance(agent, KnownPolicy):
        return "it does not say how likely its actions are (no action_distribution)"
    act, declared = _owner(type(agent), "act"), _owner(type(agent), "action_distribution")
    if act is None or declared is None:  # set on the instance, not declared by a class
        return "its act or action_distribution is not a method of its class"
    if act is not declared and vars(act).get(PLAYS_DECLARED_POLICY) is not True:
        return (f"its act comes from {act.__name__} but its action_distribution from {declared.__name__}, which may "
                f"describe another policy (set {PLAYS_DECLARED_POLICY} = True in {act.__name__} if it is the same)")
    if agent.needs_view:
        return "it plays from a view of the hidden cards"
    return None


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
    decisions: tuple[int, ...]
    """Per seat: the decisions corrected (a known policy's, with more than one possible action)."""
    seconds: float


@dataclass
class LuckAdjustment:
    """The luck-adjusted outcomes of a set of hands, with the tables derived from them."""

    config: GameConfig
    rollouts: int
    corrected: tuple[str, ...]
    """The specs whose decisions were corrected."""
    games: list[GameLuck]
    elapsed: float = field(default=0.0, compare=False)
    not_corrected: dict[str, str] = field(default_factory=dict)
    """Spec -> why its decisions were not corrected (every spec not in :attr:`corrected`)."""
    played: dict[str, str] = field(default_factory=dict)
    """Spec -> what played its seats in the playouts (:func:`playout_moves`)."""

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
        """:meth:`~goboom_env.evaluation.tournament.TournamentResult.paired` on the adjusted outcomes: the same mean
        differences, estimated with less variance."""
        specs = self.specs()
        return paired_tests(specs, {spec: self._by_deal(spec, "adjusted") for spec in specs})

    def table(self) -> list[dict[str, Any]]:
        """Per spec: raw and adjusted win rates with 95% normal intervals over the deals, and the variance
        reduction factor (raw variance / adjusted variance of the per-deal scores)."""
        rows = []
        for spec in self.specs():
            raw, adjusted = self.deal_scores(spec)
            games = sum(name == spec for g in self.games for name in g.seats)
            row: dict[str, Any] = {"agent": spec, "games": games, "deals": len(raw)}
            for key, scores in (("raw", raw), ("adjusted", adjusted)):
                mean = float(np.mean(scores))
                half = Z95 * float(np.std(scores, ddof=1)) / np.sqrt(len(scores)) if len(scores) > 1 else 0.0
                row |= {f"{key}_win_rate": mean, f"{key}_ci_low": mean - half, f"{key}_ci_high": mean + half}
            row["variance_reduction"] = variance_ratio(raw, adjusted)
            rows.append(row)
        return rows

    def agent_rows(self) -> list[dict[str, Any]]:
        """Per spec: its seat-games, the decisions of its seats that were corrected, why (not), and what played its
        seats in the playouts: what the adjustment did to each agent."""
        rows = []
        for spec in self.specs():
            seats = [(g, s) for g in self.games for s, name in enumerate(g.seats) if name == spec]
            rows.append({"agent": spec, "seat_games": len(seats),
                         "decisions_corrected": sum(g.decisions[s] for g, s in seats),
                         "corrected": spec in self.corrected,
                         "why": self.not_corrected.get(spec, "declares the policy its act plays"),
                         "playouts": self.played.get(spec, "")})
        return rows

    def label(self) -> str:
        """The value estimator in words: ``8 playouts a value``."""
        return f"{self.rollouts} playouts a value"

    def seconds_per_game(self) -> float:
        """The estimator's cost: wall-clock seconds per hand adjusted."""
        return sum(g.seconds for g in self.games) / max(1, len(self.games))

    def summary(self) -> dict[str, Any]:
        """The estimator's settings and cost."""
        return {"rollouts": self.rollouts, "corrected": list(self.corrected), "not_corrected": self.not_corrected,
                "played": self.played, "games": len(self.games), "seconds_per_game": round(self.seconds_per_game(), 4),
                "elapsed_s": round(self.elapsed, 3)}

    def to_dict(self) -> dict[str, Any]:
        """Summary, table, the adjusted paired tests and every game as JSON-friendly data."""
        return {"summary": self.summary(), "table": self.table(), "agents": self.agent_rows(),
                "paired": [t.to_dict() for t in self.paired()], "games": [asdict(g) for g in self.games]}


def variance_ratio(raw: np.ndarray, adjusted: np.ndarray) -> float | None:
    """Raw variance / adjusted variance (None when undefined: fewer than two scores or no adjusted spread)."""
    if len(raw) < 2:
        return None
    low = float(np.var(adjusted, ddof=1))
    return float(np.var(raw, ddof=1)) / low if low > 0 else None


# -- the value function ---------------------------------------------------------------------------------


@lru_cache(maxsize=512)
def stock_keys(seed: int, k: int, copies: int) -> np.ndarray:
    """Sample ``k``'s random key of every card copy, ``(faces, copies)``: i.i.d. uniform, from ``(seed, k)`` alone
    (cached, so read-only)."""
    keys = np.random.default_rng([seed, 3, k]).random((NUM_FACES, copies))
    keys.flags.writeable = False
    return keys


def keyed_stock(hand: Hand, buried: int, keys: np.ndarray) -> list[int]:
    """``hand``'s stock with its unknown part in the order of ``keys`` (:func:`stock_keys`; the jokers buried under
    it, R2.3, stay at the bottom): the i-th copy of a face, in any fixed numbering of the copies, takes that copy's
    key, so independent uniform keys give a uniformly random order of the unknown cards, whatever is drawn."""
    bottom = min(buried, len(hand.stock))
    copy: Counter[int] = Counter()
    tagged = []
    for face in hand.stock[bottom:]:
        tagged.append((keys[face, copy[face]], face))
        copy[face] += 1
    tagged.sort(reverse=True)  # the engine draws from the end of the list: the smallest key comes first
    return hand.stock[:bottom] + [face for _, face in tagged]


def win_shares(hand: Hand) -> np.ndarray:
    """Per seat: 1/k if among the k winners of the finished hand, else 0."""
    winners = hand.winners()
    shares = np.zeros(hand.n)
    shares[winners] = 1.0 / len(winners)
    return shares


def uncertain_draw(hand: Hand, buried: int, action: int) -> bool:
    """Whether ``action`` takes cards from the stock that its unknown order could change: a draw or a boom with two
    different faces among the cards that could come (the buried jokers come last, R2.3)."""
    if not hand.stock or hand.n < 2:
        return False
    draws = action == DRAW_OR_PASS or (not hand.classic and (boom_mask(hand.config.aces_mode) >> action) & 1 == 1)
    return draws and len(set(hand.stock[min(buried, len(hand.stock)):])) > 1


class RolloutValue:
    """``V(state)``: every seat's mean win share over ``rollouts`` playouts of the variant's heuristic (or, in
    ``seats``, each seat's own move) from the true state, the stock's unknown part in playout ``k``'s keyed order
    (:func:`keyed_stock`) and its ties broken by playout ``k``'s stream: common random numbers from the seed alone."""

    def __init__(self, config: GameConfig, rollouts: int, seats: Mapping[int, Move] | None = None) -> None:
        self.config = config
        self.rollouts = check_int("rollouts", rollouts, 1)
        self.move = HEURISTIC_MOVES[config.variant]
        self.seats = dict(seats or {})
        """Seats that play their own move in the playouts (the others play the heuristic)."""
        self.n = config.num_players
        self.copies = max(config.num_decks, config.num_jokers, 1)  # the most copies of one face in the deck
        self._ties: dict[tuple[int, int], Any] = {}

    def seated(self, seats: Mapping[int, Move]) -> RolloutValue:
        """The same playouts (orders, tie-breaks) with ``seats`` playing their own moves: the value of a game
        with those agents in those seats, no longer the same for every seat."""
        out = RolloutValue(self.config, self.rollouts, seats)
        out._ties = self._ties
        return out

    def value(self, hand: Hand, buried: int, seed: int) -> np.ndarray:
        """Every seat's mean win share over the playouts from ``hand``."""
        return self._playouts(hand, buried, None, seed)

    def expected(self, hand: Hand, buried: int, action: int, seed: int) -> np.ndarray:
        """Every seat's mean win share over the playouts of ``action`` then the heuristic, from ``hand``."""
        return self._playouts(hand, buried, action, seed)

    def _playouts(self, hand: Hand, buried: int, action: int | None, seed: int) -> np.ndarray:
        out = np.zeros(self.n)
        for k in range(self.rollouts):
            state = hand.copy()
            state.stock = keyed_stock(hand, buried, stock_keys(seed, k, self.copies))
            rng = random.Random()
            rng.setstate(self._tie_stream(seed, k))
            if action is not None:
                state.apply(action)
            play_out(state, self.move, rng, self.seats)
            out += win_shares(state)
        return out / self.rollouts

    def _tie_stream(self, seed: int, k: int) -> Any:
        """Playout ``k``'s tie-break generator state."""
        key = (seed, k)
        state = self._ties.get(key)
        if state is None:
            state = random.Random(seed * 1_000_003 + k).getstate()
            self._ties = {key: state} if len(self._ties) > 4 * self.rollouts else self._ties | {key: state}
        return state


# -- adjusting games --------------------------------------------------------------------------------------


def playout_seed(seed: int, deal: int) -> int:
    """The playout seed of every value of one deal's games: fixed before the game (it depends on the tournament
    seed and the deal's number, not on its cards), the same for every event and every seat rotation."""
    return int(np.random.SeedSequence([seed, 2, deal]).generate_state(1, np.uint64)[0])


def deal_term(value: RolloutValue, hand: Hand, buried: int, seed: int) -> np.ndarray:
    """The deal's correction: the value of the hand as dealt minus ``1/n`` (its mean over deals, by symmetry)."""
    return value.value(hand, buried, seed) - 1.0 / hand.n


def draw_term(value: RolloutValue, hand: Hand, buried: int, action: int, seed: int,
              expected: np.ndarray | None = None) -> np.ndarray:
    """The correction of the cards ``action`` takes from the stock: the value once they are drawn minus its
    expectation (``expected``, else :meth:`RolloutValue.expected`); zero when no order could change them."""
    if not uncertain_draw(hand, buried, action):
        return np.zeros(hand.n)
    if expected is None:
        expected = value.expected(hand, buried, action, seed)
    after = hand.copy()
    after.apply(action)
    return value.value(after, buried, seed) - expected


def decision_term(expectations: Mapping[int, np.ndarray], distribution: Mapping[int, float], action: int,
                  seat: int = 0) -> np.ndarray:
    """The correction of a known policy's decision: the expected value after ``action`` minus its mean over the
    policy's ``distribution`` (``expectations[a]``: :meth:`RolloutValue.expected` of each action it could play)."""
    if action not in distribution:
        raise ValueError(f"seat {seat} played {action}, which its policy never plays here "
                         f"({sorted(distribution)}): is it the agent the record names?")
    if len(distribution) <= 1:
        return np.zeros_like(next(iter(expectations.values())))
    return expectations[action] - sum(p * expectations[a] for a, p in distribution.items())


def replayed(record: GameRecord) -> Iterator[tuple[Match, int, int]]:
    """The first hand of ``record`` played again on the engine: before each move, the match, the seat to move and
    the action it played (the move is applied once the consumer asks for the next)."""
    first = record.hands[0]
    match = Match(record.config, np.random.default_rng(0), first.deck, first.dealer)
    for move in first.moves:
        yield match, move.seat, move.action
        match.hand.apply(move.action)


def adjust_record(record: GameRecord, value: RolloutValue, known: Mapping[int, KnownPolicy],
                  seed: int = 0, game: int = 0, deal: int = 0, in_play: RolloutValue | None = None) -> GameLuck:
    """The luck-adjusted outcome of one recorded hand; ``known[seat]`` is each corrected seat's policy, ``seed``
    and ``deal`` fix the sampled stock orders and playouts (:func:`playout_seed`). ``value`` values the deal
    (it must treat every seat alike, :func:`deal_term`); ``in_play`` (default ``value``) the draws and decisions,
    where any fixed value keeps the terms' zero mean."""
    in_play = value if in_play is None else in_play
    started = time.perf_counter()
    moves = replayed(record)
    first = next(moves, None)
    if first is None:
        raise ValueError(f"game {game}: the record has no move")
    hand = first[0].hand  # as dealt, before the first move
    buried = sum(1 for e in hand.events if e[0] == EventKind.BURY)
    rollout = playout_seed(seed, deal)
    correction = deal_term(value, hand, buried, rollout)
    chance = 0
    decisions = [0] * record.config.num_players
    for match, seat, action in chain([first], moves):
        policy = known.get(seat)
        expectations: dict[int, np.ndarray] = {}
        if policy is not None:
            distribution = policy.action_distribution(observe(match, seat))
            if len(distribution) > 1 or action not in distribution:
                expectations = {a: in_play.expected(hand, buried, a, rollout) for a in sorted(distribution)}
                with errors_prefixed(f"game {game}"):
                    correction += decision_term(expectations, distribution, action, seat)
                decisions[seat] += 1
        if uncertain_draw(hand, buried, action):
            correction += draw_term(in_play, hand, buried, action, rollout, expectations.get(action))
            chance += 1
    raw = win_shares(hand)
    return GameLuck(game, deal, tuple(record.seats), tuple(raw.tolist()), tuple((raw - correction).tolist()),
                    chance + 1, tuple(decisions), time.perf_counter() - started)


def policy_move(agent: Policy) -> Move:
    """``agent`` as a playout move: it acts on the observation of the seat to move, its randomness restarted from
    the playout's stream before each decision (so a value stays a function of its seed)."""

    def move(hand: Hand, seen: int, rng: random.Random) -> int:
        agent.reseed(rng.getrandbits(63))
        return int(agent.act(observe(hand, hand.current)))

    return move


ENGINE_MOVES: dict[type, Move] = {RandomAgent: AGENT_MOVES["random"]} | {
    cls: AGENT_MOVES[name] for name, cls in HEURISTIC_AGENTS.items()}
"""The agents with an engine form (:data:`~goboom_env.agents.rollout.AGENT_MOVES`), by their exact class: a subclass
or an agent of another class that only shares a name may play otherwise, and plays itself."""


def playout_moves(config: GameConfig, specs: Iterable[str]) -> tuple[dict[str, Move], dict[str, str]]:
    """The move each spec plays its seats with in the playouts, and what that is in words: the engine form of an agent
    of exactly a heuristic's or ``random``'s class (:data:`ENGINE_MOVES`), else the agent itself on its observations
    (slower). An agent that needs a view of the hidden cards (a search) gets no move: the heuristic plays its seats."""
    moves: dict[str, Move] = {}
    played: dict[str, str] = {}
    for spec in specs:
        agent = make_agent(spec, config, 0)
        engine = ENGINE_MOVES.get(type(agent))
        if engine is not None:
            moves[spec] = engine
            played[spec] = f"{type(agent).name}, on the engine (its own rule and tie set)"
        elif not agent.needs_view:
            moves[spec] = policy_move(agent)
            played[spec] = f"the agent itself ({type(agent).__name__}) on its observations, one instance reseeded " \
                           "before each decision"
        else:
            played[spec] = f"{BEST_HEURISTIC[config.variant]} in its place (the agent searches with the hidden cards)"
    return moves, played


def known_policies(config: GameConfig, specs: Iterable[str], records: Sequence[GameRecord] = ()
                   ) -> tuple[dict[str, KnownPolicy], dict[str, str]]:
    """The agents whose decisions can be corrected, by spec, and for the others why not (:func:`untrusted_policy`;
    with ``records``, also :func:`sampled_mismatch` on their decisions)."""
    agents = {spec: make_agent(spec, config, 0) for spec in specs}
    why = {spec: untrusted_policy(agent) or sampled_mismatch(spec, config, records) for spec, agent in agents.items()}
    trusted = {spec: agent for spec, agent in agents.items()
               if why[spec] is None and isinstance(agent, KnownPolicy)}  # always one: untrusted_policy checked it
    return trusted, {spec: problem for spec, problem in why.items() if problem is not None}


def sampled_mismatch(spec: str, config: GameConfig, records: Sequence[GameRecord]) -> str | None:
    """None when ``spec``'s ``act``, sampled with :data:`SAMPLES` seeds on its first :data:`SAMPLED_DECISIONS` decisions
    in ``records`` with several declared actions, stays in the declared set and matches its probabilities (chi-square,
    p >= :data:`MISMATCH_P`), or when no such decision was played; else the problem in words."""
    with needs_extra("the check of a declared policy against sampled play"):
        from scipy import stats

    agent = make_agent(spec, config, 0)
    assert isinstance(agent, KnownPolicy)
    statistic, df, checked = 0.0, 0, 0
    decisions = ((record, match, seat) for record in records for match, seat, _ in replayed(record)
                 if record.seats[seat] == spec)
    for record, match, seat in decisions:
        if checked >= SAMPLED_DECISIONS:
            break
        observation = observe(match, seat)
        declared = agent.action_distribution(observation)
        if len(declared) < 2:
            continue
        counts: Counter[int] = Counter()
        for k in range(SAMPLES):
            agent.reseed(k)
            counts[int(agent.act(observation))] += 1
        outside = sorted(set(counts) - set(declared))
        if outside:
            return (f"its act played {outside[0]} where its action_distribution allows only {sorted(declared)} "
                    f"(game {record.meta.get('game', '?')}, seat {seat})")
        expected = np.array([SAMPLES * declared[a] for a in declared])
        statistic += float((((np.array([counts[a] for a in declared]) - expected) ** 2) / expected).sum())
        df += len(declared) - 1
        checked += 1
    p = float(stats.chi2.sf(statistic, df)) if df else 1.0
    if p < MISMATCH_P:
        return (f"its act, sampled {SAMPLES} times at {checked} decisions, does not play the probabilities its "
                f"action_distribution declares (chi-square p = {p:.1e})")
    return None


def luck_adjust_records(records: Sequence[GameRecord], *, rollouts: int = DEFAULT_ROLLOUTS,
                        corrected: Sequence[str] | None = None, progress: bool = True,
                        source: SpecSource = SpecSource.RECORD) -> LuckAdjustment:
    """The luck-adjusted outcomes of recorded hands, each seat played in the playouts by its own agent where it can
    be (:func:`playout_moves`). ``corrected`` defaults to every spec that plays the policy it declares (another is a
    ValueError); the playout seeds come from each record's ``meta`` (``seed``, ``game``), so a saved tournament gives
    the figures of :func:`luck_adjust`. ``source``: where the seats come from (a file's may not name a Python file)."""
    if not records:
        raise ValueError("no games to adjust")
    config = records[0].config
    estimator = RolloutValue(config, rollouts)
    for i, record in enumerate(records):
        if record.episode != "hand" or len(record.hands) != 1:
            raise ValueError(f"game {i}: luck adjustment values single hands (episode='hand'), this game is a "
                             f"{record.episode} of {len(record.hands)} hand(s); play with --episode hand")
        if record.config != config:
            raise ValueError(f"game {i}: all games must share one configuration")
    specs = list(dict.fromkeys(s for r in records for s in r.seats))
    for spec in specs:
        check_spec_source(spec, source, "a seat of the records")
    asked = list(dict.fromkeys(corrected)) if corrected is not None else specs
    unknown = [s for s in asked if s not in specs]
    if unknown:
        raise ValueError(f"corrected specs {unknown} play no seat of these games (seats: {specs})")
    policies, why = known_policies(config, asked, records)
    if corrected is not None and why:
        spec, problem = next(iter(why.items()))
        raise ValueError(f"{spec!r} cannot have its decisions corrected: {problem}; only agents that play the policy "
                         "they declare (the heuristics, random) can")
    why |= {s: "not asked for (corrected=...)" for s in specs if s not in asked}
    started = time.perf_counter()
    moves, played = playout_moves(config, specs)
    luck = LuckAdjustment(config, estimator.rollouts, tuple(policies), [], not_corrected=why, played=played)
    for i, record in enumerate(bar(records, desc=f"luck-adjusting ({luck.label()})", enabled=progress, unit="game",
                                   leave=False)):
        meta = record.meta
        known = {seat: policies[spec] for seat, spec in enumerate(record.seats) if spec in policies}
        in_play = estimator.seated({seat: moves[spec] for seat, spec in enumerate(record.seats) if spec in moves})
        luck.games.append(adjust_record(record, estimator, known, int(meta.get("seed", 0)), int(meta.get("game", i)),
                                        int(meta.get("deal", meta.get("game", i))), in_play))
    luck.elapsed = time.perf_counter() - started
    return luck


def luck_adjust(result: TournamentResult, *, rollouts: int = DEFAULT_ROLLOUTS, corrected: Sequence[str] | None = None,
                progress: bool = True) -> LuckAdjustment:
    """The luck-adjusted outcomes of a finished tournament of single hands, its games played again with a recorder
    (they replay exactly from its seed)."""
    if result.episode != "hand":
        raise ValueError(f"luck adjustment values single hands: the tournament plays episode={result.episode!r}; "
                         "play it with episode='hand' (--episode hand)")
    return luck_adjust_records(record_games(result, len(result.games)), rollouts=rollouts, corrected=corrected,
                               progress=progress, source=SpecSource.CALLER)

