"""Deprecated module path: see :mod:`goboom_env.training.fast.rollout`, :mod:`goboom_env.training.shaping`
and the opponent-pool entries in :mod:`goboom_env.training.settings`."""

from goboom_env._moved import forward

__getattr__, __dir__ = forward(
    __name__,
    "goboom_env.training.settings",
    "goboom_env.training.shaping",
    "goboom_env.training.fast.rollout",
)
