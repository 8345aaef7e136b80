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
``vector_env``        ``SelfPlayVectorEnv``: the single-agent view on the batched engine, a Gymnasium
                      ``VectorEnv`` (``gymnasium.make_vec``); the SB3 ``VecEnv`` adapts it
``imitation``         the warm start: behaviour cloning of a teacher agent
``privileged``        the privileged critic (it also sees the hidden cards while training)
``shaping``           the hand-size potential of ``--shaping``
``goboom train`` (stable-baselines3 / sb3-contrib MaskablePPO): ``sb3/``
---------------------------------------------------------------------------------------------------
``sb3``               the run (``loop``), model and envs (``model``), callbacks, the ``ppo:`` agent;
                      ``selfplay`` (``SelfPlayEnv``), ``vecenv`` (``VectorGameVecEnv``: the
                      batched single-agent env as an SB3 ``VecEnv``)
``goboom train-fast`` (PyTorch PPO on the batched engine): ``fast/``
---------------------------------------------------------------------------------------------------
``fast``              ``ppo`` (``train`` and the ``Trainer``), ``rollout`` (seats, pool, per-seat GAE),
                      ``policy`` (the network), ``warm_start``, ``run`` (the run folder)
``goboom train-rllib`` (Ray RLlib, new API stack): ``rllib/``
---------------------------------------------------------------------------------------------------
``rllib``             ``train`` (PPO configuration and run), ``league``, ``run`` (run folder and
                      logs), ``env`` (``MultiAgentEnv``), ``policy`` (masked RLModule, ``rllib:``
                      agent), ``cluster`` (the ``--address`` probe)
other RL libraries: ``interop/``
---------------------------------------------------------------------------------------------------
``interop``           what another library needs of us, one module per library: ``tianshou``
                      (the legal actions in ``GoBoom-v0``'s observation, a masked actor); the recipes
                      are ``training/train_tianshou.py`` and ``training/train_torchrl.py``
built on the trainers
---------------------------------------------------------------------------------------------------
``exploit``           ``goboom exploit``: a best response to a frozen agent (fast trainer or sb3)
``demo``              ``goboom demo``: a short fast run, then the evaluation report
====================  ===========================================================================

The trainers import the shared modules and never each other (``lint-imports`` checks it). The module paths of
an earlier layout (``config``, ``vector_ppo``, ``rllib_policy``, ``selfplay``, ``model_files``, ...) still import,
with a DeprecationWarning naming the new path.

``export_model`` and ``export_policy`` (of ``artifacts.model_files``) import from here: a model file that every
tool plays as ``ppo:PATH``, of a policy trained elsewhere (a stable-baselines3 / sb3-contrib model or its saved
zip, a PyTorch MLP) or of a goboom model (play-only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from goboom_env.config import GameConfig
from goboom_env.training.artifacts import model_files as _model_files
from goboom_env.training.artifacts.model_files import export_policy


def export_model(source: Any, config: GameConfig | str, dst: str | Path, *, observation: str = "snapshot",
                 deterministic: bool = True, args: Any | None = None, timesteps: int | None = None) -> Path:
    """A model file that every tool plays as ``ppo:dst`` (``goboom evaluate``, ``make_agent``, ``goboom serve``;
    numpy only), of a policy trained elsewhere: the metadata from ``config`` and the actor as numpy arrays.

    ``source``: a stable-baselines3 / sb3-contrib model (``MaskablePPO``, ``PPO``) or its ``model.policy`` (an
    ``MlpPolicy``: any ``net_arch``, ``activation_fn`` Tanh or ReLU), the path of the zip its ``model.save``
    wrote (its weights read with ``torch.load(weights_only=True)``, nothing unpickled), a PyTorch
    ``nn.Sequential`` of ``Linear`` layers with ``Tanh`` or ``ReLU`` between them (observation vector in, 54 action
    logits out), or a goboom model file (copied play-only, :func:`export_policy`). ``config``: the game it was
    trained on (a :class:`~goboom_env.GameConfig`, e.g. ``env.unwrapped.config``, or a preset name);
    ``observation``: the layout it reads (``"snapshot"``, the Gymnasium view's, or ``"history"``);
    ``deterministic``: greedy (default) or sampling play; ``args`` and ``timesteps``: the training run's settings
    dataclass and steps, recorded in the metadata as a trainer records its own (a network only). ValueError naming
    what the numpy actor cannot play (a CNN, a recurrent or shared-trunk network, another activation) or a network
    that does not read this game's observations. See :func:`goboom_env.training.artifacts.model_files.export_model`."""
    if isinstance(source, (str, Path)) and _model_files.is_sb3_zip(source):
        from goboom_env.training.artifacts.run_folder import load_tensors  # torch: the train extra

        source = _model_files.read_sb3_zip(source, load_tensors)
    return _model_files.export_model(source, config, dst, observation=observation, deterministic=deterministic,
                                     args=args, timesteps=timesteps)


__all__ = ["export_model", "export_policy"]
