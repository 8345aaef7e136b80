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
    # -- the game: every GameConfig field (RULES.md) --------------------------------------------------------
    variant="classic",  # classic (R1) or jokers (R2)
    num_players=4,  # 2..12
    episode="hand",  # an episode is one deal ("hand") or a whole game ("match")
    reward="win",  # +1 for the winner, -1/(n-1) for the others; or "points"
    # -- PPO: the same names and units in train_sb3.py and train_rllib.py ------------------------------------
    learning_rate=5e-4,
    n_epochs=2,  # passes over each rollout
    minibatch_size=1024,  # learner decisions per gradient step
    gamma=0.995,
    gae_lambda=0.95,
    ent_coef=0.003,
    vf_coef=0.5,
    clip_range=0.2,
    max_grad_norm=0.5,
    net_arch=[256, 256],  # hidden layers of the policy and of the value network
    # -- the run ---------------------------------------------------------------------------------------------
    timesteps=2_000_000,  # learner decisions
    num_envs=512,  # games stepped together by the batched engine
    num_steps=32,  # engine calls per rollout
    opponents=["learner=1"],  # SPEC=WEIGHT: learner (every seat learns), self (snapshots), random, heuristic
    snapshot_every=250_000,  # steps between snapshots added to the "self" pool
    bc_games=0,  # warm start: imitate the heuristic on this many hands first (0 = off)
    eval_every=500_000,  # steps between evaluations against eval_opponents (-1 = never)
    eval_opponents=["random", "heuristic"],
    checkpoint_every=500_000,
    out="runs/fast",
    seed=0,
)


def main(args: VectorArgs) -> None:
    """Train with the settings read over :data:`SETTINGS`, print where the model went."""
    from goboom_env.training.fast.ppo import train

    print(f"model: {train(args)}")


if __name__ == "__main__":
    sys.exit(run_script(main, SETTINGS, __doc__))
