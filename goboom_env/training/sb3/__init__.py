"""Self-play training with sb3-contrib's MaskablePPO (``goboom train``) and the ``ppo:`` agent.

=================  ==========================================================================
module             what it holds
=================  ==========================================================================
:mod:`.loop`       :func:`train`: one run read top to bottom (resume, warm start, learn, save)
:mod:`.model`      the vectorised self-play envs, the MaskablePPO model, the device, ``save_model``
:mod:`.selfplay`   ``SelfPlayEnv``: one learner seat of the AEC env as a Gymnasium env (also the
                   Gymnasium id ``goboom_env/GoBoom-v0``)
:mod:`.callbacks`  one SB3 callback per concern: progress logs, league snapshots, checkpoints,
                   evaluation (imports stable-baselines3, so it is loaded by :func:`train` only)
:mod:`.agent`      :func:`load_ppo_agent`, the ``ppo:`` agent (numpy only: no torch needed to play)
:mod:`.vecenv`     ``VectorGameVecEnv``: the batched engine as an SB3 ``VecEnv`` for ``MaskablePPO``
                   (imports stable-baselines3: import it by name)
=================  ==========================================================================

The opponent pool is :class:`goboom_env.training.league.OpponentPool`; the settings are
:class:`goboom_env.training.settings.TrainArgs`. The model file format and the metadata every trained policy
carries are :mod:`goboom_env.training.artifacts.model_files`'s (``export_policy`` and ``average_policies`` are
re-exported here); the run folder is :mod:`goboom_env.training.artifacts.run_folder`'s.
Importing this package imports neither torch nor stable-baselines3.
"""

from __future__ import annotations

from goboom_env.training.artifacts.model_files import average_policies, export_policy
from goboom_env.training.artifacts.run_folder import RunFiles
from goboom_env.training.sb3.agent import PPOAgent, load_ppo_agent
from goboom_env.training.sb3.loop import train
from goboom_env.training.sb3.model import build_model, make_vec_env, save_model

__all__ = [
    "PPOAgent",
    "RunFiles",
    "average_policies",
    "build_model",
    "export_policy",
    "load_ppo_agent",
    "make_vec_env",
    "save_model",
    "train",
]
