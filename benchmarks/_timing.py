"""The timing method of the throughput benchmarks (``throughput.py``, ``vector_env.py``), written once.

A row's call makes some units of work (decisions, learner steps) and returns how many; a measurement makes whole
calls until ``--seconds`` of the clock have passed and divides the units by the elapsed time. The clock is this
process's CPU time by default (``--clock cpu``, ``time.process_time``: on a shared machine the time the scheduler
gives to other processes is not charged to the row); ``--clock wall`` is ``time.perf_counter``. All rows are
measured once per round, round-robin, ``--repeat`` rounds (so background load hits every row alike), and a row
reports its best round.

Not a script: the scripts import it (``python benchmarks/NAME.py`` puts this folder on the module path).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

Call = Callable[[], int]
"""Makes some work and returns how many units it made."""
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


@dataclass
class Row:
    """A measured row: a script's subclass names what it measures (its fields) and the row's :attr:`key`."""

    rates: list[float] = field(default_factory=list, kw_only=True)
    """Units per second, one per round."""
    call: Call | None = field(default=None, kw_only=True)
    """What is timed, built (and warmed up) by the script before the rounds."""

    @property
    def key(self) -> str:
        """The row's name in the progress line and the ratios."""
        raise NotImplementedError

    @property
    def best(self) -> float:
        """The best round's rate (NaN before any round)."""
        return max(self.rates) if self.rates else float("nan")


def measure(call: Call, seconds: float, clock: Callable[[], float] = time.process_time) -> float:
    """Units per second of whole calls of ``call`` made for at least ``seconds`` of ``clock``."""
    units, start, elapsed = 0, clock(), 0.0
    while elapsed < seconds:
        units += call()
        elapsed = clock() - start
    return units / elapsed


def measure_rounds(rows: Sequence[Row], args: argparse.Namespace) -> None:
    """Measure every row (its :attr:`Row.call` built) once per round, round-robin, for ``args.repeat`` rounds of
    ``args.seconds`` of ``args.clock`` each, with a progress bar on stderr (unless ``args.no_progress``)."""
    bar = tqdm(total=len(rows) * args.repeat, disable=args.no_progress, unit="run", file=sys.stderr)
    for round_ in range(args.repeat):
        for row in rows:
            bar.set_description(f"round {round_ + 1}/{args.repeat}: {row.key}")
            row.rates.append(measure(row.call, args.seconds, CLOCKS[args.clock]))
            bar.update()
    bar.close()


def add_options(parser: argparse.ArgumentParser, seconds: float) -> None:
    """The options of the timing method (``--seconds``, default ``seconds``; ``--repeat``, ``--clock``,
    ``--no-progress``) and of the run (``--seed``, ``--json``)."""
    parser.add_argument("--seconds", type=float, default=seconds,
                        help=f"timed seconds per measurement (default {seconds:g})")
    parser.add_argument("--repeat", type=int, default=3, help="round-robin rounds; a row keeps its best (default 3)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                        help="cpu: this process's CPU time (default, robust to other load); wall: perf_counter")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--seed", type=int, default=0, help="seed of the games and of the random play")
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")


def parse_args(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """``parser``'s options read from ``argv``; a usage error (exit status 2) for a ``--seconds`` or ``--repeat``
    out of range."""
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error(f"--seconds must be > 0, got {args.seconds}")
    if args.repeat < 1:
        parser.error(f"--repeat must be >= 1, got {args.repeat}")
    return args


def write_json(path: Path | None, data: dict) -> None:
    """Write the results to ``--json`` when it was given, and say so."""
    if path:
        path.write_text(json.dumps(data, indent=2) + "\n")
        print(f"wrote {path}")
