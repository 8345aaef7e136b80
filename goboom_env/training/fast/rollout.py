"""The turn-based bookkeeping of the fast trainer: who plays each seat, per-seat GAE, open decisions, the batch.

One ``VectorGame.step`` moves the seat to play in each game, so the trainer keeps one decision sequence per
(game, seat): a seat's reward is credited to its last decision, GAE runs over each seat's own decisions
(:func:`seat_gae`), and a decision still open when a rollout ends is carried into the next (:class:`Pending`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import GameConfig
from goboom_env.training.league import League
from goboom_env.training.seats import LearnerSeats
from goboom_env.training.settings import LEARNER

# -- who plays each seat ----------------------------------------------------------------------------------


def make_engine(config: GameConfig, player_counts: Sequence[int], **settings: Any) -> Any:
    """The batched engine of a run: a ``VectorGame``, or a ``MixedVectorGame`` over ``player_counts``."""
    from goboom_env.vector import MixedVectorGame, VectorGame

    return MixedVectorGame(config, player_counts, **settings) if player_counts else VectorGame(config, **settings)


class SeatPlan(LearnerSeats):
    """Who plays each seat of each game, drawn per game and episode from the pool's generator: ``kind[b]`` indexes
    the pool's entries; a ``learner`` game has every seat learning, any other one learner seat against the entry's
    opponent (for ``self``, the snapshot ``snapshot[b]``). ``table`` gives each game's player count when they
    differ (a generalist's, ``n`` = 12)."""

    def __init__(self, pool: League[Any], num_envs: int, n: int, table: np.ndarray | None = None) -> None:
        super().__init__(num_envs, n, pool.rng, table=table)
        self.pool = pool
        self.specs = pool.specs
        self.kind = np.zeros(num_envs, np.int64)
        self.snapshot = np.zeros(num_envs, np.int64)

    def redraw(self, games: np.ndarray) -> np.ndarray:
        """New seat assignments for the games marked in ``games`` (autoreset); returns their indices."""
        idx = np.flatnonzero(games)
        if not len(idx):
            return idx
        kind = self.pool.draw(len(idx))
        self.kind[idx] = kind
        self.assign(idx, self.rng.integers(self.table[idx]))
        self.learner[idx[np.array([self.specs[k] == LEARNER for k in kind])]] = True
        if self.pool.snapshots:
            self.snapshot[idx] = self.pool.draw_snapshots(len(idx))
        return idx

    def spec_of(self, game: int) -> str:
        """The pool entry game ``game`` plays this episode."""
        return self.specs[self.kind[game]]


# -- per-seat GAE ------------------------------------------------------------------------------------------------------


@dataclass
class Decisions:
    """Learner decisions: what the seat read (``obs``, the critic's inputs; ``mask``) and did (``action``, ``logp``)."""

    obs: np.ndarray
    mask: np.ndarray
    action: np.ndarray
    logp: np.ndarray


@dataclass
class Pending(Decisions):
    """The open decisions ``[num_envs, num_players, ...]``: each seat's last decision of a rollout while its episode
    goes on, trained in the next rollout, where its outcome lies; ``active`` marks the slots in use."""

    active: np.ndarray
    value: np.ndarray
    reward: np.ndarray
    """Reward the seat received after the decision, up to the end of the rollout it was taken in."""
    potential: np.ndarray

    @classmethod
    def empty(cls, num_envs: int, num_players: int, obs_dim: int, obs_dtype: Any) -> Pending:
        shape = (num_envs, num_players)
        return cls(obs=np.zeros((*shape, obs_dim), obs_dtype), mask=np.zeros((*shape, NUM_ACTIONS), bool),
                   action=np.zeros(shape, np.int64), logp=np.zeros(shape, np.float32), active=np.zeros(shape, bool),
                   value=np.zeros(shape, np.float32), reward=np.zeros(shape, np.float32),
                   potential=np.zeros(shape, np.float32))

    def carried(self, resolved: np.ndarray, reward: np.ndarray) -> Pending:
        """A copy without the ``resolved`` decisions, ``reward`` being what the others received so far."""
        kept = Pending(**{f.name: getattr(self, f.name).copy() for f in fields(self)})
        kept.active &= ~resolved
        kept.reward = reward
        return kept


@dataclass
class SeatAdvantages:
    """What :func:`seat_gae` returns for one rollout: per (call, game) ``[T, B]`` the advantages and which learner
    decisions were resolved (trained now) or opened (carried on); per (game, seat) ``[B, n]`` the reward after each
    opened decision and, for the previous rollout's open decisions, their advantages, which were resolved and the
    reward so far of those still open."""

    advantages: np.ndarray
    resolved: np.ndarray
    opened: np.ndarray
    opened_reward: np.ndarray
    pending_advantages: np.ndarray
    pending_resolved: np.ndarray
    pending_reward: np.ndarray


def seat_gae(values: np.ndarray, rewards: np.ndarray, dones: np.ndarray, seats: np.ndarray, learner: np.ndarray,
             gamma: float, lam: float, pending: Pending | None = None,
             potentials: np.ndarray | None = None) -> SeatAdvantages:
    """GAE over each (game, seat)'s own decisions of one rollout (``values``, ``seats``, ``learner``: ``[T, B]``;
    ``rewards``: ``[T, B, n]``; ``dones``: ``[T, B]``).

    A decision's reward is all its seat receives until its next decision or the episode's end; it bootstraps from
    that next decision's value (0 at the end). A seat's last decision in a running episode stays open, carried by
    ``pending`` into the next call. ``potentials`` (``[T, B]``) adds ``gamma x phi(next) - phi`` to each reward."""
    steps, num_envs = seats.shape
    n = rewards.shape[2]
    phi = np.zeros((steps, num_envs), np.float32) if potentials is None else potentials
    next_value = np.zeros((num_envs, n), np.float32)
    next_phi = np.zeros((num_envs, n), np.float32)
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
        next_value[ended] = next_phi[ended] = next_adv[ended] = acc[ended] = 0.0
        open_[ended] = False
        acc += rewards[t]
        b = rows[learner[t]]
        s = seats[t, b]
        v, p = values[t, b], phi[t, b]
        is_open = open_[b, s]
        reward = acc[b, s] + gamma * next_phi[b, s] - p
        adv = reward + gamma * next_value[b, s] - v + gamma * lam * next_adv[b, s]
        advantages[t, b] = np.where(is_open, 0.0, adv)
        resolved[t, b] = ~is_open
        opened[t, b] = is_open
        opened_reward[b[is_open], s[is_open]] = acc[b[is_open], s[is_open]]
        next_value[b, s] = v
        next_phi[b, s] = p
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
        shaped = reward + gamma * next_phi - pending.potential
        pend_adv = np.where(pend_resolved, shaped + gamma * next_value - pending.value + gamma * lam * next_adv, 0.0)
        pend_reward = np.where(active & open_, reward, 0.0)
    return SeatAdvantages(advantages, resolved, opened, opened_reward, pend_adv.astype(np.float32), pend_resolved,
                          pend_reward.astype(np.float32))


# -- rollouts and batches ---------------------------------------------------------------------------------


@dataclass
class Rollout:
    """One rollout of ``T`` engine calls over ``B`` games (``[T, B, ...]``): the mover's observation, mask and seat,
    whether it is a learner seat, what it did, what each seat received (``reward``, ``[T, B, n]``), the ends and the
    mover's shaping potential."""

    obs: np.ndarray
    mask: np.ndarray
    seat: np.ndarray
    learner: np.ndarray
    action: np.ndarray
    logp: np.ndarray
    value: np.ndarray
    reward: np.ndarray
    done: np.ndarray
    potential: np.ndarray

    @classmethod
    def empty(cls, steps: int, num_envs: int, n: int, obs_dim: int, obs_dtype: Any) -> Rollout:
        tb = (steps, num_envs)
        return cls(np.zeros((*tb, obs_dim), obs_dtype), np.zeros((*tb, NUM_ACTIONS), bool), np.zeros(tb, np.int64),
                   np.zeros(tb, bool), np.zeros(tb, np.int64), np.zeros(tb, np.float32), np.zeros(tb, np.float32),
                   np.zeros((*tb, n), np.float32), np.zeros(tb, bool), np.zeros(tb, np.float32))


@dataclass
class Batch(Decisions):
    """The trained decisions of one rollout, flat (``[N, ...]``): what the PPO update reads."""

    advantage: np.ndarray
    ret: np.ndarray
    """The value target: the advantage plus the value the rollout predicted."""

    def __len__(self) -> int:
        return self.action.shape[0]


def build_batch(roll: Rollout, gae: SeatAdvantages, pending: Pending) -> tuple[Batch, Pending]:
    """The resolved decisions (this rollout's and the previous open ones) and the new :class:`Pending`."""
    resolved = np.flatnonzero(gae.resolved)  # (t, b) as t * B + b, in np.nonzero's order
    pb, ps = np.nonzero(gae.pending_resolved)

    def gather(rolled: np.ndarray, held: np.ndarray) -> np.ndarray:
        """This rollout's resolved decisions, then the previous open ones, in one copy."""
        rows = rolled.reshape(-1, *rolled.shape[2:])
        out = np.empty((len(resolved) + len(pb), *rows.shape[1:]), np.result_type(rolled, held))
        np.take(rows, resolved, axis=0, out=out[:len(resolved)], mode="clip")  # in range; "raise" buffers `out`
        out[len(resolved):] = held[pb, ps]
        return out

    adv = gather(gae.advantages, gae.pending_advantages)
    decided = {f.name: gather(getattr(roll, f.name), getattr(pending, f.name)) for f in fields(Decisions)}
    batch = Batch(**decided, advantage=adv, ret=adv + gather(roll.value, pending.value))
    new = pending.carried(gae.pending_resolved, gae.pending_reward)
    ot, ob = np.nonzero(gae.opened)
    os_ = roll.seat[ot, ob]
    new.active[ob, os_] = True
    new.reward[ob, os_] = gae.opened_reward[ob, os_]
    for name in ("value", "obs", "mask", "action", "logp", "potential"):
        getattr(new, name)[ob, os_] = getattr(roll, name)[ot, ob]
    return batch, new
