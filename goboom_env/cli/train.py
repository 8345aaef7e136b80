"""``goboom train``: self-play MaskablePPO training (options: :class:`goboom_env.training.settings.TrainArgs`).

Example::

    goboom train --variant classic --players 4 --timesteps 2000000 --num-envs 8 --out runs/classic4
    goboom train --config run.toml --out runs/x          # TOML keys = the options' field names
    goboom train --out runs/classic4 --resume --timesteps 3000000
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from goboom_env.cli.options import train_command
from goboom_env.training.settings import TrainArgs


def main(argv: Sequence[str], prog: str = "goboom train") -> int:
    """Parse the options, train, print where the model went; 2 on a bad option or setting."""
    return train_command(TrainArgs, _train, argv, prog, __doc__)


def _train(args: TrainArgs, command: str) -> Path:
    """The SB3 trainer, imported when the command runs (it needs torch)."""
    from goboom_env.training.sb3 import train

    return train(args, command=command)
