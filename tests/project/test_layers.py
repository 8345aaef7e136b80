"""The import layers declared in pyproject.toml hold (``lint-imports``), and the agents layer names no
higher layer, not even in a string: learned agents come in through the ``goboom_env.agents`` entry points."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers import ROOT, python_output

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_import_contracts_hold() -> None:
    pytest.importorskip("importlinter")
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_the_layer_contract_places_every_module_of_the_package() -> None:
    """The contract is exhaustive, so a new module of goboom_env fails lint-imports until it is placed."""
    (contract,) = [c for c in PYPROJECT["tool"]["importlinter"]["contracts"] if c["id"] == "layers"]
    assert contract["exhaustive"] is True
    placed = {name.strip() for layer in contract["layers"] for name in layer.replace(":", "|").split("|")}
    children = {p.stem if p.suffix == ".py" else p.name for p in (ROOT / "goboom_env").iterdir()
                if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()}
    old_paths = set(contract.get("exhaustive_ignores", []))  # forward to their new modules
    assert old_paths <= children
    assert children - old_paths == placed
    assert contract["layers"][:4] == ["cli", "web", "training", "evaluation"]


def _library_sources(*packages: str) -> list[Path]:
    return [p for name in packages for p in sorted((ROOT / "goboom_env" / name).rglob("*.py"))]


@pytest.mark.parametrize("path", _library_sources("agents"),
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_agents_layer_names_no_higher_layer_even_in_strings(path: Path) -> None:
    code = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(code)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and ast.get_docstring(node)}
    for node in ast.walk(code):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            for higher in ("goboom_env.training", "goboom_env.evaluation", "goboom_env.cli"):
                assert higher not in node.value, f"{path.name}:{node.lineno} names {higher} in a string"


@pytest.mark.parametrize("name", ["ppo", "rllib"])
def test_learned_agent_entry_points_name_an_existing_factory(name: str) -> None:
    """Checked from the source, without importing torch or ray: the target module exists and defines the
    function (a moved loader fails here, not at the first ``ppo:`` spec). Installed metadata agrees."""
    target = PYPROJECT["project"]["entry-points"]["goboom_env.agents"][name]
    module, _, function = target.partition(":")
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, f"{name} = {target!r}: no module {module}"
    tree = ast.parse(Path(spec.origin).read_text())
    defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    assert function in defined | imported, f"{name} = {target!r}: {module} has no {function}"
    installed = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="goboom_env.agents")}
    assert installed.get(name) == target, "reinstall the package (pip install -e .) to register the entry points"


LIGHT_TRAINING_MODULES = [
    "goboom_env.training.settings", "goboom_env.training.artifacts.model_files",
    "goboom_env.agents.ppo", "goboom_env.training.artifacts.run_folder",
    "goboom_env.training.artifacts.learning_curve", "goboom_env.training.opponents", "goboom_env.training.shaping",
    "goboom_env.training.fast", "goboom_env.training.fast.ppo", "goboom_env.training.sb3",
    "goboom_env.training.rllib", "goboom_env.training.rllib.cluster", "goboom_env.training.exploit",
]


def test_the_shared_training_modules_and_the_trainers_packages_import_no_training_library() -> None:
    """The ``light-training-modules`` contract lets two functions import torch; importing the modules does not, and
    neither do the trainers' packages, the fast run's module or ``exploit`` (a command reads its options first)."""
    code = (f"import sys, {', '.join(LIGHT_TRAINING_MODULES)}; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'stable_baselines3', 'sb3_contrib', "
            "'ray', 'tensorboard'}))")
    assert python_output(code) == "[]"
