"""The Go Boom benchmark ``goboom-bench-v1``: fixed tasks, fixed opponents, fixed deals, a normalized score.

Each :class:`Task` plays the evaluated agent in one seat against copies of its panel's members over duplicate deals
from :data:`EVAL_SEEDS`, scored ``(W - R) / (H - R)`` with the frozen :data:`REFERENCES` (random 0, heuristic 1).
docs/benchmark.md has the user's view; a change of the suite is a new version.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from goboom_env.agents import make_agent
from goboom_env.config import GameConfig
from goboom_env.evaluation.provenance import provenance
from goboom_env.evaluation.stats import BOOTSTRAP_RESAMPLES, Aggregate, aggregate_scores, wilson_interval
from goboom_env.evaluation.tournament import TournamentResult, run_tournament, write_csv
from goboom_env.hints import shown
from goboom_env.process import bar
from goboom_env.untrusted import Fields, read_json

VERSION = "goboom-bench-v1"
"""The name of this suite; results of different versions are not comparable."""
MATCHES = 360
"""Matches against each panel member (a whole number of deals at 2, 3, 4, 6 and 12 players)."""
SEED_BASE = 2_049_000_000
"""The evaluation seeds are ``SEED_BASE + 1`` ... ``SEED_BASE + 9``, one per task; no training run may use a seed
(or, with its periodic evaluations at ``seed + steps``, a seed range) that holds one of them."""


@dataclass(frozen=True)
class Task:
    """One game of the suite: its rules, its opponent panel, its matches and its evaluation seed."""

    name: str
    game: Mapping[str, Any]
    """The :class:`~goboom_env.config.GameConfig` fields that differ from the defaults."""
    heuristic: str
    """The variant's best heuristic: the reference that scores 1."""
    model: str | None
    """The shipped model of this game (a ``ppo:`` spec), or None."""
    seed: int
    matches: int = MATCHES

    @property
    def config(self) -> GameConfig:
        """The task's game."""
        return GameConfig(**self.game)

    @property
    def panel(self) -> tuple[str, ...]:
        """The opponents the agent meets, in order: random, the best heuristic, the shipped model if any."""
        return ("random", self.heuristic, *((self.model,) if self.model else ()))


def _task(i: int, name: str, heuristic: str, model: str | None, **game: Any) -> Task:
    return Task(name, game, heuristic, model, SEED_BASE + i)


TASKS: tuple[Task, ...] = (
    _task(1, "classic-2p", "classic-tricks", "ppo:classic-2p", variant="classic", num_players=2),
    _task(2, "classic-3p", "classic-tricks", "ppo:classic-3p", variant="classic", num_players=3),
    _task(3, "classic-4p", "classic-tricks", "ppo:classic-4p", variant="classic", num_players=4),
    _task(4, "classic-6p", "classic-tricks", "ppo:classic-6p", variant="classic", num_players=6),
    _task(5, "classic-12p", "classic-tricks", "ppo:classic-generalist", variant="classic", num_players=12),
    _task(6, "classic-4p-reverse", "classic-tricks", "ppo:classic-4p-reverse", variant="classic", num_players=4,
          scoring="reverse"),
    _task(7, "jokers-3p", "jokers-boom", None, variant="jokers", num_players=3),
    _task(8, "jokers-4p", "jokers-boom", "ppo:jokers-4p-hands", variant="jokers", num_players=4),
    _task(9, "jokers-4p-aces", "jokers-boom", None, variant="jokers", num_players=4, num_jokers=0),
)
"""The tasks of :data:`VERSION`."""
EVAL_SEEDS: tuple[int, ...] = tuple(task.seed for task in TASKS)
_FROZEN = {task.name: task for task in TASKS}

REFERENCES: dict[str, dict[str, tuple[float, float]]] = {
    task: {member: (random, heuristic) for member, (random, heuristic) in panel.items()}
    for task, panel in json.loads((Path(__file__).parent / "bench_v1_references.json").read_text()).items()}
"""Per task and panel member: the win rate of ``random`` and of the task's heuristic in the evaluated seat on the
task's deals, ``(R, H)`` (``benchmarks/bench_v1_reference.py references`` plays them and writes the file)."""


def tasks_named(names: Sequence[str] | None) -> list[Task]:
    """The tasks of the suite with these names, in the suite's order (None or empty: all); ValueError for an
    unknown name."""
    if not names:
        return list(TASKS)
    unknown = [n for n in names if n not in _FROZEN]
    if unknown:
        raise ValueError(f"unknown task {unknown[0]!r}; the tasks of {VERSION}: {', '.join(_FROZEN)}")
    return [task for task in TASKS if task.name in names]


def check_training_seed(seed: int, steps: int = 0) -> None:
    """ValueError when a training run of ``seed`` would use an evaluation seed of the benchmark: its own seed or
    one of its periodic evaluations' (``seed`` .. ``seed + steps``)."""
    held = [s for s in EVAL_SEEDS if seed <= s <= seed + max(steps, 0)]
    if held:
        raise ValueError(f"seed {seed} (with its evaluations up to seed + {steps:,} steps) reaches the benchmark's "
                         f"evaluation seed {held[0]} ({VERSION} keeps {EVAL_SEEDS[0]}..{EVAL_SEEDS[-1]} for "
                         "evaluation only): choose another seed")


# -- playing and scoring ------------------------------------------------------------------------------


@dataclass
class PanelScore:
    """The agent against one panel member: its win rate and the references of that member."""

    opponent: str
    games: int
    wins: float
    win_rate: float
    ci_low: float
    ci_high: float
    random: float
    heuristic: float
    deal_rates: list[float] = field(repr=False)
    """The agent's mean win share on each deal (its n seats of one deck order), in deal order."""

    def row(self) -> dict[str, Any]:
        """The fields of a table row (all but the per-deal rates)."""
        return {k: v for k, v in asdict(self).items() if k != "deal_rates"}


@dataclass
class TaskScore:
    """One task's score: the win rates against the panel and the normalized score, per deal and overall."""

    task: str
    panel: list[PanelScore]
    normalized: float
    deal_scores: list[float] = field(repr=False)
    """The normalized score of each deal; their mean is :attr:`normalized`."""
    elapsed: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly data (``benchmark.json``), the per-deal figures included."""
        return {"task": self.task, "normalized": self.normalized, "elapsed_s": round(self.elapsed, 2),
                "panel": [asdict(p) for p in self.panel], "deal_scores": self.deal_scores}


def seat_shares(result: TournamentResult) -> list[float]:
    """Per game: the win share of the tournament's first agent (it sits in seat ``g % n`` of game ``g``), whatever
    the names of the others."""
    n = result.config.num_players
    return [game.win_shares()[game.index % n] for game in result.games]


def deal_rates(result: TournamentResult) -> list[float]:
    """Per deal, in order: the first agent's mean win share over the games of that deal (duplicate deals)."""
    totals: dict[int, list[float]] = {}
    for game, share in zip(result.games, seat_shares(result)):
        totals.setdefault(game.deal, []).append(share)
    return [float(np.mean(totals[d])) for d in sorted(totals)]


def score_task(task: Task, results: Mapping[str, TournamentResult],
               references: Mapping[str, tuple[float, float]], elapsed: float = 0.0) -> TaskScore:
    """The score of the agent whose tournaments against each panel member are ``results`` (by opponent spec)."""
    panel = []
    for opponent in task.panel:
        result = results[opponent]
        wins, games = math.fsum(seat_shares(result)), len(result.games)
        panel.append(PanelScore(opponent, games, wins, wins / games, *wilson_interval(wins, games),
                                *references[opponent], deal_rates(result)))
    rand = math.fsum(p.random for p in panel) / len(panel)
    heur = math.fsum(p.heuristic for p in panel) / len(panel)
    if heur <= rand:
        raise ValueError(f"task {task.name}: the heuristic's reference win rate {heur:.4f} is not above random's "
                         f"{rand:.4f}, so no score can be normalized between them")
    deal_scores = ((np.mean([p.deal_rates for p in panel], axis=0) - rand) / (heur - rand)).tolist()
    normalized = (math.fsum(p.win_rate for p in panel) / len(panel) - rand) / (heur - rand)
    return TaskScore(task.name, panel, normalized, deal_scores, elapsed)


def play_task(spec: str, task: Task, *, processes: int = 1, progress: bool = True,
              on_tournament: Callable[[str], None] | None = None) -> dict[str, TournamentResult]:
    """The tournaments of agent ``spec`` in one seat against n-1 copies of each panel member, by opponent."""
    out = {}
    for opponent in task.panel:
        out[opponent] = run_tournament(task.config, [spec, opponent], task.matches, seed=task.seed,
                                       duplicate=True, processes=processes, episode="match", progress=progress)
        if on_tournament is not None:
            on_tournament(opponent)
    return out


def references_of(task: Task, *, processes: int = 1, progress: bool = True) -> dict[str, tuple[float, float]]:
    """The task's references, ``(R, H)`` per panel member: the frozen ones of :data:`REFERENCES`, else (a task of
    one's own) played now (:func:`play_references`)."""
    if task.name in REFERENCES and _FROZEN.get(task.name) == task:
        return REFERENCES[task.name]
    return play_references(task, processes=processes, progress=progress)[0]


def play_references(task: Task, *, processes: int = 1, progress: bool = True
                    ) -> tuple[dict[str, tuple[float, float]], dict[str, dict[str, TournamentResult]]]:
    """Play ``random`` and the task's heuristic in the evaluated seat on the task's deals: the references ``(R, H)``
    per panel member, and the tournaments of each (by spec, then opponent)."""
    played = {spec: play_task(spec, task, processes=processes, progress=progress)
              for spec in ("random", task.heuristic)}
    return {opponent: (win_rate(played["random"][opponent]), win_rate(played[task.heuristic][opponent]))
            for opponent in task.panel}, played


def win_rate(result: TournamentResult) -> float:
    """The win rate of the tournament's first agent (the evaluated seat)."""
    return math.fsum(seat_shares(result)) / len(result.games)


def playable(spec: str, tasks: Iterable[Task]) -> tuple[list[Task], dict[str, str]]:
    """The tasks whose game agent ``spec`` can play, and for the others why not (a model trained for another game
    refuses it). Making the agent checks the spec before any game."""
    ok, skipped = [], {}
    for task in tasks:
        try:
            make_agent(spec, task.config, 0)
            ok.append(task)
        except ValueError as exc:
            skipped[task.name] = str(exc)
    return ok, skipped


@dataclass
class Run:
    """One agent's benchmark: its score on each task it played, and the tasks it could not play."""

    agent: str
    scores: dict[str, TaskScore]
    skipped: dict[str, str] = field(default_factory=dict)
    """Task -> why the agent cannot play its game."""
    provenance: dict[str, Any] = field(default_factory=dict)
    tournaments: dict[str, dict[str, TournamentResult]] = field(default_factory=dict, repr=False)
    """Task -> opponent -> the tournament (not read back from a folder: its games stay in ``tasks/``)."""
    elapsed: float = 0.0
    processes: int = 1
    source: str = ""
    """The folder it was read from (a combined report lists them)."""


def run_benchmark(spec: str, tasks: Sequence[Task] | None = None, *, processes: int = 1, progress: bool = True,
                  references: Mapping[str, Mapping[str, tuple[float, float]]] | None = None) -> Run:
    """Play agent ``spec`` on ``tasks`` (default: the whole suite) and score it against the tasks' ``references``
    (default: :func:`references_of` each). A task whose game the agent cannot play is skipped with the reason;
    ValueError, before any game, when it can play none (or a task's references cannot normalize its score)."""
    tasks = list(TASKS if tasks is None else tasks)
    ok, skipped = playable(spec, tasks)
    if not ok:
        reason = next(iter(skipped.values()), "no task given")
        raise ValueError(f"agent {spec!r} plays none of the tasks {[t.name for t in tasks]}: {reason}")
    references = dict(references or {}) | {task.name: references_of(task, processes=processes, progress=progress)
                                           for task in ok if task.name not in (references or {})}
    started = time.perf_counter()
    run = Run(spec, {}, skipped, processes=processes)
    with bar(total=sum(t.matches * len(t.panel) for t in ok), desc=VERSION, enabled=progress, unit="match") as shown:
        for task in ok:
            shown.set_postfix_str(task.name)
            task_started = time.perf_counter()
            played = play_task(spec, task, processes=processes, progress=progress,
                               on_tournament=lambda _, m=task.matches: shown.update(m))
            run.tournaments[task.name] = played
            run.scores[task.name] = score_task(task, played, references[task.name],
                                               time.perf_counter() - task_started)
    run.elapsed = time.perf_counter() - started
    run.provenance = run_provenance(spec, ok)
    return run


def run_provenance(spec: str, tasks: Sequence[Task]) -> dict[str, Any]:
    """Package version, commit and every agent's resolution and model hashes, over the tasks' games."""
    info: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    for task in tasks:
        info = provenance([spec, *task.panel], task.config)
        rows += [row for row in info["agents"] if row not in rows]
    return {**info, "agents": rows}


def aggregate(runs: Sequence[Run], resamples: int = BOOTSTRAP_RESAMPLES) -> Aggregate:
    """:func:`~goboom_env.evaluation.stats.aggregate_scores` of the normalized scores of ``runs`` (training seeds of
    one method, or one agent) over every task any of them played."""
    tasks = dict.fromkeys(name for run in runs for name in run.scores)
    played = {name: [run.scores[name] for run in runs if name in run.scores] for name in tasks}
    return aggregate_scores({name: [s.deal_scores for s in scores] for name, scores in played.items()}, resamples,
                            points={name: [s.normalized for s in scores] for name, scores in played.items()})


def task_interval(score: TaskScore) -> tuple[float, float]:
    """The 95% bootstrap interval of a task's normalized score over its deals."""
    return aggregate_scores({score.task: [score.deal_scores]}, points={score.task: [score.normalized]}).mean_ci


# -- files --------------------------------------------------------------------------------------------------

RESULT_FILE = "benchmark.json"
"""What marks a benchmark folder: the scores, the aggregate and the provenance (the games are in ``tasks/``)."""
SCORE_KEYS = ("task", "agent", "normalized", "ci_low", "ci_high", "elapsed_s")


def write_benchmark(out: Path, runs: Sequence[Run], command: str = "") -> Path:
    """Every file of a benchmark of ``runs`` into ``out`` (one run: an agent's benchmark, with its games in
    ``tasks/``; several: their aggregate); returns the path of ``report.md``."""
    from goboom_env.evaluation.plots import plot_profile, plot_task_scores
    from goboom_env.evaluation.report import markdown_table, provenance_section, write_markdown

    out.mkdir(parents=True, exist_ok=True)
    for run in runs:
        _write_games(out, run)
    total = aggregate(runs)
    panel_rows = [{"task": s.task, **p.row()} | ({"agent": r.agent} if len(runs) > 1 else {})
                  for r in runs for s in r.scores.values() for p in s.panel]
    score_rows = [{"task": s.task, "agent": r.agent, "normalized": s.normalized,
                   **dict(zip(("ci_low", "ci_high"), task_interval(s))), "elapsed_s": round(s.elapsed, 1)}
                  for r in runs for s in r.scores.values()]
    summary = aggregate_rows(total)
    write_csv(out / "tasks.csv", panel_rows)
    write_csv(out / "scores.csv", score_rows, SCORE_KEYS)
    write_csv(out / "aggregate.csv", summary)
    payload = {"version": VERSION, "command": command, "matches": {t.name: t.matches for t in TASKS},
               "runs": [_run_dict(r) for r in runs], "aggregate": total.to_dict()}
    (out / RESULT_FILE).write_text(json.dumps(payload, indent=1))
    title = runs[0].agent if len(runs) == 1 else f"{len(runs)} runs"
    plot_task_scores(score_rows, out / "scores.png", title=f"{VERSION}: {title}")
    plot_profile(total, out / "profile.png", title=f"{VERSION}: {title}")
    lines = [_report_intro(runs), "", "## Aggregate", "", AGGREGATE_NOTE, "", markdown_table(summary), "",
             "![performance profile](profile.png)", "", "## Normalized score per task", "", SCORE_NOTE, "",
             markdown_table(score_rows, SCORE_KEYS), "", "![normalized scores](scores.png)", "",
             "## Win rates against the panel", "", PANEL_NOTE, "", markdown_table(panel_rows), ""]
    skipped = [{"agent": r.agent, "task": task, "why": why} for r in runs for task, why in r.skipped.items()]
    if skipped:
        lines += ["## Tasks not played", "", "The agent cannot play these games (not in the aggregate):", "",
                  markdown_table(skipped), ""]
    for run in runs:
        if run.provenance:
            lines += [provenance_section(run.provenance).replace("## Provenance", f"## Provenance: {run.agent}", 1)]
    return write_markdown(out / "report.md", f"{VERSION}: {title}", command, lines)


AGGREGATE_NOTE = ("The interquartile mean (IQM: the mean of the middle half of the task scores, a quarter cut at each "
                  "end), mean and median of the normalized scores over every task played (and every run, for "
                  "several training seeds), each with its 95% stratified bootstrap interval: per task the runs are "
                  "resampled, then each run's deals, 2,000 times. The profile shows the fraction of task scores "
                  "above each threshold (0 = random, 1 = the heuristic), with its 95% band.")
SCORE_NOTE = ("`normalized` = (W - R) / (H - R): `W` the agent's win rate averaged over the panel, `R` and `H` those "
              "of `random` and of the best heuristic in the same seat on the same deals (random = 0, heuristic = 1); "
              "95% bootstrap interval over the deals. `elapsed_s`: wall-clock seconds of the task's games.")
PANEL_NOTE = ("The agent in one seat against n-1 copies of each opponent, seats rotating over duplicate deals, whole "
              "matches; win rate with its 95% Wilson interval (a shared win counts 1/k); `random` and `heuristic` are "
              "the references' win rates against that opponent on the same deals.")


def _report_intro(runs: Sequence[Run]) -> str:
    played = [task for task in TASKS if any(task.name in r.scores for r in runs)]
    custom = sorted({name for r in runs for name in r.scores} - {t.name for t in played})
    tasks = ", ".join(f"{t.name} ({t.matches} matches)" for t in played) + ("; tasks of one's own: " + ", ".join(
        custom) if custom else "")
    lines = [f"- suite: {VERSION}: whole matches against each member of each task's panel, seats rotating over "
             "duplicate deals",
             f"- tasks played: {tasks}",
             f"- agent{'s' if len(runs) > 1 else ''}: {', '.join(f'`{r.agent}`' for r in runs)}"]
    if len(runs) > 1:
        lines.append(f"- benchmark folders combined: {', '.join(r.source or '?' for r in runs)}")
    elif runs[0].elapsed > 0:
        lines.append(f"- processes: {runs[0].processes}; wall-clock time: {runs[0].elapsed:.0f} s")
    return "\n".join(lines)


def aggregate_rows(total: Aggregate) -> list[dict[str, Any]]:
    """The aggregate's rows: each statistic with its interval, over how many tasks and scores."""
    return [{"statistic": name, "value": getattr(total, name), "ci_low": getattr(total, f"{name}_ci")[0],
             "ci_high": getattr(total, f"{name}_ci")[1], "tasks": total.tasks, "scores": total.runs}
            for name in ("iqm", "mean", "median")]


def _run_dict(run: Run) -> dict[str, Any]:
    return {"agent": run.agent, "scores": [s.to_dict() for s in run.scores.values()], "skipped": run.skipped,
            "provenance": run.provenance, "elapsed_s": round(run.elapsed, 1), "processes": run.processes}


def _write_games(out: Path, run: Run) -> None:
    """Each tournament's ``results.json`` (its games, for ``goboom leaderboard``) under ``tasks/TASK/OPPONENT/``."""
    for task, played in run.tournaments.items():
        for opponent, result in played.items():
            folder = out / "tasks" / task / folder_name(opponent)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "results.json").write_text(json.dumps({
                "summary": result.summary(), "table": result.table(), "games": [asdict(g) for g in result.games],
                "provenance": run.provenance}))


def read_benchmark(folder: Path) -> list[Run]:
    """The runs of a benchmark folder (``benchmark.json``, read within bounds); ValueError naming the folder when
    it is none, of another version, or a field that is not what ``goboom benchmark`` writes."""
    path = Path(folder) / RESULT_FILE
    if not path.is_file():
        raise ValueError(f"{folder} is not a benchmark folder of goboom benchmark: it has no {RESULT_FILE}")
    top = Fields(read_json(path), ("version", "command", "matches", "runs", "aggregate"), prefix=str(path))
    version = top.text("version")
    if version != VERSION:
        raise ValueError(f"{path} is a result of {shown(version)}, not {VERSION}: the scores are not comparable")
    runs = []
    for i, raw in enumerate(top.items("runs")):
        run = top.child(f"runs[{i}]", ("agent", "scores", "skipped", "provenance", "elapsed_s", "processes"),
                        raw=raw)
        scores = [_task_score(run, f"scores[{k}]", item) for k, item in enumerate(run.items("scores"))]
        runs.append(Run(run.text("agent"), {s.task: s for s in scores}, run.texts("skipped"),
                        run.child("provenance", (), PROVENANCE).data,
                        elapsed=run.number("elapsed_s"), processes=run.integer("processes", 1, 10**6),
                        source=str(folder)))
    return runs


PROVENANCE = ("package_version", "python", "git_commit", "git_dirty", "agents")
"""The fields of a run's provenance (:func:`goboom_env.evaluation.provenance.provenance`)."""


def _task_score(run: Fields, name: str, raw: Any) -> TaskScore:
    """A task's score of a ``benchmark.json`` run, every field checked."""
    score = run.child(name, ("task", "normalized", "elapsed_s", "panel", "deal_scores"), raw=raw)
    deals = len(score.items("deal_scores"))
    panel = []
    for k, item in enumerate(score.items("panel")):
        member = score.child(f"panel[{k}]", [f.name for f in fields(PanelScore)], raw=item)
        floats = {key: member.number(key) for key in ("wins", "win_rate", "ci_low", "ci_high", "random", "heuristic")}
        panel.append(PanelScore(member.text("opponent"), member.integer("games", 1, 10**9), **floats,
                                deal_rates=list(member.numbers("deal_rates", deals))))
    return TaskScore(score.text("task"), panel, score.number("normalized"), list(score.numbers("deal_scores", deals)),
                     score.number("elapsed_s"))


def folder_name(spec: str) -> str:
    """A file-system name for an opponent spec (``ppo:classic-2p`` -> ``ppo-classic-2p``)."""
    return re.sub(r"[^A-Za-z0-9_.=-]+", "-", spec).strip("-") or "agent"
