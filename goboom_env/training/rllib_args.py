"""Deprecated module path: see :mod:`goboom_env.training.settings` (``RLlibArgs``) and
:mod:`goboom_env.training.rllib.cluster` (``probe``)."""

from goboom_env._moved import forward

__getattr__, __dir__ = forward(__name__, "goboom_env.training.settings", "goboom_env.training.rllib.cluster")
