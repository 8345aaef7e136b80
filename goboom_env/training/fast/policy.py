"""The learner's network in the fast trainer (``goboom train-fast``): a masked actor-critic MLP in torch, whose
actor freezes into the numpy :class:`~goboom_env.agents.ppo.FrozenMlp` that ``ppo:`` plays."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from goboom_env.agents.ppo import FrozenMlp
from goboom_env.cards import NUM_ACTIONS
from goboom_env.hints import needs_extra
from goboom_env.training.artifacts.model_files import sequential_layers

with needs_extra("the fast trainer (goboom_env.training.fast)"):
    import torch
    from torch import nn

MASKED_LOGIT = -1e8
"""Logit of an illegal action: its probability is exactly 0 in float32."""


def resolve_precision(precision: str) -> str:
    """``fp32`` or ``bf16`` for a ``--precision`` choice: ``auto`` is bf16 where the CPU multiplies bfloat16
    matrices natively (oneDNN: AVX512-BF16 or AMX), else fp32 (emulated bf16 would be slower)."""
    if precision != "auto":
        return precision
    return "bf16" if torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported() else "fp32"


def _mlp(sizes: Sequence[int], out_gain: float) -> Any:
    """Linear + Tanh layers, orthogonal init (gain sqrt 2, last layer ``out_gain``) as SB3 and CleanRL do."""
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        linear = nn.Linear(a, b)
        last = i == len(sizes) - 2
        nn.init.orthogonal_(linear.weight, out_gain if last else np.sqrt(2))
        nn.init.zeros_(linear.bias)
        layers += [linear] if last else [linear, NumpyTanh()]
    return nn.Sequential(*layers)


class _NumpyTanhFunction(torch.autograd.Function):
    """tanh by numpy (float32, or float64 for a float64 input), the gradient by torch's ``tanh_backward``."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        out = x.detach().to(torch.float64 if x.dtype == torch.float64 else torch.float32, copy=True)
        values = out.numpy()
        np.tanh(values, out=values)
        y = out.to(x.dtype)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        (y,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y)


class NumpyTanh(nn.Tanh):
    """``nn.Tanh`` by numpy, several times faster than torch's CPU kernel (a tenth of a PPO update); it agrees with
    torch's to float32 rounding (bit for bit in bfloat16, computed in float32 and rounded back as torch does)."""

    def forward(self, x: Any) -> Any:
        if x.device.type != "cpu" or not x.is_floating_point():  # numpy reaches CPU floats only: torch's tanh else
            return torch.tanh(x)
        return _NumpyTanhFunction.apply(x)


class Evaluation(NamedTuple):
    """What :meth:`ActorCritic.evaluate` gives the PPO loss per row: the action's log-probability, the masked
    policy's entropy and the critic's value."""

    logp: Any
    entropy: Any
    values: Any


class ActorCritic(nn.Module):
    """SB3's MlpPolicy shape: separate actor and critic MLPs with Tanh and orthogonal init; illegal actions get
    :data:`MASKED_LOGIT`. Input rows are the observation (``obs_dim``, all the actor reads), then for a privileged
    critic the hidden state (the critic reads ``critic_dim`` entries)."""

    def __init__(self, obs_dim: int, net_arch: Sequence[int], precision: str = "fp32",
                 critic_dim: int | None = None) -> None:
        super().__init__()
        self.obs_dim = obs_dim
        self.critic_dim = obs_dim if critic_dim is None else critic_dim
        if self.critic_dim < obs_dim:
            raise ValueError(f"critic_dim ({critic_dim}) must be at least obs_dim ({obs_dim})")
        self.actor = _mlp([obs_dim, *net_arch, NUM_ACTIONS], 0.01)
        self.critic = _mlp([self.critic_dim, *net_arch, 1], 1.0)
        self.bf16 = precision == "bf16"

    @property
    def input_dtype(self) -> Any:
        """The dtype the first layers multiply in: casting a batch to it once saves autocast's cast on every pass."""
        return torch.bfloat16 if self.bf16 else torch.float32

    def _run(self, net: Any, obs: Any) -> Any:
        """``net(obs)`` as float32; with bf16 the matrix products run in bfloat16 (autocast), the rest in float32."""
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            return net(obs).float()

    def _heads(self, obs: Any) -> tuple[Any, Any]:
        """Actor logits and critic values (float32) of ``obs``; both first layers run as one product of twice the
        width (a few percent faster) unless the critic is privileged and reads more."""
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            if self.critic_dim > self.obs_dim:  # a privileged critic reads more: no shared first product
                trunk = self.actor[:-1](obs[:, :self.obs_dim])
                values = self.critic(obs[:, :self.critic_dim])
            else:
                first_a, first_c = self.actor[0], self.critic[0]
                width = first_a.out_features
                hidden = self.actor[1](nn.functional.linear(obs[:, :self.obs_dim],
                                                            torch.cat([first_a.weight, first_c.weight]),
                                                            torch.cat([first_a.bias, first_c.bias])))
                trunk = self.actor[2:-1](hidden[:, :width])
                values = self.critic[2:](hidden[:, width:])
            logits = self.actor[-1](trunk)
        return logits.float(), values.float()[:, 0]

    def _masked(self, logits: Any, mask: Any) -> Any:
        return torch.where(mask, logits, torch.full((), MASKED_LOGIT))

    def masked_logits(self, obs: Any, mask: Any) -> Any:
        """Action logits with the illegal ones at :data:`MASKED_LOGIT` (``mask`` is bool)."""
        return self._masked(self._run(self.actor, obs[:, :self.obs_dim]), mask)

    def act(self, obs: Any, mask: Any) -> tuple[Any, Any, Any]:
        """Sample legal actions (Gumbel-max over the masked logits); returns actions, log-probs, values."""
        logits, values = self._heads(obs)
        logits = self._masked(logits, mask)
        noise = -torch.log(-torch.log(torch.rand_like(logits).clamp_(1e-12, 1.0)))
        actions = torch.argmax(logits + noise, dim=1)
        logp = torch.log_softmax(logits, dim=1).gather(1, actions[:, None])[:, 0]
        return actions, logp, values

    def evaluate(self, obs: Any, mask: Any, actions: Any) -> Evaluation:
        """Log-probs of ``actions``, entropies of the masked policies and values (for the PPO loss)."""
        logits, values = self._heads(obs)
        logp_all = torch.log_softmax(self._masked(logits, mask), dim=1)
        # 0 on the illegal actions, whose terms vanish: exp of a log-prob near MASKED_LOGIT is 8x slower than exp(0)
        legal = torch.where(mask, logp_all, torch.zeros(()))
        probs = legal.exp()
        entropy = -(probs * legal).sum(1)
        return Evaluation(logp_all.gather(1, actions[:, None])[:, 0], entropy, values)

    def load_actor(self, frozen: FrozenMlp) -> None:
        """Copy a numpy actor of the same layer sizes into this actor."""
        linears = [m for m in self.actor if isinstance(m, nn.Linear)]
        with torch.no_grad():
            for m, (w, b) in zip(linears, frozen.layers, strict=True):  # FrozenMlp keeps w as (in, out)
                m.weight.copy_(torch.from_numpy(w.T))
                m.bias.copy_(torch.from_numpy(b))

    def frozen(self) -> FrozenMlp:
        """The numpy copy of the actor (what snapshots and the play-only model hold)."""
        return FrozenMlp(*sequential_layers(self.actor))

