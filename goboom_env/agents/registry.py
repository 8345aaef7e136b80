"""Agent specs and the registry that turns them into agents (:func:`make_agent`).

Names resolve in two places: agents registered in this process (:func:`register_agent`; the
built-in baselines are registered here), then the ``goboom_env.agents`` entry-point group of every
installed distribution. An entry point is loaded only when its name is used, so ``ppo:`` (from
``goboom_env.training``) imports torch, and ``rllib:`` imports ray, only when such an agent is made.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from goboom_env.agents.heuristics import HEURISTIC_AGENTS, HEURISTICS, make_heuristic
from goboom_env.agents.ismcts import ISMCTSAgent
from goboom_env.agents.montecarlo import MonteCarloAgent
from goboom_env.agents.policy import POLICY_MEMBERS, Policy, RandomAgent, missing_members
from goboom_env.config import GameConfig

ENTRY_POINT_GROUP = "goboom_env.agents"
"""The entry-point group in which installed distributions declare agent factories."""

AgentFactory = Callable[..., Policy]
"""``factory(config, seed, **params) -> Policy``; for path loaders ``params`` holds ``path``."""

AGENTS: dict[str, AgentFactory] = {
    "random": RandomAgent,
    **HEURISTIC_AGENTS,
    "heuristic": make_heuristic,
    "mc": MonteCarloAgent,
    "ismcts": ISMCTSAgent,
}
"""The agents registered in this process, by name (entry points are not listed here)."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_LOADED: dict[str, AgentFactory] = {}
"""Factories loaded from entry points, by name."""


def register_agent(name: str, factory: AgentFactory, *, replace: bool = False) -> None:
    """Make ``factory`` the agent called ``name`` in specs (``name`` or ``name:key=value,...``).

    ``factory(config, seed, **params)`` must return a :class:`Policy`. A name already registered is
    a ValueError unless ``replace=True``; a registered name hides an entry point of the same name.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"agent name must be letters, digits, '_', '.' or '-' (not first), got {name!r}")
    if not callable(factory):
        raise TypeError(f"the factory of agent {name!r} must be callable, got {factory!r}")
    if name in AGENTS and not replace:
        raise ValueError(f"an agent named {name!r} is already registered; pass replace=True to replace it")
    AGENTS[name] = factory


def unregister_agent(name: str) -> None:
    """Remove an agent added with :func:`register_agent` (entry points stay available)."""
    if name not in AGENTS:
        raise ValueError(f"no agent named {name!r} is registered; registered agents: {sorted(AGENTS)}")
    del AGENTS[name]
    _LOADED.pop(name, None)


def known_agents() -> list[str]:
    """Every agent name that a spec may use: the registered ones and the installed entry points."""
    return sorted(set(AGENTS) | set(_entry_points()))


def baselines(config: GameConfig) -> list[str]:
    """Specs of the built-in baselines for a config: random, then the variant's heuristics."""
    return ["random", *HEURISTICS[config.variant]]


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
                key = key.strip()
                if not sep or not key:
                    raise ValueError(f"bad parameter {item!r} in agent spec {spec!r}: expected key=value")
                if not key.isidentifier():
                    raise ValueError(f"{key!r} in agent spec {spec!r} is not an option name; a path that contains "
                                     f"'=' must be written as {name}:path=PATH (paths may not contain ',')")
                params[key] = value.strip() if key == "path" else _parse_value(value.strip())
    return name, params


def make_agent(spec: str, config: GameConfig, seed: int | None = None) -> Policy:
    """Create an agent from a spec string (see :mod:`goboom_env.agents`)."""
    name, params = parse_spec(spec)
    factory = _factory(name, spec)
    params = _booleans_checked(factory, params, spec)
    try:
        agent = factory(config, seed, **params)
    except TypeError as exc:
        raise ValueError(f"bad parameters for agent {name!r} in spec {spec!r}: {exc}") from exc
    missing = missing_members(agent)
    if missing:
        raise TypeError(f"agent {name!r} made a {type(agent).__name__} without {', '.join(missing)}: an agent needs "
                        f"{', '.join(POLICY_MEMBERS)} (goboom_env.agents.Policy; subclass goboom_env.agents.Agent "
                        "for the defaults)")
    return agent


def _factory(name: str, spec: str) -> AgentFactory:
    """The factory registered as ``name``, else the entry point of that name, loaded once."""
    if name in AGENTS:
        return AGENTS[name]
    if name in _LOADED:
        return _LOADED[name]
    entry = _entry_points().get(name)
    if entry is None:
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; known agents: {known_agents()}")
    _LOADED[name] = _load(entry)
    return _LOADED[name]


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    return {entry.name: entry for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _load(entry: importlib.metadata.EntryPoint) -> AgentFactory:
    """Import an entry point's factory; a missing dependency or a wrong target is a clear error."""
    where = f"entry point {entry.name} = {entry.value!r} of {entry.dist.name if entry.dist else 'an installed package'}"
    try:
        factory = entry.load()
    except ModuleNotFoundError as exc:
        target = entry.module
        if exc.name and (target == exc.name or target.startswith(exc.name + ".")):
            raise ImportError(f"the {where} names a module that does not exist: {exc}") from exc
        raise ValueError(f"agent {entry.name!r} needs an optional dependency that is missing: {exc} "
                         f"({where})") from exc
    except AttributeError as exc:
        raise ImportError(f"the {where} names nothing importable: {exc}") from exc
    if not callable(factory):
        raise TypeError(f"the {where} is not callable: {factory!r}")
    return factory


TRUE_WORDS = ("true", "yes", "1")
FALSE_WORDS = ("false", "no", "0")


def spec_bool(option: str, value: Any) -> bool:
    """A boolean agent option (``deterministic=no``): True/False, 1/0 or the words true/false, yes/no, 1/0 in any
    case; anything else (``off``, ``maybe``, 2) is a ValueError naming the option, never read as true."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip().lower() if isinstance(value, (str, int, np.integer)) else None
    if text in TRUE_WORDS or text in FALSE_WORDS:
        return text in TRUE_WORDS
    raise ValueError(f"option {option!r} must be true/false, yes/no or 1/0, got {value!r}")


def _booleans_checked(factory: Callable[..., Any], params: dict[str, Any], spec: str) -> dict[str, Any]:
    """``params`` with every option that the factory annotates as ``bool`` parsed by :func:`spec_bool`."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return params
    out = dict(params)
    for key, value in params.items():
        parameter = signature.parameters.get(key)
        annotation = getattr(parameter, "annotation", None)
        if annotation is bool or (isinstance(annotation, str) and annotation.replace(" ", "") in ("bool",
                                                                                                  "bool|None")):
            try:
                out[key] = spec_bool(key, value)
            except ValueError as exc:
                raise ValueError(f"{exc} in agent spec {spec!r}") from None
    return out


def _parse_value(text: str) -> Any:
    """An option value as written in a spec: an int, a float, a boolean word, or the text itself."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false", "yes", "no"):
        return text.lower() in TRUE_WORDS
    return text
