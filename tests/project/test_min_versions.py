"""The floors of the core dependencies in pyproject.toml are true: the engine and env tests pass in a scratch
virtual environment holding exactly those minimum versions (slow tier: it installs packages from the registry)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers import ROOT

CORE_TESTS = ["rules/test_rules.py", "rules/test_config.py", "env/test_env_api.py", "rules/test_golden_vectors.py",
              "rules/test_invariants.py", "env/test_observation.py", "env/test_playthroughs.py",
              "rules/test_serialization.py", "agents/test_agents.py", "env/test_observation_reference.py",
              "env/test_env_outputs.py", "rules/test_action_types.py", "project/test_packaging.py"]
"""Test files that need only the core dependencies (no extra), relative to tests/."""
SOURCES = ["pyproject.toml", "README.md", "LICENSE", "goboom_env", "docs"]
"""What the copy of the project holds: the package, and the docs whose tables the env tests check."""


def core_floors() -> dict[str, str]:
    """``{"numpy": "1.24", ...}``: the ``>=`` floor of every core dependency in pyproject.toml."""
    floors = {}
    for requirement in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)", requirement.strip())
        assert match, f"core dependency {requirement!r} must be written NAME>=FLOOR"
        floors[match.group(1).lower()] = match.group(2)
    return floors


def test_core_floors_are_parsed() -> None:
    assert {"numpy", "gymnasium", "pettingzoo", "rich", "tqdm"} <= set(core_floors())


def _release(version: str) -> tuple[int, ...]:
    """``"13.0.0"`` and ``"13"`` -> ``(13,)``: a release number without trailing zeros."""
    parts = [int(p) for p in version.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _run(cmd: list[str | Path], cwd: Path, timeout: int) -> str:
    result = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    command = " ".join(map(str, cmd))
    assert result.returncode == 0, f"{command} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


@pytest.mark.slow
def test_engine_and_env_tests_pass_with_the_minimum_core_versions(tmp_path: Path) -> None:
    floors = core_floors()
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], tmp_path, 120)
    python = venv / "bin" / "python"
    pins = [f"{name}=={version}" for name, version in floors.items()]
    _run([python, "-m", "pip", "install", "-q", *pins, "pytest", "hypothesis"], tmp_path, 600)
    project = tmp_path / "project"  # a copy, so that building the wheel leaves nothing in the work tree
    project.mkdir()
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, project / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, project / name)
    _run([python, "-m", "pip", "install", "-q", "--no-deps", project], tmp_path, 300)
    installed = _run([python, "-c", "import importlib.metadata as m, sys; "
                      "print('\\n'.join(f'{n} {m.version(n)}' for n in sys.argv[1:]))", *floors], tmp_path, 60)
    for line in installed.splitlines():
        name, version = line.split()
        assert _release(version) == _release(floors[name]), f"{name} {version} is not its floor {floors[name]}"
    tests = project / "tests"
    shutil.copytree(ROOT / "tests", tests, ignore=shutil.ignore_patterns("__pycache__"))
    # the venv's pytest script (not `python -m`) so that goboom_env is imported from the installed wheel
    result = subprocess.run([venv / "bin" / "pytest", "-q", "-m", "not slow", "-p", "no:cacheprovider",
                             *CORE_TESTS], cwd=tests, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]


def test_a_pettingzoo_without_the_registry_is_named_on_import() -> None:
    code = "import sys, pettingzoo; sys.modules['pettingzoo.env_registry.registration'] = None; import goboom_env"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "ImportError: goboom-env needs PettingZoo >= 1.27 (its environment registry), found" in result.stderr
