"""``goboom train``: self-play with sb3-contrib's MaskablePPO (its modules: docs/training.md, "Where the code is").
Importing this package imports neither torch nor stable-baselines3.
"""

from __future__ import annotations

from goboom_env.agents.ppo import PPOAgent, load_ppo_agent
from goboom_env.training.artifacts.model_files import average_policies, export_policy
from goboom_env.training.artifacts.run_folder import RunFiles
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
