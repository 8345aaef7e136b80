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
    # -- the game: every GameConfig field (RULES.md) --------------------------------------------------------
    variant="classic",  # classic (R1) or jokers (R2)
    num_players=4,  # 2..12
    episode="hand",  # an episode is one deal ("hand") or a whole game ("match")
    reward="win",  # +1 for the winner, -1/(n-1) for the others; or "points"
    # -- PPO: the same names and units in train_fast.py and train_rllib.py -----------------------------------
    learning_rate=5e-4,
    n_epochs=6,  # passes over each rollout
    minibatch_size=1024,  # learner decisions per gradient step
    gamma=0.995,
    gae_lambda=0.95,
    ent_coef=0.001,
    vf_coef=0.5,
    clip_range=0.2,
    net_arch=[256, 256],  # hidden layers of the policy and of the value network
    # -- the run ---------------------------------------------------------------------------------------------
    timesteps=200_000,  # learner decisions
    num_envs=16,  # environments stepped together
    num_steps=1024,  # rollout length per environment
    opponents=["random=1", "heuristic=4", "self=1"],  # SPEC=WEIGHT; "self" = snapshots of the learner
    snapshot_every=100_000,  # steps between snapshots added to the "self" pool
    bc_games=5000,  # warm start: imitate the heuristic on this many hands first (0 = off)
    eval_every=250_000,  # steps between evaluations against eval_opponents (-1 = never)
    eval_opponents=["random", "heuristic"],
    checkpoint_every=100_000,
    out="runs/ppo",
    seed=0,
)


def main(args: TrainArgs) -> None:
    """Train with the settings read over :data:`SETTINGS`, print where the model went."""
    from goboom_env.training.sb3 import train

    print(f"model: {train(args)}")


if __name__ == "__main__":
    sys.exit(run_script(main, SETTINGS, __doc__))
