"""Deprecated module path: the fast trainer's run is :mod:`goboom_env.training.fast.ppo`, its settings
``VectorArgs`` are in :mod:`goboom_env.training.settings`."""

from goboom_env._moved import forward

__getattr__, __dir__ = forward(
    __name__,
    "goboom_env.training.settings",
    "goboom_env.training.fast.run",
    "goboom_env.training.fast.ppo",
)
