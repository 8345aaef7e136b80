"""``goboom train-fast``: self-play PPO on the batched engine (options:
:class:`goboom_env.training.settings.VectorArgs`; the PPO settings have the names of ``goboom train``).

Example::

    goboom train-fast --timesteps 5000000 --out runs/fast4               # classic, 4 players
    goboom train-fast --variant jokers --opponents learner=3 self=1 --out runs/fastj
    goboom train-fast --out runs/fast4 --resume --timesteps 8000000

The run folder has the layout of ``goboom train`` (model.zip, best_model.zip, checkpoints/,
progress.csv, eval.csv, tensorboard/); the models load as ``ppo:PATH``.
"""

from __future__ import annotations

from collections.abc import Sequence

from goboom_env.cli.options import train_command
from goboom_env.training.settings import VectorArgs


def main(argv: Sequence[str], prog: str = "goboom train-fast") -> int:
    """Parse the options, train, print where the model went; 2 on a bad option or setting."""
    return train_command(VectorArgs, "goboom_env.training.fast.ppo", argv, prog, __doc__)
