"""Multi-agent self-play PPO for Go Boom on Ray RLlib's new API stack, read top to bottom (the league and the run
folder: docs/rllib.md)."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path
from typing import Any

from goboom_env.agents.ppo import check_compatible
from goboom_env.config import errors_prefixed
from goboom_env.evaluation.baselines import evaluate_vs_baselines
from goboom_env.hints import needs_extra
from goboom_env.outdir import OutputError, StagedFolder, is_marked, mark
from goboom_env.training.artifacts.run_folder import Schedule
from goboom_env.training.rllib.cluster import probe
from goboom_env.training.rllib.env import GoBoomMultiAgentEnv, make_env_config
from goboom_env.training.rllib.league import LeagueMapping, LeagueMetricsCallback, league_ids, snapshot
from goboom_env.training.rllib.policy import (
    MAIN_MODULE,
    METADATA_FILE,
    MaskedPPOTorchRLModule,
    model_config,
    read_metadata_file,
)
from goboom_env.training.rllib.run import ProgressLog, latest_checkpoint, record_cluster, save, summary
from goboom_env.training.settings import LEAGUE_KINDS, RLlibArgs, cluster_endpoint, parse_opponents, rllib_ppo_kwargs

with needs_extra("the RLlib trainer (goboom_env.training.rllib)"):
    import ray
    from ray.rllib.algorithms.algorithm import Algorithm
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME


def build_config(args: RLlibArgs) -> PPOConfig:
    """The PPO AlgorithmConfig for ``args`` (new API stack, masked module, league self-play)."""
    game = args.game_config()
    modules = [MAIN_MODULE, *league_ids(args.pool_size)]
    spec = RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config=model_config(args.net_arch))
    return (
        PPOConfig()
        # RLlib's env checker steps with unmasked random actions, which the rules reject (R3.2):
        # the adapter's contract is tested in tests/training/test_rllib.py instead.
        .environment(GoBoomMultiAgentEnv, env_config=make_env_config(game, args.episode, args.reward),
                     disable_env_checking=True)
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.num_envs,
                     num_cpus_per_env_runner=1)
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=args.train_batch_size, **rllib_ppo_kwargs(args))
        .multi_agent(
            policies=set(modules),
            policy_mapping_fn=LeagueMapping(game.num_players, args.pool_size,
                                            tuple(parse_opponents(args.opponents, LEAGUE_KINDS))),
            policies_to_train=[MAIN_MODULE],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=dict.fromkeys(modules, spec)))
        .callbacks(LeagueMetricsCallback)
        .debugging(seed=args.seed, log_level="WARN")
    )


def check_reachable(address: str) -> None:
    """ValueError unless the cluster at ``address`` accepts a connection within seconds (``auto`` as Ray finds it)."""
    if cluster_endpoint(address) is not None:
        probe(address)
        return
    with needs_extra("the RLlib trainer (goboom_env.training.rllib)"):  # private to Ray: only for --address auto
        from ray._private.services import canonicalize_bootstrap_address

    with errors_prefixed("--address auto found no Ray cluster on this machine", ConnectionError, ValueError):
        found = canonicalize_bootstrap_address(address)
    if found is None:
        raise ValueError("--address auto found no Ray cluster on this machine; start one with `ray start --head`")
    probe(found, shown=f"auto ({found})")


def init_ray(args: RLlibArgs) -> bool:
    """Join ``args.address`` or start a local Ray instance; False if Ray was already running. ValueError when it
    has fewer CPUs than env runners (they would wait for resources forever)."""
    started = not ray.is_initialized()
    if started and args.address:
        check_reachable(args.address)
        with errors_prefixed(f"cannot join the Ray cluster at --address {args.address!r}", ConnectionError, ValueError):
            ray.init(address=args.address, log_to_driver=False)
    elif started:
        # "local" starts a fresh instance even where a `ray start` cluster runs on this machine
        ray.init(address="local", num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    cpus = ray.cluster_resources().get("CPU", 0)
    if args.num_env_runners <= cpus:
        return started
    if started:  # the instance started here is of no use: leave nothing running
        ray.shutdown()
    raise ValueError(f"num_env_runners={args.num_env_runners} needs {args.num_env_runners} CPUs (one per runner) "
                     f"but the Ray instance has {cpus:g}; lower --num-env-runners or raise --num-cpus")


@contextmanager
def _algorithm(args: RLlibArgs) -> Iterator[Algorithm]:
    """The PPO algorithm of ``args`` on Ray, stopped afterwards (and the Ray instance with it, if started here)."""
    with ExitStack() as stack:
        if init_ray(args):
            stack.callback(ray.shutdown)
        algo = build_config(args).build_algo()
        stack.callback(algo.stop)
        yield algo


def train(args: RLlibArgs) -> Path:
    """Run the self-play training described by ``args``; returns the run folder."""
    args.validate()  # the output-folder rule for --out included
    run = Path(args.out).expanduser().resolve()  # absolute: Ray reads a relative path as a URI without a scheme
    if args.resume and (run / METADATA_FILE).is_file():  # the run goes on with the game it was started with
        check_compatible(read_metadata_file(run / METADATA_FILE), args.game_config(), f"--resume: the run {str(run)!r}")
    with ExitStack() as stack:
        algo = stack.enter_context(_algorithm(args))
        stack.enter_context(_run_folder_started(run, args))
        log = stack.enter_context(closing(ProgressLog(run, args.timesteps, args.progress)))
        slots = league_ids(args.pool_size)
        filled = _start_league(algo, run, args, slots)
        record_cluster(algo, run, args.num_env_runners)
        timesteps = _env_steps(algo)
        schedule = Schedule(timesteps, snapshot=args.snapshot_every, checkpoint=args.checkpoint_every)
        while timesteps < args.timesteps:
            result = algo.train()
            timesteps = int(summary(result)["env_steps"])
            due = schedule.due(timesteps)
            if "snapshot" in due:
                snapshot(algo, slots[(timesteps // args.snapshot_every) % len(slots)])
                filled = min(filled + 1, len(slots))
            log.log(result, filled)
            if "checkpoint" in due or timesteps >= args.timesteps:
                save(algo, run, args, algo.iteration, timesteps)
    if args.eval_games:
        evaluate(run, args)
    return run


@contextmanager
def _run_folder_started(run: Path, args: RLlibArgs) -> Iterator[None]:
    """Start the run folder once the algorithm is built (a fresh one staged); if the body fails before the first
    checkpoint, the folder this run started is removed again, so that a rerun is not refused as "not empty"."""
    continued = args.resume and run.is_dir() and any(run.iterdir())
    existed = run.is_dir()
    if not continued:
        try:
            with StagedFolder(run, force=args.force, kept=None):
                pass
        except OutputError as exc:
            raise ValueError(str(exc)) from exc
    elif not is_marked(run):  # a run of an earlier version
        mark(run)
    try:
        yield
    except BaseException:
        if not continued and latest_checkpoint(run) is None:
            shutil.rmtree(run, ignore_errors=True)
            if existed:
                run.mkdir(exist_ok=True)
        raise


def _start_league(algo: Algorithm, run: Path, args: RLlibArgs, slots: list[str]) -> int:
    """Resume from the latest checkpoint, or fill every slot with the initial ``main``."""
    if args.resume and (ckpt := latest_checkpoint(run)) is not None:
        algo.restore_from_path(ckpt)
        algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True,
                                           timeout_seconds=60.0)
        return min(_env_steps(algo) // args.snapshot_every, len(slots))
    for slot in slots:
        snapshot(algo, slot)
    return 0


def _env_steps(algo: Algorithm) -> int:
    return int(algo.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0))


def measure_sampling(args: RLlibArgs, steps_per_runner: int) -> dict[str, Any]:
    """Env steps per second sampled by ``args``'s env runners (or the driver) after a warm-up; no training."""
    args.validate()
    if steps_per_runner < 1:
        raise ValueError(f"steps_per_runner must be >= 1, got {steps_per_runner}")
    with _algorithm(args) as algo:
        group = algo.env_runner_group
        local = args.num_env_runners == 0
        group.foreach_env_runner(lambda r: r.sample(num_timesteps=min(steps_per_runner, 200)), local_env_runner=local)
        begin = time.perf_counter()
        counts = group.foreach_env_runner(
            lambda r: sum(e.env_steps() for e in r.sample(num_timesteps=steps_per_runner)), local_env_runner=local
        )
        seconds = time.perf_counter() - begin
    steps = int(sum(counts))
    return {"num_env_runners": args.num_env_runners, "num_envs_per_env_runner": args.num_envs,
            "env_steps": steps, "seconds": round(seconds, 3), "env_steps_per_s": round(steps / seconds, 1)}


def evaluate(run: Path, args: RLlibArgs) -> None:
    """The exported policy 1-vs-(n-1) against ``random`` and ``heuristic``, written as the run's ``eval.json``."""
    results = evaluate_vs_baselines(args.game_config(), f"rllib:{run}", ["random", "heuristic"], args.eval_games,
                                    seed=args.seed, episode=args.episode, progress=args.progress)
    tables = {opponent: result.table() for opponent, result in results.items()}
    (run / "eval.json").write_text(json.dumps(tables, indent=2) + "\n")
