"""Adapters to other RL libraries: what a library forces of our code, one module per library.

* ``tianshou``: the learner-seat view (``goboom_env/GoBoom-v0``) with its legal actions in the observation, and the
  masked actor and the critic that read it (``training/train_tianshou.py``).

TorchRL needs none: its ``PettingZooWrapper`` takes ``goboom_env.env()`` as it is (``training/train_torchrl.py``).
docs/libraries.md lists every library, its entry point and its recipe.
"""
