"""Deprecated module path: the network is :mod:`goboom_env.training.fast.policy`, the batched opponents
:mod:`goboom_env.training.opponents`."""

from goboom_env._moved import forward

__getattr__, __dir__ = forward(
    __name__,
    "goboom_env.training.opponents",
    "goboom_env.training.fast.policy",
    "goboom_env.training.fast.rollout",
)
