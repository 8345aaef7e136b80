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
    # -- the game: every GameConfig field (RULES.md) --------------------------------------------------------
    variant="classic",  # classic (R1) or jokers (R2)
    num_players=4,  # 2..12
    episode="hand",  # an episode is one deal ("hand") or a whole game ("match")
    reward="win",  # +1 for the winner, -1/(n-1) for the others; or "points"
    # -- PPO: the same names and units in train_sb3.py and train_fast.py -------------------------------------
    learning_rate=3e-4,
    n_epochs=4,  # passes over each train batch
    minibatch_size=500,  # learner decisions per gradient step
    gamma=0.995,
    gae_lambda=0.95,
    ent_coef=0.01,
    vf_coef=1.0,
    clip_range=0.2,
    net_arch=[256, 256],  # hidden layers of the policy and of the value network
    # -- the run ---------------------------------------------------------------------------------------------
    timesteps=200_000,  # env steps (decisions of any seat)
    train_batch_size=4000,  # env steps per training iteration
    num_env_runners=1,  # Ray actors that sample (0 = sample in this process)
    num_envs=16,
    opponents=["learner=1", "self=1"],  # the other seats: the learner itself or one of its snapshots
    pool_size=4,  # frozen snapshots that `self` draws from
    snapshot_every=20_000,  # env steps between league snapshots
    checkpoint_every=40_000,
    eval_games=0,  # games against random and heuristic after training (0 = skip)
    out="runs/rllib",
    seed=0,
)


def main(args: RLlibArgs) -> None:
    """Train with the settings read over :data:`SETTINGS`, print where the policy went."""
    from goboom_env.training.rllib import train as rllib_train

    run = rllib_train.train(args)
    print(f"policy: {run / 'policy'} (agent spec rllib:{run})")


if __name__ == "__main__":
    sys.exit(run_script(main, SETTINGS, __doc__))
