"""Deprecated module path: the fast trainer is :mod:`goboom_env.training.fast` (``Trainer``: ``fast.ppo``;
the warm start: ``fast.warm_start``; checkpoints: ``fast.run``)."""

from goboom_env._moved import forward

__getattr__, __dir__ = forward(
    __name__,
    "goboom_env.training.artifacts.model_files",
    "goboom_env.training.fast.run",
    "goboom_env.training.fast.warm_start",
    "goboom_env.training.fast.ppo",
)
