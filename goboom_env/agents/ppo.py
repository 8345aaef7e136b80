"""The ``ppo:`` agent: a trained policy played in numpy, and the model file it is read from.

A model zip holds ``goboom_meta.json`` (the game ``config``, the ``observation_version`` it reads, the
``package_version``, ``timesteps`` and ``train_args``; a generalist's ``player_counts``, ``player_configs`` and padded
``observation_size``) and ``goboom_actor.npz``, the actor as numpy arrays (:class:`FrozenMlp`); a play-only zip holds
just those two. Playing needs no torch, and every member is read within a size bound.
"""

from __future__ import annotations

import io
import itertools
import math
import zipfile
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from goboom_env.agents.registry import check_file, parse_spec
from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import GameConfig, check_choice, errors_prefixed
from goboom_env.episode import EPISODES
from goboom_env.hints import shown
from goboom_env.history import HistoryEncoder
from goboom_env.models import model_path
from goboom_env.observation import OBSERVATION_LAYOUTS, PADDED_SIZE, observation_size, pad_observations
from goboom_env.untrusted import parse_json, read_limited

ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}


class FrozenMlp:
    """A numpy copy of an SB3 ``MlpPolicy`` actor: ``layers`` of ``(weight (out, in), bias)``, then the logits."""

    def __init__(self, layers: Sequence[tuple[np.ndarray, np.ndarray]], activation: str = "tanh") -> None:
        check_choice("activation", activation, tuple(sorted(ACTIVATIONS)))
        self.layers = [(np.ascontiguousarray(w.T, np.float32), np.asarray(b, np.float32))
                       for w, b in _checked_layers(layers)]
        self.activation = activation
        self._act = ACTIVATIONS[activation]

    @property
    def input_size(self) -> int:
        return int(self.layers[0][0].shape[0])

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Unmasked action logits for one observation vector or a batch."""
        x = np.asarray(obs, np.float32)
        *hidden, (w_out, b_out) = self.layers
        for w, b in hidden:
            x = self._act(x @ w + b)
        return x @ w_out + b_out

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> int:
        """:func:`masked_action` of this network's logits."""
        return masked_action(self.logits(obs), mask, rng)

    def state(self) -> dict[str, Any]:
        """Picklable weights (to ship to subprocess envs or save as ``.npz``)."""
        return {"layers": [(w.T.copy(), b.copy()) for w, b in self.layers], "activation": self.activation}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> FrozenMlp:
        """Inverse of :meth:`state`."""
        return cls(state["layers"], state["activation"])


def _checked_layers(layers: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The layers as float arrays; ValueError for an empty network, shapes that do not chain or end in the 54
    logits, NaN or infinite weights."""
    if not isinstance(layers, Sequence) or not layers:
        raise ValueError("the network has no layers")
    checked = []
    for i, layer in enumerate(layers):
        if not isinstance(layer, Sequence) or len(layer) != 2:
            raise ValueError(f"layer {i} must be a (weight, bias) pair")
        try:
            w, b = (np.asarray(a, np.float32) for a in layer)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"layer {i} is not numeric: {exc}") from exc
        if w.ndim != 2 or b.shape != (w.shape[0],):
            raise ValueError(f"layer {i}: weight {w.shape} and bias {b.shape} are not an (out, in) matrix and "
                             "an (out,) vector")
        if checked and w.shape[1] != checked[-1][0].shape[0]:
            raise ValueError(f"layer {i} reads {w.shape[1]} inputs but layer {i - 1} gives {checked[-1][0].shape[0]}")
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise ValueError(f"layer {i} holds NaN or infinite weights")
        checked.append((w, b))
    if checked[-1][0].shape[0] != NUM_ACTIONS:
        raise ValueError(f"the network gives {checked[-1][0].shape[0]} action logits, not {NUM_ACTIONS}")
    return checked


def masked_argmax(logits: np.ndarray, mask: np.ndarray) -> Any:
    """The highest-scored legal action of each row of ``logits`` (the last axis; ``mask`` marks the legal ones)."""
    return np.argmax(np.where(np.asarray(mask).astype(bool), logits, -np.inf), axis=-1)


def masked_action(logits: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> int:
    """A policy's legal action: the most probable one, or with ``rng`` a sample of the softmax over the legal ones;
    ValueError when none is legal or a legal score is not finite (overflowing weights)."""
    legal = np.asarray(mask).astype(bool)
    if not legal.any():
        raise ValueError("the action mask has no legal action: is it this agent's turn?")
    scores = np.where(legal, logits, -np.inf)
    if not np.isfinite(scores[legal]).all():
        raise ValueError("the network's scores of the legal actions are not finite for this observation "
                         "(its weights overflow)")
    if rng is None:
        return int(masked_argmax(scores, legal))
    p = np.exp(scores - scores.max())
    return int(rng.choice(len(p), p=p / p.sum()))


class SnapshotAgent:
    """A frozen learner snapshot as a :class:`~goboom_env.agents.Policy` (samples its actions)."""

    needs_view = False

    def __init__(self, name: str, net: FrozenMlp, seed: int | None = None, deterministic: bool = False) -> None:
        self.name = name
        self.net = net
        self.rng = None if deterministic else np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray], view: Any | None = None) -> int:
        return self.choose(observation["observation"], observation["action_mask"])

    def choose(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """:meth:`FrozenMlp.act` with this agent's generator; its errors name the agent."""
        with errors_prefixed(f"agent {self.name}"):
            return self.net.act(obs, mask, self.rng)

    def reseed(self, seed: int | None) -> None:
        """Restart the sampling generator (tournament runners call this before each game)."""
        if self.rng is not None:
            self.rng = np.random.default_rng(seed)


def save_snapshot(path: Path | io.BytesIO, state: dict[str, Any]) -> None:
    """A snapshot's weights (:meth:`FrozenMlp.state`) as ``.npz``, to a file or a buffer."""
    arrays = {f"{kind}{i}": a for i, layer in enumerate(state["layers"]) for kind, a in zip("wb", layer)}
    np.savez(path, activation=np.array(state["activation"]), **arrays)


def load_snapshot(path: Path | io.BytesIO) -> dict[str, Any]:
    """Inverse of :func:`save_snapshot` (:func:`read_npz`, bounded by :data:`MAX_PARAMETERS`); ValueError when the
    data is not such a file."""
    data = read_npz(path, 4 * MAX_PARAMETERS + 2**16)
    count = sum(1 for k in data if k.startswith("w"))
    try:
        return {"layers": [(data[f"w{i}"], data[f"b{i}"]) for i in range(count)], "activation": str(data["activation"])}
    except KeyError as exc:
        raise ValueError(f"a snapshot array is missing: {exc}") from None


MAX_PARAMETERS = 2**25
"""The most weights a network may have (128 MiB as float32; the shipped models have about 100,000): the bound on
``--net-arch`` and on the arrays a model file may declare."""


def network_size(sizes: Sequence[int]) -> int:
    """The weights and biases of an MLP whose layers have ``sizes`` units (input first, output last)."""
    return sum((a + 1) * b for a, b in itertools.pairwise(sizes))


def read_npz(source: Path | IO[bytes], max_bytes: int) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` file or buffer, each header checked before its array is allocated: no pickled
    object, at most ``max_bytes`` of data in all (a header may declare 4 TiB). ValueError naming what is wrong."""
    try:
        with zipfile.ZipFile(source) as zf:
            budget = max_bytes
            for info in zf.infolist():
                with zf.open(info) as fh:
                    shape, dtype = _npy_header(fh, info.filename)
                size = math.prod(shape) * dtype.itemsize
                if size > budget or info.file_size > max_bytes + 2**16:
                    raise ValueError(f"array {info.filename} declares {shape} of {dtype}: more than the "
                                     f"{max_bytes:,} bytes a network's weights may take")
                budget -= size
        if isinstance(source, io.IOBase):
            source.seek(0)
        with np.load(source, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except ValueError as exc:
        raise ValueError(f"not a weights .npz file: {exc}") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as exc:
        raise ValueError(f"damaged weights .npz file: {exc}") from None


def _npy_header(fh: IO[bytes], name: str) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype an ``.npy`` member declares (its array is not read); ValueError for a pickled one."""
    version = np.lib.format.read_magic(fh)
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = read(fh)
    if dtype.hasobject:
        raise ValueError(f"array {name} holds Python objects (a pickle); refused, not loaded")
    return shape, dtype


META_NAME = "goboom_meta.json"
ACTOR_NAME = "goboom_actor.npz"


def default_player_count(player_counts: Sequence[int]) -> int:
    """The table a generalist plays when a command names none: 4 players if it knows them, else its first count."""
    return 4 if 4 in player_counts else int(player_counts[0])


def trained_episode(metadata: dict[str, Any]) -> str:
    """The episode unit a model was trained on: its ``train_args["episode"]``, else ``"hand"`` (the default)."""
    episode = (metadata.get("train_args") or {}).get("episode")
    return episode if episode in EPISODES else "hand"


def trained_games(metadata: dict[str, Any]) -> list[GameConfig]:
    """Every game configuration a model plays: its ``config``, or each of a generalist's ``player_configs``."""
    if "player_configs" in metadata:
        return [GameConfig.from_dict(c) for c in metadata["player_configs"]]
    return [GameConfig.from_dict(metadata["config"])]


MEMBER_LIMITS = {META_NAME: 2**22, "data": 2**24, ACTOR_NAME: 4 * MAX_PARAMETERS + 2**16}
"""The largest size in bytes of each member of a model zip that is read; any other: :data:`MAX_MEMBER`."""
MAX_MEMBER = 2**30


def read_member(path: Path, name: str) -> bytes:
    """A member of a model zip, refused past its size limit (declared, then inflated); ValueError naming the file."""
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
    """The zip file at ``path``; ValueError unless it is a regular file (not a folder or ``/dev/zero``)."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a model file (a .zip saved by `goboom train`)")
    check_file(path, f"model file {path} does not exist",
               f"{path} is not a regular file: a model file is a .zip saved by `goboom train`")
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ValueError(f"{path} is damaged or not a goboom-env model (a zip saved by `goboom train`): "
                         f"{exc}") from None


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The checked ``goboom_meta.json`` of a saved model; ValueError when it is no readable goboom model."""
    path = Path(path)
    if is_sb3_zip(path):
        raise ValueError(f"{path} is a stable-baselines3 model without goboom metadata (it has no {META_NAME} member): "
                         f"export it with `goboom export {path} --variant VARIANT --num-players N --out "
                         "model_goboom.zip` (the game it was trained on; in Python, export_model of the training "
                         "package), then play ppo:model_goboom.zip")
    return parse_metadata(read_member(path, META_NAME), f"{path} is damaged: {META_NAME}")


def is_model_file(path: str | Path) -> bool:
    """Whether ``path`` is a goboom model file (what ``goboom export --force`` may replace)."""
    try:
        read_metadata(path)
    except ValueError:
        return False
    return True


def parse_metadata(raw: str | bytes, source: str) -> dict[str, Any]:
    """Metadata JSON checked against the schema; ValueError starting with ``source`` otherwise."""
    meta = parse_json(raw, source)
    if problem := metadata_problem(meta):
        raise ValueError(f"{source} {problem}")
    return meta


def metadata_problem(meta: Any) -> str | None:
    """What is wrong with a model's metadata, or None when every field the loaders read has its type."""
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
    """ValueError naming the mismatch between a model's metadata and the requested config (the one check of the
    ``ppo:`` and ``rllib:`` loaders); ``layouts``: the observation layouts the loader plays."""
    version = metadata.get("observation_version")
    readable = sorted(OBSERVATION_LAYOUTS[name] for name in layouts)
    if version not in readable:
        raise ValueError(f"{path} was trained on observation layout version {version}, but this loader reads "
                         f"version {' or '.join(map(str, readable))}; retrain the model")
    games = trained_games(metadata)  # a generalist plays the game of each player count it was trained for
    if config in games:
        return
    if "player_configs" not in metadata:
        raise ValueError(f"{path} was trained for a different game configuration: {_mismatch(games[0], config)}")
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
_VALUE_WORDS: dict[str, Callable[[Any], str]] = {
    "num_jokers": lambda value: "no jokers" if value == 0 else f"{value} joker{'s' * (value != 1)}",
    "target_score": lambda value: f"target score {value}",
    "after_joker": lambda value: f"after a joker: {'anything' if value == 'any' else 'follow the card under it'}",
    "scoring": lambda value: f"{value} scoring",
}
"""A game field's value in words where it is not ``"{value} {field words}"``."""


def _mismatch(trained: GameConfig, requested: GameConfig) -> str:
    """Both games in words, with the fields where they differ."""
    ours, theirs = trained.to_dict(), requested.to_dict()
    differ = [k for k in ours if ours[k] != theirs[k]]

    def words(game: dict[str, Any]) -> str:
        keys = [k for k in differ if k not in ("variant", "num_players") and game[k] is not None]  # None: not its field
        values = [_VALUE_WORDS[k](game[k]) if k in _VALUE_WORDS else f"{game[k]} {_FIELD_WORDS[k]}" for k in keys]
        return ", ".join([f"{game['variant']} Go Boom", f"{game['num_players']} players", *values])

    return (f"{words(ours)}; the requested game is {words(theirs)} "
            f"(different: {', '.join(_FIELD_WORDS[k] for k in differ)})")


def spec_config(spec: str) -> GameConfig | None:
    """The game the model of a ``ppo:`` spec was trained for (a generalist's default); None for another spec."""
    meta = spec_metadata(spec)
    return None if meta is None else GameConfig.from_dict(meta["config"])


def spec_games(spec: str) -> list[GameConfig]:
    """Every game the model of a ``ppo:`` agent spec plays (:func:`trained_games`); empty for any other spec."""
    meta = spec_metadata(spec)
    return [] if meta is None else trained_games(meta)


def spec_metadata(spec: str) -> dict[str, Any] | None:
    """The metadata of the model of a ``ppo:`` or ``ppo-ismcts:`` spec; None for another spec."""
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


SB3_MEMBERS = ("data", "policy.pth")


def is_sb3_zip(path: str | Path) -> bool:
    """Whether ``path`` is a zip of stable-baselines3's ``model.save`` without goboom metadata."""
    try:
        with open_zip(path) as zf:
            names = set(zf.namelist())
    except ValueError:
        return False
    return set(SB3_MEMBERS) <= names and META_NAME not in names


class PPOAgent(SnapshotAgent):
    """A trained model as a :class:`~goboom_env.agents.Policy`: a generalist's pads each observation to the 12-seat
    layout (``pad_players``); a history model's extends it with the view's public events (``needs_view``)."""

    def __init__(self, name: str, net: FrozenMlp, seed: int | None = None, deterministic: bool = False,
                 pad_players: int | None = None, history: HistoryEncoder | None = None) -> None:
        super().__init__(name, net, seed, deterministic)
        self.pad_players = pad_players
        self.history = history
        self.needs_view = history is not None

    def act(self, observation: dict[str, np.ndarray], view: Any | None = None) -> int:
        return self.choose(self.inputs(observation, view), observation["action_mask"])

    def inputs(self, observation: dict[str, np.ndarray], view: Any | None = None) -> np.ndarray:
        """The vector the actor reads for this observation."""
        obs = observation["observation"]
        if self.pad_players is not None:
            return pad_observations(obs, self.pad_players)
        if self.history is not None and np.shape(obs) != (self.history.size,):
            if view is None:
                raise ValueError(f"agent {self.name} reads the history layout: give it the seat's view (its "
                                 f"needs_view is True) or an observation of raw_env(observation='history')")
            return self.history.extend(obs, view.events, view.sizes, view.seat)
        return obs


def load_ppo_agent(config: GameConfig, seed: int | None = None, path: str | None = None,
                   deterministic: bool | None = None) -> PPOAgent:
    """The ``ppo:PATH`` agent: a model file or a shipped model's name, checked against ``config``; greedy, or
    sampling with ``deterministic=false`` (by default as the model's metadata says)."""
    if not path:
        raise ValueError("the ppo agent needs a model path: ppo:path/to/model.zip")
    if not isinstance(path, str):
        raise ValueError(f"the ppo agent's path must be a file path, got {path!r}")
    name, path = path, str(model_path(path))
    meta = read_metadata(path)
    check_compatible(meta, config, path, layouts=("snapshot", "history"))
    deterministic = meta.get("deterministic", True) if deterministic is None else deterministic
    actor = load_actor(path)
    generalist = "player_configs" in meta
    reads_history = meta["observation_version"] == OBSERVATION_LAYOUTS["history"]
    history = HistoryEncoder(config) if reads_history else None  # its own: it keeps facts
    size = PADDED_SIZE if generalist else history.size if history else observation_size(config.num_players)
    if actor.input_size != size:
        raise ValueError(f"{path} is damaged: its actor reads {actor.input_size} inputs, but "
                         f"{'padded observations' if generalist else 'observations'} of {config.num_players} "
                         f"players have {size}")
    return PPOAgent(f"ppo:{name}", actor, seed, deterministic=deterministic,
                    pad_players=config.num_players if generalist else None, history=history)
