"""``goboom export MODEL --out FILE``: a model file that every tool plays as ``ppo:FILE``, of a policy trained
elsewhere.

MODEL is the zip a stable-baselines3 / sb3-contrib model's ``model.save`` wrote (``MaskablePPO``, ``PPO``; an
``MlpPolicy`` with Tanh or ReLU) or a goboom model file (copied play-only). The game options (``--variant``,
``--num-players``, ``--preset``, ...) name the game it was trained on, and ``--observation`` the layout it reads
(the Gymnasium view's is ``snapshot``). Examples::

    goboom export my_sb3_model.zip --preset classic --out my_model.zip
    goboom export my_sb3_model.zip --variant jokers --num-players 3 --out my_model.zip
    goboom evaluate --agents ppo:my_model.zip heuristic

The library function is :func:`goboom_env.training.export_model`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Annotated

import tyro

from goboom_env.agents.ppo import is_model_file
from goboom_env.cli.options import run_parsed
from goboom_env.outdir import check_output_file
from goboom_env.training.settings import GameArgs, Observation


@dataclasses.dataclass
class ExportOptions(GameArgs):
    """The options of ``goboom export``: the model first, then the game it was trained on and the output file."""

    model: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="MODEL")] = ""
    """The zip saved by a stable-baselines3 model (model.save), or a goboom model file."""
    out: str = ""
    """The model file to write (play it as ppo:OUT); an existing file is refused unless --force."""
    force: bool = False
    """Replace an existing --out that is a goboom model file (never MODEL itself, never another kind of file)."""
    observation: Observation = "snapshot"
    """The observation layout the model reads: snapshot (the Gymnasium view's) or history."""
    deterministic: bool = True
    """Play the most probable legal action by default (--no-deterministic: sample from the masked policy)."""
    episode: Annotated[str, tyro.conf.Suppress] = "hand"

    def validate(self) -> None:
        """Raise ValueError naming the first bad field (the game's, then the files)."""
        self.validate_game()
        if not self.model:
            raise ValueError("give the model to export: goboom export MODEL --out FILE")
        if not self.out:
            raise ValueError("give the file to write: --out FILE")
        check_output_file(self.out, force=self.force, ours=is_model_file, what="a goboom model file",
                          inputs=[("MODEL", self.model)])


def main(argv: Sequence[str], prog: str = "goboom export") -> int:
    """Parse the options, write the model file and print how to play it; 2 on a bad option or a model the numpy
    actor cannot play."""
    return run_parsed(ExportOptions, argv, prog, __doc__, _export)


def _export(options: ExportOptions) -> int:
    from goboom_env.training import export_model

    config = options.game_config()
    path = export_model(options.model, config, options.out, observation=options.observation,
                        deterministic=options.deterministic)
    print(f"model: {path} ({config.variant} Go Boom, {config.num_players} players, {options.observation} "
          f"observations); play it as ppo:{path}")
    return 0
