"""``goboom train-fast``: self-play PPO in PyTorch on the batched engine, CleanRL style.

===============  ==========================================================================================
module           what it holds
===============  ==========================================================================================
``ppo``          ``train``, the run, and ``Trainer``: collect, per-seat GAE, PPO update (read top to bottom)
``rollout``      the seat plan and the snapshot league, per-seat GAE, open decisions, rollouts and batches
``policy``       ``ActorCritic``: the masked actor-critic network (torch), its precision
``warm_start``   behaviour cloning of a teacher (``--bc-games``), a saved actor (``--init-actor``)
``run``          the run folder: checkpoints, the play-only model, ``progress.csv``, ``eval.csv``
===============  ==========================================================================================

The settings are :class:`goboom_env.training.settings.VectorArgs`, the batched opponents
:mod:`goboom_env.training.opponents`. Importing this package imports no torch: ``policy`` does, and a run.
"""
