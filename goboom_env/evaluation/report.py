"""Evaluation outputs: rich terminal tables, JSON + CSV results, PNG plots and one Markdown report.

:func:`write_report` takes a tournament and/or a pairwise (every agent 1-vs-(n-1) every other)
run and writes into one folder::

    report.md          self-contained summary that embeds the PNGs below (relative links)
    results.json       summary, per-agent table, paired tests, ratings and every game record
    results.csv        per-agent table (tournament) or per-pair table (pairwise)
    win_rates.png      win rates with 95% CI bars and the 1/n chance line
    pairwise.png       pairwise matrix (pairwise mode)
    pairwise.json/csv  pairwise rows with CI and paired tests (pairwise mode)
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from goboom_env.evaluation.plots import plot_pairwise, plot_win_rates
from goboom_env.evaluation.ratings import rating_table
from goboom_env.evaluation.tournament import TournamentResult

PAIR_KEYS = ("agent", "opponent", "games", "win_rate", "ci_low", "ci_high", "beats", "mean_points",
             "p_t", "elapsed_s")
RICH_PAIRED = ("a", "b", "deals", "mean_diff", "ci_low", "ci_high", "p_t")
RICH_PAIRWISE = ("agent", "opponent", "games", "win_rate", "ci_low", "ci_high", "beats", "p_t")
Pairwise = Mapping[tuple[str, str], TournamentResult]


# -- tables --------------------------------------------------------------------------------------


def pairwise_rows(pairwise: Pairwise) -> list[dict[str, Any]]:
    """One row per ordered pair: the single agent's win rate against n-1 copies of the opponent.

    ``beats`` is true when the lower CI bound is above 1/n; ``p_t`` is the paired t-test of the agent
    against the opponent copies over the deals (duplicate deals when enabled)."""
    rows = []
    for (x, y), result in pairwise.items():
        row = next(r for r in result.table() if r["agent"] == x)
        tests = result.paired()
        chance = 1.0 / result.config.num_players
        rows.append({"agent": x, "opponent": y, "games": row["games"], "win_rate": row["win_rate"],
                     "ci_low": row["ci_low"], "ci_high": row["ci_high"], "beats": row["ci_low"] > chance,
                     "mean_points": row["mean_points"],
                     "p_t": tests[0].p_t if tests else None, "elapsed_s": round(result.elapsed, 2)})
    return rows


def rich_tables(result: TournamentResult | None = None, pairwise: Pairwise | None = None) -> list[Table]:
    """Rich tables for the terminal: results, paired tests, ratings and/or the pairwise rows."""
    tables = []
    if result is not None:
        tables.append(_rich("Results (win rate with 95% Wilson CI; shared wins count 1/k)", result.table()))
        paired = [t.to_dict() for t in result.paired()]
        if paired:
            tables.append(_rich("Paired comparisons per deal (win share a - b)", paired, RICH_PAIRED))
        tables.append(_rich("Ratings (openskill Plackett-Luce)", rating_table(result)))
    if pairwise:
        tables.append(_rich("Pairwise 1-vs-(n-1) win rates", pairwise_rows(pairwise), RICH_PAIRWISE))
        tables.append(_rich("Ratings over all pairwise games", rating_table(pairwise.values())))
    return tables


def print_tables(result: TournamentResult | None = None, pairwise: Pairwise | None = None,
                 console: Console | None = None) -> None:
    """Print :func:`rich_tables` to the terminal."""
    console = console or Console()
    for table in rich_tables(result, pairwise):
        console.print(table)


def _rich(title: str, rows: Sequence[Mapping[str, Any]], keys: Sequence[str] | None = None) -> Table:
    """A rich table of ``rows`` (the given columns, default all; the files keep every column)."""
    table = Table(title=title)
    keys = list(keys or (rows[0] if rows else []))
    for key in keys:
        table.add_column(key, justify="left" if key in ("agent", "opponent", "a", "b") else "right")
    for row in rows:
        table.add_row(*(_fmt(row[k]) for k in keys))
    return table


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e-3 and value else f"{value:.3f}"
    return str(value)


# -- files ----------------------------------------------------------------------------------------


def write_report(out: str | Path, result: TournamentResult | None = None, pairwise: Pairwise | None = None,
                 command: str = "") -> Path:
    """Write JSON, CSV, PNG plots and ``report.md`` into ``out``; returns the report's path."""
    if result is None and not pairwise:
        raise ValueError("write_report needs a tournament result, a pairwise run, or both")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sections = ["# Go Boom evaluation report\n" + (f"\nCommand: `{command}`\n" if command else "")]
    if result is not None:
        sections.append(_tournament_files(out, result))
    if pairwise:
        sections.append(_pairwise_files(out, pairwise, write_results=result is None))
    path = out / "report.md"
    path.write_text("\n".join(sections))
    return path


def _tournament_files(out: Path, result: TournamentResult) -> str:
    ratings = rating_table(result)
    (out / "results.json").write_text(json.dumps({**result.to_dict(), "ratings": ratings}, indent=1))
    result.to_csv(out / "results.csv")
    n = result.config.num_players
    plot_win_rates(result.table(), out / "win_rates.png", chance=1 / n, title=_config_title(result))
    lines = ["## Tournament", "", _setup(result), "", _markdown(result.table()), "",
             "![win rates with 95% CI](win_rates.png)", ""]
    paired = [t.to_dict() for t in result.paired()]
    if paired:
        lines += ["### Paired comparisons", "",
                  "Per deal, the mean win share of `a` minus that of `b` over the games both played on it "
                  "(with `--duplicate` every agent plays every seat of each deal); `ci_*` is the 95% "
                  "t-interval of the mean difference and `p_t` the paired t-test. Wilcoxon and sign tests "
                  "assume symmetric differences: valid when both agents fill equally many seats, not in "
                  "1-vs-(n-1) with n > 2.", "",
                  _markdown(paired), ""]
    lines += ["### Ratings", "", "openskill Plackett-Luce over every game, ranked winners first then by points; "
              "`ordinal = mu - 3 sigma`.", "", _markdown(ratings), ""]
    return "\n".join(lines)


def _pairwise_files(out: Path, pairwise: Pairwise, write_results: bool) -> str:
    rows = pairwise_rows(pairwise)
    first = next(iter(pairwise.values()))
    n = first.config.num_players
    specs = list(dict.fromkeys([x for x, _ in pairwise] + [y for _, y in pairwise]))
    ratings = rating_table(pairwise.values())
    _write_csv(out / "pairwise.csv", rows, PAIR_KEYS)
    payload = {"summary": {k: v for k, v in first.summary().items() if k not in ("agents", "elapsed_s",
                                                                                   "games_per_s")},
               "pairwise": rows, "ratings": ratings,
               "games": {f"{x} vs {y}": [asdict(g) for g in r.games] for (x, y), r in pairwise.items()}}
    (out / "pairwise.json").write_text(json.dumps(payload, indent=1))
    if write_results:
        (out / "results.json").write_text(json.dumps(payload, indent=1))
        _write_csv(out / "results.csv", rows, PAIR_KEYS)
        plot_win_rates([{**r, "agent": f"{r['agent']} vs {r['opponent']}"} for r in rows], out / "win_rates.png",
                       chance=1 / n, title=f"{_config_title(first)}: 1-vs-(n-1)")
    matrix = {(r["agent"], r["opponent"]): r["win_rate"] for r in rows}
    plot_pairwise(matrix, specs, out / "pairwise.png", chance=1 / n,
                  title=f"{_config_title(first)}: win rate of row vs {n - 1} x column")
    lines = ["## Pairwise 1-vs-(n-1)", "", _setup(first, pairwise=True), "",
             f"Each row: the agent in one seat against {n - 1} copies of the opponent; `beats` = lower 95% "
             f"CI bound above chance 1/n = {1 / n:.3f}; `p_t` = paired t-test over the deals.", "",
             _markdown(rows), ""]
    if write_results:
        lines += ["![win rates with 95% CI](win_rates.png)", ""]
    lines += ["![pairwise matrix](pairwise.png)", "", "### Ratings over all pairwise games", "",
              _markdown(ratings), ""]
    return "\n".join(lines)


def _config_title(result: TournamentResult) -> str:
    cfg = result.config
    extra = f", {cfg.scoring}" if cfg.is_classic else f", {cfg.num_jokers} jokers, after_joker={cfg.after_joker}"
    return f"{cfg.variant} {cfg.num_players}p{extra}"


def _setup(result: TournamentResult, pairwise: bool = False) -> str:
    s = result.summary()
    cfg = ", ".join(f"{k}={v}" for k, v in s["config"].items())
    lines = [f"- configuration: {cfg}", f"- episode: {s['episode']}; seed: {s['seed']}; "
             f"duplicate deals: {s['duplicate']}; processes: {s['processes']}"]
    if not pairwise:
        lines.append(f"- agents by seat in game 0 (seats rotate): {', '.join(s['agents'])}")
        lines.append(f"- games: {s['games']} in {s['elapsed_s']} s ({s['games_per_s']} games/s)")
    else:
        lines.append(f"- games per pair: {s['games']}")
    return "\n".join(lines)


def _markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return "(no rows)"
    keys = list(rows[0])
    head = "| " + " | ".join(keys) + " |\n|" + "|".join("---" for _ in keys) + "|\n"
    return head + "\n".join("| " + " | ".join(_fmt(r[k]) for k in keys) + " |" for r in rows)


def _write_csv(path: Path, rows: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(keys))
        writer.writeheader()
        writer.writerows(rows)
