"""What produced a result, so that a report can be traced and repeated: the package version, the git commit of the
checkout holding the installed package (``"unknown"`` for a wheel), what each agent spec resolved to (the agent it
makes, or its model files) and the sha256 of every model file.
"""

from __future__ import annotations

import hashlib
import platform
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import goboom_env
from goboom_env.agents import make_agent, parse_spec
from goboom_env.config import GameConfig
from goboom_env.models import model_path

UNKNOWN = "unknown"


def provenance(specs: Iterable[str], config: GameConfig) -> dict[str, Any]:
    """``package_version``, ``python``, ``git_commit`` (or ``"unknown"``), ``git_dirty`` (None when unknown)
    and one row per agent spec and model file (:func:`agent_rows`)."""
    commit, dirty = git_commit()
    return {"package_version": goboom_env.__version__, "python": platform.python_version(),
            "git_commit": commit, "git_dirty": dirty, "agents": agent_rows(specs, config)}


def git_commit(folder: Path | None = None) -> tuple[str, bool | None]:
    """The commit of the checkout tracking ``folder`` (default: the package) and whether tracked files differ from
    it; ``("unknown", None)`` outside a checkout."""
    folder = folder or Path(goboom_env.__file__).resolve().parent
    try:
        # the package must be tracked there: a wheel installed inside some other repository is no checkout of it
        tracked = _git(folder, "ls-files", "--error-unmatch", "--", "__init__.py")
        commit = _git(folder, "rev-parse", "HEAD")
        changes = _git(folder, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN, None
    if tracked is None or commit is None or changes is None:
        return UNKNOWN, None
    return commit, bool(changes)


def agent_rows(specs: Iterable[str], config: GameConfig) -> list[dict[str, Any]]:
    """Per distinct spec: ``spec, resolves_to, sha256`` (the agent's name and None without a model, else one row per
    model file)."""
    rows = []
    for spec in dict.fromkeys(specs):
        files = model_files(spec)
        if not files:
            try:
                name = make_agent(spec, config, 0).name
            except ValueError:  # an agent this process cannot make
                name = UNKNOWN
            rows.append({"spec": spec, "resolves_to": name, "sha256": None})
        rows += [{"spec": spec, "resolves_to": str(path), "sha256": sha256(path)} for path in files]
    return rows


def model_files(spec: str) -> list[Path]:
    """The files the model of ``spec`` is loaded from (every file of a folder); ValueError when there is none."""
    _, params = parse_spec(spec)
    if "path" not in params:
        return []
    path = model_path(str(params["path"])).resolve()
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    if not path.is_file():
        raise ValueError(f"the model of agent {spec!r} is not a file or folder: {path}")
    return [path]


def sha256(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _git(folder: Path, *args: str) -> str | None:
    """``git -C folder ARGS`` output, or None when git fails."""
    done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=10,
                          check=False)
    return done.stdout.strip() if done.returncode == 0 else None
