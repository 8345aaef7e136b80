"""A missing optional dependency names its extra: every import of an extra's module in the library goes through
``goboom_env.hints.needs_extra``, whose error says which feature needs which extra and how to install it."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers import ROOT

from goboom_env import GameConfig
from goboom_env.evaluation.stats import paired_test
from goboom_env.evaluation.tournament import run_tournament
from goboom_env.hints import EXTRAS, MissingExtraError, extra_of, needs_extra

OPTIONAL = {module for modules in EXTRAS.values() for module in modules}
UNCHECKED = {
    "goboom_env/cli": "each command's extra is looked up before its module is imported (goboom_env.cli.SUBCOMMANDS), "
                      "and an optional module imported late is reported with its extra (cli.main)",
}
"""Folders whose imports of optional modules need not go through needs_extra, and why."""
DISTRIBUTIONS = {"open_spiel": ("pyspiel", "open_spiel")}
"""Distributions whose modules are named otherwise (the rest: the distribution's name, '-' as '_')."""


def _optional_imports(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of each import of an optional module that is neither inside ``with needs_extra(...)``
    nor under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text())
    guarded: set[int] = set()
    for node in ast.walk(tree):
        wrapped = (isinstance(node, ast.With) and any(
            isinstance(item.context_expr, ast.Call) and getattr(item.context_expr.func, "id", None) == "needs_extra"
            for item in node.items))
        typing_only = isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
        if wrapped or typing_only:
            guarded |= {id(inner) for inner in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [(node.lineno, name) for name in names if name.partition(".")[0] in OPTIONAL]
    return found


SOURCES = [p for p in sorted((ROOT / "goboom_env").rglob("*.py"))
           if not any(p.relative_to(ROOT).as_posix().startswith(folder + "/") for folder in UNCHECKED)]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_optional_import_names_its_extra(path: Path) -> None:
    assert _optional_imports(path) == [], ("import these inside `with needs_extra(\"FEATURE\"):` "
                                           "(goboom_env.hints), so that a missing one names its extra")


def test_the_source_check_finds_a_bare_import(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import scipy\nwith needs_extra('x'):\n    import torch\n"
                                   "def f():\n    from ray import tune\n")
    assert _optional_imports(tmp_path / "m.py") == [(1, "scipy"), (5, "ray")]


def test_paired_comparisons_name_the_eval_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_tournament(GameConfig(num_players=2), ["random", "heuristic"], 2, duplicate=True, progress=False)
    monkeypatch.setitem(sys.modules, "scipy", None)  # as if scipy were not installed
    with pytest.raises(ModuleNotFoundError) as caught:
        result.paired()
    assert str(caught.value) == ("TournamentResult.paired() and paired_test() needs the 'eval' extra (scipy is not "
                                 'installed): pip install "goboom-env[eval]"')
    assert caught.value.name == "scipy" and isinstance(caught.value, MissingExtraError)
    with pytest.raises(ModuleNotFoundError, match=r"needs the 'eval' extra"):
        paired_test("a", "b", [1.0], [0.0])


@pytest.mark.parametrize(("module", "blocked", "message"), [
    ("goboom_env.evaluation.ratings", "openskill", "the ratings of goboom_env.evaluation.ratings needs the 'eval' "
                                                   "extra (openskill is not installed)"),
    ("goboom_env.evaluation.plots", "matplotlib", "needs the 'eval' extra (matplotlib is not installed)"),
    ("goboom_env.openspiel", "pyspiel", "the python_goboom OpenSpiel game (goboom_env.openspiel) needs the "
                                        "'openspiel' extra (pyspiel is not installed): pip install "
                                        '"goboom-env[openspiel]"'),
])
def test_a_module_of_an_extra_names_it_when_imported(monkeypatch: pytest.MonkeyPatch, module: str, blocked: str,
                                                     message: str) -> None:
    # the package and every submodule another test imported: `from a.b import c` takes a loaded a.b as it is
    for name in [blocked, *(n for n in list(sys.modules) if n.startswith(f"{blocked}."))]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, module, raising=False)  # imported afresh; the original comes back after
    with pytest.raises(ModuleNotFoundError, match=re.escape(message)):
        importlib.import_module(module)


def test_an_agent_of_an_extra_names_it_through_the_registry(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['pyspiel'] = None\n"
            "from goboom_env import GameConfig\nfrom goboom_env.agents import make_agent\n"
            "try:\n    make_agent('openspiel-ismcts', GameConfig())\nexcept ValueError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("agent 'openspiel-ismcts' needs an optional dependency that is missing: ")
    assert "the 'openspiel' extra (pyspiel is not installed): pip install \"goboom-env[openspiel]\"" in done.stdout


def test_needs_extra_leaves_other_errors_and_inner_messages_alone() -> None:
    with pytest.raises(ModuleNotFoundError, match=r"No module named 'goboom_env\.nosuch'"), needs_extra("x"):
        import goboom_env.nosuch  # noqa: F401  # a missing module of the package: a bug, not an extra
    with pytest.raises(MissingExtraError, match=r"^inner needs the 'fast' extra"), needs_extra("outer"), \
            needs_extra("inner"):
        raise ModuleNotFoundError("No module named 'torch'", name="torch")
    assert extra_of("torch.nn") == "fast" and extra_of("sb3_contrib") == "train"
    assert extra_of("open_spiel.python") == "openspiel" and extra_of(None) is None


def test_the_extras_match_pyproject() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        own: set[str] = set()
        for requirement in declared[extra]:
            name = re.match(r"[A-Za-z0-9_.-]+", requirement).group().lower().replace("-", "_")  # type: ignore[union-attr]
            if name != "goboom_env":
                own |= set(DISTRIBUTIONS.get(name, (name,)))
        assert own == set(modules), extra
