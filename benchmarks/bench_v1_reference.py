"""The reference results of the benchmark ``goboom-bench-v1`` (docs/benchmark.md), resumably.

Each step runs ``goboom`` commands one after another, each logged with its exact command line and wall time in
``benchmarks/bench_v1/commands.txt``, and skips what a previous call finished (a training run with its final model,
a benchmark folder with its ``benchmark.json``); an interrupted training run continues from its last checkpoint.
Training runs and benchmark folders go to ``runs/bench_v1/`` (not tracked); the tracked copies are the benchmark
folders without their game records ``tasks/`` (``benchmarks/bench_v1/agents/``: the command replays them exactly
from the seeds) and each training run's ``progress.csv``, ``args.json`` and ``commands.txt``
(``benchmarks/bench_v1/training/``).

    .venv/bin/python benchmarks/bench_v1_reference.py references            # random and the heuristic in the seat
    .venv/bin/python benchmarks/bench_v1_reference.py baselines             # the models, heuristics and the search
    .venv/bin/python benchmarks/bench_v1_reference.py train --trainer fast  # PPO from scratch, 3 seeds a task
    .venv/bin/python benchmarks/bench_v1_reference.py train --trainer sb3 --no-bench [--seeds 2]
    .venv/bin/python benchmarks/bench_v1_reference.py bench-runs --trainer sb3  # meanwhile: its finished runs
    .venv/bin/python benchmarks/bench_v1_reference.py combine --trainer fast  # the seeds of all tasks together
    .venv/bin/python benchmarks/bench_v1_reference.py combine --trainer sb3
    .venv/bin/python benchmarks/bench_v1_reference.py table                 # benchmarks/bench_v1/table.md, curves
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from goboom_env.evaluation.benchmark import TASKS, Task

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "benchmarks" / "bench_v1"
RUNS = ROOT / "runs" / "bench_v1"
GOBOOM = str(Path(sys.executable).parent / "goboom")

TRAIN_STEPS = 100_000
"""Learner steps of every training run (both trainers, every task)."""
TRAIN_SEEDS = (1, 2, 3)
TRAIN_RECIPE = ("--episode", "match", "--bc-games", "0", "--opponents", "random=1", "heuristic=4", "self=1",
                "--eval-every", "-1", "--threads", "1", "--no-progress")
"""The options both trainers share: whole matches, no warm start (from scratch), SB3's default opponent mix (the
learning curve: the training matches' win rates against each kind of opponent, progress.csv), no evaluation
during training (the benchmark evaluates the final model)."""
TRAINERS = {"fast": "train-fast", "sb3": "train"}
ISMCTS = "ismcts:iters=20"
"""The search of the reference table: a modest budget (20 iterations a decision)."""
TRAINING_FILES = ("progress.csv", "args.json", "commands.txt")


def game_options(task: Task) -> list[str]:
    """The command-line options of a task's game (``--variant classic --num-players 4 ...``)."""
    return [part for key, value in task.game.items() for part in (f"--{key.replace('_', '-')}", str(value))]


def run(command: Sequence[str]) -> None:
    """Run one command, logged with its wall time in ``commands.txt``; a failure stops the driver."""
    line = shlex.join(["goboom", *command[1:]] if command[0] == GOBOOM else command)
    print(f"$ {line}", flush=True)
    started = time.time()
    done = subprocess.run(command, cwd=ROOT, check=False)
    COMMITTED.mkdir(parents=True, exist_ok=True)
    with (COMMITTED / "commands.txt").open("a") as fh:
        fh.write(f"{line}  # exit {done.returncode}, {time.time() - started:.0f} s wall, "
                 f"{time.strftime('%Y-%m-%d %H:%M')}\n")
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {line}")


def benchmark(name: str, agent: str, tasks: Sequence[Task], processes: int) -> None:
    """``goboom benchmark`` of ``agent`` on ``tasks`` into runs/bench_v1/results/NAME, copied to the tracked tree."""
    out = RUNS / "results" / name
    if not (out / "benchmark.json").is_file():
        chosen = ["--tasks", *[t.name for t in tasks]] if len(tasks) < len(TASKS) else []
        run([GOBOOM, "benchmark", "--agent", agent, *chosen, "--processes", str(processes), "--no-progress",
             "--force", "--out", str(out.relative_to(ROOT))])
    keep_results(out, name)


def keep_results(out: Path, name: str) -> None:
    """Copy the benchmark folder ``out`` to the tracked tree without its game records (the seeds replay them)."""
    keep = COMMITTED / "agents" / name
    if keep.exists():
        shutil.rmtree(keep)
    shutil.copytree(out, keep, ignore=shutil.ignore_patterns("tasks", ".goboom-output"))


def train(trainer: str, task: Task, seed: int) -> Path:
    """One training run (resumed from its checkpoint if interrupted); returns its final model."""
    out = RUNS / trainer / task.name / f"seed{seed}"
    model = out / "model.zip"
    if not model.is_file():
        resume = ["--resume"] if any((out / "checkpoints").glob("*.zip")) else ["--force"]
        run([GOBOOM, TRAINERS[trainer], *game_options(task), *TRAIN_RECIPE, "--timesteps", str(TRAIN_STEPS),
             "--seed", str(seed), *resume, "--out", str(out.relative_to(ROOT))])
    keep = COMMITTED / "training" / trainer / task.name / f"seed{seed}"
    keep.mkdir(parents=True, exist_ok=True)
    for name in TRAINING_FILES:
        if (out / name).is_file():
            shutil.copy2(out / name, keep / name)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=["references", "baselines", "train", "bench-runs", "combine", "table"])
    parser.add_argument("--trainer", choices=list(TRAINERS), default="fast")
    parser.add_argument("--tasks", nargs="+", default=[t.name for t in TASKS])
    parser.add_argument("--seeds", nargs="+", type=int, default=list(TRAIN_SEEDS),
                        help="the training seeds of train and bench-runs (two queues can run side by side)")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--no-bench", action="store_true", help="train only (benchmark the models later)")
    args = parser.parse_args()
    tasks = [t for t in TASKS if t.name in args.tasks]
    if args.step == "train":
        for seed in args.seeds:  # every task's first seed before any task's second: partial results cover all tasks
            for task in tasks:
                model = train(args.trainer, task, seed)
                if not args.no_bench:
                    benchmark(f"{args.trainer}/{task.name}/seed{seed}", f"ppo:{model.relative_to(ROOT)}", [task],
                              args.processes)
    elif args.step == "bench-runs":  # the finished runs of a trainer whose queue runs with --no-bench
        for seed in args.seeds:
            for task in tasks:
                model = RUNS / args.trainer / task.name / f"seed{seed}" / "model.zip"
                if model.is_file():
                    benchmark(f"{args.trainer}/{task.name}/seed{seed}", f"ppo:{model.relative_to(ROOT)}", [task],
                              args.processes)
    elif args.step == "references":
        references(tasks, args.processes)
    elif args.step == "baselines":
        for name, agent in baselines():
            benchmark(name, agent, tasks, args.processes)
    elif args.step == "combine":
        combine(args.trainer)
    elif args.step == "table":
        write_table()


def baselines() -> list[tuple[str, str]]:
    """(folder name, agent) of every reference row but random, the heuristics' references and the trained runs: the
    shipped models (each plays the tasks of its game), the other heuristic of each variant, then the search."""
    from goboom_env.models import shipped_models

    models = [(f"ppo-{name}", f"ppo:{name}") for name in shipped_models()]
    return [*models, ("classic-cover", "classic-cover"), ("jokers-shed", "jokers-shed"),
            (ISMCTS.replace(":", "-").replace("=", ""), ISMCTS)]


def references(tasks: Sequence[Task], processes: int) -> None:
    """Play random and each task's heuristic in the evaluated seat (one task at a time, kept in
    runs/bench_v1/references/TASK.json), then write their benchmark folders and the package's
    ``goboom_env/evaluation/bench_v1_references.json`` (the ``REFERENCES`` of goboom_env/evaluation/benchmark.py)."""
    from goboom_env.evaluation.benchmark import Run, play_references, run_provenance, score_task, write_benchmark
    from goboom_env.evaluation.leaderboard import read_results

    refs, played = {}, {}
    for task in tasks:
        path = RUNS / "references" / f"{task.name}.json"
        if not path.is_file():
            print(f"references of {task.name}...", flush=True)
            started = time.time()
            rates, games = play_references(task, processes=processes, progress=False)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"references": rates, "elapsed_s": time.time() - started, "games": {
                spec: {opp: r.to_dict() for opp, r in by_opp.items()} for spec, by_opp in games.items()}}))
        data = json.loads(path.read_text())
        refs[task.name] = {opp: tuple(pair) for opp, pair in data["references"].items()}
        played[task.name] = {}
        for spec, by_opp in data["games"].items():
            played[task.name][spec] = {}
            for opp, raw in by_opp.items():
                tmp = RUNS / "references" / "tmp.json"
                tmp.write_text(json.dumps(raw))
                [result] = read_results(tmp)
                played[task.name][spec][opp] = result
    (ROOT / "goboom_env" / "evaluation" / "bench_v1_references.json").write_text(json.dumps(refs, indent=1))
    for spec, name in (("random", "random"), ("heuristic", "heuristic")):
        run = Run(spec, {}, processes=processes)
        for task in tasks:
            games = played[task.name]["random" if spec == "random" else task.heuristic]
            run.scores[task.name] = score_task(task, games, refs[task.name])
            run.tournaments[task.name] = games
        run.provenance = run_provenance(spec, tasks)
        out = RUNS / "results" / name
        if out.exists():
            shutil.rmtree(out)
        write_benchmark(out, [run], "benchmarks/bench_v1_reference.py references")
        keep_results(out, name)


ROWS = [("random", "random"), ("heuristic", "best heuristic (classic-tricks, jokers-boom)"),
        ("classic-cover", "classic-cover"), ("jokers-shed", "jokers-shed"),
        (ISMCTS.replace(":", "-").replace("=", ""), f"`{ISMCTS}`")]
"""The reference rows of the table: folder under benchmarks/bench_v1/agents/, label."""


def combine(trainer: str) -> None:
    """``goboom benchmark --combine`` of every finished benchmark of a trainer's runs (all tasks, all seeds)."""
    folders = sorted((RUNS / "results" / trainer).glob("*/seed*/benchmark.json"))
    if not folders:
        sys.exit(f"no benchmark of a {trainer} run yet")
    out = RUNS / "results" / f"{trainer}-combined"
    run([GOBOOM, "benchmark", "--combine", *[str(f.parent.relative_to(ROOT)) for f in folders], "--force",
         "--out", str(out.relative_to(ROOT))])
    keep = COMMITTED / "agents" / f"{trainer}-combined"
    if keep.exists():
        shutil.rmtree(keep)
    shutil.copytree(out, keep, ignore=shutil.ignore_patterns(".goboom-output"))


def table_rows() -> list[dict[str, str]]:
    """One row per reference agent: its IQM over the tasks it played with the 95% interval, and each task's score
    (for several runs of a task, their mean)."""
    from goboom_env.evaluation.benchmark import read_benchmark

    rows = [(name, label) for name, label in ROWS]
    rows += [(p.parent.name, f"`ppo:{p.parent.name.removeprefix('ppo-')}`")
             for p in sorted((COMMITTED / "agents").glob("ppo-*/benchmark.json"))]
    rows += [(f"{t}-combined", f"PPO from scratch, {label}, {TRAIN_STEPS // 1000}k steps, seeds "
              f"{', '.join(map(str, TRAIN_SEEDS))}") for t, label in (("fast", "`goboom train-fast`"),
                                                                      ("sb3", "`goboom train` (SB3)"))]
    listed = {name for name, _ in rows}
    rows += [(p.parent.name, f"`{read_benchmark(p.parent)[0].agent}` (submitted)")
             for p in sorted((COMMITTED / "agents").glob("*/benchmark.json")) if p.parent.name not in listed]
    out = []
    for name, label in rows:
        folder = COMMITTED / "agents" / name
        if not (folder / "benchmark.json").is_file():
            continue
        runs = read_benchmark(folder)
        data = json.loads((folder / "benchmark.json").read_text())["aggregate"]
        row = {"agent": label, "IQM [95%]": f"{data['iqm']:.2f} [{data['iqm_ci'][0]:.2f}, {data['iqm_ci'][1]:.2f}]",
               "task scores": str(data["runs"])}
        for task in TASKS:
            scores = [r.scores[task.name].normalized for r in runs if task.name in r.scores]
            row[task.name] = f"{sum(scores) / len(scores):.2f}" if scores else "-"
        out.append(row)
    return out


def write_table() -> None:
    """benchmarks/bench_v1/table.md (the reference table of docs/benchmark.md, from the tracked benchmark folders)
    and the learning curves."""
    from goboom_env.evaluation.report import markdown_table

    text = markdown_table(table_rows())
    (COMMITTED / "table.md").write_text(text + "\n")
    print(text)
    plot_curves(ROOT / "docs" / "img" / "bench_v1_learning_curves.png")


def plot_curves(path: Path) -> None:
    """Per task, the win rate of the training matches against the heuristic opponents over the steps (progress.csv:
    each trainer's recent training matches), every seed of both trainers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 3, figsize=(12, 9), sharex=True)
    for ax, task in zip(axes.flat, TASKS):
        for trainer, color in (("fast", "#4C72B0"), ("sb3", "#DD8452")):
            for i, path_csv in enumerate(sorted((COMMITTED / "training" / trainer / task.name).glob("*/progress.csv"))):
                rows = [r for r in csv.DictReader(path_csv.open()) if r.get("win_rate/heuristic")]
                ax.plot([int(r["timesteps"]) for r in rows], [float(r["win_rate/heuristic"]) for r in rows],
                        color=color, alpha=0.8, label=trainer if i == 0 else None)
        ax.axhline(1 / task.config.num_players, color="#7f7f7f", linestyle="--", linewidth=1)
        ax.set_title(task.name, fontsize=10)
        ax.set_ylim(bottom=0)
    axes[0, 0].legend(fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("learner steps")
    for ax in axes[:, 0]:
        ax.set_ylabel("win rate vs heuristic (training)")
    fig.suptitle("PPO from scratch on the goboom-bench-v1 games: training matches won against the heuristic "
                 "(dashed: 1/n)", fontsize=11)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


if __name__ == "__main__":
    main()
