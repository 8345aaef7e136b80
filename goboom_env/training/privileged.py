"""Privileged critic (the asymmetric actor-critic of Pinto et al., 2017): the critic also sees the hidden cards, which
cause most of the variance of a hand's outcome; the actor, all a trained agent plays, sees only the observation (R4.1).
docs/training.md, "Privileged critic", explains it.
"""

from __future__ import annotations

import functools
from typing import Any

from goboom_env.hints import needs_extra


@functools.cache
def policy_class() -> type:
    """:class:`PrivilegedCriticPolicy`, built on first use so that importing this module needs no torch."""
    with needs_extra("the privileged critic (goboom_env.training.privileged)"):
        import torch
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
        from stable_baselines3.common.torch_layers import create_mlp
        from torch import nn

    class SplitMlpExtractor(nn.Module):
        """SB3's ``MlpExtractor`` with the actor reading only the first ``public_dim`` features."""

        def __init__(self, public_dim: int, feature_dim: int, net_arch: dict[str, list[int]],
                     activation_fn: type[nn.Module], device: Any) -> None:
            super().__init__()
            self.public_dim = public_dim
            self.policy_net = nn.Sequential(*create_mlp(public_dim, -1, net_arch["pi"], activation_fn)).to(device)
            self.value_net = nn.Sequential(*create_mlp(feature_dim, -1, net_arch["vf"], activation_fn)).to(device)
            self.latent_dim_pi = net_arch["pi"][-1] if net_arch["pi"] else public_dim
            self.latent_dim_vf = net_arch["vf"][-1] if net_arch["vf"] else feature_dim

        def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return self.forward_actor(features), self.forward_critic(features)

        def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
            return self.policy_net(features[..., :self.public_dim])

        def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
            return self.value_net(features)

    class PrivilegedCriticPolicy(MaskableActorCriticPolicy):
        """MaskablePPO's MLP policy whose actor sees only the first ``public_dim`` entries (the observation) and
        whose critic sees them all; ``net_arch`` must be a ``{"pi": [...], "vf": [...]}`` dict."""

        def __init__(self, *args: Any, public_dim: int, **kwargs: Any) -> None:
            self.public_dim = public_dim
            super().__init__(*args, **kwargs)

        def _build_mlp_extractor(self) -> None:
            if not isinstance(self.net_arch, dict):
                raise ValueError(f"PrivilegedCriticPolicy needs net_arch={{'pi': [...], 'vf': [...]}}, "
                                 f"got {self.net_arch!r}")
            if not 0 < self.public_dim < self.features_dim:
                raise ValueError(f"public_dim must be in 1..{self.features_dim - 1}, got {self.public_dim}")
            self.mlp_extractor = SplitMlpExtractor(self.public_dim, self.features_dim, self.net_arch,
                                                   self.activation_fn, self.device)

        def _get_constructor_parameters(self) -> dict[str, Any]:
            return {**super()._get_constructor_parameters(), "public_dim": self.public_dim}

    PrivilegedCriticPolicy.__module__ = __name__
    PrivilegedCriticPolicy.__qualname__ = "PrivilegedCriticPolicy"
    return PrivilegedCriticPolicy


def __getattr__(name: str) -> Any:
    """``goboom_env.training.privileged.PrivilegedCriticPolicy`` resolves lazily (saved models refer to it by name)."""
    if name == "PrivilegedCriticPolicy":
        return policy_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
