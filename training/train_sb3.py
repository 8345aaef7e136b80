"""Train a MaskablePPO agent by self-play with Stable-Baselines3: the script behind ``goboom train``.

Copy it, edit the settings below, run it::

    python training/train_sb3.py --timesteps 200000 --out runs/mine
    python training/train_sb3.py --help          # every option of goboom train works here too

The run folder holds model.zip (load it as the agent ``ppo:runs/mine/model.zip``), best_model.zip,
checkpoints/, progress.csv, eval.csv and tensorboard/; ``--resume`` continues a run.
"""

from __future__ import annotations

import sys

from goboom_env.cli.options import run_script
from goboom_env.training.settings import TrainArgs

SETTINGS = TrainArgs(
    # Every option of goboom train is a field here (the game, PPO, the run: --help lists them with their defaults);
    # set the ones to change. Command-line options override these.
    variant="classic",  # classic (R1) or jokers (R2)
    num_players=4,
    timesteps=200_000,  # learner decisions
    num_envs=16,  # environments stepped together
    opponents=["random=1", "heuristic=4", "self=1"],  # SPEC=WEIGHT; "self" = snapshots of the learner
    bc_games=None,  # warm start: imitate the heuristic on this many hands first (0 = off; None = 1 per 40 steps)
    out="runs/ppo",
)


def main(args: TrainArgs) -> None:
    """Train with the settings read over :data:`SETTINGS`, print where the model went."""
    from goboom_env.training.sb3 import train

    print(f"model: {train(args)}")


if __name__ == "__main__":
    sys.exit(run_script(main, SETTINGS, __doc__))
