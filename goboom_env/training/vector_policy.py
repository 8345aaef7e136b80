"""The networks of the fast trainer (``goboom train-fast``): the learner's actor-critic and the batched opponents.

:class:`ActorCritic` is a masked MLP policy and value network in torch (its actor freezes into the numpy
:class:`~goboom_env.training.artifacts.numpy_actor.FrozenMlp` that ``ppo:`` plays); a :class:`BatchOpponent` picks
one action for each of many games at once (``random``, a learner snapshot, or the batched heuristic,
``classic-tricks`` or ``jokers-boom``); :class:`SnapshotPool` keeps the league of snapshots.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import GameConfig
from goboom_env.training.artifacts.numpy_actor import FrozenMlp

MASKED_LOGIT = -1e8
"""Logit of an illegal action: its probability is exactly 0 in float32."""


def resolve_precision(precision: str) -> str:
    """``fp32`` or ``bf16`` for a ``--precision`` choice (``auto``, ``fp32`` or ``bf16``): ``auto`` is bf16
    where the CPU multiplies bfloat16 matrices natively (oneDNN: AVX512-BF16 or AMX), else fp32, where
    bf16 would be emulated and slower."""
    import torch

    if precision != "auto":
        return precision
    return "bf16" if torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported() else "fp32"


# -- the network -------------------------------------------------------------------------------------


def _mlp(sizes: Sequence[int], out_gain: float) -> Any:
    """Linear + Tanh layers, orthogonal init (gain sqrt 2, last layer ``out_gain``) as SB3 and CleanRL do."""
    import torch.nn as nn

    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        linear = nn.Linear(a, b)
        last = i == len(sizes) - 2
        nn.init.orthogonal_(linear.weight, out_gain if last else np.sqrt(2))
        nn.init.zeros_(linear.bias)
        layers += [linear] if last else [linear, NumpyTanh()]
    return nn.Sequential(*layers)


def _torch_module() -> type:
    import torch.nn as nn

    return nn.Module


def _torch_class(name: str) -> type:
    """``torch.nn.Tanh`` or ``torch.autograd.Function``, imported when this module is (as :class:`ActorCritic`)."""
    import torch

    return {"Tanh": torch.nn.Tanh, "Function": torch.autograd.Function}[name]


class _NumpyTanhFunction(_torch_class("Function")):  # type: ignore[misc]
    """tanh by numpy's vectorised loop (in float32, or float64 for a float64 input), the gradient by torch's own
    ``tanh_backward`` (1 - y**2)."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        import torch

        out = x.detach().to(torch.float64 if x.dtype == torch.float64 else torch.float32, copy=True)
        values = out.numpy()
        np.tanh(values, out=values)
        y = out.to(x.dtype)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        import torch

        (y,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y)


class NumpyTanh(_torch_class("Tanh")):  # type: ignore[misc]
    """``nn.Tanh`` computed by numpy's vectorised tanh, several times faster than torch's CPU kernel (which
    otherwise costs a tenth of a PPO update). The values agree with torch's to float32 rounding (bit for bit
    once rounded to bfloat16: a bfloat16 input is computed in float32 and rounded back, as torch does)."""

    def forward(self, x: Any) -> Any:
        import torch

        if x.device.type != "cpu" or not x.is_floating_point():  # numpy reaches CPU floats only: torch's tanh else
            return torch.tanh(x)
        return _NumpyTanhFunction.apply(x)


class ActorCritic(_torch_module()):  # type: ignore[misc]
    """SB3's MlpPolicy shape: separate actor and critic MLPs with Tanh; the actor is what ``ppo:`` plays.

    Every method takes the critic's input rows (``critic_dim`` entries). By default that is the observation
    itself; a privileged critic (``critic_dim > obs_dim``) also reads the hidden state after it
    (``VectorGame.hidden``), while the actor reads only the first ``obs_dim`` entries, the observation."""

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
    def privileged(self) -> bool:
        """The critic reads more than the actor (the hidden state after the observation)."""
        return self.critic_dim > self.obs_dim

    @property
    def input_dtype(self) -> Any:
        """The dtype the first layers multiply observations in: casting a batch to it once ahead (bfloat16 under
        bf16) saves the cast autocast would do on every forward pass, with the same rounding."""
        import torch

        return torch.bfloat16 if self.bf16 else torch.float32

    def _run(self, net: Any, obs: Any) -> Any:
        """``net(obs)`` as float32; with bf16 the matrix products run in bfloat16 (autocast) while the
        weights, their gradients and everything after the last layer (softmax, losses) stay float32."""
        import torch

        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            return net(obs).float()

    def _heads(self, obs: Any) -> tuple[Any, Any]:
        """Actor logits and critic values (float32) of ``obs`` in one pass: both first layers read the same
        observations, so they run as one matrix product of twice the width (the same arithmetic as two, a few
        percent of an update faster), then each network goes on alone. A privileged critic reads more than the
        actor, so there the two networks run apart."""
        import torch

        if self.privileged:  # different inputs: no shared first product
            return self._run(self.actor, obs[:, :self.obs_dim]), self._run(self.critic, obs)[:, 0]
        first_a, first_c = self.actor[0], self.critic[0]
        width = first_a.out_features
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            hidden = self.actor[1](torch.nn.functional.linear(obs, torch.cat([first_a.weight, first_c.weight]),
                                                              torch.cat([first_a.bias, first_c.bias])))
            logits = self.actor[2:](hidden[:, :width])
            values = self.critic[2:](hidden[:, width:])
        return logits.float(), values.float()[:, 0]

    def _masked(self, logits: Any, mask: Any) -> Any:
        import torch

        return torch.where(mask, logits, torch.full((), MASKED_LOGIT))

    def masked_logits(self, obs: Any, mask: Any) -> Any:
        """Action logits with the illegal ones at :data:`MASKED_LOGIT` (``mask`` is bool)."""
        return self._masked(self._run(self.actor, obs[:, :self.obs_dim]), mask)

    def values(self, obs: Any) -> Any:
        """The critic's value of each observation."""
        return self._run(self.critic, obs)[:, 0]

    def act(self, obs: Any, mask: Any) -> tuple[Any, Any, Any]:
        """Sample legal actions (Gumbel-max over the masked logits); returns actions, log-probs, values."""
        import torch

        logits, values = self._heads(obs)
        logits = self._masked(logits, mask)
        noise = -torch.log(-torch.log(torch.rand_like(logits).clamp_(1e-12, 1.0)))
        actions = torch.argmax(logits + noise, dim=1)
        logp = torch.log_softmax(logits, dim=1).gather(1, actions[:, None])[:, 0]
        return actions, logp, values

    def evaluate(self, obs: Any, mask: Any, actions: Any, anchor: Any = None) -> tuple[Any, Any, Any, Any]:
        """Log-probs of ``actions``, entropies of the masked policies and values (for the PPO loss), and with
        ``anchor`` (a frozen actor network of the same shape) each row's KL divergence KL(policy || anchor's
        policy) over the legal actions (None without)."""
        import torch

        logits, values = self._heads(obs)
        logp_all = torch.log_softmax(self._masked(logits, mask), dim=1)
        # 0 on the illegal actions, whose terms vanish: exp of a log-prob near MASKED_LOGIT is 8x slower than exp(0)
        legal = torch.where(mask, logp_all, torch.zeros(()))
        probs = legal.exp()
        entropy = -(probs * legal).sum(1)
        kl = None
        if anchor is not None:
            with torch.no_grad():
                ref = torch.log_softmax(self._masked(self._run(anchor, obs[:, :self.obs_dim]), mask), dim=1)
            kl = (probs * (legal - torch.where(mask, ref, torch.zeros(())))).sum(1)  # illegal terms: 1 * (0 - 0)
        return logp_all.gather(1, actions[:, None])[:, 0], entropy, values, kl

    def load_actor(self, frozen: FrozenMlp) -> None:
        """Copy a numpy actor of the same layer sizes into this actor (:func:`~goboom_env.training.vector_trainer.
        read_init_actor` checks them)."""
        import torch
        import torch.nn as nn

        linears = [m for m in self.actor if isinstance(m, nn.Linear)]
        with torch.no_grad():
            for m, (w, b) in zip(linears, frozen.layers, strict=True):  # FrozenMlp keeps w as (in, out)
                m.weight.copy_(torch.from_numpy(w.T))
                m.bias.copy_(torch.from_numpy(b))

    def frozen(self) -> FrozenMlp:
        """The numpy copy of the actor (what snapshots and the play-only model hold)."""
        import torch.nn as nn

        linears = [m for m in self.actor if isinstance(m, nn.Linear)]
        return FrozenMlp([(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy())
                          for m in linears], "tanh")


# -- batched opponents ---------------------------------------------------------------------------------


class BatchOpponent(Protocol):
    """Plays the seats to move of a batch of games: ``actions[i]`` for ``obs[i]`` with legal ``mask[i]``."""

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...


def sample_masked(logits: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row from softmax(logits) restricted to ``mask`` (Gumbel-max)."""
    noisy = np.where(mask.astype(bool), logits + rng.gumbel(size=logits.shape), -np.inf)
    return np.argmax(noisy, axis=1)


class RandomOpponent:
    """Uniform over the legal actions."""

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return sample_masked(np.zeros(mask.shape, np.float32), mask, rng)


class SnapshotOpponent:
    """A frozen copy of the learner that samples from its masked policy (as the league of ``goboom train``)."""

    def __init__(self, net: FrozenMlp) -> None:
        self.net = net

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return sample_masked(self.net.logits(obs), mask, rng)


class ClassicTricksOpponent:
    """``classic-tricks`` (:class:`goboom_env.agents.ClassicTricksAgent`) on a batch of observations.

    The same decoding of the observation (the encoder's
    :meth:`~goboom_env.observation.ObservationEncoder.counts`) and the same scores as the scalar agent, computed
    for every card at once: follow with the lowest card that wins the trick; otherwise play the card that keeps the most
    unseen cards followable (``kept``), on the lead minus the unseen cards that could follow it, plus a
    hundredth of its points. Ties are broken at random, as the scalar agent does."""

    def __init__(self, config: GameConfig) -> None:
        from goboom_env.cards import CLASSIC_POINTS, MATCH_MASKS
        from goboom_env.observation import encoder_for

        if not config.is_classic:
            raise ValueError("the batched heuristic opponent plays classic Go Boom only; use learner, self or "
                             "random for the jokers variant")
        self.n = config.num_players
        self.decks = config.num_decks
        self.encoder = encoder_for(config)
        self.match = np.array([[(MATCH_MASKS[c] >> x) & 1 for x in range(52)] for c in range(52)], np.float32)
        self.points = np.array(CLASSIC_POINTS[:52], np.float32) / 100.0

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        counts, faces = self.encoder.counts(obs), np.arange(52)
        hand = counts["hand"][:, :52].astype(np.float32)
        unseen = (self.decks - counts["hand"][:, :52] - counts["seen"][:, :52]).astype(np.float32)
        led_block = counts["led"][:, :52] > 0
        leading = ~led_block.any(1)
        led = np.where(leading, -1, led_block.argmax(1))
        trick = counts["trick"].reshape(len(obs), self.n, -1)[:, :, :52] > 0
        played = np.where(trick.any(2), trick.argmax(2), -1)
        same_suit = (played >= 0) & (played // 13 == led[:, None] // 13)
        best = np.maximum(np.where(same_suit, played, -1).max(1), led)
        cover = hand @ self.match  # per face x: own cards that x matches
        kept = (unseen * (cover > 0)).sum(1, keepdims=True) - (unseen * (cover == 1)) @ self.match.T
        follow = unseen @ self.match.T
        score = kept + self.points - np.where(leading[:, None], follow, 0.0)
        legal = mask[:, :52].astype(bool)
        noisy = np.where(legal, score + rng.random(score.shape) * 1e-6, -np.inf)
        choice = noisy.argmax(1)
        wins = legal & ~leading[:, None] & (faces // 13 == led[:, None] // 13) & (faces > best[:, None])
        choice = np.where(wins.any(1), wins.argmax(1), choice)  # the lowest winning card
        return np.where(legal.any(1), choice, NUM_ACTIONS - 1)


class JokersBoomOpponent:
    """``jokers-boom`` (:class:`goboom_env.agents.JokersBoomAgent`) on a batch of observations.

    The same decoding (the encoder's :meth:`~goboom_env.observation.ObservationEncoder.counts`) and the same
    scores as the scalar agent for every card at once: boom at once when an opponent holds one card and the
    stock is not empty; otherwise the matching non-boom card worth most points plus three per own card that
    would match it next, minus two per unseen card that could match it; a boom card only when no other card
    matches; draw or pass only when nothing else is legal. Ties are broken at random, as the scalar agent does."""

    def __init__(self, config: GameConfig) -> None:
        from goboom_env.agents.heuristics import JokersBoomAgent
        from goboom_env.cards import ACES_MASK, JOKER, JOKER_BIT, JOKERS_POINTS, MATCH_MASKS, NUM_FACES, faces_in
        from goboom_env.observation import encoder_for

        if config.is_classic:
            raise ValueError("JokersBoomOpponent plays the jokers variant; use ClassicTricksOpponent for classic")
        self.encoder = encoder_for(config)
        self.total = np.full(NUM_FACES, config.num_decks, np.float64)
        self.total[JOKER] = config.num_jokers
        boom = np.zeros(NUM_FACES, bool)
        boom[faces_in(ACES_MASK if config.aces_mode else JOKER_BIT)] = True
        self.boom = boom
        self.match = np.zeros((NUM_FACES, NUM_FACES))  # match[c, x]: face x matches card c (the joker nothing)
        for c in range(52):
            self.match[c, faces_in(MATCH_MASKS[c])] = 1.0
        self.points = np.array(JOKERS_POINTS, np.float64)
        self.scarcity = JokersBoomAgent.scarcity

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        counts = self.encoder.counts(obs)
        hand = counts["hand"].astype(np.float64)
        unseen = self.total - hand - counts["seen"]
        plain = hand * ~self.boom
        score = (self.points + 3.0 * (plain @ self.match.T - plain) - self.scarcity * (unseen @ self.match.T)
                 + rng.random(hand.shape) * 1e-6)
        legal = mask[:, :-1].astype(bool)
        plays, booms = legal & ~self.boom, legal & self.boom
        urgent = (counts["hand_sizes"][:, 1:].min(1) <= 1) & (counts["stock"][:, 0] > 0) & booms.any(1)
        pool = np.where((urgent | ~plays.any(1))[:, None], booms, plays)
        choice = np.where(pool, score, -np.inf).argmax(1)
        return np.where(pool.any(1), choice, NUM_ACTIONS - 1)


class PaddedOpponent:
    """A batched opponent per player count, on observations padded to the 12-seat layout (a generalist's games).

    Each row's table size is read from its ``flags`` block (``num_players / 12``); the rows of one count are
    un-padded (:func:`goboom_env.observation.unpad_observations`) and given to that count's opponent."""

    def __init__(self, opponents: dict[int, BatchOpponent]) -> None:
        from goboom_env.config import MAX_PLAYERS
        from goboom_env.observation import layout

        self.opponents = opponents
        self.count_entry = layout(MAX_PLAYERS)["flags"].stop - 1
        """The padded observation's ``num_players / 12`` entry."""
        self.max_players = MAX_PLAYERS

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        from goboom_env.observation import unpad_observations

        counts = np.rint(np.asarray(obs[:, self.count_entry], np.float64) * self.max_players).astype(np.int64)
        out = np.empty(len(obs), np.int64)
        for k in np.unique(counts):
            if int(k) not in self.opponents:
                raise ValueError(f"no batched opponent for {int(k)} players (has {sorted(self.opponents)})")
            rows = np.flatnonzero(counts == k)
            out[rows] = self.opponents[int(k)].act(unpad_observations(obs[rows], int(k)), mask[rows], rng)
        return out


def batched_heuristic(config: GameConfig, player_counts: Sequence[int] = ()) -> BatchOpponent:
    """The ``heuristic`` alias on a batch: the best rule-based agent of the variant (``classic-tricks`` or
    ``jokers-boom``); with ``player_counts``, on padded observations of games at those counts
    (:class:`PaddedOpponent`, each count playing ``config.replace(num_players=k)``)."""
    if player_counts:
        return PaddedOpponent({int(k): batched_heuristic(config.replace(num_players=int(k))) for k in player_counts})
    return ClassicTricksOpponent(config) if config.is_classic else JokersBoomOpponent(config)


class SnapshotPool:
    """The learner's snapshots; each game that draws ``self`` is given one of the last ``size``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.names: list[str] = []
        self.nets: list[SnapshotOpponent] = []

    def add(self, name: str, net: FrozenMlp) -> None:
        self.names.append(name)
        self.nets.append(SnapshotOpponent(net))
        del self.names[:-self.size], self.nets[:-self.size]
