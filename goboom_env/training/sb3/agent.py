"""The ``ppo:`` agent: a saved model zip (``goboom train``, ``goboom train-fast``) or a shipped model, played in numpy.

Loading needs neither torch nor stable-baselines3: the zip's numpy actor
(:mod:`goboom_env.training.artifacts.model_files`) is all that plays, after the one compatibility check that every
trained-policy loader makes (:func:`~goboom_env.training.artifacts.model_files.check_compatible`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from goboom_env.agents import spec_bool
from goboom_env.config import GameConfig
from goboom_env.models import model_path
from goboom_env.observation import PADDED_SIZE, observation_size, pad_observations
from goboom_env.training.artifacts.model_files import check_compatible, load_actor, read_metadata
from goboom_env.training.artifacts.numpy_actor import FrozenMlp, SnapshotAgent


class PPOAgent(SnapshotAgent):
    """A trained model as a :class:`~goboom_env.agents.Policy` (greedy over the legal actions by default).

    A generalist's agent has ``pad_players`` set: each observation of that many players is padded to the
    12-seat layout (:func:`~goboom_env.observation.pad_observations`) before the actor reads it."""

    def __init__(self, name: str, net: FrozenMlp, seed: int | None = None, deterministic: bool = False,
                 pad_players: int | None = None) -> None:
        super().__init__(name, net, seed, deterministic)
        self.pad_players = pad_players

    def act(self, observation: dict[str, np.ndarray], view: Any | None = None) -> int:
        if self.pad_players is None:
            return super().act(observation, view)
        obs = pad_observations(observation["observation"], self.pad_players)
        return self.choose(obs, observation["action_mask"])


def load_ppo_agent(config: GameConfig, seed: int | None = None, path: str | None = None,
                   deterministic: bool | None = None) -> PPOAgent:
    """The ``ppo:PATH`` agent spec: a model saved by ``goboom train`` or a shipped model's name
    (``ppo:classic4``, see :mod:`goboom_env.models`), checked against ``config``.

    It plays the most probable legal action, or samples from the masked policy when
    ``deterministic=False`` (``ppo:path=m.zip,deterministic=false``); by default, as the model's metadata says
    (greedy unless :func:`~goboom_env.training.artifacts.model_files.export_policy` recorded otherwise)."""
    if not path:
        raise ValueError("the ppo agent needs a model path: ppo:path/to/model.zip")
    if not isinstance(path, str):
        raise ValueError(f"the ppo agent's path must be a file path, got {path!r}")
    name, path = path, str(model_path(path))
    meta = read_metadata(path)
    check_compatible(meta, config, path)
    deterministic = meta.get("deterministic", True) if deterministic is None else spec_bool("deterministic",
                                                                                              deterministic)
    actor = load_actor(path)
    generalist = "player_configs" in meta
    size = PADDED_SIZE if generalist else observation_size(config.num_players)
    if actor.input_size != size:
        raise ValueError(f"{path} is damaged: its actor reads {actor.input_size} inputs, but "
                         f"{'padded observations' if generalist else 'observations'} of {config.num_players} "
                         f"players have {size}")
    return PPOAgent(f"ppo:{name}", actor, seed, deterministic=deterministic,
                    pad_players=config.num_players if generalist else None)
