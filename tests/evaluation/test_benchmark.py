"""The benchmark (goboom_env.evaluation.benchmark): the frozen task list, the normalized score (random = 0 and the
heuristic = 1 by construction, on the same deals), the aggregate statistics (IQM, stratified bootstrap, performance
profile) against hand-computed answers, tasks an agent cannot play, and the seeds no training may use."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from goboom_env.agents import BEST_HEURISTIC, make_agent
from goboom_env.evaluation import benchmark
from goboom_env.evaluation.benchmark import (
    EVAL_SEEDS,
    REFERENCES,
    TASKS,
    Task,
    check_training_seed,
    deal_rates,
    run_benchmark,
    score_task,
    seat_shares,
    tasks_named,
)
from goboom_env.evaluation.stats import aggregate_scores, iqm
from goboom_env.evaluation.tournament import run_tournament

TINY = [
    Task("tiny-classic-2p", {"variant": "classic", "num_players": 2}, "classic-tricks", "ppo:classic-2p", 11,
         matches=4),
    Task("tiny-jokers-3p", {"variant": "jokers", "num_players": 3, "rounds": 1}, "jokers-boom", None, 11, matches=6),
]
"""Two tasks of a few seconds of games: few matches (jokers: one round each)."""


def test_random_scores_zero_and_the_heuristic_one_by_construction():
    """The references are random and the heuristic in the evaluated seat on the task's deals, so their own
    benchmarks score exactly 0 and 1 on every task; another agent scores (W - R) / (H - R) from the same tables."""
    references = {task.name: benchmark.references_of(task, progress=False) for task in TINY}
    scores = {spec: run_benchmark(spec, TINY, progress=False, references=references).scores
              for spec in ("random", "heuristic")}
    for task in TINY:
        assert scores["random"][task.name].normalized == 0.0
        assert scores["heuristic"][task.name].normalized == 1.0
    cover = run_benchmark("classic-cover", TINY[:1], progress=False, references=references).scores["tiny-classic-2p"]
    w = np.mean([p.win_rate for p in cover.panel])
    r, h = (np.mean([getattr(p, k) for p in cover.panel]) for k in ("random", "heuristic"))
    assert cover.normalized == pytest.approx((w - r) / (h - r))
    assert np.mean(cover.deal_scores) == pytest.approx(cover.normalized)  # the deals' scores average to the score


def test_the_evaluated_seat_is_found_by_position_not_by_name():
    """With the same spec in every seat the first agent's shares are still those of seat g % n in game g, and the
    per-deal rates average its n seats of each deal."""
    task = TINY[1]
    result = run_tournament(task.config, ["random"] * 3, 9, seed=3, duplicate=True, episode="match", progress=False)
    shares = seat_shares(result)
    assert shares == [g.win_shares()[g.index % 3] for g in result.games]
    assert deal_rates(result) == [np.mean(shares[3 * d:3 * d + 3]) for d in range(3)]


def test_the_suite_is_the_published_one():
    """goboom-bench-v1: the nine games, each panel random + the variant's best heuristic + the shipped model of that
    game, matches a whole number of deals, one evaluation seed per task, and frozen references for every member."""
    assert [t.name for t in TASKS] == ["classic-2p", "classic-3p", "classic-4p", "classic-6p", "classic-12p",
                                       "classic-4p-reverse", "jokers-3p", "jokers-4p", "jokers-4p-aces"]
    assert len(set(EVAL_SEEDS)) == len(TASKS)
    for task in TASKS:
        config = task.config
        assert task.matches % config.num_players == 0
        assert task.panel[:2] == ("random", BEST_HEURISTIC[config.variant])
        for spec in task.panel:
            make_agent(spec, config, 0)  # every member plays the task's game
        assert set(REFERENCES[task.name]) == set(task.panel)
        assert all(h > r for r, h in REFERENCES[task.name].values())
    assert TASKS[5].config.scoring == "reverse" and TASKS[8].config.num_jokers == 0
    assert tasks_named(["jokers-4p", "classic-2p"]) == [TASKS[0], TASKS[7]]  # the suite's order
    with pytest.raises(ValueError, match="unknown task 'classic-5p'"):
        tasks_named(["classic-5p"])


def test_a_task_the_agent_cannot_play_is_skipped_with_the_reason():
    """A model trained for classic 2p plays the classic tasks of 2 players only; none at all is an error before any
    game."""
    run = run_benchmark("ppo:classic-2p", TINY, progress=False, references={"tiny-classic-2p": {
        spec: (0.25, 0.75) for spec in TINY[0].panel}})
    assert list(run.scores) == ["tiny-classic-2p"] and "jokers" in run.skipped["tiny-jokers-3p"]
    with pytest.raises(ValueError, match="plays none of the tasks"):
        run_benchmark("ppo:classic-2p", TINY[1:], progress=False)


def test_references_that_cannot_normalize_are_refused():
    task = TINY[1]
    results = {spec: run_tournament(task.config, ["random", spec], 3, seed=1, duplicate=True, episode="match",
                                    progress=False) for spec in task.panel}
    with pytest.raises(ValueError, match="not above random"):
        score_task(task, results, {spec: (0.5, 0.5) for spec in task.panel})


def test_the_interquartile_mean_is_rliables_trimmed_mean():
    x = np.array([5.0, -3.0, 0.5, 2.0, 9.0, 1.0, 1.5, 0.0, 4.0])
    assert float(iqm(x)) == pytest.approx(float(stats.trim_mean(x, 0.25)))
    assert float(iqm(x)) == pytest.approx(np.mean([0.5, 1.0, 1.5, 2.0, 4.0]))  # 9 scores: 2 cut at each end


def test_the_stratified_bootstrap_resamples_runs_and_deals():
    """Constant scores give a point interval; one run per task still gets an interval from its deals; more deals
    narrow it; the interval holds the point estimate and the profile falls from 1 to 0."""
    same = aggregate_scores({"a": [[0.5] * 10], "b": [[0.5] * 10]}, resamples=200)
    assert same.iqm == 0.5 and same.iqm_ci == (0.5, 0.5)
    rng = np.random.default_rng(0)
    widths = []
    for deals in (20, 500):
        scores = {f"t{i}": [rng.normal(i / 4, 1.0, deals).tolist() for _ in range(3)] for i in range(5)}
        total = aggregate_scores(scores, resamples=400)
        assert total.runs == 15 and total.tasks == 5
        for name in ("iqm", "mean", "median"):
            low, high = getattr(total, f"{name}_ci")
            assert low <= getattr(total, name) <= high
        widths.append(total.iqm_ci[1] - total.iqm_ci[0])
        assert total.profile[0] >= total.profile[-1] and np.all(np.diff(total.profile) <= 0)
    assert widths[1] < widths[0] / 2
    one = aggregate_scores({"a": [[0.0, 1.0] * 10]}, resamples=400)
    assert one.mean_ci[0] < 0.5 < one.mean_ci[1]
    with pytest.raises(ValueError, match="at least one run"):
        aggregate_scores({"a": []})
    with pytest.raises(ValueError, match="different numbers of deals"):
        aggregate_scores({"a": [[1.0], [1.0, 2.0]]})


def test_no_training_may_use_an_evaluation_seed():
    """The seeds of the benchmark's deals, and any run whose evaluations (seed + steps) would reach them, are refused
    by the trainers' settings; ordinary seeds pass."""
    from goboom_env.training.settings import TrainArgs, VectorArgs

    check_training_seed(0, 10_000_000)
    with pytest.raises(ValueError, match="evaluation seed 2049000001"):
        check_training_seed(EVAL_SEEDS[0] - 5, 100)
    for cls in (TrainArgs, VectorArgs):
        with pytest.raises(ValueError, match="reaches the benchmark's evaluation seed"):
            cls(seed=EVAL_SEEDS[3], out="/nonexistent/never-made").validate()
    assert EVAL_SEEDS[0] > benchmark.SEED_BASE


def test_the_frozen_references_are_the_committed_reference_runs():
    """REFERENCES holds the win rates of the committed random and heuristic benchmark folders, which score exactly 0
    and 1 on every task."""
    import json
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_v1" / "agents"
    runs = [json.loads((folder / name / "benchmark.json").read_text())["runs"][0] for name in ("random", "heuristic")]
    for column, run in enumerate(runs):
        assert {s["task"] for s in run["scores"]} == {t.name for t in TASKS}
        for score in run["scores"]:
            assert score["normalized"] == float(column)
            for member in score["panel"]:
                assert REFERENCES[score["task"]][member["opponent"]][column] == member["win_rate"]


@pytest.mark.slow
def test_the_references_replay_from_the_tasks_seeds():
    """The frozen references are what random and the heuristic play now on the task's deals (one task: a change of
    the engine or the heuristics that alters their games shows here)."""
    task = tasks_named(["jokers-3p"])[0]
    rates, _ = benchmark.play_references(task, progress=False)
    assert rates == REFERENCES[task.name]


def test_a_benchmark_folder_is_read_back_and_a_damaged_one_refused(tmp_path):
    """The committed random folder reads back as written; another version, a missing or mistyped field and a file
    that is not JSON are each one ValueError naming the file and the field."""
    import json
    from pathlib import Path

    source = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_v1" / "agents" / "random" / "benchmark.json"
    data = json.loads(source.read_text())
    [run] = benchmark.read_benchmark(source.parent)
    assert run.agent == "random" and [s.normalized for s in run.scores.values()] == [0.0] * len(TASKS)
    assert run.scores["classic-2p"].panel[0].deal_rates == data["runs"][0]["scores"][0]["panel"][0]["deal_rates"]

    def damaged(change, problem):
        folder = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        copy = json.loads(json.dumps(data))
        change(copy)
        (folder / "benchmark.json").write_text(json.dumps(copy) if not isinstance(copy, str) else copy)
        with pytest.raises(ValueError, match=problem):
            benchmark.read_benchmark(folder)

    damaged(lambda d: d.update(version="goboom-bench-v0"), "'goboom-bench-v0', not goboom-bench-v1")
    damaged(lambda d: d["runs"][0]["scores"][1].update(normalized="high"),
            r"runs\[0\].scores\[1\].normalized: must be a finite number")
    damaged(lambda d: d["runs"][0]["scores"][0]["panel"][0].pop("games"), r"panel\[0\].games: missing")
    damaged(lambda d: d["runs"][0].update(processes=0), r"runs\[0\].processes: must be an integer")
    with pytest.raises(ValueError, match="not a benchmark folder"):
        benchmark.read_benchmark(tmp_path)
