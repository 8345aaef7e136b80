"""The documentation runs: README's quick start and the docstring examples of the engine modules."""

from __future__ import annotations

import doctest
import re
import subprocess
import sys
from pathlib import Path

import pytest

import goboom_env.cards
import goboom_env.config
import goboom_env.engine

ROOT = Path(__file__).resolve().parent.parent


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_quick_start_runs() -> None:
    blocks = _python_blocks((ROOT / "README.md").read_text())
    assert blocks, "README.md has no python example"
    for code in blocks:
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("module", [goboom_env.cards, goboom_env.config, goboom_env.engine])
def test_docstring_examples(module: object) -> None:
    failures, tried = doctest.testmod(module, verbose=False)
    assert tried > 0
    assert failures == 0


def test_environment_page_matches_env_docstring() -> None:
    """docs/environment.md is the env module's docstring (PettingZoo's doc-page convention)."""
    import importlib

    page = (ROOT / "docs" / "environment.md").read_text().split("\n", 1)[1]
    assert page.strip() == importlib.import_module("goboom_env.env").__doc__.strip()
