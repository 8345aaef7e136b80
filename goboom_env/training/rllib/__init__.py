"""``goboom train-rllib``: multi-agent self-play PPO on Ray RLlib's new API stack, and the ``rllib:`` agent:
``train`` (the configuration and the run), ``league``, ``run`` (the run folder), ``env`` (the ``MultiAgentEnv``),
``policy`` (the masked RLModule and the agent), ``cluster`` (the ``--address`` probe, no Ray needed). Importing this
package imports no Ray.
"""
