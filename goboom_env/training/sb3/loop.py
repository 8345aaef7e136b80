"""``goboom train``: one self-play MaskablePPO run, read top to bottom in :func:`train`.

Build the envs and the model (or resume the last checkpoint), attach the callbacks (:mod:`.callbacks`), learn, save,
evaluate, plot. The run folder's files and rules are :mod:`goboom_env.training.artifacts.run_folder`'s.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

from goboom_env import process
from goboom_env.agents.ppo import FrozenMlp, check_compatible, load_snapshot, open_zip, read_member, read_metadata
from goboom_env.config import GameConfig, errors_prefixed
from goboom_env.global_state import state_encoder_for
from goboom_env.hints import one_line
from goboom_env.outdir import write_atomically
from goboom_env.process import say
from goboom_env.training.artifacts.learning_curve import plot_learning_curve
from goboom_env.training.artifacts.model_files import model_metadata
from goboom_env.training.artifacts.run_folder import (
    RunFiles,
    checkpoint_to_resume,
    last_evaluated,
    load_tensors,
    planned_settings,
    start_run_folder,
    truncate_logs,
    whole_rollouts,
)
from goboom_env.training.sb3.model import build_model, evaluate_model, make_vec_env, resolve_device, save_model
from goboom_env.training.settings import TrainArgs, set_threads
from goboom_env.untrusted import parse_json


def train(args: TrainArgs, command: str | None = None) -> Path:
    """Run (or resume) one self-play training run; returns the path of the final model. ``command`` (the command
    line) is appended to ``commands.txt`` in the run folder. Everything is checked, and the environments and the
    model built, before the run folder is written; Ctrl-C saves a checkpoint that ``--resume`` continues from."""
    args = planned_settings(args, exact=True)
    config = args.game_config()
    files = RunFiles(args.out)
    checkpoint = checkpoint_to_resume(args, files.latest_checkpoint, "model_STEPS.zip", files.checkpoints,
                                      lambda path: _resumable_train_args(path, config))

    say(f"setting up: torch, {args.num_envs} environments and the model...")
    device = resolve_device(args.device)
    set_threads(args.threads)
    start = read_metadata(checkpoint)["timesteps"] if checkpoint else 0
    vec_env = make_vec_env(args, config, seed_offset=start)
    try:
        model = _resume(args, files, checkpoint, vec_env, device) if checkpoint else build_model(
            args, vec_env, str(files.tensorboard), device)
        start_run_folder(args, files, command, resume=checkpoint is not None, inputs=args.inputs())
        if not checkpoint and args.bc_games > 0:
            warm_start(model, args, config, files)
        remaining = args.timesteps - model.num_timesteps
        if remaining > 0:
            from goboom_env.training.sb3.callbacks import make_callbacks  # here: they subclass SB3's classes

            say(training_line(model.num_timesteps, args.timesteps, args.num_steps * args.num_envs))
            try:
                model.learn(remaining, callback=make_callbacks(args, config, files), progress_bar=False,
                            reset_num_timesteps=checkpoint is None, tb_log_name="ppo")
            except KeyboardInterrupt:  # a checkpoint of the steps learnt since start, named in the interruption's line
                steps = model.num_timesteps
                if steps > start:
                    path = save_model(model, files.checkpoint(steps), model_metadata(config, args, steps))
                    process.kept(f"the checkpoint {path}; continue with --resume --out {files.root}")
                raise
        save_model(model, files.model, model_metadata(config, args, model.num_timesteps))
    finally:
        _close_envs(vec_env, failing=sys.exc_info()[0] is not None)
    if args.eval_every >= 0 and last_evaluated(files) != model.num_timesteps:
        evaluate_model(files.model, files, args, config, model.num_timesteps, args.seed)
        if not files.best.exists():
            write_atomically(files.best, files.model.read_bytes())
    plot_learning_curve(files)
    return files.model


def training_line(start: int, budget: int, rollout: int) -> str:
    """The status line before learning: the steps SB3 will take (whole rollouts of ``rollout`` steps from ``start``)
    and, when the last rollout passes the budget, the budget asked for."""
    end = whole_rollouts(start, budget, rollout)
    steps = f"{end - start:,} steps" + (f" (from {start:,})" if start else "")
    extra = f"; --timesteps {budget:,} rounded up to whole rollouts of {rollout:,}" if end != budget else ""
    return f"training: {steps}{extra}..."


def _close_envs(vec_env: Any, failing: bool) -> None:
    """Close the environments; while an exception propagates (Ctrl-C also stops subprocess workers, whose pipes
    then break), a failing close must not hide it."""
    try:
        vec_env.close()
    except (EOFError, OSError):
        if not failing:
            raise


def _resumable_train_args(checkpoint: Path, config: GameConfig) -> dict[str, Any]:
    """The settings ``checkpoint`` was trained with, once checked to be a resumable checkpoint of ``config``'s game."""
    meta = read_metadata(checkpoint)
    check_compatible(meta, config, checkpoint)
    with open_zip(checkpoint) as zf:
        members = set(zf.namelist())
    if not {"data", "policy.pth"} <= members:
        raise ValueError(f"--resume: {checkpoint} is a play-only model (just the metadata and the actor, as "
                         "exported or averaged); it has no critic or optimizer state to continue training from")
    return meta.get("train_args") or {}


def _resume(args: TrainArgs, files: RunFiles, checkpoint: Path, vec_env: Any, device: str = "cpu") -> Any:
    """Rebuild the model from the run's settings, load the checkpoint's tensors into it (never SB3's own ``load``,
    which unpickles: :func:`read_checkpoint`), cut the logs back to it and refill the snapshot pool."""
    model = build_model(args, vec_env, str(files.tensorboard), device)
    params, counters = read_checkpoint(checkpoint, device)
    try:
        model.set_parameters(params, exact_match=True, device=device)
    except (KeyError, RuntimeError, ValueError, TypeError, AttributeError, IndexError) as exc:
        raise ValueError(f"--resume: the checkpoint {checkpoint} does not fit the run's network: "
                         f"{one_line(str(exc), 300)}") from None
    model.num_timesteps, model._n_updates = counters["num_timesteps"], counters["_n_updates"]
    kept = [(step, path) for step, path in files.snapshot_files() if step <= model.num_timesteps][-args.pool_size:]
    states = []
    for step, path in kept:
        try:
            state = load_snapshot(path)
            FrozenMlp.from_state(state)
            states.append((f"snapshot@{step}", state))
        except ValueError as exc:
            raise ValueError(f"--resume: the league snapshot {path} is damaged ({exc})") from exc
    truncate_logs(files, model.num_timesteps)
    for name, state in states:
        vec_env.env_method("add_snapshot", name, state)
    return model


CHECKPOINT_TENSORS = ("policy", "policy.optimizer")
"""The ``.pth`` members of an SB3 checkpoint that ``--resume`` loads: the network and its optimizer state."""
CHECKPOINT_COUNTERS = ("num_timesteps", "_n_updates")
"""The counters ``--resume`` reads from the checkpoint's JSON ``data`` member (as plain numbers only)."""


def read_checkpoint(path: Path, device: str = "cpu") -> tuple[dict[str, Any], dict[str, int]]:
    """The state dicts and counters of a ``goboom train`` checkpoint, read as tensors and JSON only: ValueError naming
    the file for anything else (a pickled object, a missing member, a damaged zip)."""
    with errors_prefixed("--resume"):  # read_member and load_tensors name the file and the member
        raw = read_member(path, "data")
        params = {name: load_tensors(io.BytesIO(read_member(path, f"{name}.pth")), f"{path} ({name}.pth)", device)
                  for name in CHECKPOINT_TENSORS}
        data = parse_json(raw, f"the checkpoint {path} is damaged: its data member")
        for name, value in params.items():
            if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
                raise ValueError(f"the checkpoint {path} is damaged: {name}.pth holds no state dict")
        counters = {key: data.get(key) if isinstance(data, dict) else None for key in CHECKPOINT_COUNTERS}
        for key, value in counters.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"the checkpoint {path} is damaged: its data member has no count {key!r}")
    return params, counters


def warm_start(model: Any, args: TrainArgs, config: GameConfig, files: RunFiles) -> dict[str, Any]:
    """Behaviour-clone ``args.bc_teacher`` into a fresh model (:mod:`.imitation`); writes ``bc.json``."""
    from goboom_env.training.imitation import clone, collect, imitate

    hidden = state_encoder_for(config) if args.privileged_critic else None
    return imitate(args.bc_teacher, args.bc_games, args.bc_epochs, files.root,
                   lambda: collect(config, args.bc_teacher, args.bc_games, seed=args.seed, hidden=hidden,
                                   progress=args.progress),
                   lambda data: clone(model, data, epochs=args.bc_epochs, seed=args.seed, progress=args.progress))
