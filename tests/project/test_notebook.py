"""notebooks/first_hour.ipynb: a valid notebook, stored without outputs, whose code cells run in order (slow tier:
it trains for a few seconds, at the budget the notebook reads from GOBOOM_NOTEBOOK_SECONDS).

The dev extra has neither nbformat nor nbclient (nor a Jupyter kernel), so the code cells run as one Python
script in a fresh interpreter; the notebook uses no IPython magic, so that is what a kernel would run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT

NOTEBOOK = ROOT / "notebooks" / "first_hour.ipynb"
TEST_BUDGET = {"GOBOOM_NOTEBOOK_SECONDS": "5", "GOBOOM_NOTEBOOK_GAMES": "8"}
"""The environment the test runs the notebook in: 5 s of training, 8 games per tournament."""


def load() -> dict[str, Any]:
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))


def code_cells(notebook: dict[str, Any]) -> list[str]:
    return ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]


def test_the_notebook_is_valid_nbformat_4_without_outputs() -> None:
    notebook = load()
    assert notebook["nbformat"] == 4 and notebook["nbformat_minor"] >= 5
    assert notebook["metadata"]["kernelspec"]["language"] == "python"
    ids = [cell["id"] for cell in notebook["cells"]]
    assert len(set(ids)) == len(ids)  # nbformat 4.5: unique cell ids
    for cell in notebook["cells"]:
        assert cell["cell_type"] in ("markdown", "code") and isinstance(cell["source"], list)
        if cell["cell_type"] == "code":  # stored clean: no outputs, never executed
            assert cell["outputs"] == [] and cell["execution_count"] is None
    try:
        import nbformat
    except ImportError:
        pass
    else:
        nbformat.validate(nbformat.reads(NOTEBOOK.read_text(encoding="utf-8"), as_version=4))


def test_the_notebook_covers_the_first_hour() -> None:
    """Training with the fast trainer on a budget read from the environment, the baselines, a registered agent,
    env.state() and the observation; every code cell compiles and none is an IPython magic."""
    code = code_cells(load())
    whole = "\n".join(code)
    phrases = ('os.environ.get("GOBOOM_NOTEBOOK_SECONDS"', "time_limit=SECONDS", "fast.ppo import train",
              "baselines(config)", "run_tournament(", "register_agent(", "env.state()", 'observation["observation"]')
    for needed in phrases:
        assert needed in whole, needed
    for i, source in enumerate(code):
        assert not any(line.lstrip().startswith(("%", "!")) for line in source.splitlines()), f"cell {i}: magic"
        compile(source, f"{NOTEBOOK.name} code cell {i}", "exec")


@pytest.mark.slow
def test_the_notebook_runs_in_order(tmp_path: Path) -> None:
    pytest.importorskip("torch")  # part 2 trains: the train extra
    script = "\n\n".join(f"# -- code cell {i}\n{source}" for i, source in enumerate(code_cells(load())))
    env = os.environ | TEST_BUDGET | {"MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-5000:]}"
    assert "training for 5 s, 8 games per tournament" in done.stdout
    assert "legal moves:" in done.stdout and "state: (786,)" in done.stdout
    assert "classic-tricks" in done.stdout and "lowest" in done.stdout
    assert (tmp_path / "runs" / "first-hour" / "model.zip").is_file()
