"""``goboom train``: self-play MaskablePPO training (options: :class:`goboom_env.training.settings.TrainArgs`).

Example::

    goboom train --variant classic --players 4 --timesteps 2000000 --num-envs 8 --out runs/classic4
    goboom train --config run.toml --out runs/x          # TOML keys = the options' field names
    goboom train --out runs/classic4 --resume --timesteps 3000000
"""

from __future__ import annotations

from collections.abc import Sequence

from goboom_env.cli.options import train_command
from goboom_env.training.settings import TrainArgs


def main(argv: Sequence[str], prog: str = "goboom train") -> int:
    """Parse the options, train, print where the model went; 2 on a bad option or setting."""
    return train_command(TrainArgs, "goboom_env.training.sb3", argv, prog, __doc__)
