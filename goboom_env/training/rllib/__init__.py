"""Multi-agent self-play PPO on Ray RLlib's new API stack (``goboom train-rllib``) and the ``rllib:`` agent.

==============  ===========================================================================================
module          what it holds
==============  ===========================================================================================
``train``       the PPO configuration, Ray's start and the run, read top to bottom; ``measure_sampling``
``league``      which module plays each seat, the win-rate metric, the league snapshots
``run``         the run folder: checkpoints, the exported policy and its ``goboom.json``, the progress log,
                ``cluster.json`` (the node of each env runner)
``env``         ``GoBoomMultiAgentEnv``: the AEC env as an RLlib ``MultiAgentEnv``
``policy``      ``MaskedPPOTorchRLModule`` (action masking) and ``load_rllib_agent``, the ``rllib:`` agent
``cluster``     ``probe``: is the Ray cluster of ``--address`` reachable (no Ray needed)
==============  ===========================================================================================

The settings are :class:`goboom_env.training.settings.RLlibArgs`. Importing this package imports no Ray: each
module but ``cluster`` imports it itself, when it is imported.
"""
