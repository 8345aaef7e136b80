"""Self-play training with sb3-contrib's MaskablePPO, model metadata, and the ``ppo:`` agent loader.

:func:`train` reads top to bottom: build the game config, the vectorised :class:`SelfPlayEnv`
copies and the model (or resume one), attach the callbacks (league snapshots, CSV/TensorBoard
logging, periodic evaluation with :func:`goboom_env.evaluation.tournament.run_tournament`, checkpoints), learn,
save. A saved ``model.zip`` is an ordinary SB3 zip plus two members: ``goboom_meta.json`` (game
config, observation layout version, package version, training arguments) and ``goboom_actor.npz``
(the actor network as numpy arrays), so :func:`load_ppo_agent` plays without torch and refuses a
model trained for another configuration with a clear error.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import pickle
import re
import shutil
import sys
import time
import zipfile
import zlib
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

import numpy as np

import goboom_env
from goboom_env.agents import spec_bool
from goboom_env.config import GameConfig
from goboom_env.models import model_path
from goboom_env.observation import OBSERVATION_VERSION, observation_size
from goboom_env.training import privileged
from goboom_env.training.config import TrainArgs, parse_opponents
from goboom_env.training.selfplay import SELF, FrozenMlp, SelfPlayEnv, SnapshotAgent

META_NAME = "goboom_meta.json"
ACTOR_NAME = "goboom_actor.npz"
PROGRESS_COLUMNS = [
    "timesteps", "episodes", "ep_rew_mean", "ep_len_mean", "win_rate", "fps", "loss", "policy_gradient_loss",
    "value_loss", "entropy_loss", "approx_kl", "clip_fraction", "explained_variance",
]
"""Columns of ``progress.csv`` before the per-opponent win rates ``win_rate/<opponent>``."""


# -- model files -------------------------------------------------------------------------------------


def frozen_actor(model: Any) -> FrozenMlp:
    """The numpy copy of a MaskablePPO MlpPolicy's actor (hidden layers + action head)."""
    import torch.nn as nn

    policy = model.policy
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)] + [policy.action_net]
    layers = [(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy()) for m in linears]
    activation = {nn.Tanh: "tanh", nn.ReLU: "relu"}.get(policy.activation_fn)
    if activation is None:
        raise ValueError(f"unsupported activation {policy.activation_fn.__name__}; use Tanh or ReLU")
    return FrozenMlp(layers, activation)


def model_metadata(config: GameConfig, args: TrainArgs | None = None, timesteps: int = 0) -> dict[str, Any]:
    """What a saved model must match to be played: config, observation version, package version."""
    return {
        "config": config.to_dict(),
        "observation_version": OBSERVATION_VERSION,
        "package_version": goboom_env.__version__,
        "timesteps": int(timesteps),
        "train_args": dataclasses.asdict(args) if args is not None else None,
    }


def save_model(model: Any, path: str | Path, metadata: dict[str, Any]) -> Path:
    """``model.save(path)`` plus the metadata and numpy actor members (see the module docstring).

    The file is written whole and then renamed into place, so an interrupted save never leaves a damaged
    model or checkpoint behind."""
    buf = io.BytesIO()
    model.save(buf)
    actor = io.BytesIO()
    save_snapshot(actor, frozen_actor(model).state())
    with zipfile.ZipFile(buf, "a") as zf:
        zf.writestr(META_NAME, json.dumps(metadata, indent=1))
        zf.writestr(ACTOR_NAME, actor.getvalue())
    return _write_atomically(Path(path), buf.getvalue())


def _write_play_only(dst: str | Path, meta: dict[str, Any], actor: bytes) -> Path:
    """A zip with just the metadata and the numpy actor (what ``ppo:`` needs to play)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(META_NAME, json.dumps(meta, indent=1))
        zf.writestr(ACTOR_NAME, actor)
    return _write_atomically(Path(dst), buf.getvalue())


def _write_atomically(path: Path, data: bytes) -> Path:
    """Write ``data`` to a hidden file beside ``path``, then rename it to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)
    return path


def _read_member(path: Path, name: str) -> bytes:
    """One member of a model zip; ValueError naming the file and what is wrong with it."""
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a model file (a .zip saved by `goboom train`)")
    if not path.is_file():
        raise ValueError(f"model file {path} does not exist")
    try:
        with zipfile.ZipFile(path) as zf:
            return zf.read(name)
    except KeyError:
        raise ValueError(f"{path} is damaged or not a goboom-env model (a zip saved by `goboom train`): it has no "
                         f"{name} member") from None
    # NotImplementedError: zipfile's answer to a compression method it cannot read
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError) as exc:
        raise ValueError(f"{path} is damaged or not a goboom-env model: cannot read {name} ({exc})") from exc


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The ``goboom_meta.json`` of a saved model, checked; ValueError when the file is not a readable goboom model."""
    path = Path(path)
    try:
        meta = json.loads(_read_member(path, META_NAME))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is damaged: {META_NAME} is not valid JSON ({exc})") from exc
    problem = _metadata_problem(meta)
    if problem:
        raise ValueError(f"{path} is damaged: {META_NAME} {problem}")
    return meta


def _metadata_problem(meta: Any) -> str | None:
    """What is wrong with a model's metadata, or None when it has every field :func:`load_ppo_agent` and
    ``--resume`` read, with the right types."""
    if not isinstance(meta, dict):
        return f"must hold a JSON object, not a {type(meta).__name__}"
    if not isinstance(meta.get("config"), dict):
        return "has no game configuration ('config' object)"
    try:
        GameConfig.from_dict(meta["config"])
    except (ValueError, TypeError) as exc:
        return f"has an invalid game configuration: {exc}"
    for key in ("observation_version", "timesteps"):
        if isinstance(meta.get(key), bool) or not isinstance(meta.get(key), int) or meta[key] < 0:
            return f"needs a non-negative integer {key!r}, got {meta.get(key)!r}"
    if not isinstance(meta.get("deterministic", True), bool):
        return f"has a non-boolean 'deterministic': {meta['deterministic']!r}"
    if not isinstance(meta.get("train_args") or {}, dict):
        return f"has 'train_args' that are not an object: {meta['train_args']!r}"
    return None


def check_compatible(metadata: dict[str, Any], config: GameConfig, path: str | Path = "model") -> None:
    """Raise ValueError naming each mismatch between a model's metadata and the requested config."""
    version = metadata.get("observation_version")
    if version != OBSERVATION_VERSION:
        raise ValueError(f"{path} was trained on observation layout version {version}, but this goboom-env "
                         f"encodes version {OBSERVATION_VERSION}; retrain the model")
    trained = GameConfig.from_dict(metadata["config"])
    if trained != config:
        diffs = [f"{k}: model {v!r} vs requested {config.to_dict()[k]!r}"
                 for k, v in trained.to_dict().items() if config.to_dict()[k] != v]
        raise ValueError(f"{path} was trained for a different game configuration ({'; '.join(diffs)})")


def load_actor(path: str | Path) -> FrozenMlp:
    """The numpy actor stored in a saved model; ValueError naming the file when it is damaged."""
    path = Path(path)
    data = _read_member(path, ACTOR_NAME)
    try:
        return FrozenMlp.from_state(load_snapshot(io.BytesIO(data)))
    except ValueError as exc:
        raise ValueError(f"{path} is damaged: {ACTOR_NAME} is not a usable actor network ({exc})") from exc


def export_policy(src: str | Path, dst: str | Path, deterministic: bool = True) -> Path:
    """A small, play-only copy of a saved model: just its metadata and numpy actor (no optimizer, no critic).

    It loads as ``ppo:dst`` like the full model, but cannot resume training; the shipped models are such
    exports. ``deterministic`` is recorded as the way ``ppo:dst`` plays by default (greedy or sampling)."""
    meta = {**read_metadata(src), "deterministic": bool(deterministic)}
    load_actor(src)  # refuse a damaged actor before copying it
    actor = _read_member(Path(src), ACTOR_NAME)
    return _write_play_only(dst, {**meta, "exported_from": str(src)}, actor)


def average_policies(srcs: list[str | Path], dst: str | Path, deterministic: bool = True) -> Path:
    """A play-only model whose actor weights are the mean of the actors of ``srcs`` (checkpoints of one run).

    Averaging the weights of the last checkpoints of a run (stochastic weight averaging, Izmailov et al.,
    2018) smooths out the noise of the last PPO updates; it only makes sense for checkpoints of one run,
    which share an architecture and a basin. The metadata is the last source's, plus ``averaged_from``.
    Raises ValueError when the sources differ in configuration, observation version or network shape."""
    if not srcs:
        raise ValueError("average_policies needs at least one model")
    metas = [read_metadata(p) for p in srcs]
    actors = [load_actor(p) for p in srcs]
    first = metas[0]
    for path, meta, actor in zip(srcs, metas, actors):
        if meta.get("observation_version") != first.get("observation_version") or meta["config"] != first["config"]:
            raise ValueError(f"{path} was trained for another configuration or observation layout than {srcs[0]}")
        shapes = [(w.shape, b.shape) for w, b in actor.layers]
        if shapes != [(w.shape, b.shape) for w, b in actors[0].layers] or actor.activation != actors[0].activation:
            raise ValueError(f"{path} has another network shape or activation than {srcs[0]}")
    layers = [(np.mean([a.layers[i][0] for a in actors], axis=0).T, np.mean([a.layers[i][1] for a in actors], axis=0))
              for i in range(len(actors[0].layers))]
    meta = {**metas[-1], "deterministic": bool(deterministic), "averaged_from": [str(p) for p in srcs]}
    buf = io.BytesIO()
    save_snapshot(buf, {"layers": layers, "activation": actors[0].activation})
    return _write_play_only(dst, meta, buf.getvalue())


class PPOAgent(SnapshotAgent):
    """A trained model as a :class:`~goboom_env.agents.Policy` (greedy over the legal actions by default)."""


def load_ppo_agent(config: GameConfig, seed: int | None = None, path: str | None = None,
                   deterministic: bool | None = None) -> PPOAgent:
    """The ``ppo:PATH`` agent spec: a model saved by ``goboom train`` or a shipped model's name
    (``ppo:classic4``, see :mod:`goboom_env.models`), checked against ``config``.

    It plays the most probable legal action, or samples from the masked policy when
    ``deterministic=False`` (``ppo:path=m.zip,deterministic=false``); by default, as the model's
    metadata says (greedy unless :func:`export_policy` recorded otherwise)."""
    if not path:
        raise ValueError("the ppo agent needs a model path: ppo:path/to/model.zip")
    if not isinstance(path, str):
        raise ValueError(f"the ppo agent's path must be a file path, got {path!r}")
    name, path = path, str(model_path(path))
    meta = read_metadata(path)
    check_compatible(meta, config, path)
    deterministic = meta.get("deterministic", True) if deterministic is None else spec_bool("deterministic",
                                                                                              deterministic)
    actor = load_actor(path)
    if actor.input_size != observation_size(config.num_players):
        raise ValueError(f"{path} is damaged: its actor reads {actor.input_size} inputs, but observations of "
                         f"{config.num_players} players have {observation_size(config.num_players)}")
    return PPOAgent(f"ppo:{name}", actor, seed, deterministic=deterministic)


# -- environments and model ------------------------------------------------------------------------


def make_vec_env(args: TrainArgs, config: GameConfig, seed_offset: int = 0) -> Any:
    """``n_envs`` self-play envs in a Dummy/SubprocVecEnv with episode statistics (VecMonitor); a resumed
    run passes its step count as ``seed_offset`` so that it does not replay the first run's deals."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    opponents = parse_opponents(args.opponents)

    def factory(rank: int) -> Any:
        def make() -> SelfPlayEnv:
            return SelfPlayEnv(config, opponents, episode=args.episode, reward=args.reward, seat=args.seat,
                               seed=_env_seed(args.seed, seed_offset, rank), pool_size=args.pool_size,
                               privileged=args.privileged_critic, shaping=args.shaping, gamma=args.gamma)
        return make

    fns = [factory(i) for i in range(args.n_envs)]
    vec = SubprocVecEnv(fns, start_method="fork") if args.vec_env == "subproc" else DummyVecEnv(fns)
    return VecMonitor(vec)


def _env_seed(seed: int, offset: int, rank: int) -> int:
    return int(np.random.SeedSequence([seed, offset, rank]).generate_state(1)[0])


def build_model(args: TrainArgs, vec_env: Any, tensorboard: str | None, device: str = "cpu") -> Any:
    """A fresh MaskablePPO with the arguments' hyperparameters (and the privileged critic when asked)."""
    from sb3_contrib import MaskablePPO

    policy: Any = "MlpPolicy"
    policy_kwargs: dict[str, Any] = {"net_arch": {"pi": list(args.net_arch), "vf": list(args.net_arch)}}
    if args.privileged_critic:
        policy = privileged.policy_class()
        policy_kwargs["public_dim"] = vec_env.get_attr("public_dim", [0])[0]
    return MaskablePPO(policy, vec_env, seed=args.seed, device=device, verbose=0,
                       tensorboard_log=tensorboard, policy_kwargs=policy_kwargs, **ppo_hyperparameters(args))


def ppo_hyperparameters(args: TrainArgs) -> dict[str, Any]:
    """The PPO settings of the arguments (also applied when a run resumes, so they may change)."""
    return {"learning_rate": args.learning_rate, "n_steps": args.n_steps, "batch_size": args.batch_size,
            "n_epochs": args.n_epochs, "gamma": args.gamma, "gae_lambda": args.gae_lambda,
            "ent_coef": args.ent_coef, "clip_range": args.clip_range}


# -- callbacks ---------------------------------------------------------------------------------------


def _callback_base() -> type:
    from stable_baselines3.common.callbacks import BaseCallback

    return BaseCallback


class RunFiles:
    """The files of one run folder (see ``TrainArgs.out``)."""

    def __init__(self, out: str | Path) -> None:
        self.root = Path(out)
        self.model = self.root / "model.zip"
        self.best = self.root / "best_model.zip"
        self.eval_model = self.root / "eval_model.zip"
        self.checkpoints = self.root / "checkpoints"
        self.snapshots = self.root / "snapshots"
        self.progress = self.root / "progress.csv"
        self.eval = self.root / "eval.csv"
        self.args = self.root / "args.json"
        self.curve = self.root / "learning_curve.png"
        self.tensorboard = self.root / "tensorboard"

    def latest_checkpoint(self) -> Path | None:
        """The checkpoint with the most steps, if any (other files in the folder are ignored)."""
        found = _numbered(self.checkpoints, CHECKPOINT_NAME)
        return found[-1][1] if found else None

    def snapshot_files(self) -> list[tuple[int, Path]]:
        """``(step, path)`` of the saved league snapshots, oldest first (other files are ignored)."""
        return _numbered(self.snapshots, SNAPSHOT_NAME)


CHECKPOINT_NAME = re.compile(r"model_(\d+)\.zip")
SNAPSHOT_NAME = re.compile(r"snapshot_(\d+)\.npz")


def _numbered(folder: Path, pattern: re.Pattern[str]) -> list[tuple[int, Path]]:
    """``(step, path)`` of the files in ``folder`` whose whole name matches ``pattern``, by step."""
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := pattern.fullmatch(p.name)) and p.is_file()]
    return sorted(found)


def make_callbacks(args: TrainArgs, config: GameConfig, files: RunFiles) -> list[Any]:
    """League snapshots, logging, periodic evaluation and checkpoints, in that order."""
    base = _callback_base()

    class SelfPlayCallback(base):  # type: ignore[misc, valid-type]
        """Snapshots into the pool, checkpoints, evaluations and the progress.csv / TensorBoard rows."""

        def __init__(self) -> None:
            super().__init__()
            self.kinds = [spec for spec, _ in parse_opponents(args.opponents)]
            self.results: dict[str, deque] = defaultdict(lambda: deque(maxlen=1000))
            self.all_results: deque = deque(maxlen=1000)
            self.episodes = 0
            self.next_snapshot = self.next_checkpoint = self.next_eval = 0
            self.best = -1.0
            self.t0 = time.time()
            self.t0_steps = 0

        def _on_training_start(self) -> None:
            steps = self.num_timesteps
            self.t0_steps = steps
            self.next_snapshot = _next_multiple(steps, args.snapshot_every)
            self.next_checkpoint = _next_multiple(steps, args.checkpoint_every)
            self.next_eval = _next_multiple(steps, args.eval_every) if args.eval_every > 0 else -1
            if files.eval.exists():
                rows = list(csv.DictReader(files.eval.open()))
                key = f"win_rate/{args.eval_opponents[-1]}"
                self.best = max((float(r[key]) for r in rows if r.get(key)), default=-1.0)
            if not files.snapshot_files():
                self._snapshot()

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "won" in info:
                    kind = SELF if info["opponent"].startswith("snapshot@") else info["opponent"]
                    self.results[kind].append(float(info["won"]))
                    self.all_results.append(float(info["won"]))
                    self.episodes += 1
            steps = self.num_timesteps
            if steps >= self.next_snapshot:
                self._snapshot()
                self.next_snapshot += args.snapshot_every
            if steps >= self.next_checkpoint:
                save_model(self.model, files.checkpoints / f"model_{steps}.zip", model_metadata(config, args, steps))
                self.next_checkpoint += args.checkpoint_every
            if self.next_eval > 0 and steps >= self.next_eval:
                self._evaluate()
                self.next_eval += args.eval_every
            return True

        def _snapshot(self) -> None:
            name = f"snapshot@{self.num_timesteps}"
            state = frozen_actor(self.model).state()
            self.training_env.env_method("add_snapshot", name, state)
            files.snapshots.mkdir(parents=True, exist_ok=True)
            save_snapshot(files.snapshots / f"{name.replace('@', '_')}.npz", state)

        def _on_rollout_end(self) -> None:
            values = self.model.logger.name_to_value
            buffer = self.model.ep_info_buffer or []
            elapsed = max(time.time() - self.t0, 1e-9)
            row: dict[str, Any] = {
                "timesteps": self.num_timesteps, "episodes": self.episodes,
                "ep_rew_mean": _mean([e["r"] for e in buffer]), "ep_len_mean": _mean([e["l"] for e in buffer]),
                "win_rate": _mean(self.all_results), "fps": round((self.num_timesteps - self.t0_steps) / elapsed),
            }
            for key in PROGRESS_COLUMNS[6:]:
                row[key] = values.get(f"train/{key}", "")
            for kind in self.kinds:
                row[f"win_rate/{kind}"] = _mean(self.results[kind])
            for key, value in row.items():
                if key not in ("timesteps", "loss") and value != "" and not key.startswith("train"):
                    self.logger.record(f"selfplay/{key}", value)
            _append_csv(files.progress, row, PROGRESS_COLUMNS + [f"win_rate/{k}" for k in self.kinds])

        def _evaluate(self) -> None:
            save_model(self.model, files.eval_model, model_metadata(config, args, self.num_timesteps))
            row = evaluate_model(config, files.eval_model, args.eval_opponents, args.eval_games,
                                 seed=args.seed + self.num_timesteps, episode=args.episode)
            row = {"timesteps": self.num_timesteps, **row}
            _append_csv(files.eval, row, list(row))
            for key, value in row.items():
                if key != "timesteps":
                    self.logger.record(f"eval/{key}", value)
            score = row[f"win_rate/{args.eval_opponents[-1]}"]
            if score > self.best:
                self.best = score
                shutil.copyfile(files.eval_model, files.best)

    return [SelfPlayCallback()]


def evaluate_model(config: GameConfig, path: str | Path, opponents: list[str], games: int, *, seed: int = 0,
                   episode: str = "hand") -> dict[str, float]:
    """1-vs-(n-1) duplicate tournaments of ``ppo:path`` against each baseline (the evaluation runner)."""
    from goboom_env.evaluation.tournament import run_tournament

    spec = f"ppo:{path}"
    row: dict[str, float] = {}
    for opponent in opponents:
        result = run_tournament(config, [spec] + [opponent] * (config.num_players - 1), games, seed=seed,
                                duplicate=True, episode=episode, progress=False)
        mine = next(r for r in result.table() if r["agent"] == spec)
        row[f"win_rate/{opponent}"] = float(mine["win_rate"])
        row[f"ci_low/{opponent}"] = float(mine["ci_low"])
        row[f"ci_high/{opponent}"] = float(mine["ci_high"])
    return row


def save_snapshot(path: Path | io.BytesIO, state: dict[str, Any]) -> None:
    """A snapshot's weights (:meth:`FrozenMlp.state`) as ``.npz``, to a file or a buffer."""
    arrays = {f"{kind}{i}": a for i, layer in enumerate(state["layers"]) for kind, a in zip("wb", layer)}
    np.savez(path, activation=np.array(state["activation"]), **arrays)


def load_snapshot(path: Path | io.BytesIO) -> dict[str, Any]:
    """Inverse of :func:`save_snapshot`; ValueError when the data is not such a file (pickled objects are
    refused, never loaded)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            count = sum(1 for k in data.files if k.startswith("w"))
            return {"layers": [(data[f"w{i}"], data[f"b{i}"]) for i in range(count)],
                    "activation": str(data["activation"])}
    except KeyError as exc:
        raise ValueError(f"a snapshot array is missing: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"not a weights .npz file: {exc}") from exc
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise ValueError(f"damaged weights .npz file: {exc}") from exc


# -- the training run ------------------------------------------------------------------------------


def train(args: TrainArgs, command: str | None = None) -> Path:
    """Run (or resume) one self-play training run; returns the path of the final model. ``command`` (the
    command line) is appended to ``commands.txt`` in the run folder, the exact history of a resumed run.

    Every argument, the run folder and the device are checked before any work, and nothing is written
    to the run folder until the environments and the model are built, so a refused invocation leaves no
    trace. A KeyboardInterrupt (Ctrl-C) during learning saves a checkpoint that ``--resume`` continues
    from, then propagates."""
    args.validate()
    config = args.game_config()
    files = RunFiles(args.out)
    checkpoint = _check_run_folder(args, config, files)
    import torch

    device = resolve_device(args.device)
    torch.set_num_threads(args.threads)
    start = read_metadata(checkpoint)["timesteps"] if checkpoint else 0
    vec_env = make_vec_env(args, config, seed_offset=start)
    try:
        model = _resume(args, files, checkpoint, vec_env, device) if checkpoint else build_model(
            args, vec_env, str(files.tensorboard), device)
        start_run_folder(args, files, command)
        if not checkpoint and args.bc_games > 0:
            warm_start(model, args, config, files)
        remaining = args.timesteps - model.num_timesteps
        if remaining > 0:
            try:
                model.learn(remaining, callback=make_callbacks(args, config, files), progress_bar=args.progress,
                            reset_num_timesteps=checkpoint is None, tb_log_name="ppo")
            except KeyboardInterrupt:
                _save_interrupted(model, args, config, files, start)
                raise
        save_model(model, files.model, model_metadata(config, args, model.num_timesteps))
    finally:
        _close_envs(vec_env, failing=sys.exc_info()[0] is not None)
    if args.eval_every >= 0 and _last_evaluated(files) != model.num_timesteps:
        row = evaluate_model(config, files.model, args.eval_opponents, args.eval_games, seed=args.seed,
                             episode=args.episode)
        _append_csv(files.eval, {"timesteps": model.num_timesteps, **row}, ["timesteps", *row])
        if not files.best.exists():
            shutil.copyfile(files.model, files.best)
    plot_learning_curve(files)
    return files.model


def _close_envs(vec_env: Any, failing: bool) -> None:
    """Close the environments; while an exception propagates (Ctrl-C also stops subprocess workers, whose pipes
    then break), a failing close must not hide it."""
    try:
        vec_env.close()
    except (EOFError, OSError):
        if not failing:
            raise


def resolve_device(spec: str) -> str:
    """The torch device of ``--device``: ``auto`` picks the GPU when torch sees one; asking for a GPU that torch
    cannot use (none present, a CPU-only torch, an index past the last GPU) is a ValueError, not a CPU run."""
    import torch

    if spec == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        device = torch.device(spec)
    except RuntimeError as exc:
        raise ValueError(f"--device {spec!r} is not a torch device; use cpu, cuda, cuda:N or auto") from exc
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ValueError(f"--device {spec}: torch sees no CUDA GPU here; use --device cpu (or auto)")
        if device.index is not None and device.index >= count:
            raise ValueError(f"--device {spec}: torch sees {count} CUDA GPU(s), numbered 0..{count - 1}")
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"--device {spec}: the MPS backend is not available here; use --device cpu (or auto)")
    elif device.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"--device {spec!r} is not supported; use cpu, cuda, cuda:N or auto")
    return spec


def start_run_folder(args: Any, files: RunFiles, command: str | None) -> None:
    """Create the run folder (emptied first with ``args.force``) and write ``args.json`` (``args`` is the run's
    argument dataclass) and the ``commands.txt`` line."""
    try:
        if args.force and files.root.is_dir():
            shutil.rmtree(files.root)
        files.root.mkdir(parents=True, exist_ok=True)
        files.args.write_text(json.dumps(dataclasses.asdict(args), indent=1))
        if command:
            with (files.root / "commands.txt").open("a") as fh:
                fh.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')}  {command}\n")
    except OSError as exc:
        raise ValueError(f"cannot write the run folder {files.root}: {exc.strerror or exc}") from exc


def check_run_folder_rule(root: Path, *, resume: bool, force: bool) -> None:
    """The output-folder rule of every training command: a non-empty ``root`` needs ``--resume`` (continue)
    or ``--force`` (replace), never both; ValueError otherwise."""
    if resume and force:
        raise ValueError("--force starts the run over and --resume continues it: give one of them")
    if not resume and not force and root.is_dir() and any(root.iterdir()):
        raise ValueError(f"--out {root} already exists and is not empty; pass --resume to continue its "
                         "run, --force to replace it, or choose another --out")


def _save_interrupted(model: Any, args: TrainArgs, config: GameConfig, files: RunFiles, start: int) -> None:
    """After Ctrl-C: save a checkpoint of the steps learnt since ``start`` and say how to continue."""
    steps = model.num_timesteps
    if steps <= start:
        return
    path = save_model(model, files.checkpoints / f"model_{steps}.zip", model_metadata(config, args, steps))
    print(f"goboom train: interrupted at step {steps}; saved {path}; continue with --resume --out {files.root}",
          file=sys.stderr, flush=True)


def _check_run_folder(args: TrainArgs, config: GameConfig, files: RunFiles) -> Path | None:
    """The checkpoint to resume from (None for a fresh run); refuses to overwrite a run or mix configs."""
    check_run_folder_rule(files.root, resume=args.resume, force=args.force)
    if not args.resume:
        return None
    checkpoint = files.latest_checkpoint()
    if checkpoint is None:
        raise ValueError(f"--resume: no checkpoint (model_STEPS.zip) in {files.checkpoints}")
    meta = read_metadata(checkpoint)
    check_compatible(meta, config, checkpoint)
    with zipfile.ZipFile(checkpoint) as zf:
        members = set(zf.namelist())
    if not {"data", "policy.pth"} <= members:
        raise ValueError(f"--resume: {checkpoint} is a play-only model (just the metadata and the actor, as "
                         "exported or averaged); it has no critic or optimizer state to continue training from")
    saved = meta.get("train_args") or {}
    if list(saved.get("net_arch", args.net_arch)) != list(args.net_arch):
        raise ValueError(f"--resume: net_arch {args.net_arch} differs from the checkpoint's {saved['net_arch']}")
    if bool(saved.get("privileged_critic", False)) != args.privileged_critic:
        raise ValueError(f"--resume: privileged_critic={args.privileged_critic} differs from the checkpoint's "
                         f"{bool(saved.get('privileged_critic', False))}")
    return checkpoint


def _resume(args: TrainArgs, files: RunFiles, checkpoint: Path, vec_env: Any, device: str = "cpu") -> Any:
    """Load the checkpoint with the current PPO settings, cut the logs back to it, refill the snapshot pool."""
    from sb3_contrib import MaskablePPO

    try:
        model = MaskablePPO.load(checkpoint, env=vec_env, device=device,
                                 tensorboard_log=str(files.tensorboard), **ppo_hyperparameters(args))
    except (zipfile.BadZipFile, zlib.error, KeyError, EOFError, OSError, RuntimeError, ValueError,
            pickle.UnpicklingError) as exc:
        raise ValueError(f"--resume: cannot load the checkpoint {checkpoint}: {exc!r}") from exc
    kept = [(step, path) for step, path in files.snapshot_files() if step <= model.num_timesteps][-args.pool_size:]
    states = []
    for step, path in kept:
        try:
            state = load_snapshot(path)
            FrozenMlp.from_state(state)
            states.append((f"snapshot@{step}", state))
        except ValueError as exc:
            raise ValueError(f"--resume: the league snapshot {path} is damaged ({exc})") from exc
    for log in (files.progress, files.eval):  # rows written after the checkpoint are replayed
        _truncate_csv(log, model.num_timesteps)
    for name, state in states:
        vec_env.env_method("add_snapshot", name, state)
    return model


def warm_start(model: Any, args: TrainArgs, config: GameConfig, files: RunFiles) -> dict[str, Any]:
    """Behaviour-clone ``args.bc_teacher`` into a fresh model (:mod:`goboom_env.training.imitation`); writes ``bc.json``."""
    from goboom_env.training.imitation import clone, collect

    started = time.perf_counter()
    hidden = privileged.HiddenEncoder(config) if args.privileged_critic else None
    data = collect(config, args.bc_teacher, args.bc_games, seed=args.seed, hidden=hidden)
    stats = clone(model, data, epochs=args.bc_epochs, seed=args.seed)
    report = {"teacher": args.bc_teacher, "games": args.bc_games, "decisions": len(data), **stats,
              "seconds": round(time.perf_counter() - started, 1)}
    (files.root / "bc.json").write_text(json.dumps(report, indent=1))
    return report


def plot_learning_curve(files: RunFiles) -> Path | None:
    """Win rate vs training steps (training episodes per opponent, evaluations with 95% CI) as a PNG."""
    if not files.progress.exists():
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(files.progress.open()))
    fig, ax = plt.subplots(figsize=(7, 4))
    steps = [int(r["timesteps"]) for r in rows]
    for key in [k for k in (rows[0] if rows else {}) if k.startswith("win_rate/")]:
        ys = [float(r[key]) if r[key] not in ("", "nan") else np.nan for r in rows]
        ax.plot(steps, ys, lw=1, alpha=0.7, label=f"training vs {key.split('/', 1)[1]} (last 1000 episodes)")
    if files.eval.exists():
        evals = list(csv.DictReader(files.eval.open()))
        for key in [k for k in (evals[0] if evals else {}) if k.startswith("win_rate/")]:
            name = key.split("/", 1)[1]
            xs = [int(r["timesteps"]) for r in evals]
            ys = np.array([float(r[key]) for r in evals])
            lo = ys - np.array([float(r[f"ci_low/{name}"]) for r in evals])
            hi = np.array([float(r[f"ci_high/{name}"]) for r in evals]) - ys
            ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=f"evaluation vs {name} (95% CI)")
    if rows:
        n = json.loads(files.args.read_text())["players"] if files.args.exists() else 4
        ax.axhline(1 / n, color="grey", ls="--", lw=1, label=f"parity 1/{n}")
    ax.set_xlabel("training steps (learner decisions)")
    ax.set_ylabel("win rate")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(files.curve, dpi=100)
    plt.close(fig)
    return files.curve


def _last_evaluated(files: RunFiles) -> int | None:
    rows = list(csv.DictReader(files.eval.open())) if files.eval.exists() else []
    return int(rows[-1]["timesteps"]) if rows else None


def _next_multiple(steps: int, every: int) -> int:
    return (steps // every + 1) * every if every > 0 else 1 << 62


def _mean(values: Any) -> float | str:
    values = list(values)
    return round(float(np.mean(values)), 4) if values else ""


def _truncate_csv(path: Path, timesteps: int) -> None:
    """Drop the rows of a log written after ``timesteps`` (the checkpoint a resumed run restarts from)."""
    if not path.exists():
        return
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        columns, rows = reader.fieldnames or [], [r for r in reader if int(r["timesteps"]) <= timesteps]
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def _append_csv(path: Path, row: dict[str, Any], columns: list[str]) -> None:
    new = not path.exists()
    with path.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerow(row)
