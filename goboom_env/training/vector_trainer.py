"""The state and the steps of one fast self-play run (``goboom train-fast``): collect, per-seat GAE, PPO update.

:class:`Trainer` holds the batched engine, the seat plan, the network, the optimizer, the snapshot league
and the counters; :meth:`Trainer.iteration` is one ``collect -> seat_gae -> update``. :func:`warm_start`
behaviour-clones a teacher into a fresh network first; :func:`save_play_only` writes the model zip that
``ppo:`` plays (:mod:`goboom_env.training.artifacts.model_files`).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from goboom_env.agents.heuristics import BEST_HEURISTIC
from goboom_env.config import MAX_PLAYERS, GameConfig
from goboom_env.training.artifacts.model_files import write_play_only
from goboom_env.training.artifacts.numpy_actor import FrozenMlp, save_snapshot
from goboom_env.training.settings import HEURISTIC, LEARNER, RANDOM, SNAPSHOTS, parse_pool
from goboom_env.training.vector_policy import (
    ActorCritic,
    RandomOpponent,
    SnapshotPool,
    batched_heuristic,
    resolve_precision,
)
from goboom_env.training.vector_rollout import (
    Batch,
    Pending,
    Rollout,
    SeatPlan,
    build_batch,
    hand_size_potential,
    seat_gae,
)


def _engine(config: GameConfig, player_counts: Sequence[int], **settings: Any) -> Any:
    """The batched engine of a run: a ``VectorGame`` of ``config``, or a ``MixedVectorGame`` over ``player_counts``
    (a generalist's games, observations padded)."""
    from goboom_env.vector import MixedVectorGame, VectorGame

    return MixedVectorGame(config, player_counts, **settings) if player_counts else VectorGame(config, **settings)


def save_play_only(net: ActorCritic, path: Path, metadata: dict[str, Any]) -> Path:
    """The play-only model zip that ``ppo:PATH`` loads (metadata + numpy actor, as ``goboom train`` writes)."""
    import io

    buf = io.BytesIO()
    save_snapshot(buf, net.frozen().state())
    return write_play_only(path, {**metadata, "deterministic": True, "trainer": "vector"}, buf.getvalue())


class Trainer:
    """The state of one run: engine, seat plan, network, optimizer, snapshots and counters."""

    def __init__(self, args: Any, config: GameConfig, seed_offset: int = 0) -> None:
        """``args`` is the run's :class:`~goboom_env.training.settings.VectorArgs` (not imported here: the run
        module imports this one)."""
        import torch

        self.args = args
        self.config = config
        counts = list(args.player_counts)
        self.generalist = bool(counts)
        """A generalist run (games at several player counts): the per-seat arrays then have 12 seats."""
        self.n = MAX_PLAYERS if counts else config.num_players
        seeds = np.random.SeedSequence([args.seed, seed_offset]).generate_state(3)
        self.rng = np.random.default_rng(seeds[0])
        torch.manual_seed(int(seeds[1]))
        self.game = _engine(config, counts, num_envs=args.num_envs, seed=int(seeds[2]), episode=args.episode,
                            reward=args.reward, autoreset=True, check=False)
        obs, self.mask, self.seat = self.game.reset()
        self.public_dim = obs.shape[1]
        """The observation's size: what the actor and the opponents read."""
        self.obs = self._inputs(obs)
        self.obs_dim = self.obs.shape[1]
        """The critic's input size: the observation, then (privileged critic) the hidden state."""
        table = self.game.num_players if counts else None
        self.plan = SeatPlan(parse_pool(args.opponents), args.num_envs, self.n, self.rng, table)
        self.snapshots = SnapshotPool(args.pool_size)
        self.random = RandomOpponent()
        self.heuristic = batched_heuristic(config, counts) if HEURISTIC in self.plan.specs else None
        self.net = ActorCritic(self.public_dim, args.net_arch, resolve_precision(args.precision), self.obs_dim)
        # fused: one kernel for all parameters, half the time of torch's default per-tensor loop on CPU
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=args.learning_rate, eps=1e-5, fused=True)
        self.pending = Pending.empty(args.num_envs, self.n, self.obs_dim, np.float32)
        self.anchor: Any = None
        """With ``anchor_kl``: a frozen copy of the actor as the run started (its warm start), which the loss keeps
        the policy near."""
        self.steps = 0
        self.episodes = 0
        self.train_s = 0.0
        self.ep_return = np.zeros((args.num_envs, self.n), np.float32)
        self.ep_len = np.zeros(args.num_envs, np.int64)
        self.results: dict[str, list[float]] = {spec: [] for spec in self.plan.specs if spec != LEARNER}
        """Learner wins (1/0) per opponent entry; a generalist's also per entry and count (``heuristic@6p``)."""
        self.results |= {f"{spec}@{k}p": [] for spec in list(self.results) for k in counts}
        self.lengths: list[int] = []

    def _inputs(self, obs: np.ndarray) -> np.ndarray:
        """The rows the network reads (float32): the observations, followed by the hidden state of each game's
        seat to move when the critic is privileged."""
        if self.args.privileged_critic:
            return np.concatenate([obs, self.game.hidden()], axis=1, dtype=np.float32)
        return np.asarray(obs, np.float32)

    def start(self) -> None:
        """Draw the first seat plan (after the snapshot pool holds the step-0 learner); with ``anchor_kl``, fix the
        anchor as the actor is now unless a resumed state brought one."""
        if not self.snapshots.nets:
            self.snapshot()
        if self.args.anchor_kl > 0 and self.anchor is None:
            self.anchor = copy.deepcopy(self.net.actor).requires_grad_(False)
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
            if args.shaping:
                roll.potential[t] = args.shaping * hand_size_potential(self.game.hand_sizes, seat, plan.table)
            actions = np.zeros(num_envs, np.int64)
            mine = np.flatnonzero(learner)
            if len(mine):
                with torch.no_grad():
                    a, logp, value = self.net.act(torch.from_numpy(obs[mine]), torch.from_numpy(mask[mine]))
                actions[mine] = roll.action[t, mine] = a.numpy()
                roll.logp[t, mine] = logp.numpy()
                roll.value[t, mine] = value.numpy()
            self._opponents_act(obs[:, :self.public_dim], mask, ~learner, actions)
            obs, mask8, seat, rewards, done = self.game.step(actions)
            self.obs, self.mask, self.seat = self._inputs(obs), mask8, seat
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
                won = float(self.ep_return[b, seat] > 0)
                self.results[spec].append(won)
                if self.generalist:
                    self.results[f"{spec}@{self.plan.table[b]}p"].append(won)
            self.lengths.append(int(self.ep_len[b]))
        self.episodes += len(finished)
        self.ep_return[finished] = 0.0
        self.ep_len[finished] = 0
        self.plan.redraw(done, len(self.snapshots.nets))

    # -- one update -----------------------------------------------------------------------------------

    def update(self, batch: Batch) -> dict[str, float]:
        """PPO epochs over ``batch`` (clipped surrogate, value loss, entropy bonus, ``anchor_kl`` x KL(policy ||
        anchor); the value loss alone during the critic warm-up); returns the last epoch's mean losses and
        diagnostics (explained variance of the rollout's values, as SB3 reports it)."""
        import torch

        args = self.args
        actor_learns = self.steps > args.critic_warmup
        anchor = self.anchor if actor_learns else None
        columns = [torch.from_numpy(np.asarray(batch.obs, np.float32)).to(self.net.input_dtype),
                   torch.from_numpy(batch.mask), torch.from_numpy(batch.action), torch.from_numpy(batch.logp),
                   torch.from_numpy(batch.advantage), torch.from_numpy(batch.ret.astype(np.float32))]
        size, step = len(batch), args.minibatch_size
        stats: list[Any] = []
        for epoch in range(args.n_epochs):
            order = torch.from_numpy(self.rng.permutation(size))
            shuffled = [column.index_select(0, order) for column in columns]  # one gather; minibatches are slices
            record = epoch == args.n_epochs - 1  # the statistics are the last epoch's
            for start in range(0, size, step):
                obs, mask, action, old_logp, adv, ret = (column[start:start + step] for column in shuffled)
                logp, entropy, value, drift = self.net.evaluate(obs, mask, action, anchor)
                log_ratio = logp - old_logp
                ratio = log_ratio.exp()
                adv = (adv - adv.mean()) / (adv.std() + 1e-8) if len(adv) > 1 else adv
                clipped = ratio.clamp(1 - args.clip_range, 1 + args.clip_range)
                policy_loss = torch.max(-adv * ratio, -adv * clipped).mean()
                value_loss = 0.5 * ((value - ret) ** 2).mean()
                loss = args.vf_coef * value_loss
                if actor_learns:
                    loss = loss + policy_loss - args.ent_coef * entropy.mean()
                anchor_kl = drift.mean() if drift is not None else torch.full((), float("nan"))
                if drift is not None:
                    loss = loss + args.anchor_kl * anchor_kl
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.net.parameters(), args.max_grad_norm)
                self.optimizer.step()
                if record:
                    with torch.no_grad():
                        kl = ((ratio - 1) - log_ratio).mean()
                        clip_fraction = ((ratio - 1).abs() > args.clip_range).float().mean()
                        stats.append(torch.stack([policy_loss, value_loss, entropy.mean(), kl, clip_fraction,
                                                  anchor_kl]))
        names = ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "anchor_kl")
        means = torch.stack(stats).double().mean(0).tolist() if stats else [float("nan")] * len(names)
        out = dict(zip(names, means, strict=True))
        var = float(np.var(batch.ret))  # ret - advantage = the values the rollout predicted
        out["explained_variance"] = float(1 - np.var(batch.advantage) / var) if var > 0 else float("nan")
        return out

    def iteration(self) -> dict[str, float]:
        """One rollout, per-seat GAE and one PPO update; returns the update's statistics."""
        roll = self.collect()
        gae = seat_gae(roll.value, roll.reward, roll.done, roll.seat, roll.learner, self.args.gamma,
                       self.args.gae_lambda, self.pending, roll.potential)
        batch, self.pending = build_batch(roll, gae, self.pending)
        stats = self.update(batch) if len(batch) else {}
        return {**stats, "batch": len(batch), "pending": int(self.pending.active.sum())}

    # -- saving ------------------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything :meth:`load_state_dict` needs to resume (open decisions are dropped)."""
        return {"net": self.net.state_dict(), "optimizer": self.optimizer.state_dict(), "steps": self.steps,
                "anchor": None if self.anchor is None else self.anchor.state_dict(),
                "episodes": self.episodes, "train_s": self.train_s,
                "snapshots": [(name, _tensor_state(snap.net.state()))
                              for name, snap in zip(self.snapshots.names, self.snapshots.nets)]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state["net"])
        self.optimizer.load_state_dict(state["optimizer"])
        for group in self.optimizer.param_groups:  # the learning rate of this invocation wins
            group["lr"] = self.args.learning_rate
        self.steps, self.episodes, self.train_s = int(state["steps"]), int(state["episodes"]), float(state["train_s"])
        for name, snap in state["snapshots"]:
            self.snapshots.add(name, FrozenMlp.from_state(_array_state(snap)))
        if state.get("anchor") is not None and self.args.anchor_kl > 0:
            self.anchor = copy.deepcopy(self.net.actor).requires_grad_(False)
            self.anchor.load_state_dict(state["anchor"])


def _tensor_state(state: dict[str, Any]) -> dict[str, Any]:
    """A :meth:`FrozenMlp.state` with tensors for arrays, so that the checkpoint loads with ``weights_only``."""
    import torch

    return {**state, "layers": [(torch.from_numpy(w), torch.from_numpy(b)) for w, b in state["layers"]]}


def _array_state(state: dict[str, Any]) -> dict[str, Any]:
    """Inverse of :func:`_tensor_state`."""
    return {**state, "layers": [(w.numpy(), b.numpy()) for w, b in state["layers"]]}


def load_checkpoint(path: Path) -> dict[str, Any]:
    """A ``state_N.pt`` checkpoint, read by ``torch.load`` with ``weights_only``: tensors and plain data only, so
    that a crafted file cannot run code. ValueError naming the file for anything else."""
    from goboom_env.training.artifacts.run_folder import load_tensors

    try:
        state = load_tensors(path, path)
    except ValueError as exc:
        raise ValueError(f"--resume: {exc}") from None
    missing = [k for k in ("net", "optimizer", "steps", "episodes", "train_s", "snapshots", "meta")
               if not isinstance(state, dict) or k not in state]
    if missing:
        raise ValueError(f"--resume: {path} is not a goboom train-fast checkpoint (no {', '.join(missing)})")
    if not isinstance(state["meta"], dict):
        raise ValueError(f"--resume: {path} is damaged: its 'meta' is not a mapping")
    return state


# -- warm start -----------------------------------------------------------------------------------------


def collect_batched(config: GameConfig, games: int, seed: int = 0, num_envs: int = 256,
                    player_counts: Sequence[int] = (), privileged: bool = False) -> Any:
    """:func:`goboom_env.training.imitation.collect` for the ``heuristic`` teacher (``classic-tricks`` or
    ``jokers-boom``), played on the batched engine: every decision of ``games`` finished hands (observation,
    mask, move and the mover's win reward). With ``player_counts``, hands at all those counts
    (:class:`~goboom_env.vector.MixedVectorGame`, padded observations); with ``privileged``, each observation is
    followed by the mover's hidden state (:meth:`~goboom_env.vector.VectorGame.hidden`)."""
    from goboom_env.training.imitation import Demonstrations

    rng = np.random.default_rng(seed)
    num_envs = max(1, len(player_counts), min(num_envs, games))
    game = _engine(config, player_counts, num_envs=num_envs, seed=seed, episode="hand", reward="win", check=False)
    teacher = batched_heuristic(config, player_counts)
    obs, mask, seat = game.reset()
    steps: list[tuple[np.ndarray, ...]] = []
    finished = 0
    while finished < games:
        action = teacher.act(obs, mask, rng)
        rows = np.concatenate([obs, game.hidden()], axis=1) if privileged else obs
        steps.append((rows.astype(np.float16), mask.astype(bool), seat.copy(), action))
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
               batch_size: int = 512, learning_rate: float = 1e-3, player_counts: Sequence[int] = (),
               privileged: bool = False) -> dict[str, Any]:
    """Behaviour-clone ``teacher`` into ``net``: the actor by cross-entropy over the legal actions, the critic by
    squared error to the mover's win reward. The data are :mod:`goboom_env.training.imitation`'s (played on the batched
    engine when the teacher is the variant's best heuristic, :func:`collect_batched`); with ``player_counts`` (a
    generalist), hands at each of those counts with padded observations; with ``privileged`` (a privileged critic),
    each observation followed by the mover's hidden state."""
    import torch

    started = time.perf_counter()
    if teacher in ("heuristic", BEST_HEURISTIC[config.variant]):
        data = collect_batched(config, games, seed=seed, player_counts=player_counts, privileged=privileged)
    else:
        data = _collect_padded(config, teacher, games, seed, player_counts, privileged)
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    obs = torch.from_numpy(data.obs.astype(np.float32))
    mask, actions, returns = (torch.from_numpy(a) for a in (data.masks, data.actions, data.returns))
    rng = np.random.default_rng(seed)
    loss_sum = agree = 0.0
    for _ in range(epochs):
        loss_sum = agree = 0.0
        for idx in np.array_split(rng.permutation(len(data)), max(1, len(data) // batch_size)):
            i = torch.from_numpy(idx)
            logp, _, value, _ = net.evaluate(obs[i], mask[i], actions[i])
            loss = -logp.mean() + 0.5 * ((value - returns[i]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                loss_sum += loss.item() * len(idx)
                agree += (net.masked_logits(obs[i], mask[i]).argmax(1) == actions[i]).sum().item()
    return {"teacher": teacher, "games": games, "decisions": len(data), "bc_loss": loss_sum / len(data),
            "bc_agreement": agree / len(data), "seconds": round(time.perf_counter() - started, 1)}


def init_actor(net: ActorCritic, model: str, obs_dim: int, net_arch: Sequence[int]) -> dict[str, Any]:
    """Start ``net``'s actor (observations of ``obs_dim`` entries, hidden layers ``net_arch``) from the actor of the
    saved ``model`` (fine-tuning an agent of another game); returns what the run folder records
    (``init_actor.json``)."""
    from goboom_env.training.artifacts.model_files import read_init_actor, read_metadata

    path, actor = read_init_actor(model, obs_dim, net_arch)
    net.load_actor(actor)
    meta = read_metadata(path)
    return {"init_actor": str(path), "config": meta.get("config"), "timesteps": meta.get("timesteps")}


def _collect_padded(config: GameConfig, teacher: str, games: int, seed: int, player_counts: Sequence[int],
                    privileged: bool = False) -> Any:
    """:func:`~goboom_env.training.imitation.collect` of ``teacher`` (``privileged``: each observation followed by
    the mover's hidden state); with ``player_counts``, about ``games / len(player_counts)`` hands at each count,
    observations padded to the 12-seat layout."""
    from goboom_env.observation import pad_observations
    from goboom_env.training.imitation import Demonstrations, collect
    from goboom_env.training.privileged import critic_encoder

    if not player_counts:
        return collect(config, teacher, games, seed=seed, hidden=critic_encoder(config) if privileged else None)
    parts = [(k, collect(config.replace(num_players=k), teacher, max(1, games // len(player_counts)), seed=seed + i))
             for i, k in enumerate(player_counts)]
    return Demonstrations(np.concatenate([pad_observations(d.obs, k) for k, d in parts]),
                          np.concatenate([d.masks for _, d in parts]), np.concatenate([d.actions for _, d in parts]),
                          np.concatenate([d.returns for _, d in parts]))
