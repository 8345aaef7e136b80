"""Tianshou on the learner-seat view: the legal actions in the observation, a masked actor and a critic that read it.

Tianshou trains on ``gymnasium.make("goboom_env/GoBoom-v0", ...)``: one learner seat against the chosen opponents,
whose step plays the other seats and brings everything the learner received since its last move
(:class:`~goboom_env.training.seats.LearnerSeats`), a loss on another player's move included. Tianshou's own
multi-agent path (``PettingZooEnv`` with ``MultiAgentPolicy``) does not fit Go Boom: it files each step's rewards
under the seat that moved, so a losing seat's transitions never carry its loss, and it bootstraps a seat's value
from the observation of the seat that moves next.

What Tianshou needs of us on that view:

* :class:`MaskInObservation`: Tianshou's networks see the observation only (the ``info`` a buffer row keeps is that
  of the next observation), so the legal actions join it as in Tianshou's ``PettingZooEnv``: a dict of ``obs``
  (the observation vector) and ``mask`` (bool, 54), which reaches the networks as a ``Batch``; the ``info`` is
  left empty for Tianshou's buffer;
* :class:`MaskedActor`: logits of a network on ``obs``, the illegal actions' set to the lowest float, for
  ``DiscreteActorPolicy``; an ``nn.Sequential`` network is what ``goboom_env.training.export_model`` saves for
  ``goboom evaluate`` to play;
* :class:`ObservationCritic`: a value network on ``obs``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from goboom_env.cards import NUM_ACTIONS
from goboom_env.hints import needs_extra

with needs_extra("the Tianshou adapter (goboom_env.training.interop.tianshou)"):
    import torch
    from tianshou.utils.net.common import ActionReprNet
    from torch import nn


class MaskInObservation(gym.Wrapper):
    """An env whose ``info["action_mask"]`` (after every reset and step) joins the observation: a dict of ``obs``,
    the env's observation, and ``mask``, the legal actions as bools. The ``info`` it returns is empty: Tianshou
    stores every info key in its buffer and refuses one with a missing value, as the keys that only an episode's
    last step has (``winners``, ``won``, ``seat``, ``opponent``) would leave."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.observation_space = gym.spaces.Dict({"obs": env.observation_space,
                                                  "mask": gym.spaces.MultiBinary(NUM_ACTIONS)})

    def reset(self, **kwargs: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return self._with_mask(obs, info), {}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._with_mask(obs, info), reward, terminated, truncated, {}

    @staticmethod
    def _with_mask(obs: np.ndarray, info: dict[str, Any]) -> dict[str, np.ndarray]:
        return {"obs": obs, "mask": np.asarray(info["action_mask"], bool)}


def _inputs(obs: Any, net: nn.Module) -> torch.Tensor:
    """The observation vectors of a ``Batch`` of :class:`MaskInObservation` observations, as ``net``'s tensor."""
    weight = next(net.parameters())
    return torch.as_tensor(obs.obs, dtype=weight.dtype, device=weight.device)


class MaskedActor(ActionReprNet):
    """``net`` (observation vector -> 54 logits) with the illegal actions' logits set to the lowest float: a
    categorical over its output never draws one, and its gradient never reaches them."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, obs: Any, state: Any = None, info: dict[str, Any] | None = None) -> tuple[torch.Tensor, Any]:
        logits = self.net(_inputs(obs, self.net))
        legal = torch.as_tensor(obs.mask, dtype=torch.bool, device=logits.device)
        return logits.masked_fill(~legal, torch.finfo(logits.dtype).min), state


class ObservationCritic(nn.Module):
    """``net`` (observation vector -> value) on the ``obs`` entry of :class:`MaskInObservation` observations."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, obs: Any) -> torch.Tensor:
        return self.net(_inputs(obs, self.net))
