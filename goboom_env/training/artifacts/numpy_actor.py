"""The learner's actor network as plain numpy: :class:`FrozenMlp`, its ``.npz`` file form, and the agent that plays it.

A frozen copy of the policy network is picklable, cheap to run one observation at a time and free of
torch, so league opponents never slow the learner and a saved model plays (``ppo:``) without torch.
"""

from __future__ import annotations

import io
import itertools
import math
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from goboom_env.cards import NUM_ACTIONS

ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}


class FrozenMlp:
    """A numpy copy of an SB3 ``MlpPolicy`` actor: hidden layers, then the action logits.

    ``layers`` is a list of ``(weight, bias)`` with weight shaped ``(out, in)`` like torch.
    """

    def __init__(self, layers: Sequence[tuple[np.ndarray, np.ndarray]], activation: str = "tanh") -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        self.layers = [(np.ascontiguousarray(w.T, np.float32), np.asarray(b, np.float32))
                       for w, b in _checked_layers(layers)]
        self.activation = activation
        self._act = ACTIVATIONS[activation]

    @property
    def input_size(self) -> int:
        """Length of the observation vectors the network reads."""
        return int(self.layers[0][0].shape[0])

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Unmasked action logits for one observation vector or a batch."""
        return self.forward(obs)[1]

    def forward(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The last hidden layer's activations (the observation itself when there is none) and the unmasked
        action logits, for one observation vector or a batch."""
        x = np.asarray(obs, np.float32)
        *hidden, (w_out, b_out) = self.layers
        for w, b in hidden:
            x = self._act(x @ w + b)
        return x, x @ w_out + b_out

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> int:
        """Most probable legal action, or a sample from the masked softmax when ``rng`` is given. ValueError when
        no action is legal or a legal action's score is not finite (weights so large that the network overflows),
        rather than a NaN probability or an illegal arg-max."""
        legal = mask.astype(bool)
        logits = np.where(legal, self.logits(obs), -np.inf)
        if not legal.any():
            raise ValueError("the action mask has no legal action")
        if not np.isfinite(logits[legal]).all():
            raise ValueError("the network's scores of the legal actions are not finite for this observation "
                             "(its weights overflow)")
        if rng is None:
            return int(np.argmax(logits))
        p = np.exp(logits - logits.max())
        return int(rng.choice(NUM_ACTIONS, p=p / p.sum()))

    def state(self) -> dict[str, Any]:
        """Picklable weights (to ship to subprocess envs or save as ``.npz``)."""
        return {"layers": [(w.T.copy(), b.copy()) for w, b in self.layers], "activation": self.activation}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> FrozenMlp:
        """Inverse of :meth:`state`."""
        return cls(state["layers"], state["activation"])


def _checked_layers(layers: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The layers as float arrays, or ValueError naming what is wrong: a network that is empty, whose shapes do
    not chain, that does not end in the NUM_ACTIONS logits, or that holds NaN or infinite weights."""
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
        try:
            return self.net.act(obs, mask, self.rng)
        except ValueError as exc:
            raise ValueError(f"agent {self.name}: {exc}") from None

    def reseed(self, seed: int | None) -> None:
        """Restart the sampling generator (tournament runners call this before each game)."""
        if self.rng is not None:
            self.rng = np.random.default_rng(seed)


def save_snapshot(path: Path | io.BytesIO, state: dict[str, Any]) -> None:
    """A snapshot's weights (:meth:`FrozenMlp.state`) as ``.npz``, to a file or a buffer."""
    arrays = {f"{kind}{i}": a for i, layer in enumerate(state["layers"]) for kind, a in zip("wb", layer)}
    np.savez(path, activation=np.array(state["activation"]), **arrays)


def load_snapshot(path: Path | io.BytesIO) -> dict[str, Any]:
    """Inverse of :func:`save_snapshot`; ValueError when the data is not such a file (pickled objects are
    refused, never loaded; arrays larger than a network of :data:`MAX_PARAMETERS` weights are refused before they
    are allocated)."""
    data = read_npz(path, 4 * MAX_PARAMETERS + 2**16)
    count = sum(1 for k in data if k.startswith("w"))
    try:
        return {"layers": [(data[f"w{i}"], data[f"b{i}"]) for i in range(count)],
                "activation": str(data["activation"])}
    except KeyError as exc:
        raise ValueError(f"a snapshot array is missing: {exc}") from None


MAX_PARAMETERS = 2**25
"""The most weights a network may have (33.5 million, 128 MiB as float32; the shipped models have about 100,000):
the bound on the networks a trainer builds (``--net-arch``) and on the arrays a model file may declare."""


def network_size(sizes: Sequence[int]) -> int:
    """The weights and biases of an MLP whose layers have ``sizes`` units (input first, output last)."""
    return sum((a + 1) * b for a, b in itertools.pairwise(sizes))


def read_npz(source: Path | IO[bytes], max_bytes: int) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` file or buffer, each header read and checked before its array is allocated: no
    pickled object, and at most ``max_bytes`` of array data in all (a header may declare any shape: a
    ``(2**20, 2**20)`` array would be 4 TiB). ValueError naming what is wrong."""
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
