"""The run folder of ``goboom train-rllib``: checkpoints, the exported ``policy/``, ``goboom.json``, ``cluster.json``
and the logs (the table of its files: docs/rllib.md)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

from goboom_env.hints import needs_extra
from goboom_env.outdir import write_atomically
from goboom_env.process import bars_shown
from goboom_env.training.artifacts.model_files import model_metadata
from goboom_env.training.artifacts.run_folder import append_csv
from goboom_env.training.rllib.policy import (
    MAIN_MODULE,
    MAIN_MODULE_DIR,
    METADATA_FILE,
    POLICY_DIR,
    model_config,
    module_settings,
    write_module_file,
)
from goboom_env.training.settings import RLlibArgs

with needs_extra("the RLlib trainer (goboom_env.training.rllib)"):
    import ray
    from ray.rllib.algorithms.algorithm import Algorithm
    from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_RL_MODULE


def save(algo: Algorithm, run: Path, args: RLlibArgs, iteration: int, timesteps: int) -> None:
    """Full checkpoint ``checkpoints/iter_NNNNNN``, the exported ``policy/`` and ``goboom.json``."""
    ckpt = run / "checkpoints" / f"iter_{iteration:06d}"
    algo.save_to_path(ckpt)
    module_dir = ckpt / MAIN_MODULE_DIR
    write_module_file(module_dir, module_settings(model_config(args.net_arch)), learner_state(algo))
    meta = {
        **model_metadata(args.game_config(), args, timesteps),
        "format": "goboom-rllib-policy",
        "episode": args.episode,
        "reward": args.reward,
        "module": MAIN_MODULE,
        "iteration": iteration,
        "checkpoint": str(ckpt.relative_to(run)),
    }
    text = json.dumps(meta, indent=2) + "\n"
    export = run / POLICY_DIR
    tmp = run / f".{POLICY_DIR}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(module_dir, tmp)
    (tmp / METADATA_FILE).write_text(text)  # the exported policy carries its metadata wherever it is copied
    shutil.rmtree(export, ignore_errors=True)
    tmp.rename(export)
    write_atomically(run / METADATA_FILE, text.encode())  # --resume reads it


def learner_state(algo: Algorithm) -> dict[str, Any]:
    """The trained ``main`` module's weights (numpy arrays by name), as the learner holds them."""
    path = (COMPONENT_LEARNER, COMPONENT_RL_MODULE, MAIN_MODULE)
    state = algo.learner_group.get_state(components="/".join(path))
    for key in path:
        state = state[key]
    return state


def record_cluster(algo: Algorithm, run: Path, num_env_runners: int) -> None:
    """Write ``cluster.json`` in the run folder: the alive Ray nodes, the driver's node (where learning
    happens) and each env runner's node as the runner itself reports it (without runners, the driver's own)."""
    nodes = [{"node_id": node["NodeID"], "ip": node["NodeManagerAddress"],
              "head": "node:__internal_head__" in node["Resources"],
              "resources": {k: v for k, v in sorted(node["Resources"].items())
                            if not k.startswith("node:") and k not in ("memory", "object_store_memory")}}
             for node in ray.nodes() if node["Alive"]]
    runners = algo.env_runner_group.foreach_env_runner(_runner_node, local_env_runner=num_env_runners == 0)
    record = {"driver": _runner_node(None), "nodes": nodes,
              "env_runners": sorted(runners, key=lambda runner: runner["index"])}
    (run / "cluster.json").write_text(json.dumps(record, indent=2) + "\n")


def _runner_node(runner: Any) -> dict[str, Any]:
    """Where this process runs (called inside each env runner; ``runner=None``: the driver)."""
    node = {"node_id": ray.get_runtime_context().get_node_id(), "ip": ray.util.get_node_ip_address()}
    return node if runner is None else {"index": int(runner.worker_index or 0), **node}


def latest_checkpoint(run: Path) -> Path | None:
    """The newest ``checkpoints/iter_*`` folder of a run, or None."""
    found = sorted((run / "checkpoints").glob("iter_*"))
    return found[-1] if found else None


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
    """The numeric leaves of a nested RLlib result keyed ``a/b/c`` (for TensorBoard), without the ``config``."""
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
        with needs_extra("the RLlib trainer (goboom_env.training.rllib)"):
            from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(str(run / "tensorboard"))
        self.csv_path = run / "progress.csv"
        self.total = total
        self.progress = None
        if bars_shown(show):
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(BarColumn(bar_width=20), TextColumn("{task.description}"), TimeElapsedColumn())
            self.task = self.progress.add_task("starting", total=total)
            self.progress.start()

    def log(self, result: dict[str, Any], league_filled: int) -> None:
        """Record one ``algo.train()`` result: its :func:`summary` row, its scalars and the display."""
        row = summary(result) | {"league_filled": float(league_filled)}
        step = int(row["env_steps"]) if math.isfinite(row["env_steps"]) else int(row["iteration"])
        for name, value in scalars(result).items():
            self.writer.add_scalar(name, value, step)
        append_csv(self.csv_path, row, list(row))
        if self.progress is not None:
            self.progress.update(self.task, completed=min(step, self.total), description=(
                f"iter {int(row['iteration'])} | {step:,}/{self.total:,} steps | {row['steps_per_s']:.0f}/s | "
                f"return {row['main_return_mean']:+.3f} | win vs league {row['main_win_rate']:.3f} | "
                f"league {league_filled}"))

    def close(self) -> None:
        self.writer.close()
        if self.progress is not None:
            self.progress.stop()
