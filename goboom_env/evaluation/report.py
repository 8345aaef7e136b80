"""Evaluation outputs: rich terminal tables, JSON + CSV results, PNG plots and one Markdown report.

:func:`write_report` writes a tournament and/or a pairwise run into one folder, :func:`write_side_by_side` the same
runs played one hand a game and one match a game; docs/evaluation.md lists every file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from goboom_env.evaluation import breakdown
from goboom_env.evaluation.luck import LuckAdjustment
from goboom_env.evaluation.plots import plot_distributions, plot_pairwise, plot_win_rates
from goboom_env.evaluation.provenance import provenance
from goboom_env.evaluation.ratings import rating_table
from goboom_env.evaluation.tournament import TournamentResult, write_csv
from goboom_env.hints import safe_text

PAIR_KEYS = ("agent", "opponent", "games", "win_rate", "ci_low", "ci_high", "beats", "mean_points",
             "p_t", "elapsed_s")
RICH_PAIRED = ("a", "b", "deals", "mean_diff", "ci_low", "ci_high", "p_t")
RICH_PAIRWISE = ("agent", "opponent", "games", "win_rate", "ci_low", "ci_high", "beats", "p_t")
Pairwise = Mapping[tuple[str, str], TournamentResult]
Run = tuple[TournamentResult | None, Pairwise | None]
"""What one evaluation played: a tournament, a pairwise run, or both."""
HEADLINE = ("match", "hand")
"""The order of the episodes in a side-by-side report: the game the rules define first."""
RATINGS_WIN = ("openskill Plackett-Luce rating of the raw **win outcome**: in every game the winners share first "
               "place and all other seats share second, which is what the win table counts, so both rank agents "
               "alike up to noise. `ordinal = mu - 3 sigma` (the sort key); `ci_low`/`ci_high` = `mu -/+ 1.96 "
               "sigma`, the model's own 95% interval (not a bootstrap).")
RATINGS_PLACING = ("The same model on the **full placing**: winners first, then the other seats by points (the "
                   "fewest points left in hand, or the best match score, first). It also rewards losing well, so an "
                   "agent that wins less often but keeps its losses small can rate above one that wins more often.")


# -- tables --------------------------------------------------------------------------------------


def pairwise_rows(pairwise: Pairwise) -> list[dict[str, Any]]:
    """One row per ordered pair: the single agent's win rate against n-1 copies of the opponent; ``beats``: the lower
    CI bound is above 1/n; ``p_t``: the paired t-test of the agent against the opponent copies over the deals."""
    rows = []
    for (x, y), result in pairwise.items():
        row = next(r for r in result.table() if r["agent"] == x)
        tests = result.paired()
        row |= {"opponent": y, "beats": row["ci_low"] > 1.0 / result.config.num_players,
                "p_t": tests[0].p_t if tests else None, "elapsed_s": round(result.elapsed, 2)}
        rows.append({key: row[key] for key in PAIR_KEYS})
    return rows


LUCK_KEYS = ("agent", "games", "deals", "raw_win_rate", "raw_ci_low", "raw_ci_high", "adjusted_win_rate",
             "adjusted_ci_low", "adjusted_ci_high", "variance_reduction")
LUCK_NOTE = ("Raw and luck-adjusted (AIVAT) win rates: each hand's win share minus the luck of the deal, of every card "
             "drawn from the stock and of the known policies' random tie-breaks, valued by the fixed estimator the "
             "heading names. Both with 95% normal intervals over the deals; `variance_reduction` = raw variance / "
             "adjusted variance of the per-deal scores (the factor by which the adjusted estimate needs fewer games "
             "for the same interval). docs/evaluation.md has the method and the proof that both estimate the same "
             "mean.")
LUCK_AGENTS_NOTE = ("Per agent: its seat-games, how many decisions of its seats were corrected with the policy it "
                    "declares (`corrected`), why or why not (a declared policy counts only where the class that "
                    "defines it also defines the `act` that plays, and where `act`, sampled on the games' own "
                    "decisions, plays it), and what played its seats in the playouts that value every state.")
LUCK_PAIRED_NOTE = ("The paired comparisons of the tournament section with each win share replaced by its "
                    "luck-adjusted value: per deal, the mean adjusted outcome of `a` minus that of `b`. The "
                    "tournament's own paired comparisons and ratings use the raw win shares.")


def luck_title(luck: LuckAdjustment) -> str:
    """The heading of the luck table: its settings and cost."""
    corrected = ", ".join(luck.corrected) or "none"
    return (f"Luck-adjusted win rates ({luck.label()}; decisions corrected: {corrected}; "
            f"{luck.seconds_per_game():.2f} s a hand)")


def rich_tables(result: TournamentResult | None = None, pairwise: Pairwise | None = None,
                luck: LuckAdjustment | None = None) -> list[Table]:
    """Rich tables for the terminal: results, paired tests, ratings and/or the pairwise rows, and the
    luck-adjusted win rates when given."""
    tables = []
    if result is not None:
        title = f"Results, one {result.episode} a game (win rate with 95% Wilson CI; shared wins count 1/k)"
        tables.append(rich_table(title, result.table()))
        if luck is not None:
            tables.append(rich_table(luck_title(luck), luck.table(), LUCK_KEYS))
            tables.append(rich_table("What the luck adjustment did to each agent", luck.agent_rows()))
        paired = [t.to_dict() for t in result.paired()]
        if paired:
            tables.append(rich_table("Paired comparisons per deal (raw win share a - b)", paired, RICH_PAIRED))
        if luck is not None and paired:
            tables.append(rich_table("Paired comparisons per deal, luck-adjusted (adjusted win share a - b)",
                                     [t.to_dict() for t in luck.paired()], RICH_PAIRED))
        tables.append(rich_table("Ratings of the raw win outcome (openskill Plackett-Luce)", rating_table(result)))
    if pairwise:
        episode = next(iter(pairwise.values())).episode
        tables.append(rich_table(f"Pairwise 1-vs-(n-1) win rates, one {episode} a game", pairwise_rows(pairwise),
                                 RICH_PAIRWISE))
        tables.append(rich_table("Ratings of the win outcome over all pairwise games", rating_table(pairwise.values())))
    return tables


def side_by_side_rows(runs: Mapping[str, Run]) -> list[dict[str, Any]]:
    """One row per agent (tournaments) or per ordered pair (pairwise runs): its win rate with 95% CI and mean
    points per hand in each episode of ``runs`` (columns prefixed ``match_`` and ``hand_``)."""
    keyed: dict[str, dict[tuple[str, ...], dict[str, Any]]] = {}
    for episode, (result, pairwise) in runs.items():
        rows = result.table() if result is not None else pairwise_rows(pairwise or {})
        keyed[episode] = {(r["agent"], r["opponent"]) if "opponent" in r else (r["agent"],): r for r in rows}
    episodes = [e for e in HEADLINE if e in keyed]
    columns = ("games", "win_rate", "ci_low", "ci_high", "mean_points")
    missing = dict.fromkeys(columns)
    return [dict(zip(("agent", "opponent"), key))
            | {f"{e}_{column}": keyed[e].get(key, missing)[column] for e in episodes for column in columns}
            for key in dict.fromkeys(k for e in episodes for k in keyed[e])]


def print_side_by_side(runs: Mapping[str, Run], console: Console | None = None) -> None:
    """The side-by-side table, then every run's own tables under a heading naming its episode."""
    console = console or Console()
    brief = [{k: v for k, v in row.items() if k in ("agent", "opponent")}
             | {f"{e} win rate [95% CI]": _with_ci(row, e) for e in HEADLINE if f"{e}_win_rate" in row}
             for row in side_by_side_rows(runs)]
    console.print(rich_table("Match and hand win rates side by side", brief))
    for episode in (e for e in HEADLINE if e in runs):
        console.rule(f"episode = {episode}")
        print_tables(*runs[episode], console=console)


def print_tables(result: TournamentResult | None = None, pairwise: Pairwise | None = None,
                 console: Console | None = None, luck: LuckAdjustment | None = None) -> None:
    """Print :func:`rich_tables` to the terminal."""
    console = console or Console()
    for table in rich_tables(result, pairwise, luck):
        console.print(table)


NAME_COLUMNS = ("agent", "opponent", "a", "b", "baseline")
"""Columns of names (agent specs, model paths): left-aligned (the others, numbers, right-aligned)."""
COUNT_COLUMNS = ("wins",)
"""Columns of counts that may hold a fraction (a shared win counts 1/k): whole ones print as integers."""


def rich_table(title: str, rows: Sequence[Mapping[str, Any]], keys: Sequence[str] | None = None,
               caption: str | None = None) -> Table:
    """The rich table of ``rows`` for the terminal (the given columns, default the first row's), cells as
    :func:`format_cell` writes them. Nothing is cut: a cell too long for its column folds onto the next lines."""
    table = Table(title=shown_text(title), caption=None if caption is None else shown_text(caption))
    keys = list(keys or (rows[0] if rows else []))
    for key in keys:
        table.add_column(key, justify="left" if key in NAME_COLUMNS else "right", overflow="fold")
    for row in rows:
        table.add_row(*(shown_text(format_cell(row[k], k)) for k in keys))
    return table


def shown_text(text: str) -> Text:
    """``text`` as rich shows it verbatim (no markup read, control characters escaped by
    :func:`goboom_env.hints.safe_text`): a name read from a result file cannot write to the terminal."""
    return Text(safe_text(text))


def _with_ci(row: Mapping[str, Any], episode: str) -> str:
    """``0.450 [0.307, 0.602]`` from a side-by-side row's columns of ``episode``."""
    rate, low, high = (format_cell(row[f"{episode}_{key}"]) for key in ("win_rate", "ci_low", "ci_high"))
    return "-" if row[f"{episode}_win_rate"] is None else f"{rate} [{low}, {high}]"


def format_cell(value: Any, key: str | None = None) -> str:
    """A table cell of the column ``key``: ``-`` for None, floats to three decimals (four significant digits below
    0.001); in a column of counts (:data:`COUNT_COLUMNS`) a whole float is an integer (``26``) and a share keeps
    its fraction (``26.5``, ``26.333``)."""
    if value is None:
        return "-"
    if isinstance(value, float) and key in COUNT_COLUMNS:
        shares = round(value, 3)  # a sum of 1/k shares may miss a whole number by a rounding error
        return str(int(shares)) if shares.is_integer() else f"{shares:.3f}".rstrip("0")
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e-3 and value else f"{value:.3f}"
    return str(value)


# -- files ----------------------------------------------------------------------------------------


def write_report(out: str | Path, result: TournamentResult | None = None, pairwise: Pairwise | None = None,
                 command: str = "", luck: LuckAdjustment | None = None) -> Path:
    """Write JSON, CSV, PNG plots and ``report.md`` into ``out``; returns the report's path. ``luck`` (the
    tournament's :func:`~goboom_env.evaluation.luck.luck_adjust`) adds ``luck.json``, ``luck.csv`` and its section."""
    if result is None and not pairwise:
        raise ValueError("write_report needs a tournament result, a pairwise run, or both")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    info = _provenance_of((result, pairwise))
    sections = [provenance_section(info)]
    if result is not None:
        sections.append(_tournament_files(out, result, info))
    if luck is not None:
        sections.append(_luck_files(out, luck))
    if pairwise:
        sections.append(_pairwise_files(out, pairwise, info, write_results=result is None))
    return write_markdown(out / "report.md", "Go Boom evaluation report", command, sections)


def write_side_by_side(out: str | Path, runs: Mapping[str, Run], command: str = "") -> Path:
    """The report of the same evaluation played per hand and per match: :func:`write_report` of each run into
    ``out/<episode>/``, and into ``out`` a ``report.md`` with the win rates side by side, ``side_by_side.csv``
    and ``side_by_side.json``; returns the top report's path."""
    if set(runs) != set(HEADLINE):
        raise ValueError(f"a side-by-side report needs one run per episode {list(HEADLINE)}, got {sorted(runs)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for episode in HEADLINE:
        write_report(out / episode, *runs[episode], command=command)
    rows = side_by_side_rows(runs)
    info = _provenance_of(runs["match"])
    summaries = {e: _tournaments(runs[e])[0].summary() for e in HEADLINE}
    write_csv(out / "side_by_side.csv", rows)
    (out / "side_by_side.json").write_text(json.dumps({"summary": summaries, "side_by_side": rows,
                                                       "provenance": info}, indent=1))
    n = summaries["match"]["config"]["num_players"]
    lines = [provenance_section(info), "## Match and hand win rates", "",
             "The same agents, seeds and deals played two ways: one **match** per game (hands until the match ends, "
             "R1.11, R1.12, R2.12: the game the rules define) and one **hand** per game (game `g` of the hand "
             "run is the first hand of match `g`). Win rates with their 95% Wilson interval (a shared win counts "
             f"1/k; chance = 1/n = {1 / n:.3f}); `mean_points` = points per hand. An agent can win more hands "
             "and still lose more matches: the match columns are the headline.", "",
             markdown_table(rows), "",
             "Full reports: [match](match/report.md) and [hand](hand/report.md).", "",
             "![match win rates](match/win_rates.png)", "", "![hand win rates](hand/win_rates.png)", ""]
    return write_markdown(out / "report.md", "Go Boom evaluation report: match and hand side by side", command, lines)


def _tournaments(run: Run) -> list[TournamentResult]:
    result, pairwise = run
    return ([result] if result is not None else []) + list((pairwise or {}).values())


def _provenance_of(run: Run) -> dict[str, Any]:
    """The provenance (:mod:`~goboom_env.evaluation.provenance`) of every agent of a run."""
    tournaments = _tournaments(run)
    return provenance([spec for t in tournaments for spec in t.specs()], tournaments[0].config)


def provenance_section(info: Mapping[str, Any]) -> str:
    commit = info["git_commit"]
    if info["git_dirty"]:
        commit += " (tracked files had uncommitted changes)"
    elif info["git_dirty"] is None:
        commit += " (not run from a git checkout of goboom-env)"
    return "\n".join(["## Provenance", "", f"- goboom-env {info['package_version']}, Python {info['python']}",
                      f"- git commit: {commit}", "",
                      "What each agent spec resolved to (`heuristic` is the variant's best heuristic; a model spec "
                      "resolves to its file, a shipped model's name to the file inside the package, a folder to "
                      "every file in it) and the sha256 of every model file:", "", markdown_table(info["agents"]), ""])


def _tournament_files(out: Path, result: TournamentResult, info: Mapping[str, Any]) -> str:
    """Write a tournament's ``results.json``, ``results.csv`` and plots into ``out``; returns its report section."""
    ratings = rating_table(result)
    placing = rating_table(result, "placing")
    sections = {"seats": breakdown.seat_rows(result), "dealer": breakdown.dealer_rows(result),
                "points": breakdown.point_rows(result), "lengths": breakdown.length_rows(result)}
    (out / "results.json").write_text(json.dumps({**result.to_dict(), "ratings": ratings, "ratings_placing": placing,
                                                  **sections, "provenance": info}, indent=1))
    result.to_csv(out / "results.csv")
    n = result.config.num_players
    plot_win_rates(result.table(), out / "win_rates.png", chance=1 / n, title=config_title(result))
    plot_distributions(breakdown.points_per_game(result), breakdown.hands_per_game(result.games),
                       breakdown.decisions_per_hand(result.games), out / "distributions.png",
                       title=f"{config_title(result)}, episode = {result.episode}")
    lines = ["## Tournament", "", _setup(result), "", markdown_table(result.table()), "",
             "![win rates with 95% CI](win_rates.png)", "",
             "### Win rates by seat", "",
             "Each agent's win rate in each seat (95% Wilson CI; seats rotate, so every agent plays every seat).", "",
             markdown_table(sections["seats"]), "",
             "### Win rates by place after the dealer", "",
             "`after_dealer` = the seat's place after the first hand's dealer: 1 plays first (R1.4, R2.4), 0 is the "
             "dealer and plays last (in a match the deal then passes to the left).", "",
             markdown_table(sections["dealer"]), "",
             "### Points and game length", "",
             "Points per game: what the scoring added to the seat's total over the game (standard classic: points "
             "won, higher is better; reverse and jokers penalty: points taken, lower is better).", "",
             markdown_table(sections["points"]), "",
             "Game length: hands per game, and decisions per hand (each game's moves, forced ones included, over "
             "its hands).", "",
             markdown_table(sections["lengths"]), "",
             "![points per game and game length](distributions.png)", ""]
    paired = [t.to_dict() for t in result.paired()]
    if paired:
        lines += ["### Paired comparisons", "",
                  "Per deal, the mean raw win share of `a` minus that of `b` over the games both played on it "
                  "(with `--duplicate` every agent plays every seat of each deal); `ci_*` is the 95% "
                  "t-interval of the mean difference and `p_t` the paired t-test. Wilcoxon and sign tests "
                  "assume symmetric differences: valid when both agents fill equally many seats, not in "
                  "1-vs-(n-1) with n > 2.", "",
                  markdown_table(paired), ""]
    lines += ["### Ratings", "", RATINGS_WIN, "", markdown_table(ratings), "", _order_note(result.table(), ratings), "",
              "### Ratings on the full placing", "", RATINGS_PLACING, "", markdown_table(placing), "",
              _order_note(result.table(), placing), ""]
    return "\n".join(lines)


def _luck_files(out: Path, luck: LuckAdjustment) -> str:
    """Write ``luck.json`` and ``luck.csv``; returns the report section."""
    rows = luck.table()
    (out / "luck.json").write_text(json.dumps(luck.to_dict(), indent=1))
    write_csv(out / "luck.csv", rows, LUCK_KEYS)
    lines = ["## Luck-adjusted win rates", "", f"{luck_title(luck)}.", "", LUCK_NOTE, "",
             markdown_table(rows, LUCK_KEYS), "", "### What the adjustment did to each agent", "", LUCK_AGENTS_NOTE, "",
             markdown_table(luck.agent_rows()), ""]
    paired = [t.to_dict() for t in luck.paired()]
    if paired:
        lines += ["### Paired comparisons, luck-adjusted", "", LUCK_PAIRED_NOTE, "", markdown_table(paired), ""]
    return "\n".join(lines)


def _order_note(table: Sequence[Mapping[str, Any]], ratings: Sequence[Mapping[str, Any]]) -> str:
    """Whether the ratings rank the agents as their win rates do, naming every pair they rank the other way."""
    rate = {r["agent"]: r["win_rate"] for r in table}
    place = {r["agent"]: i for i, r in enumerate(ratings)}
    swapped = [(x, y) for x in place for y in place if rate[x] > rate[y] and place[x] > place[y]]
    if not swapped:
        return "These ratings rank the agents as their win rates do (agents with equal win rates in either order)."
    pairs = "; ".join(f"`{x}` wins more often than `{y}` but rates lower" for x, y in swapped)
    return f"These ratings and the win rates disagree: {pairs}."


def _pairwise_files(out: Path, pairwise: Pairwise, info: Mapping[str, Any], write_results: bool) -> str:
    rows = pairwise_rows(pairwise)
    first = next(iter(pairwise.values()))
    n = first.config.num_players
    specs = list(dict.fromkeys([x for x, _ in pairwise] + [y for _, y in pairwise]))
    ratings = rating_table(pairwise.values())
    placing = rating_table(pairwise.values(), "placing")
    write_csv(out / "pairwise.csv", rows, PAIR_KEYS)
    summary = {k: v for k, v in first.summary().items() if k not in ("agents", "elapsed_s", "games_per_s")}
    payload = {"summary": summary, "pairwise": rows, "ratings": ratings, "ratings_placing": placing, "provenance": info,
               "games": {f"{x} vs {y}": [asdict(g) for g in r.games] for (x, y), r in pairwise.items()}}
    (out / "pairwise.json").write_text(json.dumps(payload, indent=1))
    if write_results:
        (out / "results.json").write_text(json.dumps(payload, indent=1))
        write_csv(out / "results.csv", rows, PAIR_KEYS)
        plot_win_rates([{**r, "agent": f"{r['agent']} vs {r['opponent']}"} for r in rows], out / "win_rates.png",
                       chance=1 / n, title=f"{config_title(first)}: 1-vs-(n-1)")
    plot_pairwise({(r["agent"], r["opponent"]): r["win_rate"] for r in rows}, specs, out / "pairwise.png", chance=1 / n,
                  title=f"{config_title(first)}: win rate of row vs {n - 1} x column")
    lines = ["## Pairwise 1-vs-(n-1)", "", _setup(first, pairwise=True), "",
             f"Each row: the agent in one seat against {n - 1} copies of the opponent; `beats` = lower 95% "
             f"CI bound above chance 1/n = {1 / n:.3f}; `p_t` = paired t-test over the deals.", "",
             markdown_table(rows), ""]
    if write_results:
        lines += ["![win rates with 95% CI](win_rates.png)", ""]
    lines += ["![pairwise matrix](pairwise.png)", "", "### Ratings over all pairwise games", "", RATINGS_WIN, "",
              markdown_table(ratings), "", "### Ratings on the full placing over all pairwise games", "",
              RATINGS_PLACING, "", markdown_table(placing), ""]
    return "\n".join(lines)


def config_title(result: TournamentResult) -> str:
    """The game of a tournament in a few words, e.g. ``jokers 4p, 2 jokers, after_joker=match``."""
    cfg = result.config
    extra = f", {cfg.scoring}" if cfg.is_classic else f", {cfg.num_jokers} jokers, after_joker={cfg.after_joker}"
    return f"{cfg.variant} {cfg.num_players}p{extra}"


def _setup(result: TournamentResult, pairwise: bool = False) -> str:
    s = result.summary()
    cfg = ", ".join(f"{k}={v}" for k, v in s["config"].items())
    lines = [f"- configuration: {cfg}", f"- episode: {s['episode']}; seed: {s['seed']}; "
             f"duplicate deals: {s['duplicate']}; processes: {s['processes']}"]
    if pairwise:
        return "\n".join([*lines, f"- games per pair: {s['games']}"])
    return "\n".join([*lines, f"- agents by seat in game 0 (seats rotate): {', '.join(s['agents'])}",
                      f"- games: {s['games']} in {s['elapsed_s']} s ({s['games_per_s']} games/s)"])


def markdown_table(rows: Sequence[Mapping[str, Any]], keys: Sequence[str] | None = None) -> str:
    """A Markdown table of ``rows`` with the columns ``keys`` (default: the first row's keys)."""
    if not rows:
        return "(no rows)"
    keys = list(rows[0]) if keys is None else list(keys)
    head = "| " + " | ".join(keys) + " |\n|" + "|".join("---" for _ in keys) + "|\n"
    return head + "\n".join("| " + " | ".join(format_cell(r[k], k) for k in keys) + " |" for r in rows)


def write_markdown(path: Path, title: str, command: str, lines: Sequence[str]) -> Path:
    """Write the Markdown report ``path``: the heading ``title``, the command that made it (when given), ``lines``."""
    path.write_text("\n".join([f"# {title}", "", *([f"Command: `{command}`", ""] if command else []), *lines]))
    return path


def write_result_files(folder: Path, stem: str, rows: Sequence[Mapping[str, Any]],
                       shown: Sequence[Mapping[str, Any]], heading: str = "") -> str:
    """A benchmark's results: every field of ``rows`` in ``folder/stem.csv`` and the table of ``shown`` (its
    cells formatted for reading) under ``heading`` in ``folder/stem.md``; returns the Markdown text."""
    write_csv(folder / f"{stem}.csv", rows)
    text = (f"{heading}\n\n" if heading else "") + markdown_table(shown)
    (folder / f"{stem}.md").write_text(text + "\n")
    return text
