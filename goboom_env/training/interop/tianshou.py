"""Tianshou on the learner-seat view: the legal actions in the observation, a masked actor and a critic that read it.

Tianshou trains on ``gymnasium.make("goboom_env/GoBoom-v0", ...)``, whose step carries a loss on another player's move
(Tianshou's own multi-agent path loses it); why, and what each piece is for: docs/libraries.md, "Tianshou".
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
    """An env whose observation is a dict of ``obs`` and ``mask`` (``info["action_mask"]``), its ``info`` empty
    (Tianshou's buffer refuses the keys only an episode's last step has)."""

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
    """The ``obs`` vectors of a ``Batch``, as ``net``'s tensor."""
    weight = next(net.parameters())
    return torch.as_tensor(obs.obs, dtype=weight.dtype, device=weight.device)


class MaskedActor(ActionReprNet):
    """``net`` (observation vector -> 54 logits) with the illegal actions' logits set to the lowest float, for
    ``DiscreteActorPolicy``."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, obs: Any, state: Any = None, info: dict[str, Any] | None = None) -> tuple[torch.Tensor, Any]:
        logits = self.net(_inputs(obs, self.net))
        legal = torch.as_tensor(obs.mask, dtype=torch.bool, device=logits.device)
        return logits.masked_fill(~legal, torch.finfo(logits.dtype).min), state


class ObservationCritic(nn.Module):
    """``net`` (observation vector -> value) on the ``obs`` entry."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, obs: Any) -> torch.Tensor:
        return self.net(_inputs(obs, self.net))
