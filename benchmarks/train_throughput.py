"""Training throughput of ``goboom train``: learner steps per second of MaskablePPO self-play.

For each vectorisation (DummyVecEnv, SubprocVecEnv) and number of environments, trains a fresh
model for ``--steps`` learner decisions with the rollout size held at ``--rollout`` steps
(``n_steps = rollout / n_envs``) so every row does the same PPO updates, and reports steps/s of the
whole ``learn()`` (rollouts + updates) measured with ``time.perf_counter``. Opponents are the
training default mix (random and heuristic; the snapshot entry stays empty without the training
callback). The numbers depend on the machine's load:
run it on an idle machine, and say so when it was shared.

    .venv/bin/python benchmarks/train_throughput.py --variant classic --envs 1 2 4 16
"""

from __future__ import annotations

import argparse
import json
import time

from training.config import TrainArgs
from training.sb3 import build_model, make_vec_env


def measure(variant: str, vec_env: str, n_envs: int, steps: int, rollout: int) -> float:
    """Steps per second of ``learn(steps)`` (after one warm-up rollout)."""
    import torch

    torch.set_num_threads(1)
    args = TrainArgs(variant=variant, n_envs=n_envs, vec_env=vec_env, n_steps=rollout // n_envs,
                     batch_size=1024, n_epochs=6, progress=False)
    config = args.game_config()
    vec = make_vec_env(args, config)
    model = build_model(args, vec, None)
    model.learn(rollout)  # warm-up: imports, first allocation
    started = time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    elapsed = time.perf_counter() - started
    vec.close()
    return steps / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", default="classic", choices=["classic", "jokers"])
    parser.add_argument("--envs", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--vec", nargs="+", default=["dummy", "subproc"], choices=["dummy", "subproc"])
    parser.add_argument("--steps", type=int, default=16384, help="timed learner steps per row")
    parser.add_argument("--rollout", type=int, default=16384, help="steps per PPO rollout (all envs together)")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    args = parser.parse_args()
    rows = []
    print(f"{'variant':<8} {'vec_env':<8} {'n_envs':>6} {'steps/s':>8}")
    for vec in args.vec:
        for n in args.envs:
            rate = measure(args.variant, vec, n, args.steps, args.rollout)
            rows.append({"variant": args.variant, "vec_env": vec, "n_envs": n, "steps_per_s": round(rate)})
            print(f"{args.variant:<8} {vec:<8} {n:>6} {rate:>8.0f}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
