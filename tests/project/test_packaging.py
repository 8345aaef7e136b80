"""What a user installs: the env id in PettingZoo's registry, the shipped models by name, and (slow tier)
the sdist and wheel that ``python -m build`` makes, installed into a fresh virtual environment."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pettingzoo
import pytest
from helpers import ROOT

import goboom_env
from goboom_env import GameConfig
from goboom_env.models import model_path, shipped_models

ENV_ID = goboom_env.raw_env.metadata["name"]


# -- the env id ---------------------------------------------------------------------------------------


def test_env_id_follows_pettingzoo_naming() -> None:
    """Lower snake case with a ``_vN`` suffix, like ``connect_four_v3``, and equal to ``metadata["name"]``."""
    assert re.fullmatch(r"[a-z][a-z0-9_]*_v\d+", ENV_ID)
    env = pettingzoo.make("aec", ENV_ID, variant="jokers", num_players=3)
    assert env.metadata["name"] == ENV_ID
    assert env.unwrapped.config == GameConfig(variant="jokers", num_players=3)


def test_reimporting_the_package_does_not_register_twice() -> None:
    import importlib
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PettingZoo warns when an id is overridden
        importlib.reload(goboom_env)


# -- the shipped models -------------------------------------------------------------------------------


def test_shipped_models_live_in_the_package() -> None:
    assert shipped_models() == sorted(p.stem for p in (Path(goboom_env.__file__).parent / "models").glob("*.zip"))
    assert {"classic-4p-hands", "jokers-4p-hands"} <= set(shipped_models())
    for name in shipped_models():
        path = model_path(name)
        assert path.is_file() and path.parent == Path(goboom_env.__file__).parent / "models"


def test_model_paths_stay_paths(tmp_path: Path) -> None:
    assert model_path("runs/x/model.zip") == Path("runs/x/model.zip")  # need not exist yet: the loader says so
    local = tmp_path / "classic-4p-hands"
    assert model_path(str(local)) == local  # a path is a path, even when its name is a shipped one


def test_misspelt_model_name_lists_the_shipped_ones() -> None:
    with pytest.raises(ValueError, match=r"no model 'clasic4': .*classic-4p-hands, .*jokers-4p-hands"):
        model_path("clasic4")


# -- the built distributions (slow: builds, then installs into a fresh venv) ---------------------------


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``python -m build`` of the working tree: the sdist, then the wheel built from that sdist."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    yield out


def _one(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def _repo_files(*folders: str) -> set[str]:
    """The files under ``folders`` that the sdist must carry (caches left out)."""
    skip = ("__pycache__", ".hypothesis", ".pytest_cache")
    return {p.relative_to(ROOT).as_posix() for folder in folders for p in (ROOT / folder).rglob("*")
            if p.is_file() and not any(part in skip or part.endswith(".pyc") for part in p.parts)}


@pytest.mark.slow
def test_sdist_carries_what_the_tests_need(dist: Path) -> None:
    with tarfile.open(_one(dist, "*.tar.gz")) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    missing = _repo_files("tests", "docs", "goboom_env/models", "training", "evaluation", "benchmarks") - names
    assert not missing, sorted(missing)
    assert {"tests/conftest.py", "tests/helpers/__init__.py", "tests/rules/test_rules.py", "tests/data/hands.json",
            "pyproject.toml", "README.md", "LICENSE"} <= names


@pytest.mark.slow
def test_wheel_installs_only_goboom_env_and_evaluates_a_shipped_model(dist: Path, tmp_path: Path) -> None:
    wheel = _one(dist, "*.whl")
    with zipfile.ZipFile(wheel) as zf:
        info = next(n for n in zf.namelist() if n.endswith(".dist-info/top_level.txt")).rsplit("/", 1)[0]
        assert zf.read(f"{info}/top_level.txt").decode().split() == ["goboom_env"]
        record = [row.split(",")[0] for row in zf.read(f"{info}/RECORD").decode().splitlines()]
        assert {path.split("/")[0] for path in record} == {"goboom_env", info}
        assert {f"goboom_env/models/{name}.zip" for name in shipped_models()} <= set(record)
        assert "goboom_env/evaluation/bench_v1_references.json" in record  # goboom benchmark's frozen references
        assert re.search(r"^goboom = goboom_env\.cli:main$", zf.read(f"{info}/entry_points.txt").decode(), re.M)

    # a fresh venv with the eval extra only: the play-only models need numpy, not torch
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python, goboom = env_dir / "bin" / "python", env_dir / "bin" / "goboom"
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", f"goboom-env[eval] @ {wheel.as_uri()}"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    work = tmp_path / "work"  # not the repository: nothing can be imported from the source tree
    work.mkdir()
    out = work / "result"
    done = subprocess.run([str(goboom), "evaluate", "--variant", "classic", "--players", "4", "--agents",
                           "ppo:classic-4p-hands", "random", "--games", "8", "--seed", "1", "--no-progress",
                           "--out", str(out)],
                          cwd=work, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = (out / "report.md").read_text()
    assert "ppo:classic-4p-hands" in report
    assert "git commit: unknown (not run from a git checkout of goboom-env)" in report  # a wheel is no checkout
    where = subprocess.run([str(python), "-c", "import goboom_env; print(goboom_env.__file__)"], cwd=work,
                           capture_output=True, text=True, timeout=120)
    assert Path(where.stdout.strip()).is_relative_to(env_dir), where.stdout + where.stderr
