"""Tournaments between agents on the engine directly, reproducible from a seed: game ``g`` is fixed by ``(seed, g)``.

* seats rotate: in game ``g`` seat ``s`` is played by ``agents[(s - g) % n]``;
* the deal (dealer and decks, R1.2, R2.2) comes from ``(seed, deal)``, ``deal = g``, or ``g // n`` with
  ``duplicate=True``: each deal is played ``n`` times, once per rotation, so card luck cancels in the paired
  comparisons (:meth:`TournamentResult.paired`; the games are rounded up to a multiple of ``n``);
* each agent is re-seeded from ``(seed, g, seat)`` before the game, so results do not depend on the processes.

A shared win counts ``1/k``.
"""

from __future__ import annotations

import csv
import json
import multiprocessing
import os
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from goboom_env.agents import Policy, make_agent
from goboom_env.cards import code_of, deck_faces
from goboom_env.config import GameConfig, check_int
from goboom_env.engine import Match, blamed_on
from goboom_env.episode import check_episode
from goboom_env.evaluation.stats import PairedTest, paired_tests, wilson_interval
from goboom_env.game_loop import Decision, DecisionHook, play_episode
from goboom_env.process import WorkerLostError, bars_shown, become_worker, uninterrupted
from goboom_env.records import GameRecord, Recorder

TABLE_KEYS = ("agent", "games", "wins", "win_rate", "ci_low", "ci_high", "mean_points")


@dataclass(frozen=True)
class GameOutcome:
    """The outcome of one game of a tournament."""

    index: int
    deal: int
    seats: tuple[str, ...]
    winners: tuple[int, ...]
    points: tuple[int, ...]
    """Per seat: what the scoring added to its total over the game (R1.11, R1.12, R2.11)."""
    hands: int
    placing: tuple[int, ...]
    """Per seat: 1 = best; ties share a place (winners first, then by points, for ratings)."""
    dealer: int
    deck: str
    """The first hand's deck order as card codes, top first (to check duplicate deals)."""
    decisions: int = 0
    """Moves made over the whole game, forced ones included."""

    def win_shares(self) -> list[float]:
        """Per seat: 1/k if among the k winners, else 0."""
        k = len(self.winners)
        return [1.0 / k if s in self.winners else 0.0 for s in range(len(self.seats))]


@dataclass
class TournamentResult:
    """All games of a tournament with the tables derived from them."""

    config: GameConfig
    agents: list[str]
    games: list[GameOutcome]
    seed: int = 0
    duplicate: bool = False
    episode: str = "hand"
    elapsed: float = field(default=0.0, compare=False)
    processes: int = field(default=1, compare=False)

    def specs(self) -> list[str]:
        """The distinct agent specs, in order of first appearance."""
        return list(dict.fromkeys(self.agents))

    def table(self) -> list[dict[str, Any]]:
        """Per distinct spec: games (seat-games), wins (shares), win rate with 95% Wilson CI, mean points/hand."""
        rows = []
        for spec in self.specs():
            seats = [(g, s) for g in self.games for s, name in enumerate(g.seats) if name == spec]
            if not seats:
                continue
            wins = sum(g.win_shares()[s] for g, s in seats)
            low, high = wilson_interval(wins, len(seats))
            rows.append({"agent": spec, "games": len(seats), "wins": wins, "win_rate": wins / len(seats),
                         "ci_low": low, "ci_high": high,
                         "mean_points": sum(g.points[s] for g, s in seats) / sum(g.hands for g, _ in seats)})
        return rows

    def deal_scores(self) -> dict[str, dict[int, float]]:
        """Per spec and deal: its mean win share over its seat-games in that deal."""
        shares: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
        for g in self.games:
            for spec, share in zip(g.seats, g.win_shares()):
                shares[spec][g.deal].append(share)
        return {spec: {deal: sum(s) / len(s) for deal, s in by_deal.items()} for spec, by_deal in shares.items()}

    def paired(self) -> list[PairedTest]:
        """Paired tests for every pair of distinct specs over the deals both played (duplicate deals)."""
        return paired_tests(self.specs(), self.deal_scores())

    def summary(self) -> dict[str, Any]:
        """Run metadata: configuration, agents, seed, mode, games and throughput."""
        return {"config": self.config.to_dict(), "agents": list(self.agents), "seed": self.seed,
                "duplicate": self.duplicate, "episode": self.episode, "games": len(self.games),
                "processes": self.processes, "elapsed_s": round(self.elapsed, 3),
                "games_per_s": round(len(self.games) / self.elapsed, 2) if self.elapsed > 0 else None}

    def to_dict(self) -> dict[str, Any]:
        """Summary, table, paired tests and every game record as JSON-friendly data."""
        return {"summary": self.summary(), "table": self.table(), "paired": [t.to_dict() for t in self.paired()],
                "games": [asdict(g) for g in self.games]}

    def to_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1))

    def to_csv(self, path: str | Path) -> None:
        """Write :meth:`table` as CSV."""
        write_csv(Path(path), self.table(), TABLE_KEYS)


def write_csv(path: Path, rows: Sequence[Mapping[str, Any]], keys: Sequence[str] | None = None) -> None:
    """``rows`` as CSV with a header: the columns ``keys`` (default: the first row's keys, in order)."""
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(keys if keys is not None else rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def seat_agents(specs: Sequence[str], num_players: int) -> list[str]:
    """One spec per seat: the specs given, the last one repeated (``["heuristic", "random"]`` at 4 players is 1 vs
    3); ValueError for no spec, a plain string, or more specs than seats."""
    if isinstance(specs, str) or not isinstance(specs, Sequence):
        raise ValueError(f"agents must be a list of specs, got {specs!r}")
    if not specs:
        raise ValueError(f"agents must list at least one spec (for {num_players} seats), got none")
    if len(specs) > num_players:
        raise ValueError(f"{len(specs)} agents given for {num_players} seats: give at most one spec per seat")
    return list(specs) + [specs[-1]] * (num_players - len(specs))


def seat_specs(agents: Sequence[str], game: int) -> tuple[str, ...]:
    """Seat rotation: in game ``g`` seat ``s`` is played by ``agents[(s - g) % n]``."""
    n = len(agents)
    return tuple(agents[(s - game) % n] for s in range(n))


def _seed_of(*key: int) -> int:
    return int(np.random.SeedSequence(list(key)).generate_state(1, np.uint64)[0])


class _Seats:
    """Agent instances of one worker, one per (spec, seat), re-seeded before every game."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.cache: dict[tuple[str, int], Policy] = {}

    def get(self, spec: str, seat: int, seed: int) -> Policy:
        agent = self.cache.get((spec, seat))
        if agent is None:
            agent = self.cache[spec, seat] = make_agent(spec, self.config, seed)
        else:
            agent.reseed(seed)
        return agent

    def play(self, seed: int, seats: Sequence[str], duplicate: bool, episode: str, game: int,
             on_decision: DecisionHook | None = None) -> GameOutcome:
        """Game ``game`` of the tournament of ``seed`` (see the module docstring)."""
        deal = game // self.config.num_players if duplicate else game
        players = [self.get(spec, s, _seed_of(seed, 1, game, s)) for s, spec in enumerate(seats)]
        return play_game(self.config, seats, players, _seed_of(seed, 0, deal), episode, game, deal, on_decision)


def play_game(config: GameConfig, seats: Sequence[str], agents: Sequence[Policy], deal_seed: int,
              episode: str = "hand", index: int = 0, deal: int = 0,
              on_decision: DecisionHook | None = None) -> GameOutcome:
    """Play one game on the engine: ``agents[s]`` plays seat ``s``; the deal comes from ``deal_seed``;
    ``on_decision`` sees every decision (e.g. a :class:`goboom_env.records.Recorder`)."""
    rng = np.random.default_rng(deal_seed)
    dealer = int(rng.integers(config.num_players))  # R1.2, R2.2
    faces = deck_faces(config.num_decks, config.num_jokers)
    deck = [faces[i] for i in rng.permutation(len(faces))]
    match = Match(config, rng, deck, dealer)
    moves = [0]

    def count(decision: Decision) -> None:
        moves[0] += 1
        if on_decision is not None:
            on_decision(decision)

    with blamed_on(f"game {index}, seats {list(seats)}"):
        result = play_episode(match, agents, episode, count)
    return GameOutcome(index, deal, tuple(seats), result.winners, result.points, result.hands,
                       _placing(result.winners, result.standing), dealer, "".join(code_of(f) for f in deck),
                       moves[0])


def check_replayable(config: GameConfig, specs: Iterable[str]) -> None:
    """ValueError naming the first agent whose games cannot be played again from the seed, as recording and luck
    adjustment need: one whose ``replayable`` is False (a search with a time limit, ``ms=``)."""
    for spec in dict.fromkeys(specs):
        if not getattr(make_agent(spec, config, 0), "replayable", True):
            raise ValueError(f"{spec} decides by the clock, so its games cannot be played again exactly to record or "
                             "luck-adjust them: give it an iteration budget instead (iters=N)")


def record_games(result: TournamentResult, count: int) -> list[GameRecord]:
    """Complete records of the tournament's first ``count`` games, played again from the seed with a recorder; a
    game that ends otherwise than in the tournament is a RuntimeError (an agent not reproducible from its seed)."""
    count = check_int("count", count, 0)
    check_replayable(result.config, result.agents)
    pool = _Seats(result.config)
    saved = []
    for game in result.games[:count]:
        g = game.index
        recorder = Recorder(result.episode, game.seats, {"game": g, "deal": game.deal, "seed": result.seed,
                                                          "duplicate": result.duplicate, "agents": list(result.agents)})
        again = pool.play(result.seed, game.seats, result.duplicate, result.episode, g, recorder.on_decision)
        if again != game:
            raise RuntimeError(f"game {g} played again ended differently ({again.winners} won, not {game.winners}): "
                               f"an agent of {list(game.seats)} does not replay from its seed")
        record = recorder.finish()
        if (record.result.winners, record.result.points) != (game.winners, game.points):
            raise RuntimeError(f"game {g}: its record replays to winners {record.result.winners}, not {game.winners}")
        saved.append(record)
    return saved


def _placing(winners: Sequence[int], badness: Sequence[int]) -> tuple[int, ...]:
    """Ranks for ratings: winners share place 1, then the others by ``badness`` (lower is better)."""
    keys = [(0 if s in winners else 1, b) for s, b in enumerate(badness)]
    return tuple(1 + sum(1 for other in keys if other < k) for k in keys)


def _chunk_job(job: tuple[dict[str, Any], list[str], int, bool, str, int, int]) -> list[GameOutcome]:
    """One worker's chunk: ``(config dict, agents, seed, duplicate, episode, start, stop)``."""
    config_dict, agents, seed, duplicate, episode, start, stop = job
    pool = _Seats(GameConfig.from_dict(config_dict))
    return [pool.play(seed, seat_specs(agents, g), duplicate, episode, g) for g in range(start, stop)]


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def worker_count(processes: int, games: int) -> int:
    """The workers a tournament of ``games`` games asked for ``processes`` starts: at most one per game and CPU."""
    return max(1, min(processes, games, available_cpus()))


def _play_parallel(config: GameConfig, agents: list[str], seed: int, duplicate: bool, episode: str, total: int,
                   processes: int, bar: tqdm) -> list[GameOutcome]:
    """Play every game on a pool of worker processes, chunks in any order; a failing chunk, a dead worker or a
    signal terminates every worker at once (the pool is started whole, so that a signal meanwhile stops it too)."""
    size = max(1, min(200, total // (processes * 8)))
    jobs = [(config.to_dict(), agents, seed, duplicate, episode, start, min(total, start + size))
            for start in range(0, total, size)]
    records: list[GameOutcome] = []
    pool = None
    try:
        with uninterrupted():
            before = set(multiprocessing.active_children())
            pool = multiprocessing.Pool(processes, initializer=become_worker,  # the platform's start method
                                        initargs=(os.getpid(),))
            workers = [p for p in multiprocessing.active_children() if p not in before]
        chunks = pool.imap_unordered(_chunk_job, jobs)
        for _ in jobs:
            chunk = _next_chunk(chunks, workers)
            records += chunk
            bar.update(len(chunk))
        pool.close()
    except BaseException:
        if pool is not None:
            with uninterrupted():
                pool.terminate()
        raise
    finally:
        if pool is not None:
            with uninterrupted():
                pool.join()
    return records


def _next_chunk(chunks: Any, workers: list[multiprocessing.process.BaseProcess]) -> list[GameOutcome]:
    """The next finished chunk; :class:`WorkerLostError` once a worker has exited (the pool would wait forever)."""
    while True:
        # checked before every wait: while the others finish chunks, a timeout may never come
        dead = next((w for w in workers if w.exitcode is not None), None)
        if dead is not None:
            raise WorkerLostError(f"a worker process ended with exit code {dead.exitcode} (killed, e.g. for lack "
                                  "of memory?) before finishing its games; the tournament was stopped")
        try:
            return chunks.next(timeout=1.0)
        except multiprocessing.TimeoutError:
            continue


def run_tournament(config: GameConfig, agents: list[str], games: int, *, seed: int = 0, duplicate: bool = False,
                   processes: int = 1, episode: str = "hand", progress: bool = True) -> TournamentResult:
    """Play ``games`` games, ``agents[i]`` in seat ``i`` first, seats rotating (the last spec fills the remaining
    seats: :func:`seat_agents`). With ``processes > 1`` worker processes play them (where they are spawned, a script
    needs the ``if __name__ == "__main__":`` guard); an agent's error or a signal stops every worker and is raised
    here."""
    if not isinstance(config, GameConfig):
        raise ValueError(f"config must be a GameConfig, got {type(config).__name__}")
    n = config.num_players
    agents = seat_agents(agents, n)
    check_episode(episode)
    games, seed = check_int("games", games, 1), check_int("seed", seed, 0)
    processes = worker_count(check_int("processes", processes, 1), games)
    total = -(-games // n) * n if duplicate else games
    for spec in dict.fromkeys(agents):
        make_agent(spec, config, 0)  # fail fast on a bad spec, before any process starts
    started = time.perf_counter()
    with tqdm(total=total, desc=f"{config.variant} {n}p: {' vs '.join(dict.fromkeys(agents))}",
              disable=not bars_shown(progress), unit="game", leave=False) as bar:
        if processes == 1:
            pool = _Seats(config)
            records = []
            for g in range(total):
                records.append(pool.play(seed, seat_specs(agents, g), duplicate, episode, g))
                bar.update()
        else:
            records = _play_parallel(config, agents, seed, duplicate, episode, total, processes, bar)
            records.sort(key=lambda r: r.index)
    return TournamentResult(config, agents, records, seed, duplicate, episode,
                            time.perf_counter() - started, processes)


def run_pairwise(config: GameConfig, specs: Sequence[str], games: int,
                 **kwargs: Any) -> dict[tuple[str, str], TournamentResult]:
    """Every spec against every other, 1-vs-(n-1): ``result[(x, y)]`` = ``[x] + [y] * (n - 1)``."""
    return {(x, y): run_tournament(config, [x, y], games, **kwargs)
            for x in specs for y in specs if x != y}
