"""``goboom train-rllib``: multi-agent self-play PPO on Ray RLlib's new API stack, and the ``rllib:`` agent (the
modules: docs/rllib.md). Importing this package imports no Ray.
"""
