"""The turn-based bookkeeping of the fast trainer: who plays each seat, per-seat GAE, open decisions, the batch.

One call of ``VectorGame.step`` moves the seat to play in each game, so the trainer keeps one decision
sequence per (game, seat): a seat's reward (the end of the hand or match) is credited to that seat's last
decision, and GAE runs over each seat's own decisions (:func:`seat_gae`), optionally with potential-based
shaping on the hand sizes (:mod:`goboom_env.training.shaping`). A decision whose outcome is still open when a
rollout ends is carried into the next rollout (:class:`Pending`) instead of being cut off. :class:`SeatPlan`
(the learner seats of :class:`~goboom_env.training.seats.LearnerSeats`) draws, per game and episode, an entry of the
run's :class:`SnapshotPool` (the :class:`~goboom_env.training.league.League` of the entries
:data:`~goboom_env.training.settings.POOL_KINDS` and of the learner's snapshots, which the ``self`` entry plays) and
the learner's seats; :func:`make_engine` builds the batched engine of a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from goboom_env.agents.ppo import FrozenMlp
from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import GameConfig
from goboom_env.training.league import SELF, League
from goboom_env.training.opponents import SnapshotOpponent
from goboom_env.training.seats import LearnerSeats
from goboom_env.training.settings import LEARNER

# -- who plays each seat ----------------------------------------------------------------------------------


def make_engine(config: GameConfig, player_counts: Sequence[int], **settings: Any) -> Any:
    """The batched engine of a run: a ``VectorGame`` of ``config``, or a ``MixedVectorGame`` over ``player_counts``
    (a generalist's games, observations padded)."""
    from goboom_env.vector import MixedVectorGame, VectorGame

    return MixedVectorGame(config, player_counts, **settings) if player_counts else VectorGame(config, **settings)


class SnapshotPool(League[FrozenMlp]):
    """The fast trainer's opponent pool: the run's entries and its last ``size`` snapshots, played batched."""

    def __init__(self, size: int, entries: Sequence[tuple[str, float]] = ((SELF, 1.0),),
                 rng: np.random.Generator | None = None) -> None:
        super().__init__(entries, size=size, rng=rng)

    @property
    def names(self) -> list[str]:
        """The snapshots' names, oldest first."""
        return list(self.snapshots)

    @property
    def nets(self) -> list[SnapshotOpponent]:
        """The snapshots as batched opponents, oldest first (the indices of :attr:`SeatPlan.snapshot`)."""
        return [SnapshotOpponent(net) for net in self.snapshots.values()]


class SeatPlan(LearnerSeats):
    """Who plays each seat of each game: the learner or a batched opponent, drawn per game and episode.

    ``kind[b]`` indexes the entries of ``pool``. A ``learner`` game has every seat learning; any other game has one
    learner seat (drawn uniformly among the game's seats) against the entry's opponent in all other seats (for
    ``self``, the snapshot ``snapshot[b]`` of the pool). ``n`` is the width of the per-seat arrays; ``table
    [num_envs]`` gives each game's own player count when they differ (a generalist's games, ``n`` = 12), else every
    game has ``n`` seats. The draws come from the pool's generator."""

    def __init__(self, pool: League[Any], num_envs: int, n: int, table: np.ndarray | None = None) -> None:
        super().__init__(num_envs, n, pool.rng, table=table)
        self.pool = pool
        self.specs = pool.specs
        self.kind = np.zeros(num_envs, np.int64)
        self.snapshot = np.zeros(num_envs, np.int64)

    def redraw(self, games: np.ndarray) -> np.ndarray:
        """New seat assignments for the games marked in ``games`` (autoreset): the entry, the learner's seats and,
        once the pool has one, a snapshot; returns the indices of those games."""
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
    """Learner decisions: what the seat read (``obs``: the critic's inputs, the actor reads the observation part;
    ``mask``: the legal actions) and what it did (``action``, with its log-probability ``logp`` under the policy that
    took it)."""

    obs: np.ndarray
    mask: np.ndarray
    action: np.ndarray
    logp: np.ndarray


@dataclass
class Pending(Decisions):
    """The open decisions of each (game, seat): the seat's last decision of a rollout while its episode
    goes on. Its outcome (the seat's next decision or the end of the episode) lies in the next rollout,
    so it is trained there. Arrays are ``[num_envs, num_players, ...]``; ``active`` marks the slots in use."""

    active: np.ndarray
    value: np.ndarray
    reward: np.ndarray
    """Reward the seat received after the decision, up to the end of the rollout it was taken in."""
    potential: np.ndarray
    """The shaping potential at the decision (0 without shaping)."""

    @classmethod
    def empty(cls, num_envs: int, num_players: int, obs_dim: int, obs_dtype: Any) -> Pending:
        shape = (num_envs, num_players)
        return cls(obs=np.zeros((*shape, obs_dim), obs_dtype), mask=np.zeros((*shape, NUM_ACTIONS), bool),
                   action=np.zeros(shape, np.int64), logp=np.zeros(shape, np.float32), active=np.zeros(shape, bool),
                   value=np.zeros(shape, np.float32), reward=np.zeros(shape, np.float32),
                   potential=np.zeros(shape, np.float32))

    def carried(self, resolved: np.ndarray, reward: np.ndarray) -> Pending:
        """A copy that keeps the decisions still open: without the ``resolved`` ones, ``reward`` being what
        the others received so far."""
        kept = Pending(**{f.name: getattr(self, f.name).copy() for f in fields(self)})
        kept.active &= ~resolved
        kept.reward = reward
        return kept


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
             gamma: float, lam: float, pending: Pending | None = None,
             potentials: np.ndarray | None = None) -> SeatAdvantages:
    """GAE over each (game, seat)'s own decisions of one rollout.

    ``values``, ``seats`` and ``learner`` are ``[T, B]`` (the value, the seat that moved and whether it is a
    learner seat, per call and game); ``rewards[t, b, s]`` (``[T, B, n]``) and ``dones[t, b]`` are what the
    engine returned for call ``t``. A decision's reward is everything its seat receives after it and up to
    the seat's next decision or the end of the episode; its bootstrap value is the value of that next
    decision (0 at the end). A seat's last decision of the rollout in a running episode stays open: the
    decisions before it bootstrap from its value (the GAE chain is cut there, as at a rollout's end in
    plain PPO) and ``pending`` carries it into the next call, where it is resolved first in line.
    ``potentials`` (``[T, B]``, the mover's shaping potential at each decision) adds ``gamma x phi(next) - phi``
    to each decision's reward, where ``phi(next)`` is the seat's potential at its next decision (0 at the end).
    """
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
    potential: np.ndarray
    """``[T, B]`` the mover's shaping potential before its move (zeros without shaping)."""

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
    """The decision's per-seat GAE advantage (:func:`seat_gae`)."""
    ret: np.ndarray
    """The value target: the advantage plus the value the rollout predicted."""

    def __len__(self) -> int:
        """The number of decisions."""
        return self.action.shape[0]


def build_batch(roll: Rollout, gae: SeatAdvantages, pending: Pending) -> tuple[Batch, Pending]:
    """The resolved decisions (this rollout's and the previous open ones) and the new :class:`Pending`."""
    resolved = np.flatnonzero(gae.resolved)  # (t, b) as t * B + b, in np.nonzero's order
    pb, ps = np.nonzero(gae.pending_resolved)

    def gather(rolled: np.ndarray, held: np.ndarray) -> np.ndarray:
        """This rollout's resolved decisions, then the previous open ones: one copy into the batch's array."""
        rows = rolled.reshape(-1, *rolled.shape[2:])
        out = np.empty((len(resolved) + len(pb), *rows.shape[1:]), np.result_type(rolled, held))
        np.take(rows, resolved, axis=0, out=out[:len(resolved)], mode="clip")  # in range; "raise" buffers `out`
        out[len(resolved):] = held[pb, ps]
        return out

    adv = gather(gae.advantages, gae.pending_advantages)
    batch = Batch(obs=gather(roll.obs, pending.obs), mask=gather(roll.mask, pending.mask),
                  action=gather(roll.action, pending.action), logp=gather(roll.logp, pending.logp),
                  advantage=adv, ret=adv + gather(roll.value, pending.value))
    new = pending.carried(gae.pending_resolved, gae.pending_reward)
    ot, ob = np.nonzero(gae.opened)
    os_ = roll.seat[ot, ob]
    new.active[ob, os_] = True
    new.value[ob, os_] = roll.value[ot, ob]
    new.reward[ob, os_] = gae.opened_reward[ob, os_]
    new.obs[ob, os_] = roll.obs[ot, ob]
    new.mask[ob, os_] = roll.mask[ot, ob]
    new.action[ob, os_] = roll.action[ot, ob]
    new.logp[ob, os_] = roll.logp[ot, ob]
    new.potential[ob, os_] = roll.potential[ot, ob]
    return batch, new
