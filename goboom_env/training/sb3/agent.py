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
from goboom_env.history import HistoryEncoder
from goboom_env.models import model_path
from goboom_env.observation import PADDED_SIZE, observation_size, pad_observations
from goboom_env.training.artifacts.model_files import check_compatible, load_actor, observation_layout, read_metadata
from goboom_env.training.artifacts.numpy_actor import FrozenMlp, SnapshotAgent


class PPOAgent(SnapshotAgent):
    """A trained model as a :class:`~goboom_env.agents.Policy` (greedy over the legal actions by default).

    A generalist's agent has ``pad_players`` set: each observation of that many players is padded to the
    12-seat layout (:func:`~goboom_env.observation.pad_observations`) before the actor reads it. An agent of a
    model that reads the history layout has ``history`` set and asks for the seat's view (``needs_view``): it
    extends the snapshot observation with the history of the view's public events; an observation already in
    the history layout (``raw_env(observation="history")``) is read as it is."""

    def __init__(self, name: str, net: FrozenMlp, seed: int | None = None, deterministic: bool = False,
                 pad_players: int | None = None, history: HistoryEncoder | None = None) -> None:
        super().__init__(name, net, seed, deterministic)
        self.pad_players = pad_players
        self.history = history
        self.needs_view = history is not None

    def act(self, observation: dict[str, np.ndarray], view: Any | None = None) -> int:
        return self.choose(self.inputs(observation, view), observation["action_mask"])

    def inputs(self, observation: dict[str, np.ndarray], view: Any | None = None) -> np.ndarray:
        """The vector the actor reads for this observation: padded for a generalist, extended with the view's
        public history for a model of the history layout, else the observation itself."""
        obs = observation["observation"]
        if self.pad_players is not None:
            return pad_observations(obs, self.pad_players)
        if self.history is not None and np.shape(obs) != (self.history.size,):
            if view is None:
                raise ValueError(f"agent {self.name} reads the history layout: give it the seat's view (its "
                                 f"needs_view is True) or an observation of raw_env(observation='history')")
            return self.history.extend(obs, view.events, view.sizes, view.seat)
        return obs


def load_ppo_agent(config: GameConfig, seed: int | None = None, path: str | None = None,
                   deterministic: bool | None = None) -> PPOAgent:
    """The ``ppo:PATH`` agent spec: a model saved by ``goboom train`` or a shipped model's name
    (``ppo:classic-4p-hands``, see :mod:`goboom_env.models`), checked against ``config``.

    It plays the most probable legal action, or samples from the masked policy when
    ``deterministic=False`` (``ppo:path=m.zip,deterministic=false``); by default, as the model's metadata says
    (greedy unless :func:`~goboom_env.training.artifacts.model_files.export_policy` recorded otherwise)."""
    if not path:
        raise ValueError("the ppo agent needs a model path: ppo:path/to/model.zip")
    if not isinstance(path, str):
        raise ValueError(f"the ppo agent's path must be a file path, got {path!r}")
    name, path = path, str(model_path(path))
    meta = read_metadata(path)
    check_compatible(meta, config, path, layouts=("snapshot", "history"))
    deterministic = meta.get("deterministic", True) if deterministic is None else spec_bool("deterministic",
                                                                                              deterministic)
    actor = load_actor(path)
    generalist = "player_configs" in meta
    history = HistoryEncoder(config) if observation_layout(meta) == "history" else None  # its own: it keeps facts
    size = PADDED_SIZE if generalist else history.size if history else observation_size(config.num_players)
    if actor.input_size != size:
        raise ValueError(f"{path} is damaged: its actor reads {actor.input_size} inputs, but "
                         f"{'padded observations' if generalist else 'observations'} of {config.num_players} "
                         f"players have {size}")
    return PPOAgent(f"ppo:{name}", actor, seed, deterministic=deterministic,
                    pad_players=config.num_players if generalist else None, history=history)
