"""One rating table across tournaments: every agent rated again (:mod:`goboom_env.evaluation.ratings`) over all of
its games in the result folders of ``goboom evaluate`` and ``goboom benchmark``, one table per game (configuration and
episode unit), agents pooled by name (a spec without a model file by the agent it resolved to). docs/evaluation.md
has the user's view.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goboom_env.config import GameConfig, check_choice
from goboom_env.evaluation.benchmark import RESULT_FILE as BENCHMARK_FILE
from goboom_env.evaluation.ratings import OUTCOMES, rating_table
from goboom_env.evaluation.report import config_title, markdown_table, rich_table, write_markdown
from goboom_env.evaluation.tournament import GameOutcome, TournamentResult, seat_specs, write_csv
from goboom_env.hints import one_line, shown
from goboom_env.untrusted import read_json

RESULTS_FILE = "results.json"
EPISODE_FOLDERS = ("match", "hand")
"""The subfolders of an ``--episode both`` result folder."""
COLUMNS = ("rank", "agent", "mu", "sigma", "ordinal", "ci_low", "ci_high", "games", "tournaments")
"""The columns of a leaderboard table (the CSV adds ``group`` first)."""
RICH_COLUMNS = ("rank", "agent", "ordinal", "mu", "ci_low", "ci_high", "games", "tournaments")
"""The columns shown in the terminal (the files keep every column)."""
OUTCOME_WORDS = {"win": "win outcome (winners first, all others tied)",
                 "placing": "full placing (winners first, then by points)"}
"""What the tables say a rating of each outcome ranks."""


@dataclass(frozen=True)
class Tournament:
    """One tournament read back from a result folder."""

    folder: Path
    result: TournamentResult


@dataclass
class Group:
    """The leaderboard of one game: every tournament of that configuration and episode unit, rated together."""

    title: str
    config: dict[str, Any]
    episode: str
    folders: list[str]
    rows: list[dict[str, Any]]
    """One per agent, best first: the :data:`COLUMNS`."""


def leaderboard(folders: Iterable[str | Path], outcome: str = "win") -> list[Group]:
    """The groups of the tournaments in ``folders`` (one per game), each with its rating table; ValueError for a bad
    folder or a tournament given twice."""
    check_choice("outcome", outcome, OUTCOMES)
    folders = [Path(f) for f in folders]
    if not folders:
        raise ValueError("give at least one result folder of goboom evaluate")
    seen_folders: dict[Path, Path] = {}
    seen: dict[tuple[Any, ...], Path] = {}
    grouped: dict[tuple[str, str], list[Tournament]] = defaultdict(list)
    for folder in folders:
        real = folder.resolve()
        if real in seen_folders:
            raise ValueError(f"{folder} is given twice (also as {seen_folders[real]}): its games would count twice")
        seen_folders[real] = folder
        for t in load_folder(folder):
            game = _game_key(t.result)
            key = (*game, tuple(t.result.agents), t.result.seed, t.result.duplicate)
            if key in seen:
                raise ValueError(f"{t.folder} holds the same tournament as {seen[key]} (same game, agents, seed and "
                                 "deal mode): its games are the same games and would count twice")
            seen[key] = t.folder
            grouped[game].append(t)
    return [_group(members, outcome) for members in grouped.values()]


def load_folder(folder: str | Path) -> list[Tournament]:
    """The tournaments of one result folder (several for a pairwise run, an ``--episode both`` or benchmark folder)."""
    folder = Path(folder)
    if not folder.exists():
        raise ValueError(f"{folder} does not exist")
    if not folder.is_dir():
        raise ValueError(f"{folder} is a file, not a result folder of goboom evaluate")
    if (folder / BENCHMARK_FILE).is_file():  # its tournaments are tasks/TASK/OPPONENT/results.json
        paths = sorted(folder.glob(f"tasks/*/*/{RESULTS_FILE}"))
        if not paths:
            raise ValueError(f"{folder} is a benchmark folder without its games (tasks/*/*/{RESULTS_FILE}): run goboom "
                             "benchmark again to have them")
        return [Tournament(path.parent, result) for path in paths for result in read_results(path)]
    path = folder / RESULTS_FILE
    if not path.is_file():
        subfolders = [folder / name for name in EPISODE_FOLDERS if (folder / name / RESULTS_FILE).is_file()]
        if not subfolders:
            raise ValueError(f"{folder} is not a result folder of goboom evaluate: it has no {RESULTS_FILE} "
                             f"(nor {' and '.join(f'{e}/{RESULTS_FILE}' for e in EPISODE_FOLDERS)})")
        return [t for sub in subfolders for t in load_folder(sub)]
    return [Tournament(folder, result) for result in read_results(path)]


def read_results(path: Path) -> list[TournamentResult]:
    """The tournaments of a ``results.json``: one, or one per ordered pair of a pairwise run."""
    try:
        data = read_json(path)
    except ValueError as exc:
        raise ValueError(f"{exc}: not a result of goboom evaluate") from None
    if not isinstance(data, dict) or not isinstance(data.get("summary"), dict) or "games" not in data:
        raise ValueError(f"{path} is not a result of goboom evaluate: it needs 'summary' and 'games'")
    summary = data["summary"]
    try:
        config = GameConfig.from_dict(summary["config"])
        episode, seed, duplicate = str(summary["episode"]), int(summary["seed"]), bool(summary["duplicate"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: bad or missing summary field: {one_line(str(exc), 300)}") from None
    aliases = _aliases(data.get("provenance"))
    groups = {"": data["games"]} if isinstance(data["games"], list) else data["games"]
    if not isinstance(groups, dict):
        raise ValueError(f"{path}: 'games' must be a list (tournament) or an object of lists (pairwise)")
    out = []
    for name, records in groups.items():
        where = f"{path}" + (f", pair {shown(name)}" if name else "")
        if not isinstance(records, list) or not records:
            raise ValueError(f"{where}: no game records")
        parsed = [_record(r, config.num_players, f"{where}, game {i}", aliases) for i, r in enumerate(records)]
        agents = list(seat_specs(parsed[0].seats, -parsed[0].index))  # game g's seats rotated back g places
        out.append(TournamentResult(config, agents, parsed, seed, duplicate, episode))
    return out


def write_leaderboard(out: Path, groups: Sequence[Group], outcome: str = "win", command: str = "") -> Path:
    """``leaderboard.md``, ``leaderboard.csv`` and ``leaderboard.json`` into ``out``; returns the Markdown's path."""
    out.mkdir(parents=True, exist_ok=True)
    rows = [{"group": g.title, **row} for g in groups for row in g.rows]
    write_csv(out / "leaderboard.csv", rows, ["group", *COLUMNS])
    groups_data = [dataclasses.asdict(g) for g in groups]
    (out / "leaderboard.json").write_text(json.dumps({"outcome": outcome, "groups": groups_data}, indent=1))
    lines = [f"openskill Plackett-Luce ratings of the {OUTCOME_WORDS[outcome]} over every game of the result "
             "folders, one table per game (configuration and episode unit: ratings of different games are not "
             "comparable). `ordinal = mu - 3 sigma` ranks the agents; `ci_low`/`ci_high` = `mu -/+ 1.96 sigma` is "
             "the model's own 95% interval (not a bootstrap); `games` counts seat-games, `tournaments` the "
             "tournaments the agent played in.", ""]
    for group in groups:
        cfg = ", ".join(f"{k}={v}" for k, v in group.config.items())
        lines += [f"## {group.title}", "", f"- configuration: {cfg}",
                  f"- result folders: {', '.join(group.folders)}", "", markdown_table(group.rows, COLUMNS), ""]
    return write_markdown(out / "leaderboard.md", "Go Boom leaderboard", command, lines)


def rich_tables(groups: Sequence[Group], outcome: str = "win") -> list[Any]:
    """One rich table per group for the terminal (a long agent name wraps, whole)."""
    return [rich_table(f"{group.title}: ratings of the {OUTCOME_WORDS[outcome]}", group.rows, RICH_COLUMNS,
                       caption=f"95% CI = mu -/+ 1.96 sigma; from {', '.join(group.folders)}")
            for group in groups]


# -- helpers ---------------------------------------------------------------------------------------


def _group(members: Sequence[Tournament], outcome: str) -> Group:
    results = [t.result for t in members]
    first = results[0]
    tournaments = Counter(spec for result in results for spec in result.specs())
    games = Counter(spec for result in results for game in result.games for spec in game.seats)
    rows = [{"rank": rank, **{k: row[k] for k in ("agent", "mu", "sigma", "ordinal", "ci_low", "ci_high")},
             "games": games[row["agent"]], "tournaments": tournaments[row["agent"]]}
            for rank, row in enumerate(rating_table(results, outcome), 1)]
    return Group(f"{config_title(first)}, episode = {first.episode}", first.config.to_dict(), first.episode,
                 list(dict.fromkeys(str(t.folder) for t in members)), rows)


def _game_key(result: TournamentResult) -> tuple[str, str]:
    return json.dumps(result.config.to_dict(), sort_keys=True), result.episode


def _aliases(info: Any) -> dict[str, str]:
    """Spec -> the agent it resolved to, for the agents without a model file (from a report's provenance)."""
    rows = info.get("agents") if isinstance(info, dict) else None
    if not isinstance(rows, list):
        return {}
    return {row["spec"]: row["resolves_to"] for row in rows
            if isinstance(row, dict) and row.get("sha256") is None and isinstance(row.get("spec"), str)
            and isinstance(row.get("resolves_to"), str)}


def _record(raw: Any, n: int, where: str, aliases: Mapping[str, str]) -> GameOutcome:
    """A game record read back, its fields checked enough for rating (ValueError naming the game); seats are
    renamed by ``aliases``."""
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: a game record must be an object, got {type(raw).__name__}")
    fields = dataclasses.fields(GameOutcome)
    missing = [f.name for f in fields if f.default is dataclasses.MISSING and f.name not in raw]
    if missing:
        raise ValueError(f"{where}: the record lacks {', '.join(missing)}")
    names = {f.name for f in fields}
    record = GameOutcome(**{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items() if k in names})
    _check_record(record, n, where)
    return dataclasses.replace(record, seats=tuple(aliases.get(s, s) for s in record.seats))


def _check_record(record: GameOutcome, n: int, where: str) -> None:
    """ValueError naming the field of ``record`` that a rating or a report of an ``n``-seat game cannot use."""
    for name in ("seats", "winners", "placing"):
        if not isinstance(getattr(record, name), tuple):
            raise ValueError(f"{where}: {name} must be a list, got {shown(getattr(record, name))}")
    if len(record.seats) != n or len(record.placing) != n or not all(isinstance(s, str) for s in record.seats):
        raise ValueError(f"{where}: seats and placing must list the {n} seats of the game's configuration")
    if not record.winners or not all(_is_int(w, 0, n - 1) for w in record.winners):
        raise ValueError(f"{where}: winners must be seats 0..{n - 1}, got {shown(list(record.winners))}")
    if not all(_is_int(p, 1, n) for p in record.placing):
        raise ValueError(f"{where}: placing must be places 1..{n}, got {shown(list(record.placing))}")
    if not isinstance(record.points, tuple) or len(record.points) != n or not all(_is_int(p) for p in record.points):
        raise ValueError(f"{where}: points must list {n} integers, got {shown(record.points)}")
    for name, lo in (("index", 0), ("deal", 0), ("hands", 1), ("decisions", 0)):
        if not _is_int(getattr(record, name), lo):
            raise ValueError(f"{where}: {name} must be an integer >= {lo}, got {shown(getattr(record, name))}")
    if not _is_int(record.dealer, 0, n - 1):
        raise ValueError(f"{where}: dealer must be a seat 0..{n - 1}, got {shown(record.dealer)}")


def _is_int(value: Any, lo: int | None = None, hi: int | None = None) -> bool:
    """Whether ``value`` is an integer (not a bool) in ``lo..hi`` (either bound may be open)."""
    return (type(value) is int and (lo is None or value >= lo) and (hi is None or value <= hi))
