"""Self-play training: three trainers and what they share. Importing a module imports its extra only when needed.

====================  ===========================================================================
module                what it holds
====================  ===========================================================================
shared by the trainers
---------------------------------------------------------------------------------------------------
``config``            the settings dataclasses of every trainer (game, PPO, run) and settings files
``model_files``       the metadata schema and compatibility check of every trained policy; model zips
``numpy_actor``       ``FrozenMlp``: the actor in numpy (what ``ppo:`` plays and league snapshots are)
``run_folder``        the run folder of ``goboom train`` and ``train-fast``; ``learning_curve`` plots it
``imitation``         the warm start: behaviour cloning of a teacher agent
``privileged``        the privileged critic (it also sees the hidden cards while training)
``demo``              ``goboom demo``: a short fast run, then the evaluation report
``goboom train`` (stable-baselines3 / sb3-contrib MaskablePPO)
---------------------------------------------------------------------------------------------------
``selfplay``          ``SelfPlayEnv``: one learner seat of the AEC env as a Gymnasium env
``league``            ``OpponentPool``: baselines and learner snapshots, drawn by weight
``sb3``               the run (``loop``), model and envs (``model``), callbacks, the ``ppo:`` agent
``goboom train-fast`` (PyTorch PPO on the batched engine)
---------------------------------------------------------------------------------------------------
``vector_ppo``        ``VectorArgs`` and ``train``; ``vector_trainer``, ``vector_rollout`` and
                      ``vector_policy`` hold the trainer, the rollouts and the networks
``vecenv``            ``VectorGameVecEnv``: the batched engine as an SB3 ``VecEnv``
``goboom train-rllib`` (Ray RLlib, new API stack)
---------------------------------------------------------------------------------------------------
``rllib_train``       the PPO configuration and the run; ``rllib_league`` the league; ``rllib_run``
                      the run folder and logs
``rllib_env``         ``GoBoomMultiAgentEnv``: the AEC env as an RLlib ``MultiAgentEnv``
``rllib_policy``      the action-masking RLModule and the ``rllib:`` agent
====================  ===========================================================================
"""
