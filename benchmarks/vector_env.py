"""Learner steps per second of ``gymnasium.make_vec("goboom_env/GoBoom-v0", ...)``: the batched single-agent env
(``vectorization_mode="vector_entry_point"``) against Gymnasium's sync vector env of the scalar one, in the same run.

Each row is one ``make_vec`` of ``--num-envs`` games (default 1,024) of one game preset against one opponent
(``random`` or ``heuristic``), reset with a seed; a timed call steps it with random legal actions drawn from
``info["action_mask"]`` (``goboom_env.vector.random_legal_actions``, the same for both modes), and a learner step is
one game's step (``num_envs`` per vector step). The two modes play the same games (tests/env/test_vector_env.py), so
the ratio is the speed-up of the same work. Ratio target: >= 20x at 1,024 games.

Timing as in ``throughput.py`` (``_timing.py``): every row gets an untimed warm-up (numba's cache, the first
allocations), then all rows are measured once per round, round-robin, ``--repeat`` rounds, each until ``--seconds`` of
the clock have passed, and a row reports its best round. The clock is the process's CPU time by default (``--clock
wall``: ``perf_counter``). numpy's
BLAS library is capped at ``--blas-threads`` threads (default 1, as ``goboom train-fast --threads 1`` caps it): the
heuristics' matrix products are small, and several BLAS threads on a busy machine mostly spin.

    .venv/bin/python benchmarks/vector_env.py                          # classic 4p, random and heuristic, ~2 min
    .venv/bin/python benchmarks/vector_env.py --preset classic jokers --seconds 3 --repeat 5 --json /tmp/vec.json
"""

from __future__ import annotations

import argparse
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass

import _timing
import gymnasium
import numpy as np
from threadpoolctl import threadpool_limits

import goboom_env
from goboom_env.config import PRESETS
from goboom_env.vector import random_legal_actions

MODES = ("vector_entry_point", "sync")
OPPONENTS = ("random", "heuristic")
TARGET = 20.0
TARGET_GAMES = 1024
"""The ratio vector_entry_point / sync to reach, and the number of games it is for."""


@dataclass
class Row(_timing.Row):
    """One ``make_vec`` measured, in learner steps per second: a mode on a preset against an opponent."""

    mode: str
    preset: str
    opponent: str
    num_envs: int

    @property
    def key(self) -> str:
        return f"{self.mode} / {self.preset} / {self.opponent}"


def stepper(mode: str, preset: str, opponent: str, num_envs: int, seed: int) -> Callable[[], int]:
    """Builds and resets the vector env; returns a function that makes one vector step and returns the learner steps
    it made (``num_envs``)."""
    envs = gymnasium.make_vec(goboom_env.GYM_ID, num_envs=num_envs, vectorization_mode=mode, preset=preset,
                              opponents=[opponent])
    _, info = envs.reset(seed=seed)
    rng = np.random.default_rng(seed)
    state = {"mask": info["action_mask"]}

    def step() -> int:
        actions = np.maximum(random_legal_actions(state["mask"], rng), 0)  # 0 where the mask is empty (ignored)
        state["mask"] = envs.step(actions)[4]["action_mask"]
        return num_envs

    return step


def run(rows: list[Row], args: argparse.Namespace) -> None:
    """Build and warm up every row, then measure them round-robin ``repeat`` times."""
    for i, row in enumerate(rows):
        print(f"building {row.key} ({row.num_envs} games)", file=sys.stderr)
        row.call = stepper(row.mode, row.preset, row.opponent, row.num_envs, args.seed + i)
        for _ in range(3):
            row.call()
    _timing.measure_rounds(rows, args)


def report(rows: list[Row], args: argparse.Namespace) -> dict:
    """Print the table and the ratios; return the same data for ``--json``."""
    print(f"\nlearner steps/s, {args.num_envs} games, best of {args.repeat} x {args.seconds:g} s of {args.clock} "
          f"time, {args.blas_threads} BLAS thread(s), {platform.python_implementation()} {platform.python_version()}")
    print(f"{'mode':<20}{'preset':<18}{'opponent':<11}{'steps/s':>12}  {'spread (k)':>11}")
    for r in rows:
        print(f"{r.mode:<20}{r.preset:<18}{r.opponent:<11}{r.best:>12,.0f}  "
              f"{min(r.rates) / 1e3:5.1f}-{max(r.rates) / 1e3:.1f}")
    by_key = {r.key: r.best for r in rows}
    ratios = []
    for preset in args.preset:
        for opponent in args.opponents:
            batched, sync = (by_key[f"{mode} / {preset} / {opponent}"] for mode in MODES)
            met = batched / sync >= TARGET if args.num_envs == TARGET_GAMES else None
            ratios.append({"preset": preset, "opponent": opponent, "ratio": batched / sync, "target": TARGET,
                           "met": met})
    print(f"\nvector_entry_point / sync (target >= {TARGET:g}x at {TARGET_GAMES:,} games):")
    for q in ratios:
        verdict = "(context: another number of games)" if q["met"] is None else "met" if q["met"] else "MISSED"
        print(f"  {q['preset']:<18}{q['opponent']:<11}{q['ratio']:7.1f}x  {verdict}")
    return {"num_envs": args.num_envs, "seconds": args.seconds, "repeat": args.repeat, "clock": args.clock,
            "blas_threads": args.blas_threads, "seed": args.seed, "python": platform.python_version(),
            "rows": [{"mode": r.mode, "preset": r.preset, "opponent": r.opponent, "steps_per_s": r.best,
                      "runs": r.rates} for r in rows],
            "ratios": ratios}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-envs", type=int, default=1024, help="games per vector env (default 1024)")
    parser.add_argument("--preset", nargs="+", default=["classic"], choices=sorted(PRESETS),
                        help="game presets (default: classic)")
    parser.add_argument("--opponents", nargs="+", default=list(OPPONENTS), choices=OPPONENTS,
                        help="opponents, one row pair each (default: random heuristic)")
    parser.add_argument("--blas-threads", type=int, default=1, help="numpy's BLAS threads (default 1)")
    _timing.add_options(parser, seconds=2.0)
    args = _timing.parse_args(parser, argv)
    for name in ("num_envs", "blas_threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows = [Row(mode, preset, opponent, args.num_envs)
            for preset in args.preset for opponent in args.opponents for mode in MODES]
    with threadpool_limits(limits=args.blas_threads, user_api="blas"):
        run(rows, args)
    _timing.write_json(args.json, report(rows, args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
