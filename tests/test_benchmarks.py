"""``benchmarks/throughput.py``: its rate arithmetic on a scripted clock, and the script end to end (every row
measured, the JSON consistent with itself, every target reported, bad options refused)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "throughput.py"


@pytest.fixture(scope="module")
def throughput() -> ModuleType:
    """The benchmark script imported as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("throughput", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_measure_counts_decisions_per_second_of_the_given_clock(throughput: ModuleType) -> None:
    ticks = iter([10.0, 10.4, 10.8, 11.2])  # each episode takes 0.4 s of the scripted clock
    episodes = []
    rate = throughput.measure(lambda: episodes.append(1) or 7, 1.0, clock=lambda: next(ticks))
    assert len(episodes) == 3  # 0.4 and 0.8 s are short of 1 s, 1.2 s is not
    assert rate == pytest.approx(21 / 1.2)


def test_throughput_script_end_to_end(tmp_path: Path) -> None:
    """Every row runs, the JSON agrees with itself (best run, ratios, targets), every target is reported."""
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--seconds", "0.05", "--repeat", "1", "--no-progress", "--json", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    rates = {f"{r['subject']} / {r['game']}": r["decisions_per_s"] for r in data["rows"]}
    for game in ("classic 4p", "classic 12p", "jokers 4p"):
        assert {f"engine / {game}", f"raw_env / {game}", f"env / {game}"} <= rates.keys()
        assert {f"VectorGame B={b} / {game}" for b in (1, 64, 1024, 4096)} <= rates.keys()
    assert {"pyspiel / crazy_eights 4p", "pyspiel+obs / crazy_eights 4p",
            "pettingzoo env / connect_four_v3", "pettingzoo env / texas_holdem_v4"} <= rates.keys()
    for row in data["rows"]:  # one run each (--repeat 1), and the row reports its best run
        assert len(row["runs"]) == 1 and row["decisions_per_s"] == max(row["runs"])
    for q in data["ratios"]:
        assert q["ratio"] == pytest.approx(rates[q["numerator"]] / rates[q["denominator"]])
        assert q["met"] == (None if q["target"] is None else q["ratio"] >= q["target"])
    assert [q["target"] for q in data["ratios"] if q["target"] is not None] == [0.5, 1.0, 2.0, 25.0, 25.0]
    assert [(t["row"], t["target"]) for t in data["absolute_targets"]] == [
        ("VectorGame B=4096 / classic 4p", 2_000_000), ("VectorGame B=4096 / jokers 4p", 2_000_000),
        ("VectorGame B=4096 / classic 12p", 1_000_000)]
    for t in data["absolute_targets"]:
        assert t["decisions_per_s"] == rates[t["row"]] and t["met"] == (t["decisions_per_s"] >= t["target"])
    assert "ratios:" in proc.stdout and "decisions/s" in proc.stdout


def test_throughput_script_rejects_bad_options() -> None:
    bad = subprocess.run([sys.executable, str(SCRIPT), "--seconds", "0"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--seconds must be > 0" in bad.stderr
    none = subprocess.run([sys.executable, str(SCRIPT), "--only", "no-such-row", "--no-progress"],
                          capture_output=True, text=True, timeout=120)
    assert none.returncode == 2 and "no row matches" in none.stderr
