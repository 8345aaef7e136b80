"""Self-play training: three trainers and what they share. Importing a module imports its extra only when needed.

====================  ===========================================================================
module                what it holds
====================  ===========================================================================
shared by the trainers
---------------------------------------------------------------------------------------------------
``settings``          the settings dataclasses of every command (game, PPO, each trainer's run,
                      ``exploit``), their checks and settings files
``artifacts``         what a run leaves: ``model_files`` (metadata schema, compatibility check,
                      model zips), ``numpy_actor`` (``FrozenMlp``, what ``ppo:`` plays),
                      ``run_folder`` (files, rules, CSV logs), ``learning_curve``
``opponents``         batched opponents (random, snapshots, the batched heuristics), numpy only
``league``            the opponent pool of every trainer (``League``: weighted entries and the learner's
                      last snapshots; ``OpponentPool``: with one agent per name, for ``SelfPlayEnv``)
``seats``             ``LearnerSeats``: the learner's seats, their rewards since the last move, the
                      illegal-action rule and the autoreset draw, shared by every learner-seat view
``imitation``         the warm start: behaviour cloning of a teacher agent
``privileged``        the privileged critic (it also sees the hidden cards while training)
``shaping``           the hand-size potential of ``--shaping``
``goboom train`` (stable-baselines3 / sb3-contrib MaskablePPO): ``sb3/``
---------------------------------------------------------------------------------------------------
``sb3``               the run (``loop``), model and envs (``model``), callbacks, the ``ppo:`` agent;
                      ``selfplay`` (``SelfPlayEnv``), ``vecenv`` (``VectorGameVecEnv``: the
                      batched engine as an SB3 ``VecEnv``)
``goboom train-fast`` (PyTorch PPO on the batched engine): ``fast/``
---------------------------------------------------------------------------------------------------
``fast``              ``ppo`` (``train`` and the ``Trainer``), ``rollout`` (seats, pool, per-seat GAE),
                      ``policy`` (the network), ``warm_start``, ``run`` (the run folder)
``goboom train-rllib`` (Ray RLlib, new API stack): ``rllib/``
---------------------------------------------------------------------------------------------------
``rllib``             ``train`` (PPO configuration and run), ``league``, ``run`` (run folder and
                      logs), ``env`` (``MultiAgentEnv``), ``policy`` (masked RLModule, ``rllib:``
                      agent), ``cluster`` (the ``--address`` probe)
built on the trainers
---------------------------------------------------------------------------------------------------
``exploit``           ``goboom exploit``: a best response to a frozen agent (fast trainer or sb3)
``demo``              ``goboom demo``: a short fast run, then the evaluation report
====================  ===========================================================================

The trainers import the shared modules and never each other (``lint-imports`` checks it). The module paths of
an earlier layout (``config``, ``vector_ppo``, ``rllib_policy``, ``selfplay``, ``model_files``, ...) still import,
with a DeprecationWarning naming the new path.
"""
