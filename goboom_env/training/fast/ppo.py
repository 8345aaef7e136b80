"""``goboom train-fast``: self-play PPO on the batched engine (:class:`goboom_env.vector.VectorGame`), CleanRL style.

Every seat is played by the learner (one network, parameter-shared: a ``learner`` game yields n learner trajectories
per hand) or by a batched opponent (a frozen snapshot of the learner, ``random``, the batched heuristic). :func:`train`
is the run (``collect -> seat_gae -> update`` until the step budget is spent); :class:`Trainer` holds its state and
steps. Importing this module imports no torch (a run does).
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from goboom_env import process
from goboom_env.agents.batched import batched_heuristic
from goboom_env.agents.ppo import FrozenMlp, check_compatible
from goboom_env.config import MAX_PLAYERS, GameConfig
from goboom_env.hints import needs_extra, one_line
from goboom_env.outdir import write_atomically
from goboom_env.process import say
from goboom_env.training.artifacts.learning_curve import plot_learning_curve
from goboom_env.training.artifacts.model_files import model_metadata
from goboom_env.training.artifacts.run_folder import (
    RunFiles,
    Schedule,
    StepBar,
    best_win_rate,
    last_evaluated,
    planned_settings,
    start_run_folder,
    truncate_logs,
)
from goboom_env.training.fast.rollout import (
    Batch,
    Pending,
    Rollout,
    SeatPlan,
    build_batch,
    make_engine,
    seat_gae,
)
from goboom_env.training.fast.run import (
    best_column,
    check_run_folder,
    evaluate,
    load_checkpoint,
    log_progress,
    save_checkpoint,
    save_play_only,
)
from goboom_env.training.fast.warm_start import init_actor, warm_start
from goboom_env.training.league import League
from goboom_env.training.opponents import RandomOpponent, SnapshotOpponent
from goboom_env.training.settings import (
    HEURISTIC,
    LEARNER,
    POOL_KINDS,
    RANDOM,
    SNAPSHOTS,
    VectorArgs,
    parse_opponents,
    set_threads,
)
from goboom_env.training.shaping import hand_size_potential


def train(args: VectorArgs, command: str | None = None) -> Path:
    """Run (or resume) one fast self-play run; returns the path of the final play-only model."""
    with needs_extra("the fast trainer (goboom_env.training.fast)"):  # imported, or its absence said, before any work
        from torch.utils.tensorboard import SummaryWriter

    args = planned_settings(args, exact=False)
    set_threads(args.threads)
    config = args.run_config()
    files = RunFiles(args.out)
    state_path = check_run_folder(args, files)
    state = load_checkpoint(state_path) if state_path else None
    if state is not None:
        check_compatible(state["meta"], config, state_path, layouts=(args.observation,))
    say(f"setting up: {args.num_envs:,} games on the batched engine and the network...")
    from goboom_env.vector import compile_pending

    if compile_pending():  # numba caches the compiled engine: once per installation, or after an upgrade
        say("compiling the batched engine (first run only, ~15 s)...")
    trainer = Trainer(args, config, seed_offset=state["steps"] if state else 0)
    if state is not None:
        try:
            trainer.load_state_dict(state)
        except (RuntimeError, KeyError, TypeError, ValueError, IndexError) as exc:  # torch's answers to a misfit
            raise ValueError(f"--resume: {state_path} does not fit the run's network: "
                             f"{one_line(str(exc), 300)}") from None
    start_run_folder(args, files, command, resume=state is not None, inputs=args.inputs())
    files.checkpoints.mkdir(parents=True, exist_ok=True)
    if state is not None:
        truncate_logs(files, trainer.steps)
    elif args.init_actor:
        report = init_actor(trainer.net, args.init_actor, trainer.public_dim, args.net_arch)
        (files.root / "init_actor.json").write_text(json.dumps(report, indent=1))
    elif args.bc_games > 0:
        report = warm_start(trainer.net, config, args.bc_teacher, args.bc_games, files.root, epochs=args.bc_epochs,
                            seed=args.seed, player_counts=args.player_counts, hidden=args.privileged_critic,
                            observation=args.observation, progress=args.progress)
        trainer.train_s += report["seconds"]
    trainer.start()
    meta = lambda: model_metadata(config, args, trainer.steps, args.player_configs(),  # noqa: E731
                                  observation=args.observation)
    writer = SummaryWriter(str(files.tensorboard))
    if trainer.steps < args.timesteps:
        say(f"training: {args.timesteps - trainer.steps:,} learner steps"
            + (f" (from {trainer.steps:,})" if trainer.steps else "")
            + f", rollouts of up to {args.num_envs * args.num_steps:,}...")
    bar = StepBar(args.timesteps, "fast PPO", args.progress, trainer.steps)
    best = best_win_rate(files.eval, best_column(args))
    try:
        for stats, fps, due in trainer.iterations(bar, snapshot=args.snapshot_every,
                                                  checkpoint=args.checkpoint_every, evaluate=args.eval_every):
            log_progress(files.progress, writer, trainer, stats, fps)
            if "snapshot" in due:
                trainer.snapshot()
            if "checkpoint" in due:
                save_checkpoint({**trainer.state_dict(), "meta": meta()}, files.state(trainer.steps))
                save_play_only(trainer.net, files.checkpoint(trainer.steps), meta())
            if "evaluate" in due:
                best = evaluate(trainer, files.eval_model, files, writer, best, meta())
    except KeyboardInterrupt:
        path = save_checkpoint({**trainer.state_dict(), "meta": meta()}, files.state(trainer.steps))
        process.kept(f"the checkpoint {path}; continue with --resume --out {files.root}")
        raise
    else:
        bar.finish(trainer.steps)
    finally:
        bar.close()
    save_checkpoint({**trainer.state_dict(), "meta": meta()}, files.state(trainer.steps))
    save_play_only(trainer.net, files.model, meta())
    if args.eval_every >= 0 and last_evaluated(files) != trainer.steps:
        evaluate(trainer, files.model, files, writer, best, meta())
    if not files.best.exists():
        write_atomically(files.best, files.model.read_bytes())
    writer.close()
    plot_learning_curve(files)
    return files.model


class Trainer:
    """The state of one run: engine, opponent pool (its snapshots), seat plan, network, optimizer and counters."""

    def __init__(self, args: VectorArgs, config: GameConfig, seed_offset: int = 0) -> None:
        with needs_extra("the fast trainer (goboom_env.training.fast)"):
            import torch

        from goboom_env.training.fast.policy import ActorCritic, resolve_precision

        self.args = args
        self.config = config
        counts = list(args.player_counts)
        self.generalist = bool(counts)
        """A generalist run (games at several player counts): the per-seat arrays then have 12 seats."""
        self.n = MAX_PLAYERS if counts else config.num_players
        seeds = np.random.SeedSequence([args.seed, seed_offset]).generate_state(3)
        self.rng = np.random.default_rng(seeds[0])
        torch.manual_seed(int(seeds[1]))
        self.game = make_engine(config, counts, num_envs=args.num_envs, seed=int(seeds[2]), episode=args.episode,
                                reward=args.reward, autoreset=True, check=False,
                                observation=args.observation)
        obs, self.mask, self.seat = self.game.reset()
        self.public_dim = obs.shape[1]
        """The observation's size: what the actor and the opponents read."""
        self.obs = self._inputs(obs)
        self.obs_dim = self.obs.shape[1]
        """The size of the rows the network reads: the observation, then (privileged critic) the hidden state."""
        table = self.game.num_players if counts else None
        self.pool: League[FrozenMlp] = League(parse_opponents(args.opponents, POOL_KINDS), size=args.pool_size,
                                              rng=self.rng)
        """The opponent entries and the learner's snapshots, which the ``self`` entry plays."""
        self.plan = SeatPlan(self.pool, args.num_envs, self.n, table)
        self.random = RandomOpponent()
        self.heuristic = batched_heuristic(config, counts) if HEURISTIC in self.pool.specs else None
        self.net = ActorCritic(self.public_dim, args.net_arch, resolve_precision(args.precision),
                               self.obs_dim if args.privileged_critic else self.public_dim)
        # fused: one kernel for all parameters, half the time of torch's default per-tensor loop on CPU
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=args.learning_rate, eps=1e-5, fused=True)
        self.pending = Pending.empty(args.num_envs, self.n, self.obs_dim, np.float32)
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
        """Draw the first seat plan (after the snapshot pool holds the step-0 learner)."""
        if not self.pool.snapshots:
            self.snapshot()
        self.plan.redraw(np.ones(self.args.num_envs, bool))

    def snapshot(self) -> None:
        """Add the learner as it is now to the pool's snapshots (the oldest beyond ``pool_size`` leave)."""
        self.pool.add(f"snapshot@{self.steps}", self.net.frozen())

    def iterations(self, bar: StepBar, **every: int) -> Iterator[tuple[dict[str, float], float, set[str]]]:
        """Iterations until ``timesteps`` learner steps or ``time_limit`` training seconds, shown on ``bar``; yields
        each one's statistics, its steps per second and the names of ``every`` whose multiple of steps it passed."""
        schedule = Schedule(self.steps, **every)
        while self.steps < self.args.timesteps and not 0 < self.args.time_limit <= self.train_s:
            started, before = time.perf_counter(), self.steps
            stats = self.iteration()
            elapsed = time.perf_counter() - started
            self.train_s += elapsed
            bar.to(self.steps)
            yield stats, (self.steps - before) / max(elapsed, 1e-9), schedule.due(self.steps)

    # -- one iteration: collect -> seat_gae -> update ------------------------------------------------

    def iteration(self) -> dict[str, float]:
        """One rollout, per-seat GAE and one PPO update; returns the update's statistics."""
        roll = self.collect()
        gae = seat_gae(roll.value, roll.reward, roll.done, roll.seat, roll.learner, self.args.gamma,
                       self.args.gae_lambda, self.pending, roll.potential)
        batch, self.pending = build_batch(roll, gae, self.pending)
        stats = self.update(batch) if len(batch) else {}
        return {**stats, "batch": len(batch), "pending": int(self.pending.active.sum())}

    # -- one rollout -----------------------------------------------------------------------------------

    def collect(self) -> Rollout:
        """Play ``num_steps`` engine calls; the learner's seats sample from the network, the others from
        their opponent; returns the rollout (and counts the learner decisions in :attr:`steps`)."""
        with needs_extra("the fast trainer (goboom_env.training.fast)"):
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
                snapshots = list(self.pool.snapshots.values())
                for j in np.unique(plan.snapshot[games]):
                    sub = games[plan.snapshot[games] == j]
                    actions[sub] = SnapshotOpponent(snapshots[j]).act(obs[sub], mask[sub], self.rng)

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
        self.plan.redraw(done)

    # -- one update -----------------------------------------------------------------------------------

    def update(self, batch: Batch) -> dict[str, float]:
        """PPO epochs over ``batch`` (clipped surrogate, value loss, entropy bonus; the value loss alone during the
        critic warm-up); returns the last epoch's mean losses and diagnostics (explained variance of the rollout's
        values, as SB3 reports it)."""
        with needs_extra("the fast trainer (goboom_env.training.fast)"):
            import torch

        args = self.args
        actor_learns = self.steps > args.critic_warmup
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
                logp, entropy, value = self.net.evaluate(obs, mask, action)
                log_ratio = logp - old_logp
                ratio = log_ratio.exp()
                adv = (adv - adv.mean()) / (adv.std() + 1e-8) if len(adv) > 1 else adv
                clipped = ratio.clamp(1 - args.clip_range, 1 + args.clip_range)
                policy_loss = torch.max(-adv * ratio, -adv * clipped).mean()
                value_loss = 0.5 * ((value - ret) ** 2).mean()
                loss = args.vf_coef * value_loss
                if actor_learns:
                    loss = loss + policy_loss - args.ent_coef * entropy.mean()
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.net.parameters(), args.max_grad_norm)
                self.optimizer.step()
                if record:
                    with torch.no_grad():
                        kl = ((ratio - 1) - log_ratio).mean()
                        clip_fraction = ((ratio - 1).abs() > args.clip_range).float().mean()
                        stats.append(torch.stack([policy_loss, value_loss, entropy.mean(), kl, clip_fraction]))
        names = ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction")
        means = torch.stack(stats).double().mean(0).tolist() if stats else [float("nan")] * len(names)
        out = dict(zip(names, means, strict=True))
        var = float(np.var(batch.ret))  # ret - advantage = the values the rollout predicted
        out["explained_variance"] = float(1 - np.var(batch.advantage) / var) if var > 0 else float("nan")
        return out

    # -- saving ------------------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything :meth:`load_state_dict` needs to resume (open decisions are dropped)."""
        return {"net": self.net.state_dict(), "optimizer": self.optimizer.state_dict(), "steps": self.steps,
                "episodes": self.episodes, "train_s": self.train_s,
                "snapshots": [(name, _tensor_state(net.state())) for name, net in self.pool.snapshots.items()]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state["net"])
        self.optimizer.load_state_dict(state["optimizer"])
        for group in self.optimizer.param_groups:  # the learning rate of this invocation wins
            group["lr"] = self.args.learning_rate
        self.steps, self.episodes, self.train_s = int(state["steps"]), int(state["episodes"]), float(state["train_s"])
        for name, snap in state["snapshots"]:  # saved with tensors for arrays (_tensor_state)
            self.pool.add(name, FrozenMlp([(w.numpy(), b.numpy()) for w, b in snap["layers"]], snap["activation"]))


def _tensor_state(state: dict[str, Any]) -> dict[str, Any]:
    """A :meth:`FrozenMlp.state` with tensors for arrays, so that the checkpoint loads with ``weights_only``."""
    with needs_extra("the fast trainer (goboom_env.training.fast)"):
        import torch

    return {**state, "layers": [(torch.from_numpy(w), torch.from_numpy(b)) for w, b in state["layers"]]}
