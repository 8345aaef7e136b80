"""Writing trained-model files (the format and its reading are :mod:`goboom_env.agents.ppo`'s): the metadata every
trainer records, play-only zips, and the exports of a trained model, of averaged checkpoints or of another library's
network."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

import goboom_env
from goboom_env.agents.ppo import (
    ACTOR_NAME,
    META_NAME,
    FrozenMlp,
    check_compatible,
    is_sb3_zip,
    load_actor,
    read_member,
    read_metadata,
    save_snapshot,
)
from goboom_env.config import GameConfig, errors_prefixed
from goboom_env.observation import OBSERVATION_LAYOUTS, PADDED_SIZE
from goboom_env.outdir import write_atomically
from goboom_env.training.artifacts.run_folder import load_tensors
from goboom_env.untrusted import parse_json


def model_metadata(config: GameConfig, args: Any | None = None, timesteps: int = 0,
                   player_configs: Sequence[GameConfig] = (), observation: str = "snapshot") -> dict[str, Any]:
    """The metadata of a trained policy: ``args`` is the run's settings dataclass or None; a generalist gives the
    game of each player count (``player_configs``), ``config`` then the one it plays by default."""
    meta = {
        "config": config.to_dict(),
        "observation_version": OBSERVATION_LAYOUTS[observation],
        "package_version": goboom_env.__version__,
        "timesteps": int(timesteps),
        "train_args": dataclasses.asdict(args) if args is not None else None,
    }
    if player_configs:
        meta |= {"player_counts": [c.num_players for c in player_configs],
                 "player_configs": [c.to_dict() for c in player_configs], "observation_size": PADDED_SIZE}
    return meta


def write_play_only(dst: str | Path, meta: dict[str, Any], actor: bytes) -> Path:
    """A zip with just the metadata and the numpy actor's ``.npz`` bytes (what ``ppo:`` needs to play)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(META_NAME, json.dumps(meta, indent=1))
        zf.writestr(ACTOR_NAME, actor)
    return write_atomically(Path(dst), buf.getvalue())


def write_actor(dst: str | Path, meta: dict[str, Any], state: dict[str, Any]) -> Path:
    """:func:`write_play_only` of an actor's weights (:meth:`~goboom_env.agents.ppo.FrozenMlp.state`)."""
    buf = io.BytesIO()
    save_snapshot(buf, state)
    return write_play_only(dst, meta, buf.getvalue())


def read_init_actor(model: str, obs_dim: int, net_arch: Sequence[int]) -> tuple[Path, FrozenMlp]:
    """The file and the actor of ``--init-actor`` (a shipped name or a path), checked to read ``obs_dim`` entries
    through the hidden layers ``net_arch``; ValueError naming the model otherwise."""
    from goboom_env.models import model_path

    path = model_path(model.removeprefix("ppo:"))
    if not path.is_file():
        raise ValueError(f"init_actor: no model file {str(path)!r}")
    actor = load_actor(path)
    sizes = [w.shape[1] for w, _ in actor.layers[:-1]]
    if actor.input_size != obs_dim or sizes != list(net_arch) or actor.activation != "tanh":
        raise ValueError(f"init_actor: {path} reads {actor.input_size} observation entries with hidden layers {sizes} "
                         f"({actor.activation}); this run has {obs_dim} with {list(net_arch)} (tanh)")
    return path, actor


def export_policy(src: str | Path, dst: str | Path, deterministic: bool = True) -> Path:
    """A play-only copy of a saved model (its metadata and numpy actor: no optimizer, no critic), which ``ppo:dst``
    plays greedily or (``deterministic=False``) sampling by default."""
    meta = {**read_metadata(src), "deterministic": bool(deterministic)}
    load_actor(src)  # refuse a damaged actor before copying it
    actor = read_member(Path(src), ACTOR_NAME)
    return write_play_only(dst, {**meta, "exported_from": str(src)}, actor)


def average_policies(srcs: list[str | Path], dst: str | Path, deterministic: bool = True) -> Path:
    """A play-only model whose actor is the mean of the actors of ``srcs``, checkpoints of one run (stochastic
    weight averaging, Izmailov et al., 2018), with the last one's metadata; ValueError when their games, layouts or
    shapes differ."""
    if not srcs:
        raise ValueError("average_policies needs at least one model")
    metas = [read_metadata(p) for p in srcs]
    actors = [load_actor(p) for p in srcs]
    first = metas[0]
    for path, meta, actor in zip(srcs, metas, actors):
        if meta.get("observation_version") != first.get("observation_version") or meta["config"] != first["config"] \
                or meta.get("player_configs") != first.get("player_configs"):  # a generalist's tables too
            raise ValueError(f"{path} was trained for another configuration or observation layout than {srcs[0]}")
        shapes = [(w.shape, b.shape) for w, b in actor.layers]
        if shapes != [(w.shape, b.shape) for w, b in actors[0].layers] or actor.activation != actors[0].activation:
            raise ValueError(f"{path} has another network shape or activation than {srcs[0]}")
    layers = [(np.mean([a.layers[i][0] for a in actors], axis=0).T, np.mean([a.layers[i][1] for a in actors], axis=0))
              for i in range(len(actors[0].layers))]
    meta = {**metas[-1], "deterministic": bool(deterministic), "averaged_from": [str(p) for p in srcs]}
    return write_actor(dst, meta, {"layers": layers, "activation": actors[0].activation})


SB3_ACTIVATIONS = {"Tanh": "tanh", "ReLU": "relu"}
"""The activation classes (their names) the numpy actor plays, and its name for each."""
_SB3_KEY = re.compile(r"mlp_extractor\.policy_net\.(\d+)\.(weight|bias)|action_net\.(weight|bias)")
_SB3_CRITIC_KEY = re.compile(r"mlp_extractor\.value_net\.\d+\.(weight|bias)|value_net\.(weight|bias)")


class SavedSb3Policy(NamedTuple):
    """What :func:`read_sb3_zip` reads of a zip of an SB3 model's ``save``."""

    state: dict[str, np.ndarray]
    activation: str
    timesteps: int
    origin: str


def read_sb3_zip(path: str | Path) -> SavedSb3Policy:
    """The policy of a zip of an SB3 model's ``save``: the architecture from the JSON ``data`` member, the weights
    from ``policy.pth`` as tensors (nothing unpickled). ValueError unless it is an MlpPolicy with Tanh or ReLU."""
    path = Path(path)
    origin = f"the stable-baselines3 model {path}"
    raw = read_member(path, "data")
    data = parse_json(raw, f"{path} is damaged: its data member")
    data = data if isinstance(data, dict) else {}
    kwargs = data.get("policy_kwargs") if isinstance(data.get("policy_kwargs"), dict) else {}
    extractor = str(kwargs.get("features_extractor_class", "FlattenExtractor"))
    if "FlattenExtractor" not in extractor:
        raise ValueError(f"cannot export {origin}: its features extractor is {extractor}; the numpy actor plays an MLP "
                         "on the flat observation vector (MlpPolicy) only, not a CNN or another features extractor")
    activation = str(kwargs.get("activation_fn", "Tanh"))  # SB3's default; saved as "<class '...ReLU'>"
    found = re.search(r"(\w+)'?>?$", activation)
    name = found[1] if found else activation
    if name not in SB3_ACTIVATIONS:
        raise ValueError(f"cannot export {origin}: its activation_fn is {activation}; the numpy actor plays Tanh or "
                         "ReLU")
    state = load_tensors(io.BytesIO(read_member(path, "policy.pth")), f"{path} (policy.pth)")
    if not isinstance(state, dict):
        raise ValueError(f"{path} is damaged: policy.pth holds no state dict")
    timesteps = data.get("num_timesteps", 0)
    timesteps = timesteps if isinstance(timesteps, int) and not isinstance(timesteps, bool) and timesteps >= 0 else 0
    return SavedSb3Policy({str(key): _array(value) for key, value in state.items()}, SB3_ACTIVATIONS[name], timesteps,
                          origin)


def export_model(source: Any, config: GameConfig | str, dst: str | Path, *, observation: str = "snapshot",
                 deterministic: bool = True, args: Any | None = None, timesteps: int | None = None) -> Path:
    """A model file that every tool plays as ``ppo:dst`` (numpy only) of a policy trained elsewhere. ``source``: an
    SB3 model or its ``policy`` (an ``MlpPolicy`` with Tanh or ReLU), its saved zip (or a :class:`SavedSb3Policy`), a
    torch ``nn.Sequential`` of ``Linear`` layers with one activation between them, or a goboom model file (copied
    play-only). ``config`` (or a preset name) and ``observation``: the game and layout it was trained on;
    ``deterministic``: how ``ppo:dst`` plays by default; ``args`` and ``timesteps`` record its run. ValueError for a
    network the numpy actor cannot play or that does not read this game's observations."""
    if isinstance(config, str):
        config = GameConfig.preset(config)
    if not isinstance(config, GameConfig):
        raise ValueError(f"config must be a GameConfig or a preset name, got {type(config).__name__}")
    if observation not in OBSERVATION_LAYOUTS:
        raise ValueError(f"observation must be one of {sorted(OBSERVATION_LAYOUTS)}, got {observation!r}")
    if isinstance(source, (str, Path)) and is_sb3_zip(source):
        source = read_sb3_zip(source)
    if isinstance(source, (str, Path)):
        if args is not None or timesteps is not None:
            raise ValueError(f"{source} is a goboom model file: it keeps the args and timesteps of its own metadata")
        check_compatible(read_metadata(source), config, source, layouts=tuple(OBSERVATION_LAYOUTS))  # its own
        return export_policy(source, dst, deterministic)
    layers, activation, trained, origin = _foreign_actor(source)
    with errors_prefixed(f"cannot export {origin}"):
        actor = FrozenMlp(layers, activation)
    from goboom_env.history import make_encoder

    size = make_encoder(config, observation).size
    if actor.input_size != size:
        raise ValueError(f"cannot export {origin}: its network reads {actor.input_size} inputs, but the {observation} "
                         f"observations of {config.variant} Go Boom at {config.num_players} players have {size}; "
                         "give the game (config) and the observation layout it was trained on")
    meta = {**model_metadata(config, args, trained if timesteps is None else timesteps, observation=observation),
            "deterministic": bool(deterministic), "exported_from": origin}
    return write_actor(dst, meta, actor.state())


def _foreign_actor(source: Any) -> tuple[list[tuple[np.ndarray, np.ndarray]], str, int, str]:
    """``(layers, activation, timesteps, origin)`` of an SB3 model or policy, a :class:`SavedSb3Policy` or a torch
    ``nn.Sequential``."""
    if isinstance(source, SavedSb3Policy):
        return _sb3_layers(source.state, source.origin), source.activation, source.timesteps, source.origin
    policy = getattr(source, "policy", None)
    if policy is not None and hasattr(policy, "state_dict"):  # an SB3 algorithm: MaskablePPO, PPO, ...
        timesteps = int(getattr(source, "num_timesteps", 0) or 0)
        return *sb3_policy_actor(policy), timesteps, f"a {type(source).__name__} model"
    if hasattr(source, "mlp_extractor") and hasattr(source, "action_net"):
        return *sb3_policy_actor(source), 0, f"a stable-baselines3 {type(source).__name__}"
    if _is_a(source, "Sequential") or _is_a(source, "Linear"):  # an MLP, or a linear policy
        layers, activation = sequential_layers(source)
        return layers, activation, 0, f"a torch nn.{type(source).__name__}"
    raise ValueError(f"cannot export a {type(source).__name__}: give a stable-baselines3 model (MaskablePPO, PPO) or "
                     "its policy, the path of its saved zip, a torch nn.Sequential of Linear layers with Tanh or ReLU, "
                     "or a goboom model file")


def sb3_policy_actor(policy: Any) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """The actor's layers and activation of an SB3 ``ActorCriticPolicy`` (MlpPolicy): ``mlp_extractor.policy_net``
    then ``action_net``."""
    origin = f"a stable-baselines3 {type(policy).__name__}"
    for name in ("features_extractor", "pi_features_extractor"):
        extractor = getattr(policy, name, None)
        if extractor is not None and not _is_a(extractor, "FlattenExtractor"):
            raise ValueError(f"cannot export {origin}: its {name} is a {type(extractor).__name__}; the numpy actor "
                             "plays an MLP on the flat observation vector (MlpPolicy) only, not a CNN or another "
                             "features extractor")
    activation = getattr(policy, "activation_fn", None)
    name = getattr(activation, "__name__", type(activation).__name__)
    if name not in SB3_ACTIVATIONS:
        raise ValueError(f"cannot export {origin}: its activation_fn is {name}; the numpy actor plays Tanh or ReLU")
    state = {key: _array(value) for key, value in policy.state_dict().items()}
    return _sb3_layers(state, origin), SB3_ACTIVATIONS[name]


def _sb3_layers(state: dict[str, np.ndarray], origin: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor's layers of an SB3 policy's state dict: ``mlp_extractor.policy_net``'s Linear layers, then
    ``action_net``; ValueError naming any other weights (a features extractor, a shared trunk, ...)."""
    other = sorted(key for key in state if not (_SB3_KEY.fullmatch(key) or _SB3_CRITIC_KEY.fullmatch(key)))
    if other:
        shown = ", ".join(other[:4]) + (", ..." if len(other) > 4 else "")
        raise ValueError(f"cannot export {origin}: it has weights the numpy actor cannot play ({shown}); it plays "
                         "an MlpPolicy: Linear layers with Tanh or ReLU, no CNN, recurrent layer or shared trunk")
    if "action_net.weight" not in state:
        raise ValueError(f"cannot export {origin}: it has no action_net (not an actor-critic policy)")
    hidden: dict[int, dict[str, np.ndarray]] = {}
    for key, value in state.items():
        if (m := _SB3_KEY.fullmatch(key)) and m[1] is not None:
            hidden.setdefault(int(m[1]), {})[m[2]] = value
    indices = sorted(hidden)
    if indices != list(range(0, 2 * len(indices), 2)):
        raise ValueError(f"cannot export {origin}: its policy_net is not Linear layers each followed by an "
                         f"activation (weights at {indices})")
    layers = [(hidden[i]["weight"], hidden[i].get("bias", np.zeros(len(hidden[i]["weight"]), np.float32)))
              for i in indices if "weight" in hidden[i]]
    if len(layers) != len(indices):
        raise ValueError(f"cannot export {origin}: a policy_net layer has a bias but no weight")
    weight = state["action_net.weight"]
    return [*layers, (weight, state.get("action_net.bias", np.zeros(len(weight), np.float32)))]


def sequential_layers(net: Any) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """The Linear layers and the one activation of a torch ``nn.Sequential``; ValueError naming any other module
    or order."""
    modules = list(_flat_modules(net))
    layers, activations, previous = [], set(), None
    for module in modules:
        kind = next((name for name in ("Linear", *SB3_ACTIVATIONS) if _is_a(module, name)), None)
        if kind is None:
            raise ValueError(f"cannot export a torch nn.Sequential holding a {type(module).__name__}: the numpy actor "
                             "plays Linear layers with Tanh or ReLU between them (an MLP), not a CNN, a recurrent or "
                             "normalization layer or a custom module")
        if kind == "Linear":
            if previous == "Linear":
                raise ValueError("cannot export a torch nn.Sequential with two Linear layers in a row: put Tanh or "
                                 "ReLU between them (the numpy actor applies one after every hidden layer)")
            bias = _array(module.bias) if getattr(module, "bias", None) is not None else None
            weight = _array(module.weight)
            layers.append((weight, np.zeros(len(weight), np.float32) if bias is None else bias))
        elif previous != "Linear":
            raise ValueError(f"cannot export a torch nn.Sequential with a {type(module).__name__} that does not follow "
                             "a Linear layer")
        else:
            activations.add(SB3_ACTIVATIONS[kind])
        previous = kind
    if not layers:
        raise ValueError("cannot export a torch nn.Sequential without a Linear layer")
    if previous != "Linear":
        raise ValueError("cannot export a torch nn.Sequential that ends in an activation: its last Linear layer must "
                         "give the action logits")
    if len(activations) > 1:
        raise ValueError(f"cannot export a torch nn.Sequential mixing activations ({sorted(activations)}): the numpy "
                         "actor applies one kind after every hidden layer")
    return layers, activations.pop() if activations else "tanh"


def _flat_modules(net: Any) -> Any:
    """The modules of a (nested) ``nn.Sequential`` in order, without those that change nothing at play time."""
    if not _is_a(net, "Sequential"):
        yield net
        return
    for module in net.children():
        if _is_a(module, "Sequential"):
            yield from _flat_modules(module)
        elif not any(_is_a(module, name) for name in ("Flatten", "Identity", "Dropout")):
            yield module


def _is_a(obj: Any, class_name: str) -> bool:
    """Whether ``obj``'s class or a base is named ``class_name`` (torch is not imported here)."""
    return any(cls.__name__ == class_name for cls in type(obj).__mro__)


def _array(value: Any) -> np.ndarray:
    """A torch tensor (or anything array-like) as a float32 numpy array of its own (no view of the tensor)."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().float().numpy()
    return np.array(value, np.float32)
