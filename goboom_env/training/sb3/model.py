"""The SB3 side of ``goboom train``: the vectorised self-play envs, the MaskablePPO model, its device and model file
(torch, stable-baselines3 and sb3-contrib are imported inside the functions that need them)."""

from __future__ import annotations

import io
import json
import zipfile
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from goboom_env.agents.ppo import ACTOR_NAME, META_NAME, FrozenMlp, save_snapshot
from goboom_env.config import GameConfig
from goboom_env.evaluation.baselines import evaluate_vs_baselines, evaluation_line, win_rate_columns
from goboom_env.hints import needs_extra
from goboom_env.outdir import write_atomically
from goboom_env.process import say
from goboom_env.training import privileged
from goboom_env.training.artifacts.model_files import sb3_policy_actor
from goboom_env.training.artifacts.run_folder import RunFiles, append_csv
from goboom_env.training.sb3.selfplay import SelfPlayEnv
from goboom_env.training.settings import TrainArgs, parse_opponents, sb3_ppo_kwargs


def evaluate_model(model_file: Path, files: RunFiles, args: TrainArgs, config: GameConfig, steps: int,
                   seed: int) -> dict[str, Any]:
    """The duplicate tournaments of the saved ``model_file`` against each of ``args.eval_opponents``: the row of
    ``eval.csv`` at ``steps``, appended there and returned."""
    spec = f"ppo:{model_file}"
    say(evaluation_line(steps, args.eval_opponents, args.eval_games))
    results = evaluate_vs_baselines(config, spec, args.eval_opponents, args.eval_games, seed=seed, episode=args.episode,
                                    progress=args.progress)
    row = {"timesteps": steps, **win_rate_columns(results, spec)}
    append_csv(files.eval, row, list(row))
    return row


def frozen_actor(model: Any) -> FrozenMlp:
    """The numpy copy of a MaskablePPO MlpPolicy's actor (hidden layers + action head)."""
    return FrozenMlp(*sb3_policy_actor(model.policy))


def save_model(model: Any, path: str | Path, metadata: dict[str, Any]) -> Path:
    """``model.save(path)`` plus the metadata and numpy actor that every trained policy carries (``ppo:`` plays it
    without torch), written whole and renamed into place so that an interrupted save damages nothing."""
    buf = io.BytesIO()
    model.save(buf)
    actor = io.BytesIO()
    save_snapshot(actor, frozen_actor(model).state())
    with zipfile.ZipFile(buf, "a") as zf:
        zf.writestr(META_NAME, json.dumps(metadata, indent=1))
        zf.writestr(ACTOR_NAME, actor.getvalue())
    return write_atomically(Path(path), buf.getvalue())


def make_vec_env(args: TrainArgs, config: GameConfig, seed_offset: int = 0) -> Any:
    """``num_envs`` self-play envs in a Dummy/SubprocVecEnv with a VecMonitor; a resumed run passes its step count as
    ``seed_offset`` so that it does not replay the first run's deals."""
    with needs_extra("the stable-baselines3 trainer (goboom_env.training.sb3)"):
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    opponents = parse_opponents(args.opponents)
    fns = [partial(SelfPlayEnv, config, opponents, episode=args.episode, reward=args.reward, seat=args.seat,
                   seed=int(np.random.SeedSequence([args.seed, seed_offset, rank]).generate_state(1)[0]),
                   pool_size=args.pool_size, privileged=args.privileged_critic, shaping=args.shaping, gamma=args.gamma)
           for rank in range(args.num_envs)]
    vec = SubprocVecEnv(fns, start_method="fork") if args.vec_env == "subproc" else DummyVecEnv(fns)
    return VecMonitor(vec)


def build_model(args: TrainArgs, vec_env: Any, tensorboard: str | None, device: str = "cpu") -> Any:
    """A fresh MaskablePPO with the arguments' hyperparameters (and the privileged critic when asked)."""
    with needs_extra("the stable-baselines3 trainer (goboom_env.training.sb3)"):
        from sb3_contrib import MaskablePPO

    policy: Any = "MlpPolicy"
    policy_kwargs: dict[str, Any] = {"net_arch": {"pi": list(args.net_arch), "vf": list(args.net_arch)}}
    if args.privileged_critic:
        policy = privileged.policy_class()
        policy_kwargs["public_dim"] = vec_env.get_attr("public_dim", [0])[0]
    return MaskablePPO(policy, vec_env, seed=args.seed, device=device, verbose=0,
                       tensorboard_log=tensorboard, policy_kwargs=policy_kwargs, n_steps=args.num_steps,
                       **sb3_ppo_kwargs(args))


def resolve_device(spec: str) -> str:
    """The torch device of ``--device`` (``auto``: the GPU when torch sees one); a GPU that torch cannot use is a
    ValueError, not a CPU run."""
    with needs_extra("the stable-baselines3 trainer (goboom_env.training.sb3)"):
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
