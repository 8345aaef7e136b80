"""Strength of search agents over their budget: one seat against n-1 copies of a baseline, duplicate single hands.

Each ``--agents`` entry is a spec template with ``{ms}`` where the time per decision goes (``ismcts:ms={ms}``,
``ppo-ismcts:path=runs/x/model.zip,ms={ms}``); every template is played at every ``--budgets`` value on the same
deals (``--seed``). Reported per row: the win rate with its 95% Wilson interval (parity 1/n) and the wall seconds
per hand of the whole table (the search's share dominates). The time per decision is a cap, so the moves depend on
the machine; ``benchmarks/search_time.py`` measures what one decision costs. Example::

    .venv/bin/python benchmarks/search_budget.py --preset jokers --opponent jokers-boom \\
        --agents "ismcts:ms={ms}" "ppo-ismcts:path=jokers-4p-hands,ms={ms}" --budgets 25 50 100 150 --hands 300
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from goboom_env import GameConfig
from goboom_env.evaluation.tournament import run_tournament


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="jokers", help="the game (a goboom preset; default: %(default)s)")
    parser.add_argument("--opponent", default="heuristic", help="the baseline in every other seat")
    parser.add_argument("--agents", nargs="+", required=True, help="spec templates with {ms}")
    parser.add_argument("--budgets", nargs="+", type=float, default=[25, 50, 100, 150], help="ms per decision")
    parser.add_argument("--hands", type=int, default=300, help="hands per row (rounded up to a multiple of n)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--csv", type=Path, help="also write the rows to this CSV file")
    args = parser.parse_args(argv)
    if any("{ms}" not in a for a in args.agents):
        parser.error("every --agents template needs {ms}, e.g. ismcts:ms={ms}")
    config = GameConfig.preset(args.preset)
    rows = []
    print(f"{args.preset}, {config.num_players} players: one seat vs {config.num_players - 1} {args.opponent}, "
          f"{args.hands} duplicate hands, seed {args.seed} (parity {1 / config.num_players:.3f})")
    print("| agent | ms per decision | win rate [95% CI] | s per hand |\n|---|---:|---|---:|")
    for template in args.agents:
        for ms in args.budgets:
            spec = template.format(ms=f"{ms:g}")
            result = run_tournament(config, [spec] + [args.opponent] * (config.num_players - 1), args.hands,
                                    seed=args.seed, duplicate=True, processes=args.processes, progress=False)
            row = next(r for r in result.table() if r["agent"] == result.agents[0])
            per_hand = result.elapsed * args.processes / len(result.games)
            rows.append({"agent": template, "ms": ms, "games": row["games"], "win_rate": row["win_rate"],
                         "ci_low": row["ci_low"], "ci_high": row["ci_high"], "seconds_per_hand": per_hand})
            print(f"| `{template}` | {ms:g} | {row['win_rate']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}] "
                  f"| {per_hand:.2f} |", flush=True)
    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        with args.csv.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
