"""Multi-agent self-play PPO for Go Boom on Ray RLlib's new API stack, read top to bottom.

* Every seat whose agent maps to the module ``main`` shares its parameters (parameter-shared
  self-play); the observation is seat-relative, so one network serves every seat.
* The other seats are played by a *league* of ``league_size`` frozen snapshots of ``main``
  (modules ``league_0 ..``), refreshed round-robin every ``snapshot_every`` iterations. At the
  start every slot holds a copy of the initial (near-uniform) ``main``.
* :class:`LeagueMapping` chooses, per episode, one learner seat at random; each other seat is
  ``main`` with probability ``self_play`` and otherwise a random league slot.
* Only ``main`` is trained. A run folder holds ``checkpoints/iter_NNNNNN`` (full algorithm
  state, resumable), ``policy/`` (the exported ``main`` module for ``rllib:RUN``),
  ``goboom.json`` (game and settings), ``progress.csv`` and ``tensorboard/``.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import random
import shutil
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from goboom_env.observation import OBSERVATION_VERSION
from goboom_env.training.rllib_cli import RLlibArgs, cluster_endpoint, probe
from goboom_env.training.rllib_env import GoBoomMultiAgentEnv, make_env_config
from goboom_env.training.rllib_policy import MAIN_MODULE, METADATA_FILE, POLICY_DIR, MaskedPPOTorchRLModule

LEAGUE_PREFIX = "league_"


# -- league matchmaking ---------------------------------------------------------------------------


def league_ids(size: int) -> list[str]:
    """Module ids of the frozen snapshot slots."""
    return [f"{LEAGUE_PREFIX}{i}" for i in range(size)]


@dataclass(frozen=True)
class LeagueMapping:
    """RLlib's agent-to-module mapping: per episode one learner seat plays ``main``; every other
    seat plays ``main`` with probability ``self_play``, else a random league slot.

    The draw is seeded by the episode id, so all seats of one episode see the same draw, on any
    worker, and a plain picklable object (no closure) travels to remote env runners.
    """

    num_players: int
    league_size: int
    self_play: float

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        return self.modules(str(episode.id_))[int(agent_id.rsplit("_", 1)[1])]

    def modules(self, episode_id: str) -> list[str]:
        """The module of each seat in the episode with this id."""
        rng = random.Random(f"goboom-league:{episode_id}")
        learner = rng.randrange(self.num_players)
        out = []
        for seat in range(self.num_players):
            draw, slot = rng.random(), rng.randrange(self.league_size)
            out.append(MAIN_MODULE if seat == learner or draw < self.self_play else f"{LEAGUE_PREFIX}{slot}")
        return out


class LeagueMetricsCallback(RLlibCallback):
    """Logs ``main_win_rate``: the share of ``main``'s seats with a positive return, over episodes
    where at least one seat is a snapshot (1/n = as strong as the league; the win rate when
    ``reward="win"``)."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        modules = {agent: episode.module_for(agent) for agent in episode.agent_ids}
        if metrics_logger is None or all(m == MAIN_MODULE for m in modules.values()):
            return
        rewards = episode.get_rewards()
        for agent, module in modules.items():
            if module == MAIN_MODULE:
                won = float(sum(rewards[agent]) > 0) if agent in rewards else 0.0
                metrics_logger.log_value("main_win_rate", won, reduce="mean", window=1000)


# -- the RLlib configuration ----------------------------------------------------------------------


def build_config(args: RLlibArgs) -> PPOConfig:
    """The PPO AlgorithmConfig for ``args`` (new API stack, masked module, league self-play)."""
    game = args.game_config()
    modules = [MAIN_MODULE, *league_ids(args.league_size)]
    spec = RLModuleSpec(
        module_class=MaskedPPOTorchRLModule,
        model_config=DefaultModelConfig(fcnet_hiddens=list(args.hidden), vf_share_layers=False),
    )
    return (
        PPOConfig()
        # RLlib's env checker steps with unmasked random actions, which the rules reject (R3.2):
        # the adapter's contract is tested in tests/test_rllib.py instead.
        .environment(GoBoomMultiAgentEnv, env_config=make_env_config(game, args.episode, args.reward),
                     disable_env_checking=True)
        .env_runners(
            num_env_runners=args.num_env_runners,
            num_envs_per_env_runner=args.num_envs_per_env_runner,
            num_cpus_per_env_runner=1,
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=args.train_batch_size,
            minibatch_size=args.minibatch_size,
            num_epochs=args.num_epochs,
            lr=args.lr,
            gamma=args.gamma,
            lambda_=args.gae_lambda,
            entropy_coeff=args.entropy_coeff,
            clip_param=args.clip_param,
        )
        .multi_agent(
            policies=set(modules),
            policy_mapping_fn=LeagueMapping(game.num_players, args.league_size, args.self_play),
            policies_to_train=[MAIN_MODULE],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=dict.fromkeys(modules, spec)))
        .callbacks(LeagueMetricsCallback)
        .debugging(seed=args.seed, log_level="WARN")
    )


# -- league snapshots -----------------------------------------------------------------------------


def snapshot(algo: Algorithm, slot: str) -> None:
    """Copy the learner's ``main`` weights into league ``slot`` and push them to the env runners."""
    learners = algo.learner_group
    path = f"{COMPONENT_LEARNER}/{COMPONENT_RL_MODULE}/{MAIN_MODULE}"
    main = learners.get_state(components=path)[COMPONENT_LEARNER][COMPONENT_RL_MODULE][MAIN_MODULE]
    learners.set_state({COMPONENT_LEARNER: {COMPONENT_RL_MODULE: {slot: main}}})
    algo.env_runner_group.sync_weights(
        from_worker_or_learner_group=learners, policies=[slot], inference_only=True, timeout_seconds=60.0
    )


# -- run folder -----------------------------------------------------------------------------------


def save(algo: Algorithm, run: Path, args: RLlibArgs, iteration: int, timesteps: int) -> Path:
    """Full checkpoint ``checkpoints/iter_NNNNNN``, the exported ``policy/`` and ``goboom.json``."""
    run = run_folder(run)
    ckpt = run / "checkpoints" / f"iter_{iteration:06d}"
    algo.save_to_path(ckpt)
    module_dir = ckpt / COMPONENT_LEARNER_GROUP / COMPONENT_LEARNER / COMPONENT_RL_MODULE / MAIN_MODULE
    export = run / POLICY_DIR
    tmp = run / f".{POLICY_DIR}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(module_dir, tmp)
    shutil.rmtree(export, ignore_errors=True)
    tmp.rename(export)
    meta = {
        "format": "goboom-rllib-policy",
        "game": args.game_config().to_dict(),
        "episode": args.episode,
        "reward": args.reward,
        "observation_version": OBSERVATION_VERSION,
        "module": MAIN_MODULE,
        "iteration": iteration,
        "env_steps_sampled": timesteps,
        "checkpoint": str(ckpt.relative_to(run)),
        "args": dataclasses.asdict(args),
    }
    (run / METADATA_FILE).write_text(json.dumps(meta, indent=2) + "\n")
    return ckpt


def run_folder(out: str | Path) -> Path:
    """``--out`` as an absolute path: Ray reads a relative path as a URI without a scheme and fails
    when it saves or restores a checkpoint there."""
    return Path(out).expanduser().resolve()


def latest_checkpoint(run: Path) -> Path | None:
    """The newest ``checkpoints/iter_*`` folder of a run, or None."""
    found = sorted((run / "checkpoints").glob("iter_*"))
    return found[-1] if found else None


# -- metrics --------------------------------------------------------------------------------------


def summary(result: dict[str, Any]) -> dict[str, float]:
    """The handful of numbers shown live and written to ``progress.csv`` for one iteration."""
    runners = result.get("env_runners", {})
    sampled = float(runners.get("num_env_steps_sampled", math.nan))
    seconds = float(result.get("time_this_iter_s", math.nan))
    returns = runners.get("module_episode_returns_mean", {})
    return {
        "iteration": float(result.get("training_iteration", math.nan)),
        "env_steps": float(runners.get("num_env_steps_sampled_lifetime", math.nan)),
        "episodes": float(runners.get("num_episodes_lifetime", math.nan)),
        "steps_per_s": sampled / seconds if seconds > 0 else math.nan,
        "main_return_mean": float(returns.get(MAIN_MODULE, math.nan)),
        "main_win_rate": float(runners.get("main_win_rate", math.nan)),
        "episode_len_mean": float(runners.get("episode_len_mean", math.nan)),
        "iteration_s": seconds,
    }


def scalars(tree: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """The numeric leaves of a nested RLlib result, keyed ``a/b/c`` (for TensorBoard); the
    algorithm's ``config`` is left out (constant, and saved in ``goboom.json``)."""
    out: dict[str, float] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if key == "config" and not prefix:
            continue
        if isinstance(value, dict):
            out.update(scalars(value, name + "/"))
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            out[name] = float(value)
    return out


class ProgressLog:
    """Per-iteration ``progress.csv``, TensorBoard scalars and a live rich display."""

    def __init__(self, run: Path, total: int, show: bool) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(str(run / "tensorboard"))
        self.csv_path = run / "progress.csv"
        self.total = total
        self.progress = None
        if show:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(BarColumn(bar_width=20), TextColumn("{task.description}"), TimeElapsedColumn())
            self.task = self.progress.add_task("starting", total=total)
            self.progress.start()

    def log(self, result: dict[str, Any], league_filled: int) -> dict[str, float]:
        """Record one ``algo.train()`` result; returns its :func:`summary` row."""
        row = summary(result) | {"league_filled": float(league_filled)}
        step = int(row["env_steps"]) if math.isfinite(row["env_steps"]) else int(row["iteration"])
        for name, value in scalars(result).items():
            self.writer.add_scalar(name, value, step)
        new = not self.csv_path.exists()
        with self.csv_path.open("a", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(row))
            if new:
                writer.writeheader()
            writer.writerow(row)
        if self.progress is not None:
            self.progress.update(self.task, completed=min(step, self.total), description=(
                f"iter {int(row['iteration'])} | {step:,}/{self.total:,} steps | {row['steps_per_s']:.0f}/s | "
                f"return {row['main_return_mean']:+.3f} | win vs league {row['main_win_rate']:.3f} | "
                f"league {league_filled}"))
        return row

    def close(self) -> None:
        self.writer.close()
        if self.progress is not None:
            self.progress.stop()


# -- the training loop ----------------------------------------------------------------------------


def check_reachable(address: str) -> None:
    """Raise ValueError unless the cluster at ``address`` accepts a connection within seconds
    (:func:`goboom_env.training.rllib_cli.probe`); ``auto`` is looked up as Ray does (``RAY_ADDRESS``, then the
    cluster started on this machine)."""
    if cluster_endpoint(address) is not None:
        probe(address)
        return
    from ray._private.services import canonicalize_bootstrap_address

    try:
        found = canonicalize_bootstrap_address(address)
    except ConnectionError as exc:
        raise ValueError(f"--address auto found no Ray cluster on this machine: {exc}") from exc
    if found is None:
        raise ValueError("--address auto found no Ray cluster on this machine; start one with `ray start --head`")
    probe(found, shown=f"auto ({found})")


def init_ray(args: RLlibArgs) -> bool:
    """Join ``args.address`` or start a local Ray instance; False if Ray was already running.

    Raises ValueError when the instance has fewer CPUs than env runners (1 CPU each), which
    would otherwise leave the runners waiting for resources forever."""
    started = not ray.is_initialized()
    if started and args.address:
        check_reachable(args.address)
        try:
            ray.init(address=args.address, log_to_driver=False)
        except ConnectionError as exc:
            raise ValueError(f"cannot join the Ray cluster at --address {args.address!r}: {exc}") from exc
    elif started:
        # "local" starts a fresh instance even where a `ray start` cluster runs on this machine
        ray.init(address="local", num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    cpus = ray.cluster_resources().get("CPU", 0)
    if args.num_env_runners > cpus:
        if started:
            ray.shutdown()
        raise ValueError(f"num_env_runners={args.num_env_runners} needs {args.num_env_runners} CPUs (one per runner) "
                         f"but the Ray instance has {cpus:g}; lower --num-env-runners or raise --num-cpus")
    return started


def train(args: RLlibArgs) -> Path:
    """Run the self-play training described by ``args``; returns the run folder."""
    args.validate()
    run = run_folder(args.out)
    if run.exists() and not run.is_dir():
        raise ValueError(f"--out {str(run)!r} is a file, not a run folder")
    if run.exists() and any(run.iterdir()) and not args.resume:
        raise ValueError(f"run folder {str(run)!r} is not empty; pass --resume to continue it or choose another --out")
    started_ray = init_ray(args)
    with ExitStack() as stack:
        if started_ray:
            stack.callback(ray.shutdown)
        algo = build_config(args).build_algo()
        stack.callback(algo.stop)
        stack.enter_context(_removed_without_checkpoint(run))
        log = ProgressLog(run, args.timesteps, args.progress)
        stack.callback(log.close)
        slots = league_ids(args.league_size)
        filled = _start_league(algo, run, args, slots)
        timesteps = _env_steps(algo)
        while timesteps < args.timesteps:
            result = algo.train()
            iteration = algo.iteration
            timesteps = int(summary(result)["env_steps"])
            if iteration % args.snapshot_every == 0:
                snapshot(algo, slots[(iteration // args.snapshot_every) % len(slots)])
                filled = min(filled + 1, len(slots))
            log.log(result, filled)
            if iteration % args.checkpoint_every == 0 or timesteps >= args.timesteps:
                save(algo, run, args, iteration, timesteps)
    if args.eval_games:
        evaluate(run, args)
    return run


@contextmanager
def _removed_without_checkpoint(run: Path) -> Iterator[None]:
    """Create the run folder; if the body fails before a checkpoint was saved in a folder that was
    new or empty, empty it again, so the rerun is not refused as "not empty" (nothing resumable
    would be lost)."""
    created = not run.exists()
    empty = created or not any(run.iterdir())
    run.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        if empty and latest_checkpoint(run) is None:
            shutil.rmtree(run, ignore_errors=True)
            if not created:
                run.mkdir(exist_ok=True)
        raise


def _start_league(algo: Algorithm, run: Path, args: RLlibArgs, slots: list[str]) -> int:
    """Resume from the latest checkpoint, or fill every slot with the initial ``main``."""
    if args.resume and (ckpt := latest_checkpoint(run)) is not None:
        algo.restore_from_path(ckpt)
        algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True,
                                           timeout_seconds=60.0)
        return min(algo.iteration // args.snapshot_every, len(slots))
    for slot in slots:
        snapshot(algo, slot)
    return 0


def _env_steps(algo: Algorithm) -> int:
    """Env steps sampled so far (restored with a checkpoint)."""
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    value = algo.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0)
    return int(value)


# -- measurements ---------------------------------------------------------------------------------


def measure_sampling(args: RLlibArgs, steps_per_runner: int) -> dict[str, Any]:
    """Env steps per second sampled by the env runners of ``args`` (after a short warm-up); the
    driver samples itself when ``num_env_runners`` is 0. No training happens."""
    args.validate()
    if steps_per_runner < 1:
        raise ValueError(f"steps_per_runner must be >= 1, got {steps_per_runner}")
    started_ray = init_ray(args)
    algo = build_config(args).build_algo()
    try:
        group = algo.env_runner_group
        local = args.num_env_runners == 0
        group.foreach_env_runner(lambda r: r.sample(num_timesteps=min(steps_per_runner, 200)), local_env_runner=local)
        begin = time.perf_counter()
        counts = group.foreach_env_runner(
            lambda r: sum(e.env_steps() for e in r.sample(num_timesteps=steps_per_runner)), local_env_runner=local
        )
        seconds = time.perf_counter() - begin
    finally:
        algo.stop()
        if started_ray:
            ray.shutdown()
    steps = int(sum(counts))
    return {"num_env_runners": args.num_env_runners, "num_envs_per_env_runner": args.num_envs_per_env_runner,
            "env_steps": steps, "seconds": round(seconds, 3), "env_steps_per_s": round(steps / seconds, 1)}


def evaluate(run: Path, args: RLlibArgs) -> dict[str, list[dict[str, Any]]]:
    """Benchmark the exported policy 1-vs-(n-1) against ``random`` and ``heuristic`` with the
    tournament runner (duplicate deals, seats rotating); writes ``eval.json`` in the run folder."""
    from goboom_env.evaluation.tournament import run_tournament

    game = args.game_config()
    me = f"rllib:{run}"
    tables = {}
    for opponent in ("random", "heuristic"):
        result = run_tournament(game, [me] + [opponent] * (game.num_players - 1), args.eval_games,
                                seed=args.seed, duplicate=True, episode=args.episode, progress=args.progress)
        tables[opponent] = result.table()
    (run / "eval.json").write_text(json.dumps(tables, indent=2) + "\n")
    return tables
