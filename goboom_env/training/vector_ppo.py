"""Fast self-play PPO on the batched engine (:class:`goboom_env.vector.VectorGame`), CleanRL style.

One call of ``VectorGame.step`` moves the seat to play in each of ``num_envs`` games. Every seat is
played either by the learner (one network, parameter-shared: in a ``learner`` game all n seats are
the learner, so each hand yields n learner trajectories) or by a batched opponent (a frozen snapshot
of the learner, ``random``). The seats move in turn, so the trainer keeps one decision sequence per
(game, seat): a seat's reward (the end of the hand or match) is credited to that seat's last
decision, and GAE runs over each seat's own decisions (:func:`seat_gae`). A decision whose outcome
is still open when a rollout ends is carried into the next rollout (:class:`Pending`) instead of
being cut off.

:func:`train` reads top to bottom: arguments, run folder, network (fresh, warm-started by behaviour
cloning, or resumed), then ``collect -> seat_gae -> update`` until the step budget is spent, with
CSV / TensorBoard logs, a progress bar, league snapshots, checkpoints and periodic evaluation through
:func:`goboom_env.training.sb3.evaluate_model` (the tournament runner). Saved models are the play-only zips of
:mod:`goboom_env.training.sb3`: ``make_agent("ppo:run/model.zip", config)`` plays them unchanged.
"""

from __future__ import annotations

import csv
import itertools
import json
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import GameConfig
from goboom_env.training.config import GameArgs, check_choice, check_output_folder
from goboom_env.training.selfplay import FrozenMlp

LEARNER = "learner"
"""Opponent-pool entry: every seat of the game is the learner itself (parameter-shared self-play)."""
SNAPSHOTS = "self"
"""Opponent-pool entry: the other seats are a frozen snapshot of the learner (as in ``goboom train``)."""
RANDOM = "random"
"""Opponent-pool entry: the other seats play uniformly among their legal actions."""
HEURISTIC = "heuristic"
"""Opponent-pool entry (classic only): the other seats play ``classic-tricks``, batched."""
POOL_KINDS = (LEARNER, SNAPSHOTS, RANDOM, HEURISTIC)
MASKED_LOGIT = -1e8
"""Logit of an illegal action: its probability is exactly 0 in float32."""


@dataclass
class VectorArgs(GameArgs):
    """Everything one fast self-play run needs; saved as ``args.json`` in the run folder."""

    timesteps: int = 2_000_000
    """Learner decisions to train for."""
    time_limit: float = 0.0
    """Also stop after this many seconds of training wall time, warm start included (0 = no limit)."""
    num_envs: int = 512
    """Games stepped together by the batched engine (one policy call serves all of them)."""
    num_steps: int = 32
    """Engine calls per rollout: a rollout holds up to num_envs x num_steps learner decisions."""
    seed: int = 0
    """Seed of the network, the deals and the opponent draws."""
    threads: int = 1
    """Torch CPU threads (1 is fastest on a shared 2-core machine: more threads spin against other jobs)."""
    opponents: list[str] = field(default_factory=lambda: ["learner=1"])
    """Opponent pool as SPEC=WEIGHT items, one draw per game and episode: `learner` (all seats are the
    learner), `self` (the other seats are a snapshot of the learner), `random` or `heuristic` (classic-tricks,
    classic only)."""
    snapshot_every: int = 250_000
    """Add a frozen copy of the learner to the `self` pool every this many steps."""
    pool_size: int = 8
    """Keep at most this many (most recent) snapshots."""
    bc_games: int = 0
    """Warm start: clone the --bc-teacher on this many of its self-play hands before PPO (0 = off)."""
    bc_teacher: str = "heuristic"
    """Agent spec whose moves the warm start imitates."""
    bc_epochs: int = 4
    """Passes over the teacher's decisions in the warm start."""
    learning_rate: float = 5e-4
    """Adam learning rate."""
    n_epochs: int = 2
    """Optimisation epochs per rollout."""
    minibatch_size: int = 1024
    """Decisions per gradient step."""
    gamma: float = 0.995
    """Discount factor (per decision of the seat)."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    ent_coef: float = 0.003
    """Entropy bonus coefficient."""
    vf_coef: float = 0.5
    """Value loss coefficient."""
    clip_range: float = 0.2
    """PPO clip range."""
    max_grad_norm: float = 0.5
    """Gradient norm clipping."""
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy and of the (separate) value network, as SB3's MlpPolicy."""
    eval_every: int = 500_000
    """Evaluate against the baselines every this many steps (0 = only at the end, -1 = never)."""
    eval_games: int = 1000
    """Games per baseline in each evaluation (1-vs-(n-1), seat-rotated, duplicate)."""
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "heuristic"])
    """Baselines of the evaluation; the last one picks the best model."""
    checkpoint_every: int = 500_000
    """Save a resumable checkpoint every this many steps."""
    out: str = "runs/fast"
    """Run folder: model.zip, best_model.zip, checkpoints/, progress.csv, eval.csv, tensorboard/."""
    resume: bool = False
    """Continue the run in --out from its latest checkpoint."""
    force: bool = False
    """Replace a non-empty --out (without it such a folder is refused unless --resume)."""
    progress: bool = True
    """Show a progress bar."""

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        self.validate_game()
        check_output_folder(self.out)
        for name in ("timesteps", "num_envs", "num_steps", "n_epochs", "minibatch_size", "pool_size",
                     "eval_games", "threads", "snapshot_every", "checkpoint_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.bc_games < 0 or not self.time_limit >= 0:
            raise ValueError(f"bc_games and time_limit must be >= 0, got {self.bc_games}, {self.time_limit}")
        for name in ("learning_rate", "clip_range", "max_grad_norm"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        for name in ("gamma", "gae_lambda"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"{name} must be in (0, 1], got {getattr(self, name)}")
        if not self.ent_coef >= 0 or not self.vf_coef >= 0:
            raise ValueError(f"ent_coef and vf_coef must be >= 0, got {self.ent_coef}, {self.vf_coef}")
        if not self.net_arch or any(h < 1 for h in self.net_arch):
            raise ValueError(f"net_arch must be a non-empty list of positive sizes, got {self.net_arch}")
        if self.eval_every < -1:
            raise ValueError(f"eval_every must be >= -1, got {self.eval_every}")
        if any(spec == HEURISTIC for spec, _ in parse_pool(self.opponents)) and self.variant != "classic":
            raise ValueError("opponents: the batched heuristic plays classic Go Boom only (variant is "
                             f"{self.variant!r}); use learner, self or random")


def parse_pool(items: Sequence[str]) -> list[tuple[str, float]]:
    """``["learner=3", "self=1"]`` -> ``[("learner", 3.0), ("self", 1.0)]``, checked against :data:`POOL_KINDS`."""
    from goboom_env.training.config import parse_opponents

    pool = parse_opponents(list(items))
    for spec, _ in pool:
        check_choice("opponents entry", spec, POOL_KINDS)
    return pool


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
        layers += [linear] if last else [linear, nn.Tanh()]
    return nn.Sequential(*layers)


def _torch_module() -> type:
    import torch.nn as nn

    return nn.Module


class ActorCritic(_torch_module()):  # type: ignore[misc]
    """SB3's MlpPolicy shape: separate actor and critic MLPs with Tanh; the actor is what ``ppo:`` plays."""

    def __init__(self, obs_dim: int, net_arch: Sequence[int]) -> None:
        super().__init__()
        self.actor = _mlp([obs_dim, *net_arch, NUM_ACTIONS], 0.01)
        self.critic = _mlp([obs_dim, *net_arch, 1], 1.0)

    def masked_logits(self, obs: Any, mask: Any) -> Any:
        """Action logits with the illegal ones at :data:`MASKED_LOGIT` (``mask`` is bool)."""
        import torch

        return torch.where(mask, self.actor(obs), torch.full((), MASKED_LOGIT))

    def act(self, obs: Any, mask: Any) -> tuple[Any, Any, Any]:
        """Sample legal actions (Gumbel-max over the masked logits); returns actions, log-probs, values."""
        import torch

        logits = self.masked_logits(obs, mask)
        noise = -torch.log(-torch.log(torch.rand_like(logits).clamp_(1e-12, 1.0)))
        actions = torch.argmax(logits + noise, dim=1)
        logp = torch.log_softmax(logits, dim=1).gather(1, actions[:, None])[:, 0]
        return actions, logp, self.critic(obs)[:, 0]

    def evaluate(self, obs: Any, mask: Any, actions: Any) -> tuple[Any, Any, Any]:
        """Log-probs of ``actions``, entropies of the masked policies and values (for the PPO loss)."""
        import torch

        logp_all = torch.log_softmax(self.masked_logits(obs, mask), dim=1)
        probs = logp_all.exp()
        entropy = -(probs * torch.where(mask, logp_all, torch.zeros(()))).sum(1)
        return logp_all.gather(1, actions[:, None])[:, 0], entropy, self.critic(obs)[:, 0]

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

    The same decoding of the observation and the same scores as the scalar agent, computed for every card
    at once: follow with the lowest card that wins the trick; otherwise play the card that keeps the most
    unseen cards followable (``kept``), on the lead minus the unseen cards that could follow it, plus a
    hundredth of its points. Ties are broken at random, as the scalar agent does."""

    def __init__(self, config: GameConfig) -> None:
        from goboom_env.cards import CLASSIC_POINTS, MATCH_MASKS
        from goboom_env.observation import layout

        if not config.is_classic:
            raise ValueError("the batched heuristic opponent plays classic Go Boom only; use learner, self or "
                             "random for the jokers variant")
        self.n = config.num_players
        self.decks = config.num_decks
        self.slices = layout(self.n)
        self.match = np.array([[(MATCH_MASKS[c] >> x) & 1 for x in range(52)] for c in range(52)], np.float32)
        self.points = np.array(CLASSIC_POINTS[:52], np.float32) / 100.0

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        sl, faces = self.slices, np.arange(52)
        hand = np.rint(obs[:, sl["hand"]][:, :52] * self.decks)
        unseen = self.decks - hand - np.rint(obs[:, sl["seen"]][:, :52] * self.decks)
        led_block = obs[:, sl["led"]][:, :52] > 0
        leading = ~led_block.any(1)
        led = np.where(leading, -1, led_block.argmax(1))
        trick = obs[:, sl["trick"]].reshape(len(obs), self.n, -1)[:, :, :52] > 0
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


# -- per-seat GAE ----------------------------------------------------------------------------------------


@dataclass
class Pending:
    """The open decisions of each (game, seat): the seat's last decision of a rollout while its episode
    goes on. Its outcome (the seat's next decision or the end of the episode) lies in the next rollout,
    so it is trained there. Arrays are ``[num_envs, num_players, ...]``; ``active`` marks the slots in use."""

    active: np.ndarray
    value: np.ndarray
    reward: np.ndarray
    """Reward the seat received after the decision, up to the end of the rollout it was taken in."""
    obs: np.ndarray
    mask: np.ndarray
    action: np.ndarray
    logp: np.ndarray

    @classmethod
    def empty(cls, num_envs: int, num_players: int, obs_dim: int, obs_dtype: Any) -> Pending:
        shape = (num_envs, num_players)
        return cls(np.zeros(shape, bool), np.zeros(shape, np.float32), np.zeros(shape, np.float32),
                   np.zeros((*shape, obs_dim), obs_dtype), np.zeros((*shape, NUM_ACTIONS), bool),
                   np.zeros(shape, np.int64), np.zeros(shape, np.float32))


@dataclass
class SeatAdvantages:
    """What :func:`seat_gae` returns for one rollout."""

    advantages: np.ndarray
    """``[T, B]``: GAE advantage of the decision at (call, game); 0 where there is none."""
    resolved: np.ndarray
    """``[T, B]`` bool: a learner decision whose outcome lies in this rollout (trained now)."""
    opened: np.ndarray
    """``[T, B]`` bool: a learner decision still open at the end (carried to the next rollout)."""
    opened_reward: np.ndarray
    """``[B, n]``: reward received after each newly opened decision within this rollout."""
    pending_advantages: np.ndarray
    """``[B, n]``: advantages of the previous rollout's open decisions resolved now."""
    pending_resolved: np.ndarray
    """``[B, n]`` bool: which previous open decisions were resolved now."""
    pending_reward: np.ndarray
    """``[B, n]``: the reward so far of previous open decisions that are still open."""


def seat_gae(values: np.ndarray, rewards: np.ndarray, dones: np.ndarray, seats: np.ndarray, learner: np.ndarray,
             gamma: float, lam: float, pending: Pending | None = None) -> SeatAdvantages:
    """GAE over each (game, seat)'s own decisions of one rollout.

    ``values``, ``seats`` and ``learner`` are ``[T, B]`` (the value, the seat that moved and whether it is a
    learner seat, per call and game); ``rewards[t, b, s]`` (``[T, B, n]``) and ``dones[t, b]`` are what the
    engine returned for call ``t``. A decision's reward is everything its seat receives after it and up to
    the seat's next decision or the end of the episode; its bootstrap value is the value of that next
    decision (0 at the end). A seat's last decision of the rollout in a running episode stays open: the
    decisions before it bootstrap from its value (the GAE chain is cut there, as at a rollout's end in
    plain PPO) and ``pending`` carries it into the next call, where it is resolved first in line.
    """
    steps, num_envs = seats.shape
    n = rewards.shape[2]
    next_value = np.zeros((num_envs, n), np.float32)
    next_adv = np.zeros((num_envs, n), np.float32)
    acc = np.zeros((num_envs, n), np.float32)
    open_ = np.ones((num_envs, n), bool)  # nothing seen yet after this point: no later decision, no end
    advantages = np.zeros((steps, num_envs), np.float32)
    resolved = np.zeros((steps, num_envs), bool)
    opened = np.zeros((steps, num_envs), bool)
    opened_reward = np.zeros((num_envs, n), np.float32)
    rows = np.arange(num_envs)
    for t in range(steps - 1, -1, -1):
        ended = dones[t]
        next_value[ended] = next_adv[ended] = acc[ended] = 0.0
        open_[ended] = False
        acc += rewards[t]
        b = rows[learner[t]]
        s = seats[t, b]
        v = values[t, b]
        is_open = open_[b, s]
        adv = acc[b, s] + gamma * next_value[b, s] - v + gamma * lam * next_adv[b, s]
        advantages[t, b] = np.where(is_open, 0.0, adv)
        resolved[t, b] = ~is_open
        opened[t, b] = is_open
        opened_reward[b[is_open], s[is_open]] = acc[b[is_open], s[is_open]]
        next_value[b, s] = v
        next_adv[b, s] = np.where(is_open, 0.0, adv)
        acc[b, s] = 0.0
        open_[b, s] = False
    pend_adv = np.zeros((num_envs, n), np.float32)
    pend_resolved = np.zeros((num_envs, n), bool)
    pend_reward = np.zeros((num_envs, n), np.float32)
    if pending is not None:
        active = pending.active
        pend_resolved = active & ~open_
        reward = pending.reward + acc
        pend_adv = np.where(pend_resolved, reward + gamma * next_value - pending.value + gamma * lam * next_adv, 0.0)
        pend_reward = np.where(active & open_, reward, 0.0)
    return SeatAdvantages(advantages, resolved, opened, opened_reward, pend_adv.astype(np.float32), pend_resolved,
                          pend_reward.astype(np.float32))


# -- rollouts ----------------------------------------------------------------------------------------------


@dataclass
class Rollout:
    """One rollout of ``T`` engine calls over ``B`` games: the mover's view and what the learner did."""

    obs: np.ndarray
    """``[T, B, D]`` observation of the seat to move (the engine's dtype)."""
    mask: np.ndarray
    """``[T, B, 54]`` bool legal actions."""
    seat: np.ndarray
    """``[T, B]`` seat that moved."""
    learner: np.ndarray
    """``[T, B]`` bool: the mover is a learner seat (its decision is trained)."""
    action: np.ndarray
    logp: np.ndarray
    value: np.ndarray
    reward: np.ndarray
    """``[T, B, n]`` what each seat received from the call."""
    done: np.ndarray

    @classmethod
    def empty(cls, steps: int, num_envs: int, n: int, obs_dim: int, obs_dtype: Any) -> Rollout:
        tb = (steps, num_envs)
        return cls(np.zeros((*tb, obs_dim), obs_dtype), np.zeros((*tb, NUM_ACTIONS), bool), np.zeros(tb, np.int64),
                   np.zeros(tb, bool), np.zeros(tb, np.int64), np.zeros(tb, np.float32), np.zeros(tb, np.float32),
                   np.zeros((*tb, n), np.float32), np.zeros(tb, bool))


@dataclass
class Batch:
    """The trained decisions of one rollout, flat: what the PPO update reads."""

    obs: np.ndarray
    mask: np.ndarray
    action: np.ndarray
    logp: np.ndarray
    advantage: np.ndarray
    ret: np.ndarray

    def __len__(self) -> int:
        return len(self.action)


def build_batch(roll: Rollout, gae: SeatAdvantages, pending: Pending) -> tuple[Batch, Pending]:
    """The resolved decisions (this rollout's and the previous open ones) and the new :class:`Pending`."""
    t, b = np.nonzero(gae.resolved)
    pb, ps = np.nonzero(gae.pending_resolved)
    adv = np.concatenate([gae.advantages[t, b], gae.pending_advantages[pb, ps]])
    value = np.concatenate([roll.value[t, b], pending.value[pb, ps]])
    batch = Batch(obs=np.concatenate([roll.obs[t, b], pending.obs[pb, ps]]),
                  mask=np.concatenate([roll.mask[t, b], pending.mask[pb, ps]]),
                  action=np.concatenate([roll.action[t, b], pending.action[pb, ps]]),
                  logp=np.concatenate([roll.logp[t, b], pending.logp[pb, ps]]),
                  advantage=adv, ret=adv + value)
    new = Pending(pending.active & ~gae.pending_resolved, pending.value.copy(), gae.pending_reward,
                  pending.obs.copy(), pending.mask.copy(), pending.action.copy(), pending.logp.copy())
    ot, ob = np.nonzero(gae.opened)
    os_ = roll.seat[ot, ob]
    new.active[ob, os_] = True
    new.value[ob, os_] = roll.value[ot, ob]
    new.reward[ob, os_] = gae.opened_reward[ob, os_]
    new.obs[ob, os_] = roll.obs[ot, ob]
    new.mask[ob, os_] = roll.mask[ot, ob]
    new.action[ob, os_] = roll.action[ot, ob]
    new.logp[ob, os_] = roll.logp[ot, ob]
    return batch, new


class SeatPlan:
    """Who plays each seat of each game: the learner or a batched opponent, drawn per game and episode.

    ``kind[b]`` indexes the pool entries. A ``learner`` game has every seat learning; any other game has one
    learner seat (drawn uniformly) against the entry's opponent in all other seats (for ``self``, the
    snapshot ``snapshot[b]``)."""

    def __init__(self, pool: list[tuple[str, float]], num_envs: int, n: int, rng: np.random.Generator) -> None:
        self.specs = [spec for spec, _ in pool]
        weights = np.array([w for _, w in pool], np.float64)
        self.weights = weights / weights.sum()
        self.n = n
        self.rng = rng
        self.kind = np.zeros(num_envs, np.int64)
        self.learner = np.ones((num_envs, n), bool)
        self.snapshot = np.zeros(num_envs, np.int64)

    def redraw(self, games: np.ndarray, snapshots: int) -> None:
        """New seat assignments for the games marked in ``games``; ``snapshots`` is the pool's size (>= 1)."""
        idx = np.flatnonzero(games)
        if not len(idx):
            return
        kind = self.rng.choice(len(self.specs), size=len(idx), p=self.weights)
        self.kind[idx] = kind
        learner = np.zeros((len(idx), self.n), bool)
        learner[np.arange(len(idx)), self.rng.integers(self.n, size=len(idx))] = True
        learner[np.array([self.specs[k] == LEARNER for k in kind])] = True
        self.learner[idx] = learner
        self.snapshot[idx] = self.rng.integers(snapshots, size=len(idx))

    def spec_of(self, game: int) -> str:
        """The pool entry game ``game`` plays this episode."""
        return self.specs[self.kind[game]]


# -- the trainer ------------------------------------------------------------------------------------------

PROGRESS_COLUMNS = ["timesteps", "episodes", "fps", "train_s", "batch", "pending", "policy_loss", "value_loss",
                    "entropy", "approx_kl", "clip_fraction", "explained_variance", "ep_len_mean"]
"""Columns of ``progress.csv`` before the per-opponent training win rates ``win_rate/<entry>``."""


class RunPaths:
    """The files of one fast run folder (the names of ``goboom train`` where they mean the same)."""

    def __init__(self, out: str | Path) -> None:
        from goboom_env.training.sb3 import RunFiles

        self.files = RunFiles(out)
        self.root = self.files.root

    def state(self, steps: int) -> Path:
        """The resumable checkpoint (network, optimizer, snapshots, counters) at ``steps``."""
        return self.files.checkpoints / f"state_{steps}.pt"

    def checkpoint_model(self, steps: int) -> Path:
        """The play-only model saved with the checkpoint at ``steps``."""
        return self.files.checkpoints / f"model_{steps}.zip"

    def latest_state(self) -> Path | None:
        found = sorted(self.files.checkpoints.glob("state_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
        return found[-1] if found else None


def save_play_only(net: ActorCritic, path: Path, metadata: dict[str, Any]) -> Path:
    """The play-only model zip that ``ppo:PATH`` loads (metadata + numpy actor, as ``goboom_env.training.sb3`` writes)."""
    import io

    from goboom_env.training.sb3 import _write_play_only, save_snapshot

    buf = io.BytesIO()
    save_snapshot(buf, net.frozen().state())
    return _write_play_only(path, {**metadata, "deterministic": True, "trainer": "vector"}, buf.getvalue())


class Trainer:
    """The state of one run: engine, seat plan, network, optimizer, snapshots and counters."""

    def __init__(self, args: VectorArgs, config: GameConfig, seed_offset: int = 0) -> None:
        import torch

        from goboom_env.vector import VectorGame

        self.args = args
        self.config = config
        self.n = config.num_players
        seeds = np.random.SeedSequence([args.seed, seed_offset]).generate_state(3)
        self.rng = np.random.default_rng(seeds[0])
        torch.manual_seed(int(seeds[1]))
        self.game = VectorGame(config, num_envs=args.num_envs, seed=int(seeds[2]), episode=args.episode,
                               reward=args.reward, autoreset=True, check=False)
        obs, self.mask, self.seat = self.game.reset()
        self.obs = np.asarray(obs, np.float32)
        self.obs_dim = self.obs.shape[1]
        self.plan = SeatPlan(parse_pool(args.opponents), args.num_envs, self.n, self.rng)
        self.snapshots = SnapshotPool(args.pool_size)
        self.random = RandomOpponent()
        self.heuristic = ClassicTricksOpponent(config) if HEURISTIC in self.plan.specs else None
        self.net = ActorCritic(self.obs_dim, args.net_arch)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=args.learning_rate, eps=1e-5)
        self.pending = Pending.empty(args.num_envs, self.n, self.obs_dim, np.float32)
        self.steps = 0
        self.episodes = 0
        self.train_s = 0.0
        self.ep_return = np.zeros((args.num_envs, self.n), np.float32)
        self.ep_len = np.zeros(args.num_envs, np.int64)
        self.results: dict[str, list[float]] = {spec: [] for spec in self.plan.specs if spec != LEARNER}
        self.lengths: list[int] = []

    def start(self) -> None:
        """Draw the first seat plan (after the snapshot pool holds the step-0 learner)."""
        if not self.snapshots.nets:
            self.snapshot()
        self.plan.redraw(np.ones(self.args.num_envs, bool), len(self.snapshots.nets))

    def snapshot(self) -> None:
        self.snapshots.add(f"snapshot@{self.steps}", self.net.frozen())

    # -- one rollout -----------------------------------------------------------------------------------

    def collect(self) -> Rollout:
        """Play ``num_steps`` engine calls; the learner's seats sample from the network, the others from
        their opponent; returns the rollout (and counts the learner decisions in :attr:`steps`)."""
        import torch

        args, plan = self.args, self.plan
        num_envs = args.num_envs
        rows = np.arange(num_envs)
        roll = Rollout.empty(args.num_steps, num_envs, self.n, self.obs_dim, np.float32)
        for t in range(args.num_steps):
            obs, mask, seat = self.obs, self.mask.view(bool), self.seat
            learner = plan.learner[rows, seat]
            roll.obs[t], roll.mask[t], roll.seat[t], roll.learner[t] = obs, mask, seat, learner
            actions = np.zeros(num_envs, np.int64)
            mine = np.flatnonzero(learner)
            if len(mine):
                with torch.no_grad():
                    a, logp, value = self.net.act(torch.from_numpy(obs[mine]), torch.from_numpy(mask[mine]))
                actions[mine] = roll.action[t, mine] = a.numpy()
                roll.logp[t, mine] = logp.numpy()
                roll.value[t, mine] = value.numpy()
            self._opponents_act(obs, mask, ~learner, actions)
            obs, mask8, seat, rewards, done = self.game.step(actions)
            self.obs, self.mask, self.seat = np.asarray(obs, np.float32), mask8, seat
            roll.reward[t], roll.done[t] = rewards, done
            self.steps += len(mine)
            self._episode_stats(rewards, done)
        return roll

    def _opponents_act(self, obs: np.ndarray, mask: np.ndarray, theirs: np.ndarray, actions: np.ndarray) -> None:
        """Fill ``actions`` for the games whose mover is an opponent, one batched call per opponent."""
        plan = self.plan
        for k, spec in enumerate(plan.specs):
            games = np.flatnonzero(theirs & (plan.kind == k))
            if not len(games):
                continue
            if spec == RANDOM:
                actions[games] = self.random.act(obs[games], mask[games], self.rng)
            elif spec == HEURISTIC:
                actions[games] = self.heuristic.act(obs[games], mask[games], self.rng)
            elif spec == SNAPSHOTS:
                for j in np.unique(plan.snapshot[games]):
                    sub = games[plan.snapshot[games] == j]
                    actions[sub] = self.snapshots.nets[j].act(obs[sub], mask[sub], self.rng)

    def _episode_stats(self, rewards: np.ndarray, done: np.ndarray) -> None:
        """Episode returns of the learner seats per pool entry; new seat plans for the finished games."""
        self.ep_return += rewards
        self.ep_len += 1
        finished = np.flatnonzero(done)
        for b in finished:
            spec = self.plan.spec_of(b)
            if spec != LEARNER:
                seat = int(np.flatnonzero(self.plan.learner[b])[0])
                self.results[spec].append(float(self.ep_return[b, seat] > 0))
            self.lengths.append(int(self.ep_len[b]))
        self.episodes += len(finished)
        self.ep_return[finished] = 0.0
        self.ep_len[finished] = 0
        self.plan.redraw(done, len(self.snapshots.nets))

    # -- one update -----------------------------------------------------------------------------------

    def update(self, batch: Batch) -> dict[str, float]:
        """PPO epochs over ``batch`` (clipped surrogate, value loss, entropy bonus); returns the last epoch's
        mean losses and diagnostics."""
        import torch

        args = self.args
        obs = torch.from_numpy(np.asarray(batch.obs, np.float32))
        mask = torch.from_numpy(batch.mask)
        action = torch.from_numpy(batch.action)
        old_logp = torch.from_numpy(batch.logp)
        adv_all = torch.from_numpy(batch.advantage)
        ret = torch.from_numpy(batch.ret.astype(np.float32))
        size = len(batch)
        stats: dict[str, list[float]] = {}
        for _ in range(args.n_epochs):
            stats = {k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction")}
            order = torch.from_numpy(self.rng.permutation(size))
            for start in range(0, size, args.minibatch_size):
                idx = order[start:start + args.minibatch_size]
                logp, entropy, value = self.net.evaluate(obs[idx], mask[idx], action[idx])
                log_ratio = logp - old_logp[idx]
                ratio = log_ratio.exp()
                adv = adv_all[idx]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8) if len(idx) > 1 else adv
                clipped = ratio.clamp(1 - args.clip_range, 1 + args.clip_range)
                policy_loss = torch.max(-adv * ratio, -adv * clipped).mean()
                value_loss = 0.5 * ((value - ret[idx]) ** 2).mean()
                loss = policy_loss - args.ent_coef * entropy.mean() + args.vf_coef * value_loss
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.net.parameters(), args.max_grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    stats["policy_loss"].append(policy_loss.item())
                    stats["value_loss"].append(value_loss.item())
                    stats["entropy"].append(entropy.mean().item())
                    stats["approx_kl"].append(((ratio - 1) - log_ratio).mean().item())
                    stats["clip_fraction"].append(((ratio - 1).abs() > args.clip_range).float().mean().item())
        out = {k: float(np.mean(v)) if v else float("nan") for k, v in stats.items()}
        var = float(np.var(batch.ret))
        with torch.no_grad():
            predicted = np.concatenate([self.net.critic(obs[i:i + 8192])[:, 0].numpy()
                                        for i in range(0, size, 8192)]) if size else np.zeros(0)
        out["explained_variance"] = float(1 - np.var(batch.ret - predicted) / var) if var > 0 else float("nan")
        return out

    def iteration(self) -> dict[str, float]:
        """One rollout, per-seat GAE and one PPO update; returns the update's statistics."""
        roll = self.collect()
        gae = seat_gae(roll.value, roll.reward, roll.done, roll.seat, roll.learner, self.args.gamma,
                       self.args.gae_lambda, self.pending)
        batch, self.pending = build_batch(roll, gae, self.pending)
        stats = self.update(batch) if len(batch) else {}
        return {**stats, "batch": len(batch), "pending": int(self.pending.active.sum())}

    # -- saving ------------------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything :meth:`load_state_dict` needs to resume (open decisions are dropped)."""
        return {"net": self.net.state_dict(), "optimizer": self.optimizer.state_dict(), "steps": self.steps,
                "episodes": self.episodes, "train_s": self.train_s,
                "snapshots": [(name, snap.net.state())
                              for name, snap in zip(self.snapshots.names, self.snapshots.nets)]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state["net"])
        self.optimizer.load_state_dict(state["optimizer"])
        for group in self.optimizer.param_groups:  # the learning rate of this invocation wins
            group["lr"] = self.args.learning_rate
        self.steps, self.episodes, self.train_s = int(state["steps"]), int(state["episodes"]), float(state["train_s"])
        for name, snap in state["snapshots"]:
            self.snapshots.add(name, FrozenMlp.from_state(snap))


# -- warm start -----------------------------------------------------------------------------------------


def collect_batched(config: GameConfig, games: int, seed: int = 0, num_envs: int = 256) -> Any:
    """:func:`goboom_env.training.imitation.collect` for the ``classic-tricks`` teacher, played on the batched engine:
    every decision of ``games`` finished hands (observation, mask, move and the mover's win reward)."""
    from goboom_env.vector import VectorGame
    from goboom_env.training.imitation import Demonstrations

    rng = np.random.default_rng(seed)
    num_envs = max(1, min(num_envs, games))
    game = VectorGame(config, num_envs=num_envs, seed=seed, episode="hand", reward="win", check=False)
    teacher = ClassicTricksOpponent(config)
    obs, mask, seat = game.reset()
    steps: list[tuple[np.ndarray, ...]] = []
    finished = 0
    while finished < games:
        action = teacher.act(obs, mask, rng)
        steps.append((obs.astype(np.float16), mask.astype(bool), seat.copy(), action))
        obs, mask, seat, reward, done = game.step(action)
        steps[-1] += (reward.copy(), done.copy())
        finished += int(done.sum())
    o, m, s, a, r, d = (np.stack(x) for x in zip(*steps))
    # with zero values, gamma = lambda = 1 the per-seat advantage is the mover's final reward of its hand
    out = seat_gae(np.zeros(s.shape, np.float32), r, d, s, np.ones(s.shape, bool), 1.0, 1.0)
    last_end = np.where(d.any(0), len(d) - 1 - np.argmax(d[::-1], axis=0), -1)  # per game: its last hand's end
    t, b = np.nonzero(np.arange(len(d))[:, None] <= last_end[None, :])  # decisions of finished hands only
    return Demonstrations(o[t, b], m[t, b], a[t, b].astype(np.int64), out.advantages[t, b])


def warm_start(net: ActorCritic, config: GameConfig, teacher: str, games: int, *, epochs: int = 4, seed: int = 0,
               batch_size: int = 512, learning_rate: float = 1e-3) -> dict[str, Any]:
    """Behaviour-clone ``teacher`` into ``net``: the actor by cross-entropy over the legal actions, the critic by
    squared error to the mover's win reward. The data are :mod:`goboom_env.training.imitation`'s (played on the batched
    engine when the teacher is the classic heuristic, :func:`collect_batched`)."""
    import torch

    from goboom_env.training.imitation import collect

    started = time.perf_counter()
    if config.is_classic and teacher in ("heuristic", "classic-tricks"):
        data = collect_batched(config, games, seed=seed)
    else:
        data = collect(config, teacher, games, seed=seed)
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    obs = torch.from_numpy(data.obs.astype(np.float32))
    mask, actions, returns = (torch.from_numpy(a) for a in (data.masks, data.actions, data.returns))
    rng = np.random.default_rng(seed)
    loss_sum = agree = 0.0
    for _ in range(epochs):
        loss_sum = agree = 0.0
        for idx in np.array_split(rng.permutation(len(data)), max(1, len(data) // batch_size)):
            i = torch.from_numpy(idx)
            logp, _, value = net.evaluate(obs[i], mask[i], actions[i])
            loss = -logp.mean() + 0.5 * ((value - returns[i]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                loss_sum += loss.item() * len(idx)
                agree += (net.masked_logits(obs[i], mask[i]).argmax(1) == actions[i]).sum().item()
    return {"teacher": teacher, "games": games, "decisions": len(data), "bc_loss": loss_sum / len(data),
            "bc_agreement": agree / len(data), "seconds": round(time.perf_counter() - started, 1)}


# -- the training run ----------------------------------------------------------------------------------------


def train(args: VectorArgs, command: str | None = None) -> Path:
    """Run (or resume) one fast self-play run; returns the path of the final play-only model."""
    import torch

    from goboom_env.training.sb3 import check_compatible, model_metadata, plot_learning_curve, start_run_folder

    args.validate()
    torch.set_num_threads(args.threads)
    config = args.game_config()
    paths = RunPaths(args.out)
    files = paths.files
    state_path = _check_run_folder(args, config, paths)
    start_run_folder(args, files, command)
    files.checkpoints.mkdir(parents=True, exist_ok=True)
    state = torch.load(state_path, weights_only=False) if state_path else None
    if state is not None:
        check_compatible(state["meta"], config, state_path)
    trainer = Trainer(args, config, seed_offset=state["steps"] if state else 0)
    if state is not None:
        trainer.load_state_dict(state)
        for log in (files.progress, files.eval):
            _truncate_csv(log, trainer.steps)
    elif args.bc_games > 0:
        report = warm_start(trainer.net, config, args.bc_teacher, args.bc_games, epochs=args.bc_epochs, seed=args.seed)
        (files.root / "bc.json").write_text(json.dumps(report, indent=1))
        trainer.train_s += report["seconds"]
    trainer.start()
    meta = lambda: model_metadata(config, args, trainer.steps)  # noqa: E731
    writer = _tensorboard(files.tensorboard)
    bar = _progress_bar(args, trainer.steps)
    next_snapshot = _next_multiple(trainer.steps, args.snapshot_every)
    next_checkpoint = _next_multiple(trainer.steps, args.checkpoint_every)
    next_eval = _next_multiple(trainer.steps, args.eval_every) if args.eval_every > 0 else 1 << 62
    best = _best_so_far(files.eval, args.eval_opponents[-1])
    try:
        while trainer.steps < args.timesteps and not 0 < args.time_limit <= trainer.train_s:
            started, before = time.perf_counter(), trainer.steps
            stats = trainer.iteration()
            elapsed = time.perf_counter() - started
            trainer.train_s += elapsed
            bar.update(trainer.steps - before)
            _log_progress(files.progress, writer, trainer, stats, (trainer.steps - before) / max(elapsed, 1e-9))
            if trainer.steps >= next_snapshot:
                trainer.snapshot()
                next_snapshot = _next_multiple(trainer.steps, args.snapshot_every)
            if trainer.steps >= next_checkpoint:
                torch.save({**trainer.state_dict(), "meta": meta()}, paths.state(trainer.steps))
                save_play_only(trainer.net, paths.checkpoint_model(trainer.steps), meta())
                next_checkpoint = _next_multiple(trainer.steps, args.checkpoint_every)
            if trainer.steps >= next_eval:
                best = _evaluate(trainer, files.eval_model, files, writer, best, meta())
                next_eval = _next_multiple(trainer.steps, args.eval_every)
    except KeyboardInterrupt:
        path = paths.state(trainer.steps)
        torch.save({**trainer.state_dict(), "meta": meta()}, path)
        print(f"goboom train-fast: interrupted at step {trainer.steps}; saved {path}; "
              f"continue with --resume --out {paths.root}", file=sys.stderr)
        raise
    finally:
        bar.close()
    torch.save({**trainer.state_dict(), "meta": meta()}, paths.state(trainer.steps))
    save_play_only(trainer.net, files.model, meta())
    if args.eval_every >= 0 and _last_evaluated(files.eval) != trainer.steps:
        _evaluate(trainer, files.model, files, writer, best, meta())
    if not files.best.exists():
        shutil.copyfile(files.model, files.best)
    writer.close()
    plot_learning_curve(files)
    return files.model


def _check_run_folder(args: VectorArgs, config: GameConfig, paths: RunPaths) -> Path | None:
    """The checkpoint to resume from (None for a fresh run); refuses to overwrite a run or change the network."""
    import torch

    from goboom_env.training.sb3 import check_run_folder_rule

    check_run_folder_rule(paths.root, resume=args.resume, force=args.force)
    if not args.resume:
        return None
    latest = paths.latest_state()
    if latest is None:
        raise ValueError(f"--resume: no checkpoint (state_*.pt) in {paths.files.checkpoints}")
    saved = torch.load(latest, weights_only=False)["meta"].get("train_args") or {}
    if list(saved.get("net_arch", args.net_arch)) != list(args.net_arch):
        raise ValueError(f"--resume: net_arch {args.net_arch} differs from the checkpoint's {saved['net_arch']}")
    return latest


def _evaluate(trainer: Trainer, model: Path, files: Any, writer: Any, best: float, meta: dict[str, Any]) -> float:
    """Tournaments of the current actor against the baselines (``goboom_env.training.sb3.evaluate_model``); keeps the best."""
    from goboom_env.training.sb3 import evaluate_model

    args = trainer.args
    save_play_only(trainer.net, model, meta)
    row = evaluate_model(trainer.config, model, args.eval_opponents, args.eval_games,
                         seed=args.seed + trainer.steps, episode=args.episode)
    row = {"timesteps": trainer.steps, "train_s": round(trainer.train_s, 1), **row}
    _append_csv(files.eval, row, list(row))
    for key, value in row.items():
        if key != "timesteps":
            writer.add_scalar(f"eval/{key}", value, trainer.steps)
    score = row[f"win_rate/{args.eval_opponents[-1]}"]
    if score > best:
        if model != files.best:
            shutil.copyfile(model, files.best)
        return score
    return best


def _log_progress(path: Path, writer: Any, trainer: Trainer, stats: dict[str, float], fps: float) -> None:
    """One ``progress.csv`` row and the matching TensorBoard scalars per iteration."""
    row: dict[str, Any] = {"timesteps": trainer.steps, "episodes": trainer.episodes, "fps": round(fps),
                           "train_s": round(trainer.train_s, 2), **{k: round(v, 6) for k, v in stats.items()},
                           "ep_len_mean": _mean(trainer.lengths[-1000:])}
    for spec, results in trainer.results.items():
        row[f"win_rate/{spec}"] = _mean(results[-1000:])
    _append_csv(path, row, PROGRESS_COLUMNS + [f"win_rate/{s}" for s in trainer.results])
    for key, value in row.items():
        if key != "timesteps" and value != "":
            group = "losses" if key in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction",
                                        "explained_variance") else "charts"
            writer.add_scalar(f"{group}/{key}", value, trainer.steps)


def _tensorboard(folder: Path) -> Any:
    from torch.utils.tensorboard import SummaryWriter

    return SummaryWriter(str(folder))


def _progress_bar(args: VectorArgs, start: int) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=args.timesteps, initial=min(start, args.timesteps), unit="step", disable=not args.progress,
                dynamic_ncols=True, desc="fast PPO")


def _best_so_far(path: Path, opponent: str) -> float:
    if not path.exists():
        return -1.0
    rows = list(csv.DictReader(path.open()))
    return max((float(r[f"win_rate/{opponent}"]) for r in rows if r.get(f"win_rate/{opponent}")), default=-1.0)


def _last_evaluated(path: Path) -> int | None:
    rows = list(csv.DictReader(path.open())) if path.exists() else []
    return int(rows[-1]["timesteps"]) if rows else None


def _next_multiple(steps: int, every: int) -> int:
    return (steps // every + 1) * every


def _mean(values: Sequence[float]) -> float | str:
    return round(float(np.mean(values)), 4) if len(values) else ""


def _truncate_csv(path: Path, timesteps: int) -> None:
    from goboom_env.training.sb3 import _truncate_csv as truncate

    truncate(path, timesteps)


def _append_csv(path: Path, row: dict[str, Any], columns: list[str]) -> None:
    from goboom_env.training.sb3 import _append_csv as append

    append(path, row, columns)
