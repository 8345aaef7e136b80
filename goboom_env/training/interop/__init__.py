"""Adapters to other RL libraries, one module per library: ``tianshou`` gives the learner-seat view its legal actions
in the observation, and the masked actor and critic that read them (``training/train_tianshou.py``). TorchRL needs
none: its ``PettingZooWrapper`` takes ``goboom_env.env()`` as it is. docs/libraries.md lists every library.
"""
