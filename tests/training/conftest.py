"""Fixtures of the training tests (goboom_env.training): untrained models and used run folders.

The modules here need the train extra (torch, stable-baselines3, sb3-contrib) or the rllib extra (ray) and start
with ``pytest.importorskip`` for what they use, so a missing one skips them, or fails them under ``make test``; a
fixture imports the extra when it runs, for the same reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import earlier_run

from goboom_env import GameConfig


@pytest.fixture
def untrained_model() -> Iterator[Callable[[Any, GameConfig], tuple[Any, Any]]]:
    """Build MaskablePPO models: ``untrained_model(args, config)`` is a model freshly built for the ``TrainArgs``
    and the game, and its vectorized environments; every environment it built is closed after the test."""
    sb3_model = pytest.importorskip("goboom_env.training.sb3.model")
    built = []

    def build(args: Any, config: GameConfig) -> tuple[Any, Any]:
        vec = sb3_model.make_vec_env(args, config)
        built.append(vec)
        return sb3_model.build_model(args, vec, None), vec

    yield build
    for vec in built:
        vec.close()


@pytest.fixture
def used_run_folder(tmp_path: Path) -> Path:
    """``tmp_path/run``, the folder of an earlier run (goboom's marker in it) that holds a file, ``notes.txt``."""
    return earlier_run(tmp_path / "run", "notes.txt")
