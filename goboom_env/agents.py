"""The Policy protocol and the baseline agents, selectable by name (``make_agent``).

An agent maps what one player may know to a legal action (R3.2, R4.1): the observation dict of
the environment (``"observation"`` vector and ``"action_mask"``) and, for agents that need it,
a :class:`~goboom_env.info.PlayerView` of that seat. Randomness comes from a seeded generator.

Agent specs (CLI and Python): ``random``, ``name:key=value,key=value`` for parametrised agents,
``ppo:path/to/model.zip`` and ``rllib:path/to/checkpoint`` for learned policies (loaded lazily
by the training packages, so this module never imports them).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from goboom_env.config import GameConfig


@runtime_checkable
class Policy(Protocol):
    """Anything that picks a legal action for one seat."""

    name: str

    def act(self, observation: dict[str, np.ndarray], view: Any | None = None) -> int:
        """A legal action for the observation (``observation["action_mask"]`` marks them)."""
        ...


class RandomAgent:
    """Uniform over the legal actions: the floor every other agent must beat."""

    needs_view = False

    def __init__(self, config: GameConfig | None = None, seed: int | None = None) -> None:
        self.name = "random"
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray], view: Any | None = None) -> int:
        return int(self.rng.choice(np.flatnonzero(observation["action_mask"])))


AgentFactory = Callable[..., Policy]
"""``factory(config, seed, **params) -> Policy``; for path loaders ``params`` holds ``path``."""

AGENTS: dict[str, AgentFactory | str] = {
    "random": RandomAgent,
    "ppo": "training.sb3:load_ppo_agent",
    "rllib": "training.rllib_policy:load_rllib_agent",
}
"""Agent names -> factory, or a lazy ``"module:function"`` string (learned-policy loaders)."""


def register_agent(name: str, factory: AgentFactory | str) -> None:
    """Add an agent (or a lazy ``"module:function"`` loader) under ``name``."""
    AGENTS[name] = factory


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split an agent spec: ``"mc:budget=200"`` -> ``("mc", {"budget": 200})``;
    ``"ppo:runs/x/model.zip"`` -> ``("ppo", {"path": "runs/x/model.zip"})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    params: dict[str, Any] = {}
    if rest:
        if "=" not in rest:
            params["path"] = rest
        else:
            for item in rest.split(","):
                key, sep, value = item.partition("=")
                if not sep or not key:
                    raise ValueError(f"bad parameter {item!r} in agent spec {spec!r}: expected key=value")
                params[key.strip()] = _parse_value(value.strip())
    return name, params


def make_agent(spec: str, config: GameConfig, seed: int | None = None) -> Policy:
    """Create an agent from a spec string (see the module docstring)."""
    name, params = parse_spec(spec)
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; known agents: {sorted(AGENTS)}")
    factory = AGENTS[name]
    if isinstance(factory, str):
        module, _, attr = factory.partition(":")
        try:
            factory = getattr(importlib.import_module(module), attr)
        except ImportError as exc:
            raise ValueError(f"agent {name!r} needs an optional dependency that is missing: {exc}") from exc
    try:
        return factory(config, seed, **params)
    except TypeError as exc:
        raise ValueError(f"bad parameters for agent {name!r} in spec {spec!r}: {exc}") from exc


def _parse_value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text
