"""Trained-model files: one metadata schema and one compatibility check for every backend, and the play-only zip.

Every trained policy carries the same metadata (:func:`model_metadata`): the game ``config``, the
``observation_version`` of the layout it reads, the ``package_version`` that wrote it, the ``timesteps``
it was trained for and the ``train_args`` (among them the ``episode`` unit it was trained on,
:func:`trained_episode`). :func:`check_compatible` is the one check that a policy fits
the requested game (variant, player count and every other rule, and the observation layout); the
``ppo:`` loader (:mod:`goboom_env.training.sb3`) and the ``rllib:`` loader
(:mod:`goboom_env.training.rllib.policy`) both call it, so neither plays a policy in a game it was not
trained for.

A *generalist* (``goboom train-fast --player-counts ...``), one network for several table sizes, also records
``player_counts``, the game of each (``player_configs``) and the width of the padded observation it reads
(``observation_size``, :func:`goboom_env.observation.pad_observations`); its ``config`` is the game it plays
when a command names none (:func:`default_player_count`). :func:`check_compatible` lets it play exactly those
games.

A model zip (``goboom train``, ``goboom train-fast``) holds two members besides what its trainer
saves: ``goboom_meta.json`` (the metadata) and ``goboom_actor.npz`` (the actor network as numpy
arrays, :class:`~goboom_env.training.artifacts.numpy_actor.FrozenMlp`); a *play-only* zip holds just those two.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import zipfile
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple

import numpy as np

import goboom_env
from goboom_env.config import GameConfig
from goboom_env.episode import EPISODES
from goboom_env.hints import shown
from goboom_env.observation import OBSERVATION_LAYOUTS, PADDED_SIZE
from goboom_env.training.artifacts.numpy_actor import MAX_PARAMETERS, FrozenMlp, load_snapshot, save_snapshot
from goboom_env.untrusted import parse_json, read_limited

META_NAME = "goboom_meta.json"
"""The metadata member of a model zip."""
ACTOR_NAME = "goboom_actor.npz"
"""The numpy actor member of a model zip."""


def model_metadata(config: GameConfig, args: Any | None = None, timesteps: int = 0,
                   player_configs: Sequence[GameConfig] = (), observation: str = "snapshot") -> dict[str, Any]:
    """The metadata of a trained policy (the schema of the module docstring); ``args`` is the run's argument
    dataclass (``TrainArgs``, ``VectorArgs``, ``RLlibArgs``) or None. A generalist gives the game of each
    player count it was trained on (``player_configs``); ``config`` is then the game it plays by default.
    ``observation`` is the layout the policy reads (its ``observation_version``)."""
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


def observation_layout(metadata: dict[str, Any]) -> str:
    """The name of the observation layout a model reads (``snapshot`` or ``history``), from its version."""
    return next(name for name, version in OBSERVATION_LAYOUTS.items() if version == metadata["observation_version"])


def default_player_count(player_counts: Sequence[int]) -> int:
    """The table a generalist plays when a command names none: 4 players when it was trained for them, else the
    first count it was trained for."""
    return 4 if 4 in player_counts else int(player_counts[0])


def trained_episode(metadata: dict[str, Any]) -> str:
    """The episode unit a model was trained on, ``"hand"`` or ``"match"``: its ``train_args["episode"]``, which every
    trainer records; ``"hand"`` (every trainer's default) for a model without it (older or exported models)."""
    episode = (metadata.get("train_args") or {}).get("episode")
    return episode if episode in EPISODES else "hand"


def trained_games(metadata: dict[str, Any]) -> list[GameConfig]:
    """Every game configuration a model plays: its ``config``, or each of a generalist's ``player_configs``."""
    if "player_configs" in metadata:
        return [GameConfig.from_dict(c) for c in metadata["player_configs"]]
    return [GameConfig.from_dict(metadata["config"])]


def write_play_only(dst: str | Path, meta: dict[str, Any], actor: bytes) -> Path:
    """A zip with just the metadata and the numpy actor (what ``ppo:`` needs to play)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(META_NAME, json.dumps(meta, indent=1))
        zf.writestr(ACTOR_NAME, actor)
    return write_atomically(Path(dst), buf.getvalue())


def write_atomically(path: Path, data: bytes) -> Path:
    """Write ``data`` to a hidden file beside ``path``, then rename it to ``path``; a write or rename that fails
    removes the hidden file again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return path


MEMBER_LIMITS = {META_NAME: 2**22, "data": 2**24, ACTOR_NAME: 4 * MAX_PARAMETERS + 2**16}
"""The largest size, in bytes, of each member of a model zip that is read (the JSON metadata, SB3's JSON ``data``,
the numpy actor); any other member (the weights and the optimizer state of a checkpoint): :data:`MAX_MEMBER`."""
MAX_MEMBER = 2**30


def read_member(path: Path, name: str) -> bytes:
    """One member of a model zip, refused past its size limit (:data:`MEMBER_LIMITS`: by the size the zip declares,
    then by the bytes it really inflates to); ValueError naming the file and what is wrong with it."""
    limit = MEMBER_LIMITS.get(name, MAX_MEMBER)
    try:
        with open_zip(path) as zf:
            info = zf.getinfo(name)
            if info.file_size > limit:
                raise ValueError(f"{path} is damaged or not a goboom-env model: its {name} declares "
                                 f"{info.file_size:,} bytes, more than the {limit:,} such a member may have")
            with zf.open(info) as fh:
                return read_limited(fh, limit, f"{path} ({name})")
    except KeyError:
        raise ValueError(f"{path} is damaged or not a goboom-env model (a zip saved by `goboom train`): it has no "
                         f"{name} member") from None
    # NotImplementedError: zipfile's answer to a compression method it cannot read
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as exc:
        raise ValueError(f"{path} is damaged or not a goboom-env model: cannot read {name} ({exc})") from None


def open_zip(path: str | Path) -> zipfile.ZipFile:
    """The zip file at ``path``, opened for reading; ValueError unless it is a regular file (a folder, or a device
    such as ``/dev/zero``, which zipfile would read without end)."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a model file (a .zip saved by `goboom train`)")
    if not path.exists():
        raise ValueError(f"model file {path} does not exist")
    if not path.is_file():
        raise ValueError(f"{path} is not a regular file: a model file is a .zip saved by `goboom train`")
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ValueError(f"{path} is damaged or not a goboom-env model (a zip saved by `goboom train`): "
                         f"{exc}") from None


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The ``goboom_meta.json`` of a saved model, checked; ValueError when the file is not a readable goboom model
    (for a stable-baselines3 zip without the metadata, the export that makes one)."""
    path = Path(path)
    if is_sb3_zip(path):
        raise ValueError(sb3_zip_hint(path))
    return parse_metadata(read_member(path, META_NAME), f"{path} is damaged: {META_NAME}")


def is_model_file(path: str | Path) -> bool:
    """Whether ``path`` is a goboom model file (a zip with valid goboom metadata, as every trainer and ``goboom
    export`` write): what ``goboom export --force`` may replace."""
    try:
        read_metadata(path)
    except ValueError:
        return False
    return True


def parse_metadata(raw: str | bytes, source: str) -> dict[str, Any]:
    """Metadata JSON checked against the schema (:func:`metadata_problem`); ValueError starting with ``source``
    (what it was read from) when it is not valid JSON or not the schema."""
    try:
        meta = parse_json(raw)
    except ValueError as exc:
        raise ValueError(f"{source} is not valid JSON ({exc})") from None
    problem = metadata_problem(meta)
    if problem:
        raise ValueError(f"{source} {problem}")
    return meta


def metadata_problem(meta: Any) -> str | None:
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
            return f"needs a non-negative integer {key!r}, got {shown(meta.get(key))}"
    if not isinstance(meta.get("deterministic", True), bool):
        return f"has a non-boolean 'deterministic': {shown(meta['deterministic'])}"
    if not isinstance(meta.get("train_args") or {}, dict):
        return f"has 'train_args' that are not an object: {shown(meta['train_args'])}"
    if "player_configs" in meta:
        return _generalist_problem(meta)
    return None


def _generalist_problem(meta: dict[str, Any]) -> str | None:
    """What is wrong with a generalist's ``player_counts``, ``player_configs`` and ``observation_size``."""
    configs, counts = meta.get("player_configs"), meta.get("player_counts")
    if not isinstance(configs, list) or not configs or not all(isinstance(c, dict) for c in configs):
        return "has 'player_configs' that are not a non-empty list of game configurations"
    try:
        games = [GameConfig.from_dict(c) for c in configs]
    except (ValueError, TypeError) as exc:
        return f"has an invalid game configuration in 'player_configs': {exc}"
    if counts != [g.num_players for g in games]:
        return f"has 'player_counts' {shown(counts)} that do not match its 'player_configs'"
    if meta.get("observation_size") != PADDED_SIZE:
        return f"has 'observation_size' {shown(meta.get('observation_size'))}, not the padded {PADDED_SIZE}"
    if GameConfig.from_dict(meta["config"]) not in games:  # the game it plays when a command names none
        return "has a 'config' that is none of its 'player_configs'"
    return None


def check_compatible(metadata: dict[str, Any], config: GameConfig, path: str | Path = "model",
                     layouts: Sequence[str] = ("snapshot",)) -> None:
    """Raise ValueError naming each mismatch between a model's metadata and the requested config; ``layouts``
    are the observation layouts the caller's loader can play (the ``ppo:`` agent: both)."""
    version = metadata.get("observation_version")
    readable = sorted(OBSERVATION_LAYOUTS[name] for name in layouts)
    if version not in readable:
        raise ValueError(f"{path} was trained on observation layout version {version}, but this loader reads "
                         f"version {' or '.join(map(str, readable))}; retrain the model")
    if "player_configs" in metadata:
        _check_generalist(metadata, config, path)
        return
    trained = GameConfig.from_dict(metadata["config"])
    if trained != config:
        raise ValueError(f"{path} was trained for a different game configuration: {_mismatch(trained, config)}")


def _check_generalist(metadata: dict[str, Any], config: GameConfig, path: str | Path) -> None:
    """A generalist plays the game of each player count it was trained for, and no other."""
    games = trained_games(metadata)
    if config in games:
        return
    counts = [g.num_players for g in games]
    trained = f"a generalist trained for {games[0].variant} Go Boom at {', '.join(map(str, counts))} players"
    if config.num_players not in counts:
        raise ValueError(f"{path} is {trained}: it does not play {config.num_players} players")
    same = games[counts.index(config.num_players)]
    raise ValueError(f"{path} is {trained}, for another game configuration: at {config.num_players} players "
                     f"it plays {_mismatch(same, config)}")


_FIELD_WORDS = {"hand_size": "cards a hand", "num_decks": "decks", "num_jokers": "jokers", "scoring": "scoring",
                "target_score": "target score", "rounds": "rounds", "after_joker": "after a joker",
                "num_players": "players", "variant": "variant"}
"""How the model's mismatch message names each GameConfig field."""


def _mismatch(trained: GameConfig, requested: GameConfig) -> str:
    """``classic Go Boom, 4 players, target score 200; the requested game is jokers Go Boom, 4 players, 2 jokers,
    4 rounds (different: variant, jokers, ...)``: each game with the fields where they differ, in words."""
    ours, theirs = trained.to_dict(), requested.to_dict()
    differ = [k for k in ours if ours[k] != theirs[k]]

    def words(game: dict[str, Any]) -> str:
        parts = [f"{game['variant']} Go Boom", f"{game['num_players']} players"]
        for key in differ:
            value = game[key]
            if key in ("variant", "num_players") or value is None:  # None: a field of the other variant
                continue
            if key == "num_jokers":
                parts.append("no jokers" if value == 0 else f"{value} joker{'s' * (value != 1)}")
            elif key == "target_score":
                parts.append(f"target score {value}")
            elif key == "after_joker":
                parts.append(f"after a joker: {'anything' if value == 'any' else 'follow the card under it'}")
            elif key == "scoring":
                parts.append(f"{value} scoring")
            else:
                parts.append(f"{value} {_FIELD_WORDS[key]}")
        return ", ".join(parts)

    return (f"{words(ours)}; the requested game is {words(theirs)} "
            f"(different: {', '.join(_FIELD_WORDS[k] for k in differ)})")


def spec_config(spec: str) -> GameConfig | None:
    """The game configuration the model of a ``ppo:`` agent spec was trained for (``ppo:jokers-4p-hands``,
    ``ppo:runs/x/model.zip``, ``ppo:path=m.zip,deterministic=false``), read from its metadata (for a generalist,
    the game it plays by default); None for any other spec. ValueError when the model cannot be read."""
    meta = spec_metadata(spec)
    return None if meta is None else GameConfig.from_dict(meta["config"])


def spec_games(spec: str) -> list[GameConfig]:
    """Every game the model of a ``ppo:`` agent spec plays (:func:`trained_games`); empty for any other spec."""
    meta = spec_metadata(spec)
    return [] if meta is None else trained_games(meta)


def spec_metadata(spec: str) -> dict[str, Any] | None:
    """The metadata of the model of a ``ppo:`` or ``ppo-ismcts:`` agent spec (see :func:`spec_config`); None for any
    other spec."""
    from goboom_env.agents.registry import parse_spec
    from goboom_env.models import model_path

    name, params = parse_spec(spec)
    if name not in ("ppo", "ppo-ismcts") or not isinstance(params.get("path"), str):
        return None
    return read_metadata(model_path(params["path"]))


def load_actor(path: str | Path) -> FrozenMlp:
    """The numpy actor stored in a saved model; ValueError naming the file when it is damaged."""
    path = Path(path)
    data = read_member(path, ACTOR_NAME)
    try:
        return FrozenMlp.from_state(load_snapshot(io.BytesIO(data)))
    except ValueError as exc:
        raise ValueError(f"{path} is damaged: {ACTOR_NAME} is not a usable actor network ({exc})") from exc


def read_init_actor(model: str, obs_dim: int, net_arch: Sequence[int]) -> tuple[Path, FrozenMlp]:
    """The file and the actor of ``goboom train-fast --init-actor`` (a shipped name or a path), checked to fit a run
    whose observations have ``obs_dim`` entries and whose hidden layers are ``net_arch``; ValueError naming the model
    otherwise."""
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
    """A small, play-only copy of a saved model: just its metadata and numpy actor (no optimizer, no critic).

    It loads as ``ppo:dst`` like the full model, but cannot resume training; the shipped models are such
    exports. ``deterministic`` is recorded as the way ``ppo:dst`` plays by default (greedy or sampling)."""
    meta = {**read_metadata(src), "deterministic": bool(deterministic)}
    load_actor(src)  # refuse a damaged actor before copying it
    actor = read_member(Path(src), ACTOR_NAME)
    return write_play_only(dst, {**meta, "exported_from": str(src)}, actor)


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
        if meta.get("observation_version") != first.get("observation_version") or meta["config"] != first["config"] \
                or meta.get("player_configs") != first.get("player_configs"):  # a generalist's tables too
            raise ValueError(f"{path} was trained for another configuration or observation layout than {srcs[0]}")
        shapes = [(w.shape, b.shape) for w, b in actor.layers]
        if shapes != [(w.shape, b.shape) for w, b in actors[0].layers] or actor.activation != actors[0].activation:
            raise ValueError(f"{path} has another network shape or activation than {srcs[0]}")
    layers = [(np.mean([a.layers[i][0] for a in actors], axis=0).T, np.mean([a.layers[i][1] for a in actors], axis=0))
              for i in range(len(actors[0].layers))]
    meta = {**metas[-1], "deterministic": bool(deterministic), "averaged_from": [str(p) for p in srcs]}
    buf = io.BytesIO()
    save_snapshot(buf, {"layers": layers, "activation": actors[0].activation})
    return write_play_only(dst, meta, buf.getvalue())


# -- models trained elsewhere: stable-baselines3 / sb3-contrib models and plain PyTorch MLPs -------------------------

SB3_MEMBERS = ("data", "policy.pth")
"""The members of a zip saved by stable-baselines3's ``model.save`` that :func:`export_model` reads."""
SB3_ACTIVATIONS = {"Tanh": "tanh", "ReLU": "relu"}
"""The activation classes (their names) the numpy actor plays, and its name for each."""
_SB3_KEY = re.compile(r"mlp_extractor\.policy_net\.(\d+)\.(weight|bias)|action_net\.(weight|bias)")
_SB3_CRITIC_KEY = re.compile(r"mlp_extractor\.value_net\.\d+\.(weight|bias)|value_net\.(weight|bias)")


def is_sb3_zip(path: str | Path) -> bool:
    """Whether ``path`` is a zip saved by stable-baselines3 (``model.save``) that holds no goboom metadata: what
    :func:`export_model` turns into a model file."""
    try:
        with open_zip(path) as zf:
            names = set(zf.namelist())
    except ValueError:
        return False
    return set(SB3_MEMBERS) <= names and META_NAME not in names


def sb3_zip_hint(path: str | Path) -> str:
    """The error for a stable-baselines3 zip given where a model file is expected, with the export that fixes it."""
    return (f"{path} is a stable-baselines3 model without goboom metadata (it has no {META_NAME} member): export "
            f"it with goboom_env.training.export_model(model, config, 'model_goboom.zip') or `goboom export {path} "
            f"--variant VARIANT --num-players N --out model_goboom.zip` (the game it was trained on), then play "
            "ppo:model_goboom.zip")


class SavedSb3Policy(NamedTuple):
    """What :func:`read_sb3_zip` reads of a zip saved by an SB3 model's ``save``: the policy's state dict as numpy
    arrays, the numpy actor's name of its activation, the steps it was trained for and where it came from."""

    state: dict[str, np.ndarray]
    activation: str
    timesteps: int
    origin: str


def read_sb3_zip(path: str | Path, load_tensors: Callable[[IO[bytes], str], Any]) -> SavedSb3Policy:
    """The policy of a zip saved by an SB3 model's ``save``: the architecture from the JSON ``data`` member (its
    pickled fields are never unpickled: only the readable copies SB3 writes beside them are read), the weights from
    ``policy.pth`` through ``load_tensors(file, name)``
    (:func:`goboom_env.training.artifacts.run_folder.load_tensors`: ``torch.load`` with ``weights_only``, given by
    the caller so that this module imports no torch). ValueError naming the file when it is not such a zip or its
    policy is not an MlpPolicy with Tanh or ReLU."""
    path = Path(path)
    origin = f"the stable-baselines3 model {path}"
    raw = read_member(path, "data")
    try:
        data = parse_json(raw)
    except ValueError as exc:
        raise ValueError(f"{path} is damaged: its data member is not JSON we read ({exc})") from None
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
    """A model file of a policy trained elsewhere, that every tool plays as ``ppo:dst`` (numpy only): its
    metadata (from ``config``) and its actor as a :class:`~goboom_env.training.artifacts.numpy_actor.FrozenMlp`.
    :func:`goboom_env.training.export_model` is this function that also reads the path of a saved SB3 zip (with
    torch); this one, imported without torch, takes:

    * a stable-baselines3 / sb3-contrib model (``MaskablePPO``, ``PPO``, ...) or its ``model.policy``: an
      ``MlpPolicy`` (any ``net_arch``, ``activation_fn`` Tanh or ReLU) on the env's observation vector;
    * a :class:`SavedSb3Policy` (:func:`read_sb3_zip`);
    * a PyTorch ``nn.Sequential`` of ``Linear`` layers with ``Tanh`` or ``ReLU`` between them (one kind), from
      the observation vector to the 54 action logits, or one ``nn.Linear``;
    * the path of a goboom model file (``goboom train``, ``train-fast``): checked against ``config``, then copied
      play-only (:func:`export_policy`).

    ``config`` is the game the policy was trained on (a :class:`GameConfig`, e.g. ``env.unwrapped.config``, or a
    preset name); ``observation`` the layout it reads (``"snapshot"``, the Gymnasium view's, or ``"history"``; a
    goboom model file's metadata says its own); ``deterministic`` how ``ppo:dst`` plays by default (greedy, or
    sampling from the masked policy). A network's training run may be recorded as a trainer records its own:
    ``args``, its settings dataclass (``train_args``, among them the ``episode`` unit), and ``timesteps``, the
    steps it trained for (default: what an SB3 model says, else 0). ValueError when the network is not an MLP the
    numpy actor can play (a CNN or other features extractor with weights, a recurrent or shared-trunk network,
    another activation, layers that are not Linear) or does not read this game's observations, or when ``args``
    or ``timesteps`` is given with a goboom model file (which keeps its own)."""
    if isinstance(config, str):
        config = GameConfig.preset(config)
    if not isinstance(config, GameConfig):
        raise ValueError(f"config must be a GameConfig or a preset name, got {type(config).__name__}")
    if observation not in OBSERVATION_LAYOUTS:
        raise ValueError(f"observation must be one of {sorted(OBSERVATION_LAYOUTS)}, got {observation!r}")
    if isinstance(source, (str, Path)):
        if is_sb3_zip(source):
            raise ValueError(f"{source} is a stable-baselines3 zip: export it with goboom_env.training.export_model, "
                             "which reads its weights with torch")
        if args is not None or timesteps is not None:
            raise ValueError(f"{source} is a goboom model file: it keeps the args and timesteps of its own metadata")
        check_compatible(read_metadata(source), config, source, layouts=tuple(OBSERVATION_LAYOUTS))  # its own
        return export_policy(source, dst, deterministic)
    layers, activation, trained, origin = _foreign_actor(source)
    try:
        actor = FrozenMlp(layers, activation)
    except ValueError as exc:
        raise ValueError(f"cannot export {origin}: {exc}") from None
    from goboom_env.history import make_encoder

    size = make_encoder(config, observation).size
    if actor.input_size != size:
        raise ValueError(f"cannot export {origin}: its network reads {actor.input_size} inputs, but the {observation} "
                         f"observations of {config.variant} Go Boom at {config.num_players} players have {size}; "
                         "give the game (config) and the observation layout it was trained on")
    meta = {**model_metadata(config, args, trained if timesteps is None else timesteps, observation=observation),
            "deterministic": bool(deterministic), "exported_from": origin}
    buf = io.BytesIO()
    save_snapshot(buf, actor.state())
    return write_play_only(dst, meta, buf.getvalue())


def _foreign_actor(source: Any) -> tuple[list[tuple[np.ndarray, np.ndarray]], str, int, str]:
    """``(layers, activation, timesteps, origin)`` of an SB3 model or policy, a :class:`SavedSb3Policy` or a torch
    ``nn.Sequential``; ``layers`` are ``(weight (out, in), bias)`` as numpy arrays."""
    if isinstance(source, SavedSb3Policy):
        return _sb3_layers(source.state, source.origin), source.activation, source.timesteps, source.origin
    policy = getattr(source, "policy", None)
    if policy is not None and hasattr(policy, "state_dict"):  # an SB3 algorithm: MaskablePPO, PPO, ...
        timesteps = int(getattr(source, "num_timesteps", 0) or 0)
        layers, activation, _, _ = _sb3_policy_actor(policy)
        return layers, activation, timesteps, f"a {type(source).__name__} model"
    if hasattr(source, "mlp_extractor") and hasattr(source, "action_net"):
        return _sb3_policy_actor(source)
    if _is_a(source, "Sequential") or _is_a(source, "Linear"):  # an MLP, or a linear policy
        layers, activation = _sequential_layers(source)
        return layers, activation, 0, f"a torch nn.{type(source).__name__}"
    raise ValueError(f"cannot export a {type(source).__name__}: give a stable-baselines3 model (MaskablePPO, PPO) or "
                     "its policy, the path of its saved zip, a torch nn.Sequential of Linear layers with Tanh or ReLU, "
                     "or a goboom model file")


def _sb3_policy_actor(policy: Any) -> tuple[list[tuple[np.ndarray, np.ndarray]], str, int, str]:
    """The actor of an SB3 ``ActorCriticPolicy`` (MlpPolicy): ``mlp_extractor.policy_net`` then ``action_net``."""
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
    return _sb3_layers(state, origin), SB3_ACTIVATIONS[name], 0, origin


def _sb3_layers(state: dict[str, np.ndarray], origin: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor's layers of an SB3 policy's state dict: the Linear layers of ``mlp_extractor.policy_net`` (with
    the activation between them at the odd indices), then ``action_net``. ValueError naming the weights of anything
    else (a features extractor with weights, a shared trunk, a recurrent layer, a normalization layer)."""
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


def _sequential_layers(net: Any) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """The Linear layers and the one activation of a torch ``nn.Sequential`` (nested ones flattened; Flatten,
    Identity and Dropout, which change nothing at play time, skipped); ValueError naming any other module or
    order."""
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
    """The modules of a (nested) ``nn.Sequential`` in order, without those that change nothing at play time; a
    module that is no Sequential stands for itself."""
    if not _is_a(net, "Sequential"):
        yield net
        return
    for module in net.children():
        if _is_a(module, "Sequential"):
            yield from _flat_modules(module)
        elif not any(_is_a(module, name) for name in ("Flatten", "Identity", "Dropout")):
            yield module


def _is_a(obj: Any, class_name: str) -> bool:
    """Whether ``obj``'s class or one of its bases is named ``class_name`` (torch is not imported here)."""
    return any(cls.__name__ == class_name for cls in type(obj).__mro__)


def _array(value: Any) -> np.ndarray:
    """A torch tensor (or anything array-like) as a float32 numpy array."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().float().numpy()
    return np.asarray(value, np.float32)
