"""Agent specs and the registry that turns them into agents (:func:`make_agent`).

A name resolves to an agent registered in this process (:func:`register_agent`), else to the ``goboom_env.agents``
entry point of that name, loaded when first used. A spec naming a ``.py`` file (``my_agents.py:Greedy,depth=2``) runs
that file and calls its class as a factory, so only the caller's own specs may name one (:class:`SpecSource`).
"""

from __future__ import annotations

import enum
import hashlib
import importlib.metadata
import importlib.util
import inspect
import re
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from goboom_env.agents.heuristics import HEURISTIC_AGENTS, HEURISTICS, make_heuristic
from goboom_env.agents.ismcts import ISMCTSAgent
from goboom_env.agents.montecarlo import MonteCarloAgent
from goboom_env.agents.policy import POLICY_MEMBERS, Policy, RandomAgent, missing_members
from goboom_env.config import GameConfig
from goboom_env.hints import close_matches, did_you_mean, shown

ENTRY_POINT_GROUP = "goboom_env.agents"

AgentFactory = Callable[..., Policy]
"""``factory(config, seed, **params) -> Policy``; for path loaders ``params`` holds ``path``."""

AGENTS: dict[str, AgentFactory] = {
    "random": RandomAgent,
    **HEURISTIC_AGENTS,
    "heuristic": make_heuristic,
    "mc": MonteCarloAgent,
    "ismcts": ISMCTSAgent,
}
"""The agents registered in this process, by name."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_LOADED: dict[str, AgentFactory] = {}  # the factories loaded from entry points
_FILE_SPEC = re.compile(r"(?P<file>(?:[A-Za-z]:[\\/])?[^:]*\.py)(?::(?P<rest>.*))?", flags=re.S)
"""``path/to/file.py`` (a Windows drive allowed), then optionally ``:Class,key=value,...``."""
_FILE_MODULES: dict[tuple[Path, int], ModuleType] = {}  # by resolved path and modification time
FILE_MODULE_PREFIX = "goboom_agent_file_"
"""The start of the module name an agent file is loaded under."""


def register_agent(name: str, factory: AgentFactory, *, replace: bool = False) -> None:
    """Make ``factory(config, seed, **params) -> Policy`` the agent called ``name`` in specs (a name taken is a
    ValueError unless ``replace=True``; it hides an entry point of that name)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"agent name must be letters, digits, '_', '.' or '-' (not first), got {name!r}")
    if name.endswith(".py"):
        raise ValueError(f"agent name {name!r} ends in .py: a spec of that name would load a file of that name")
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
    """Every agent name a spec may use: the registered ones and the installed entry points."""
    return sorted(set(AGENTS) | set(_entry_points()))


def baselines(config: GameConfig) -> list[str]:
    """Specs of the built-in baselines for a config: random, then the variant's heuristics."""
    return ["random", *HEURISTICS[config.variant]]


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split an agent spec: ``"mc:budget=200"`` -> ``("mc", {"budget": 200})``, ``"ppo:x.zip"`` -> ``("ppo",
    {"path": "x.zip"})``, ``"my.py:Greedy,depth=2"`` -> ``("my.py:Greedy", {"depth": 2})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    file_spec = _FILE_SPEC.fullmatch(spec.strip())
    if file_spec:
        return _parse_file_spec(file_spec["file"], file_spec["rest"], spec)
    name, _, rest = spec.strip().partition(":")
    if not rest:
        return name, {}
    return name, _options(rest.split(","), name, spec) if "=" in rest else {"path": rest}


def spec_files(spec: str) -> list[str]:
    """The files (or folders) ``spec`` reads, as written in it: its Python file, its ``path``."""
    try:
        name, params = parse_spec(spec)
    except ValueError:
        return []
    found = [name.rpartition(":")[0]] if is_file_spec(name) else []
    return found + ([str(params["path"])] if "path" in params else [])


def is_file_spec(spec: object) -> bool:
    """True for a spec that names a Python file (making it runs that file)."""
    return isinstance(spec, str) and _FILE_SPEC.fullmatch(spec.strip()) is not None


class SpecSource(enum.Enum):
    """Where an agent spec comes from, its value naming the place in error messages: only :attr:`CALLER`'s may
    name a Python file."""

    CALLER = "the command line or the caller's code"
    SETTINGS_FILE = "a settings file"
    RECORD = "a game record"
    WEB = "a web request"


def check_spec_source(spec: str, source: SpecSource, where: str = "") -> None:
    """ValueError when ``spec`` names a Python file but does not come from the caller (``where`` it was read)."""
    if source is not SpecSource.CALLER and is_file_spec(spec):
        raise ValueError(f"the agent spec {shown(spec)} from {where or source.value} names a Python file; a Python "
                         "file runs only when the command line (or the caller's own code) names it")


def _parse_file_spec(file: str, rest: str | None, spec: str) -> tuple[str, dict[str, Any]]:
    items = (rest or "").split(",")
    class_name = items[0].strip()
    if not class_name or "=" in class_name:
        raise ValueError(f"agent spec {spec!r} names the file {file} but no class in it: write "
                         f"{file}:ClassName[,key=value,...]")
    if not class_name.isidentifier():
        raise ValueError(f"{class_name!r} in agent spec {spec!r} is not a class name (write {file}:ClassName)")
    return f"{file}:{class_name}", _options(items[1:], f"{file}:{class_name}", spec)


def _options(items: list[str], name: str, spec: str) -> dict[str, Any]:
    """The ``key=value`` items of a spec, their values parsed (a ``path`` stays text)."""
    params: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"bad parameter {item!r} in agent spec {spec!r}: expected key=value")
        if not key.isidentifier():
            raise ValueError(f"{key!r} in agent spec {spec!r} is not an option name; a path that contains "
                             f"'=' must be written as {name}:path=PATH (paths may not contain ',')")
        params[key] = value.strip() if key == "path" else _parse_value(value.strip())
    return params


def make_agent(spec: str, config: GameConfig, seed: int | None = None, *,
               source: SpecSource = SpecSource.CALLER) -> Policy:
    """Create an agent from a spec string (see :mod:`goboom_env.agents`); ``source``: where the spec comes from."""
    check_spec_source(spec, source)
    name, params = parse_spec(spec)
    factory = _factory(name, spec)
    params = _checked_options(factory, params, name, spec)
    try:
        agent = factory(config, seed, **params)
    except TypeError as exc:
        raise ValueError(f"bad parameters for agent {name!r} in spec {spec!r}: {exc}"
                         f"{_option_hint(factory, params)}") from exc
    except ValueError as exc:  # a factory that checks its own options (``ismcts:iter=5``): add the likely one
        hint = _option_hint(factory, params)
        if not hint or hint in str(exc):
            raise
        raise ValueError(f"{exc}{hint}") from exc
    if missing := missing_members(agent):
        raise TypeError(f"agent {name!r} made a {type(agent).__name__} without {', '.join(missing)}: an agent needs "
                        f"{', '.join(POLICY_MEMBERS)} (goboom_env.agents.Policy; subclass goboom_env.agents.Agent "
                        "for the defaults)")
    return agent


def _factory(name: str, spec: str) -> AgentFactory:
    """The factory registered as ``name``, else the entry point of that name, or a file spec's class."""
    if name in AGENTS:
        return AGENTS[name]
    if name in _LOADED:
        return _LOADED[name]
    if is_file_spec(name):
        file, _, class_name = name.rpartition(":")
        return _file_factory(file, class_name, spec)
    entry = _entry_points().get(name)
    if entry is None:
        if "/" in name or "\\" in name or Path(name).is_file():
            raise ValueError(f"unknown agent {name!r} in spec {spec!r}: an agent file must be a .py file, named as "
                             "path/to/file.py:ClassName[,key=value,...]")
        known = known_agents()
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; known agents: {known}{did_you_mean(name, known)}")
    _LOADED[name] = _load(entry)
    return _LOADED[name]


def _file_factory(file: str, class_name: str, spec: str) -> AgentFactory:
    module = _load_file(file, spec)
    factory = getattr(module, class_name, None)
    if factory is None:
        classes = sorted(k for k, v in vars(module).items() if isinstance(v, type) and not k.startswith("_")
                         and v.__module__ == module.__name__)
        listed = f"; its classes: {', '.join(classes)}" if classes else "; it defines no class"
        raise ValueError(f"agent file {file} has no class {class_name!r} (spec {spec!r})"
                         f"{did_you_mean(class_name, classes)}{listed}")
    if not callable(factory):
        raise ValueError(f"{class_name} in agent file {file} is a {type(factory).__name__}, not a class "
                         f"(spec {spec!r})")
    return factory  # type: ignore[no-any-return]


def _load_file(file: str, spec: str) -> ModuleType:
    """``file`` run as a module of its own (once per process while the file is unchanged)."""
    path = Path(file).expanduser()
    check_file(path, f"agent file {file} does not exist (spec {spec!r}; looked for {path.absolute()})",
               f"agent file {file} is not a file (spec {spec!r})")
    path = path.resolve()
    key = (path, path.stat().st_mtime_ns)
    if key in _FILE_MODULES:
        return _FILE_MODULES[key]
    stem = re.sub(r"\W", "_", path.stem)
    name = f"{FILE_MODULE_PREFIX}{stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise ValueError(f"agent file {file} cannot be loaded as a Python module (spec {spec!r})")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module  # dataclasses, pickle and typing look the module up by name
    try:
        loader_spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
        where = f" (line {frames[-1].lineno})" if frames else ""
        raise ValueError(f"agent file {file} failed to load{where}: {type(exc).__name__}: {exc}") from exc
    _FILE_MODULES[key] = module
    return module


def check_file(path: Path, missing: str, not_file: str) -> None:
    """ValueError ``missing`` when nothing is at ``path`` (an agent file, a model), ``not_file`` when it is not a
    regular file (a folder, a device)."""
    if not path.exists():
        raise ValueError(missing)
    if not path.is_file():
        raise ValueError(not_file)


def _named_options(factory: Callable[..., Any]) -> tuple[dict[str, Any], bool] | None:
    """The options a factory declares (after ``config`` and ``seed``) with their annotations, and whether it takes
    ``**options``; None when its signature cannot be read."""
    try:
        parameters = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        return None
    named = [p for p in parameters[2:] if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    named += [p for p in parameters[:2] if p.kind == p.KEYWORD_ONLY]
    return {p.name: p.annotation for p in named}, any(p.kind == p.VAR_KEYWORD for p in parameters)


def _checked_options(factory: Callable[..., Any], params: dict[str, Any], name: str, spec: str) -> dict[str, Any]:
    """``params`` with every option the factory annotates as ``bool`` parsed by :func:`spec_bool`; ValueError for an
    option that a factory without ``**options`` does not declare, naming the likely one."""
    declared = _named_options(factory)
    if declared is None:
        return params
    options, takes_any = declared
    out = dict(params)
    for key, value in params.items():
        annotation = options.get(key)
        if annotation is bool or (isinstance(annotation, str) and annotation.replace(" ", "") in ("bool", "bool|None")):
            try:
                out[key] = spec_bool(key, value)
            except ValueError as exc:
                raise ValueError(f"{exc} in agent spec {spec!r}") from None
    if not takes_any and (unknown := [key for key in params if key not in options]):
        raise ValueError(f"unknown option {unknown[0]!r} for agent {name!r} in spec {spec!r}"
                         f"{did_you_mean(unknown[0], options)}; its options: {', '.join(options) or 'none'}")
    return out


def _option_hint(factory: Callable[..., Any], params: dict[str, Any]) -> str:
    """``" (iter: did you mean 'iters'?)"`` for the first undeclared option close to a declared one."""
    declared = _named_options(factory)
    if declared is None:
        return ""
    for key in params:
        if key not in declared[0] and close_matches(key, declared[0]):
            return did_you_mean(key, declared[0], about=key)
    return ""


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    return {entry.name: entry for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _load(entry: importlib.metadata.EntryPoint) -> AgentFactory:
    """Import an entry point's factory, with a clear error for a missing dependency or a wrong target."""
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
    """A boolean agent option: true/false, yes/no or 1/0 in any case (or a bool); ValueError for anything else."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip().lower() if isinstance(value, (str, int, np.integer)) else None
    if text in TRUE_WORDS or text in FALSE_WORDS:
        return text in TRUE_WORDS
    raise ValueError(f"option {option!r} must be true/false, yes/no or 1/0, got {value!r}")


def _parse_value(text: str) -> Any:
    """An option value as written in a spec: an int, a float, a boolean word, or the text itself."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in TRUE_WORDS + FALSE_WORDS:  # "1" and "0" are ints by now
        return text.lower() in TRUE_WORDS
    return text
