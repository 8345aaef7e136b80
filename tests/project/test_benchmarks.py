"""The benchmark scripts: ``benchmarks/throughput.py``'s timing method (``_timing.py``) on a scripted clock, and the
script end to end (every row measured, the JSON consistent with itself, every target reported, bad options refused;
the rows of OpenSpiel and PettingZoo's own envs need the ``bench`` extra); the other scripts end to end on tiny
budgets."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from helpers import ROOT, benchmark_fixture, benchmark_module

SCRIPT = ROOT / "benchmarks" / "throughput.py"

timing = benchmark_fixture("_timing")


def test_measure_counts_decisions_per_second_of_the_given_clock(timing: ModuleType) -> None:
    ticks = iter([10.0, 10.4, 10.8, 11.2])  # each episode takes 0.4 s of the scripted clock
    episodes = []
    rate = timing.measure(lambda: episodes.append(1) or 7, 1.0, clock=lambda: next(ticks))
    assert len(episodes) == 3  # 0.4 and 0.8 s are short of 1 s, 1.2 s is not
    assert rate == pytest.approx(21 / 1.2)


def _run_script(tmp_path: Path, *flags: str) -> tuple[dict, str]:
    """Run the script for 0.05 s a row, once; its JSON and its stdout."""
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--seconds", "0.05", "--repeat", "1", "--no-progress", "--json", str(out),
         *flags],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text()), proc.stdout


def _check_consistent(data: dict) -> dict[str, float]:
    """Each row reports its best run, each ratio and target is computed from the rows; the rates by row."""
    rates = {f"{r['subject']} / {r['game']}": r["decisions_per_s"] for r in data["rows"]}
    for row in data["rows"]:  # one run each (--repeat 1), and the row reports its best run
        assert len(row["runs"]) == 1 and row["decisions_per_s"] == max(row["runs"])
    for q in data["ratios"]:
        assert q["ratio"] == pytest.approx(rates[q["numerator"]] / rates[q["denominator"]])
        assert q["met"] == (None if q["target"] is None else q["ratio"] >= q["target"])
    for t in data["absolute_targets"]:
        assert t["decisions_per_s"] == rates[t["row"]] and t["met"] == (t["decisions_per_s"] >= t["target"])
    return rates


@pytest.mark.slow  # the whole benchmark script: tens of seconds
def test_throughput_script_end_to_end(tmp_path: Path) -> None:
    """Every Go Boom row runs, the JSON agrees with itself, the batched engine's targets are reported."""
    data, stdout = _run_script(tmp_path, "--no-external")
    rates = _check_consistent(data)
    for game in ("classic 4p", "classic 12p", "jokers 4p"):
        assert {f"engine / {game}", f"raw_env / {game}", f"env / {game}"} <= rates.keys()
        assert {f"VectorGame B={b} / {game}" for b in (1, 64, 1024, 4096)} <= rates.keys()
    assert [q["target"] for q in data["ratios"] if q["target"] is not None] == [25.0, 25.0]
    assert [(t["row"], t["target"]) for t in data["absolute_targets"]] == [
        ("VectorGame B=4096 / classic 4p", 2_000_000), ("VectorGame B=4096 / jokers 4p", 2_000_000),
        ("VectorGame B=4096 / classic 12p", 1_000_000)]
    assert "ratios:" in stdout and "decisions/s" in stdout


@pytest.mark.slow  # OpenSpiel's and RLCard's envs measured too
def test_throughput_script_measures_the_reference_envs(tmp_path: Path) -> None:
    """The OpenSpiel and PettingZoo rows (the bench extra) and the targets relative to them."""
    pytest.importorskip("pyspiel")
    pytest.importorskip("rlcard")
    data, _ = _run_script(tmp_path, "--only", "/ classic 4p", "crazy_eights", "pettingzoo env")
    rates = _check_consistent(data)
    assert {"pyspiel / crazy_eights 4p", "pyspiel+obs / crazy_eights 4p",
            "pettingzoo env / connect_four_v3", "pettingzoo env / texas_holdem_v4"} <= rates.keys()
    external = [q for q in data["ratios"] if "crazy_eights" in q["denominator"] or "pettingzoo" in q["denominator"]]
    assert [q["target"] for q in external if q["target"] is not None] == [0.5, 1.0, 2.0]


def test_vector_env_script_compares_both_modes_on_each_row(tmp_path: Path) -> None:
    """``benchmarks/vector_env.py`` end to end on 4 games: both modes per preset and opponent, the ratios computed from
    the rows, no verdict away from the target's 1,024 games; bad options refused."""
    out = tmp_path / "vec.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "vector_env.py"), "--num-envs", "4",
                           "--preset", "jokers-aces", "--seconds", "0.05", "--repeat", "2", "--json", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    rates = {(r["mode"], r["opponent"]): r["steps_per_s"] for r in data["rows"]}
    assert set(rates) == {(m, o) for m in ("vector_entry_point", "sync") for o in ("random", "heuristic")}
    assert all(len(r["runs"]) == 2 and r["steps_per_s"] == max(r["runs"]) for r in data["rows"])
    for q in data["ratios"]:
        assert q["ratio"] == pytest.approx(rates["vector_entry_point", q["opponent"]] / rates["sync", q["opponent"]])
        assert (q["target"], q["met"]) == (20.0, None)
    assert "vector_entry_point / sync" in proc.stdout
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "vector_env.py"), "--num-envs", "0"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--num-envs must be >= 1" in bad.stderr


def test_throughput_script_rejects_bad_options() -> None:
    bad = subprocess.run([sys.executable, str(SCRIPT), "--seconds", "0"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--seconds must be > 0" in bad.stderr
    none = subprocess.run([sys.executable, str(SCRIPT), "--only", "no-such-row", "--no-progress"],
                          capture_output=True, text=True, timeout=120)
    assert none.returncode == 2 and "no row matches" in none.stderr


@pytest.mark.slow
def test_learning_curves_script_writes_a_curve_per_trainer(tmp_path: Path) -> None:
    """``benchmarks/learning_curves.py`` end to end on a tiny budget: the fast trainer's checkpoints are
    evaluated in wall-clock order and the table, CSV and plot are written (SB3's warm start alone outlasts
    this budget, so only its folder is checked). The fast recipe's warm start (3,000 cloned games) counts against
    the budget and took more than 20 s on the project's 2-core machine, so the budget is 60 s."""
    pytest.importorskip("sb3_contrib")
    out = tmp_path / "curves"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "learning_curves.py"), "--seconds", "60",
                           "--checkpoint-every", "4096", "5000", "--games", "8", "--out", str(out)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = list(csv.DictReader((out / "curves.csv").open()))
    fast = [r for r in rows if r["trainer"] == "fast"]
    assert fast and all(0.0 <= float(r["ci_low"]) <= float(r["win_rate"]) <= float(r["ci_high"]) <= 1.0
                        for r in rows)
    seconds = [float(r["seconds"]) for r in fast]
    assert seconds == sorted(seconds) and [int(r["steps"]) for r in fast] == sorted(int(r["steps"]) for r in fast)
    assert (out / "sb3" / "args.json").exists() and (out / "curves.png").stat().st_size > 0
    assert (out / "curves.md").read_text().count("| fast |") == len(fast)


def test_learning_curves_script_says_so_when_no_checkpoint_was_saved(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    with benchmark_module("learning_curves") as module:
        monkeypatch.setattr(module, "run_trainer", lambda *args: None)  # a budget too short for any checkpoint
        monkeypatch.setattr(module, "curve", lambda *args: [])
        monkeypatch.setattr(sys, "argv", ["learning_curves.py", "--seconds", "1", "--out", str(tmp_path / "x")])
        with pytest.raises(SystemExit) as exit_:
            module.main()
    assert exit_.value.code == 2 and "no trainer saved a checkpoint within 1 s" in capsys.readouterr().err


def test_learning_curves_script_refuses_a_bad_budget(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "learning_curves.py"), "--seconds", "0",
                           "--out", str(tmp_path / "x")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "must be positive" in proc.stderr and not (tmp_path / "x").exists()


def _tiny_fast_run(out: Path, seed: int) -> None:
    subprocess.run([sys.executable, "-m", "goboom_env.cli", "train-fast", "--timesteps", "3000", "--num-envs", "16",
                    "--num-steps", "16", "--minibatch-size", "128", "--checkpoint-every", "1000", "--eval-every", "-1",
                    "--seed", str(seed), "--no-progress", "--out", str(out)],
                   check=True, capture_output=True, timeout=300)


@pytest.mark.slow
def test_seed_band_script_evaluates_each_seed_on_one_grid(tmp_path: Path) -> None:
    """``benchmarks/seed_band.py`` end to end on two tiny seeds: one row per seed and grid step, the first
    checkpoint at or after each grid step, seconds read from the run's log, and the table's band spans the seeds."""
    runs = [tmp_path / "s1", tmp_path / "s2"]
    for seed, run in enumerate(runs, 1):
        _tiny_fast_run(run, seed)
    out = tmp_path / "band"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "seed_band.py"), *map(str, runs),
                           "--every", "1000", "--games", "8", "--opponent", "random", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = list(csv.DictReader((out / "band.csv").open()))
    assert sorted({r["seed"] for r in rows}) == ["1", "2"]
    for row in rows:
        assert int(row["steps"]) >= int(row["grid"]) and int(row["grid"]) % 1000 == 0
        assert 0.0 <= float(row["ci_low"]) <= float(row["win_rate"]) <= float(row["ci_high"]) <= 1.0
        assert float(row["train_s"]) > 0
    grids = sorted({int(r["grid"]) for r in rows})
    assert grids == [1000, 2000, 3000]
    table = (out / "band.md").read_text()
    for grid in grids:
        rates = [float(r["win_rate"]) for r in rows if int(r["grid"]) == grid]
        assert f"| {grid:,} | 2 |" in table and f"{min(rates):.3f} | {max(rates):.3f} |" in table
    assert (out / "band.png").stat().st_size > 0


def test_seed_band_script_refuses_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "seed_band.py"), str(tmp_path), "--out",
                           str(tmp_path / "band")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "is not a run folder" in proc.stderr


def test_seed_band_script_refuses_a_grid_beyond_every_checkpoint(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "args.json").write_text(json.dumps({"num_players": 4, "seed": 1}))
    (run / "checkpoints" / "model_500.zip").write_bytes(b"")  # below the grid: never read
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "seed_band.py"), str(run), "--every", "1000",
                           "--out", str(tmp_path / "band")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "no run has a checkpoint at or after --every 1,000 steps" in proc.stderr
    assert not (tmp_path / "band").exists()


variants = benchmark_fixture("heuristic_variants")


def test_the_unchanged_variant_plays_every_game_exactly_as_jokers_boom(variants: ModuleType) -> None:
    from goboom_env.agents.registry import register_agent, unregister_agent
    from goboom_env.config import GameConfig
    from goboom_env.evaluation.tournament import run_tournament

    config = GameConfig(variant="jokers", num_players=4)
    register_agent("variant", lambda config, seed=None, **params: variants.Variant(config, seed, **params))
    try:
        def games(first: str) -> list[tuple[object, ...]]:
            result = run_tournament(config, [first] + ["jokers-boom"] * 3, 24, seed=5, duplicate=True,
                                    episode="match", progress=False)
            return [(g.winners, g.points, g.decisions) for g in result.games]

        assert games("variant") == games("jokers-boom")
        assert games("variant:boom_at=3") != games("jokers-boom")  # a parameter does change the play
    finally:
        unregister_agent("variant")


def test_variant_rules_on_hand_built_tables(variants: ModuleType) -> None:
    """An opponent holds 2 cards, we hold a joker and a matching 5: jokers-boom sheds the 5, ``boom_at=2`` booms.
    With no matching card and a stock of 15, jokers-boom booms, ``draw_from=10`` draws."""
    from goboom_env.agents.heuristics import Table
    from goboom_env.cards import DRAW_OR_PASS, JOKER, NUM_FACES
    from goboom_env.config import GameConfig

    config = GameConfig(variant="jokers", num_players=4)
    hand = np.zeros(NUM_FACES, np.int64)
    hand[[4, JOKER]] = 1
    unseen = np.ones(NUM_FACES, np.int64)
    two_left = Table(hand=hand, unseen=unseen, legal=[4, JOKER], sizes=np.array([2, 2, 5, 5]), stock=15, led=-1,
                     best=-1)
    assert variants.Variant(config, 0).choose(two_left) == 4
    assert variants.Variant(config, 0, boom_at=2).choose(two_left) == JOKER
    no_match = Table(hand=hand, unseen=unseen, legal=[JOKER, DRAW_OR_PASS], sizes=np.array([2, 5, 5, 5]), stock=15,
                     led=-1, best=-1)
    assert variants.Variant(config, 0).choose(no_match) == JOKER
    assert variants.Variant(config, 0, draw_from=10).choose(no_match) == DRAW_OR_PASS
    assert variants.Variant(config, 0, draw_from=20).choose(no_match) == JOKER


@pytest.mark.parametrize("players", [3, 4])
def test_known_voids_never_claim_more_than_the_seat_could_hold(variants: ModuleType, players: int) -> None:
    """Over random jokers hands, after every move: a seat seen lacking a suit (rank) that has drawn k cards since
    holds at most k plain cards of it. A forced draw after a BOOM read as a choice would break this."""
    from helpers import random_hand_steps

    from goboom_env.config import GameConfig
    from goboom_env.engine import Match
    from goboom_env.player_view import PlayerView

    config = GameConfig(variant="jokers", num_players=players)
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(150):
        hand = Match(config, rng).hand
        for _ in random_hand_steps(hand, rng):
            voids = variants.known_voids(PlayerView.of(hand, 0))
            for seat in range(players):
                held = np.array(hand.counts[seat][:52]).reshape(4, 13)
                for axis, per in ((0, held.sum(1)), (1, held.sum(0))):
                    since = voids[seat, axis, :len(per)]  # 4 suits, 13 ranks
                    known = since < variants.NEVER
                    assert (per[known] <= since[known]).all()
                    checked += int(known.sum())
    assert checked > 5000


@pytest.mark.slow
def test_heuristic_variants_script_writes_paired_differences(tmp_path: Path) -> None:
    """End to end on a tiny budget: the unchanged agent's difference is exactly 0, the others have an interval
    (in aces mode here); ``--agents`` compares any agent spec the same way (random loses to the heuristic it
    replaces); a bad game option or variant name is refused."""
    out = tmp_path / "v"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "heuristic_variants.py"), "--games", "12",
                           "--seeds", "3", "4", "--only", "boom at 3 cards", "--num-jokers", "0", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = list(csv.DictReader((out / "variants.csv").open()))
    assert [r["variant"] for r in rows] == ["jokers-boom", "boom at 3 cards"]
    assert all(int(r["matches"]) == 24 for r in rows)
    assert (float(rows[0]["diff"]), float(rows[0]["diff_low"]), float(rows[0]["diff_high"])) == (0.0, 0.0, 0.0)
    assert float(rows[1]["diff_low"]) <= float(rows[1]["diff"]) <= float(rows[1]["diff_high"])
    assert "| boom at 3 cards | 24 |" in (out / "variants.md").read_text()
    agents = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "heuristic_variants.py"), "--only", "--agents",
                             "random", "--games", "40", "--seeds", "3", "--out", str(tmp_path / "a")],
                            capture_output=True, text=True, timeout=300)
    assert agents.returncode == 0, agents.stderr[-3000:]
    rows = list(csv.DictReader((tmp_path / "a" / "variants.csv").open()))
    assert [r["variant"] for r in rows] == ["jokers-boom", "random"] and float(rows[1]["diff"]) < 0
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "heuristic_variants.py"), "--only", "nope",
                          "--out", str(tmp_path / "w")], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "unknown variants ['nope']" in bad.stderr
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "heuristic_variants.py"), "--num-jokers", "-1",
                          "--out", str(tmp_path / "w")], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "num_jokers" in bad.stderr and "Traceback" not in bad.stderr


luck_bench = benchmark_fixture("luck_adjusted")


def test_the_variance_reductions_interval_holds_the_factor_and_narrows_with_deals(luck_bench: ModuleType) -> None:
    """Adjusted scores with a quarter of the raw variance read a factor near 4, inside its bootstrap interval; the
    interval of 2,000 deals is far narrower than that of 100 drawn alike, and an exact quarter reads exactly 4."""
    from goboom_env.evaluation.luck import variance_ratio

    rng = np.random.default_rng(1)
    widths = []
    for deals in (100, 2000):
        raw = rng.normal(0.25, 0.2, deals)
        adjusted = 0.25 + 0.5 * (raw - 0.25) * rng.choice([-1, 1], deals) + rng.normal(0, 0.001, deals)
        factor = variance_ratio(raw, adjusted)
        low, high = luck_bench.variance_ratio_interval(raw, adjusted)
        assert low < factor < high and low < 4 < high
        widths.append(high - low)
    assert widths[1] < widths[0] / 3
    raw = rng.normal(0, 1, 50)
    low, high = luck_bench.variance_ratio_interval(raw, raw / 2)
    assert low == pytest.approx(4) and high == pytest.approx(4)


@pytest.mark.slow
def test_luck_benchmark_script_end_to_end(tmp_path: Path) -> None:
    """One configuration on a tiny budget: the row's factor, its interval and the games it saves agree with each
    other; a bad budget is refused."""
    out = tmp_path / "luck"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "luck_adjusted.py"), "--games", "16",
                           "--rollouts", "2", "--configs", "classic 2p", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [row] = json.loads((out / "luck.json").read_text())["rows"]
    assert (row["config"], row["games"], row["deals"], row["value"]) == ("classic 2p", 16, 8, "2 playouts a value")
    low, high = (float(x) for x in row["reduction_ci"].strip("[]").split(","))
    assert low <= round(row["variance_reduction"], 2) <= high
    assert row["games_for_4000_raw"] == round(4000 / row["variance_reduction"])
    assert "| classic 2p |" in (out / "luck.md").read_text()
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "luck_adjusted.py"), "--rollouts", "0",
                          "--out", str(tmp_path / "w")], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--rollouts" in bad.stderr and not (tmp_path / "w").exists()


def _doc_table_rows(page: str, first_cell: str) -> list[list[str]]:
    """The cells of the table rows of ``docs/PAGE`` whose first cell starts with ``first_cell``."""
    rows = []
    for line in (ROOT / "docs" / page).read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0].startswith(first_cell):
            rows.append(cells)
    return rows


def test_the_zoo_luck_table_in_the_docs_is_the_committed_figures() -> None:
    """Each row of docs/evaluation.md's luck-adjusted zoo table shows its ``benchmarks/luck_zoo`` JSON."""
    rows = {cells[0].strip("`"): cells for cells in _doc_table_rows("evaluation.md", "`ppo")
            if len(cells) == 8 and "[" in cells[3]}
    runs = {path: json.loads(path.read_text()) for path in sorted((ROOT / "benchmarks" / "luck_zoo").glob("*.json"))}
    figures = {data["luck"]["table"][0]["agent"]: (path, data) for path, data in runs.items()}
    assert runs and len(figures) == len(runs) and set(rows) == set(figures)
    for agent, (path, data) in figures.items():
        model = data["luck"]["table"][0]
        paired = data["luck"]["paired"][0]
        cells = rows[agent]
        assert cells[3].startswith(f"{model['adjusted_win_rate']:.4f} ["), path.stem
        assert cells[4] == f"{model['variance_reduction']:.2f}", path.stem
        assert cells[6].startswith(f"{paired['mean_diff']:+.4f} ["), path.stem


def test_the_luck_benchmark_table_in_the_docs_is_the_committed_figures() -> None:
    """Every row of ``benchmarks/luck_adjusted/*/luck.json`` (each configuration and seed, a network's included) is a
    row of docs/evaluation.md's "How many games it saves", and the docs show no other."""
    committed = []
    for path in sorted((ROOT / "benchmarks" / "luck_adjusted").glob("*/luck.json")):
        data = json.loads(path.read_text())
        committed += [{"seed": int(data["args"]["seed"]), **row} for row in data["rows"]]
    shown = {(cells[0], cells[1], cells[2], cells[3]): cells
             for cells in _doc_table_rows("evaluation.md", "classic") + _doc_table_rows("evaluation.md", "jokers")
             if len(cells) == 10 and " vs " in cells[1]}
    assert len(committed) == len(shown) >= 10
    for row in committed:
        cells = shown[(row["config"], f"{row['agent']} vs {row['baseline']}", str(row["seed"]),
                       row["value"].removesuffix(" a value"))]
        assert cells[4] == f"{row['games']} ({row['deals']})"
        assert cells[7] == f"**{row['variance_reduction']:.2f}** {row['reduction_ci']}"
        assert cells[8] == str(row["games_for_4000_raw"])


bench_v1 = benchmark_fixture("bench_v1_reference")


def test_the_benchmark_page_shows_the_committed_reference_table(bench_v1: ModuleType) -> None:
    """docs/benchmark.md's reference table is the one the committed benchmark folders give
    (``bench_v1_reference.py table``), and so is benchmarks/bench_v1/table.md."""
    from goboom_env.evaluation.report import markdown_table

    table = markdown_table(bench_v1.table_rows())
    assert table.count("\n") >= 9  # random, the heuristics, the search, the models, the trainers' rows
    assert table in (ROOT / "docs" / "benchmark.md").read_text()
    assert (ROOT / "benchmarks" / "bench_v1" / "table.md").read_text() == table + "\n"
