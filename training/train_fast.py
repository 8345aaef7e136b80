"""Train a PPO agent by self-play on the batched engine: the script behind ``goboom train-fast``.

Copy it, edit the settings below, run it::

    python training/train_fast.py --timesteps 2000000 --out runs/fast
    python training/train_fast.py --help         # every option of goboom train-fast works here too

The run folder has the layout of ``goboom train`` (model.zip, best_model.zip, checkpoints/, progress.csv,
eval.csv, tensorboard/); the model loads as the agent ``ppo:runs/fast/model.zip``.
"""

from __future__ import annotations

import sys

from goboom_env.cli.options import run_script
from goboom_env.training.settings import VectorArgs

SETTINGS = VectorArgs(
    # Every option of goboom train-fast is a field here (the game, PPO, the run: --help lists them with their
    # defaults); set the ones to change. Command-line options override these.
    variant="classic",  # classic (R1) or jokers (R2)
    num_players=4,
    timesteps=2_000_000,  # learner decisions
    num_envs=512,  # games stepped together by the batched engine
    opponents=["learner=1"],  # SPEC=WEIGHT: learner (every seat learns), self (snapshots), random, heuristic
    out="runs/fast",
)


def main(args: VectorArgs) -> None:
    """Train with the settings read over :data:`SETTINGS`, print where the model went."""
    from goboom_env.training.fast.ppo import train

    print(f"model: {train(args)}")


if __name__ == "__main__":
    sys.exit(run_script(main, SETTINGS, __doc__))
