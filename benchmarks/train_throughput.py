"""Training throughput: learner steps per second of ``goboom train`` (MaskablePPO) and ``goboom train-fast``.

SB3 rows: for each vectorisation (DummyVecEnv, SubprocVecEnv) and number of environments, trains a
fresh model for ``--steps`` learner decisions with the rollout size held at ``--rollout`` steps
(``n_steps = rollout / n_envs``) so every row does the same PPO updates, and reports steps/s of the
whole ``learn()`` (rollouts + updates). Opponents are the training default mix (random and
heuristic; the snapshot entry stays empty without the training callback). ``goboom train``'s own
defaults are the ``dummy`` row with 16 environments (``n_steps = 1024``, 6 epochs).

Fast rows (``--fast``): the fast trainer (:mod:`goboom_env.training.fast.ppo`) with its default settings
(every seat the learner, the same [256, 256] actor and critic as SB3's MlpPolicy), one rollout +
per-seat GAE + update per iteration, timed over whole iterations after one warm-up iteration
(numba compilation, first allocations). The last lines give the ratio of each fast row to the SB3
default row of the same run.

Both clocks are reported: wall time (``perf_counter``) and the process's CPU time; with one torch
thread each trainer uses one core, so on a shared machine the CPU-time rate is the one less
disturbed by other jobs. The numbers depend on the machine's load: say so when it was shared.

    .venv/bin/python benchmarks/train_throughput.py --envs 16 --vec dummy --fast
    .venv/bin/python benchmarks/train_throughput.py --envs 1 2 4 16 --fast --fast-threads 1 2
"""

from __future__ import annotations

import argparse
import json
import time


def measure(variant: str, vec_env: str, n_envs: int, steps: int, rollout: int) -> tuple[float, float]:
    """Steps per second of ``learn(steps)`` (after one warm-up rollout): (wall clock, CPU time)."""
    import torch

    from goboom_env.training.sb3 import build_model, make_vec_env
    from goboom_env.training.settings import TrainArgs

    torch.set_num_threads(1)
    args = TrainArgs(variant=variant, num_envs=n_envs, vec_env=vec_env, num_steps=rollout // n_envs,
                     minibatch_size=1024, n_epochs=6, progress=False)
    config = args.game_config()
    vec = make_vec_env(args, config)
    model = build_model(args, vec, None)
    model.learn(rollout)  # warm-up: imports, first allocation
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(steps, reset_num_timesteps=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    vec.close()
    return steps / wall, steps / cpu


def measure_fast(variant: str, steps: int, threads: int, precision: str) -> tuple[float, float]:
    """Steps per second of the fast trainer's iterations (rollout, GAE, update) after one warm-up iteration."""
    import torch

    from goboom_env.training.fast.ppo import Trainer
    from goboom_env.training.settings import VectorArgs

    args = VectorArgs(variant=variant, threads=threads, precision=precision, progress=False)
    torch.set_num_threads(threads)
    trainer = Trainer(args, args.game_config())
    trainer.start()
    trainer.iteration()  # warm-up: numba compilation (or its cache), first allocations
    start = trainer.steps
    wall, cpu = time.perf_counter(), time.process_time()
    while trainer.steps - start < steps:
        trainer.iteration()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return (trainer.steps - start) / wall, (trainer.steps - start) / cpu


def main() -> None:
    from goboom_env.training.settings import VectorArgs

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", default="classic", choices=["classic", "jokers"])
    parser.add_argument("--envs", type=int, nargs="*", default=[1, 2, 4, 16])
    parser.add_argument("--vec", nargs="+", default=["dummy", "subproc"], choices=["dummy", "subproc"])
    parser.add_argument("--steps", type=int, default=16384, help="timed learner steps per SB3 row")
    parser.add_argument("--rollout", type=int, default=16384, help="steps per PPO rollout (all envs together)")
    parser.add_argument("--fast", action="store_true", help="add rows for the fast trainer (goboom train-fast)")
    parser.add_argument("--fast-steps", type=int, default=131072, help="timed learner steps per fast row")
    parser.add_argument("--fast-threads", type=int, nargs="+", default=[1], help="torch threads of the fast rows")
    parser.add_argument("--fast-precision", nargs="+", default=["fp32", "bf16"], choices=["fp32", "bf16"],
                        help="number formats of the fast rows' matrix products (bf16 is emulated, slow, on CPUs "
                             "without native bfloat16)")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    args = parser.parse_args()
    rows = []
    print(f"{'trainer':<10} {'vec_env':<8} {'n_envs':>6} {'threads':>7} {'precision':>9} {'steps/s':>8} "
          f"{'cpu steps/s':>11}")
    for vec in args.vec:
        for n in args.envs:
            wall, cpu = measure(args.variant, vec, n, args.steps, args.rollout)
            rows.append({"trainer": "sb3", "variant": args.variant, "vec_env": vec, "n_envs": n, "threads": 1,
                         "precision": "fp32", "steps_per_s": round(wall), "cpu_steps_per_s": round(cpu)})
            print(f"{'sb3':<10} {vec:<8} {n:>6} {1:>7} {'fp32':>9} {wall:>8.0f} {cpu:>11.0f}", flush=True)
    if args.fast:
        for threads in args.fast_threads:
            for precision in args.fast_precision:
                wall, cpu = measure_fast(args.variant, args.fast_steps, threads, precision)
                envs = VectorArgs().num_envs
                rows.append({"trainer": "fast", "variant": args.variant, "vec_env": "vector", "n_envs": envs,
                             "threads": threads, "precision": precision, "steps_per_s": round(wall),
                             "cpu_steps_per_s": round(cpu)})
                print(f"{'fast':<10} {'vector':<8} {envs:>6} {threads:>7} {precision:>9} {wall:>8.0f} {cpu:>11.0f}",
                      flush=True)
    default = next((r for r in rows if r["trainer"] == "sb3" and r["vec_env"] == "dummy" and r["n_envs"] == 16), None)
    for row in rows:
        if row["trainer"] == "fast" and default is not None:
            row["ratio_vs_sb3_default"] = round(row["steps_per_s"] / default["steps_per_s"], 2)
            row["cpu_ratio_vs_sb3_default"] = round(row["cpu_steps_per_s"] / default["cpu_steps_per_s"], 2)
            print(f"fast ({row['threads']} thread(s), {row['precision']}) / sb3 default (dummy, 16 envs): "
                  f"{row['ratio_vs_sb3_default']:.2f}x wall, {row['cpu_ratio_vs_sb3_default']:.2f}x CPU time")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
