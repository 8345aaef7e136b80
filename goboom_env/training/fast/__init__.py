"""``goboom train-fast``: self-play PPO in PyTorch on the batched engine, CleanRL style: ``ppo`` (the run and the
``Trainer``: collect, per-seat GAE, update, read top to bottom), ``rollout``, ``policy`` (the network), ``warm_start``,
``run`` (the run folder). Importing this package imports no torch.
"""
