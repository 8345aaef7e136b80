"""Self-play training: the trainers ``fast``, ``sb3`` and ``rllib`` (which never import each other), what they share and
what is built on them (docs/training.md, "Where the code is"). A module imports its extra (torch, stable-baselines3,
Ray) only when it is imported. :func:`export_model` and :func:`export_policy` write a model file ``ppo:PATH`` plays.
"""

from __future__ import annotations

from goboom_env.training.artifacts.model_files import export_model, export_policy

__all__ = ["export_model", "export_policy"]
