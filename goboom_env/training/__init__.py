"""Self-play training: the trainers ``fast`` (``goboom train-fast``), ``sb3`` (``goboom train``) and ``rllib``
(``goboom train-rllib``), which never import each other, on what they share (``settings``, ``artifacts``,
``opponents``, ``league``, ``seats``, ``vector_env``, ``imitation``, ``privileged``, ``shaping``), and what is built on
them (``exploit``, ``demo``, ``guided_search``); ``interop`` holds what another RL library needs of us. A module imports
its extra (torch, stable-baselines3, Ray) only when it is imported.

:func:`export_model` and :func:`export_policy` make a model file every tool plays as ``ppo:PATH``, of a policy trained
elsewhere or of a goboom model (play-only).
"""

from __future__ import annotations

from goboom_env.training.artifacts.model_files import export_model, export_policy

__all__ = ["export_model", "export_policy"]
