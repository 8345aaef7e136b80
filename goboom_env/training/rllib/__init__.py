"""Multi-agent self-play PPO on Ray RLlib (``goboom train-rllib``) and the ``rllib:`` agent.

==============  ===========================================================================================
module          what it holds
==============  ===========================================================================================
``cluster``     ``probe``: is the Ray cluster of ``--address`` reachable (no Ray needed)
==============  ===========================================================================================

Importing this package imports no Ray: each module imports it itself, when it is imported.
"""
