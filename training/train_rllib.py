"""Train a multi-agent PPO agent by league self-play on Ray RLlib: the script behind ``goboom train-rllib``.

Copy it, edit the settings below, run it (needs ``pip install "goboom-env[rllib]"``)::

    python training/train_rllib.py --timesteps 500000 --num-env-runners 2 --out runs/rllib
    python training/train_rllib.py --help        # every option of goboom train-rllib works here too

The run folder holds policy/ (load it as the agent ``rllib:runs/rllib``), checkpoints/, goboom.json,
progress.csv and tensorboard/; ``--resume`` continues a run.
"""

from __future__ import annotations

import sys

from goboom_env.cli.options import run_script
from goboom_env.training.settings import RLlibArgs

SETTINGS = RLlibArgs(
    # Every option of goboom train-rllib is a field here (the game, PPO, the run: --help lists them with their
    # defaults); set the ones to change. Command-line options override these.
    variant="classic",  # classic (R1) or jokers (R2)
    num_players=4,
    timesteps=200_000,  # env steps (decisions of any seat)
    num_env_runners=1,  # Ray actors that sample (0 = sample in this process)
    opponents=["learner=1", "self=1"],  # the other seats: the learner itself or one of its snapshots
    out="runs/rllib",
)


def main(args: RLlibArgs) -> None:
    """Train with the settings read over :data:`SETTINGS`, print where the policy went."""
    from goboom_env.training.rllib import train as rllib_train

    run = rllib_train.train(args)
    print(f"policy: {run / 'policy'} (agent spec rllib:{run})")


if __name__ == "__main__":
    sys.exit(run_script(main, SETTINGS, __doc__))
