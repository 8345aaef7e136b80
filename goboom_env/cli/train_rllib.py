"""``goboom train-rllib``: multi-agent self-play PPO on Ray RLlib (options:
:class:`goboom_env.training.settings.RLlibArgs`; the PPO settings have the names and units of ``goboom train``).

Examples::

    goboom train-rllib --players 4 --timesteps 500000 --num-env-runners 2 --out runs/rllib4
    goboom train-rllib --address auto --num-env-runners 16 --out runs/big     # an existing cluster
    goboom train-rllib --out runs/rllib4 --resume --timesteps 1000000
    goboom train-rllib --measure-sampling 4000 --num-env-runners 2            # env steps/s, no training
    goboom evaluate --players 4 --agents rllib:runs/rllib4 heuristic --games 2000 --duplicate
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from goboom_env.cli.options import run_parsed
from goboom_env.training.settings import RLlibArgs
from goboom_env.untrusted import read_json


def main(argv: Sequence[str], prog: str = "goboom train-rllib") -> int:
    """Train (or measure sampling speed), print where the policy went; 2 on bad options."""
    return run_parsed(RLlibArgs, argv, prog, __doc__, _train_or_measure)


def _train_or_measure(args: RLlibArgs) -> int:
    from goboom_env.training.rllib import train as rllib_train

    if args.measure_sampling:
        print(json.dumps(rllib_train.measure_sampling(args, args.measure_sampling)))
        return 0
    run_dir = rllib_train.train(args)
    print(f"policy: {run_dir / 'policy'} (agent spec rllib:{run_dir})")
    print(f"checkpoints: {run_dir / 'checkpoints'}  tensorboard: {run_dir / 'tensorboard'}")
    if args.eval_games:
        for opponent, rows in read_json(run_dir / "eval.json").items():
            for row in rows:
                print(f"vs {opponent}: {row['agent']:>24}  win rate {row['win_rate']:.3f} "
                      f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]  games {row['games']}")
    return 0
