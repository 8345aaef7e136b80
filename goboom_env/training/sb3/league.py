"""Deprecated module path: see :mod:`goboom_env.training.league`, the opponent pool of every trainer."""

from goboom_env._moved import forward

__getattr__, __dir__ = forward(__name__, "goboom_env.training.league")
