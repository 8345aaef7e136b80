"""Training checkpoints are written whole or not at all, and an interrupted run names its checkpoint in the one line
of the interruption (goboom_env.process).

A ``state_N.pt`` is serialised in memory, written to the hidden ``.state_N.pt.partial`` beside it and renamed into
place: a write cut short (Ctrl-C, a forced exit) leaves no ``state_*.pt`` of its own, and the checkpoint before it
as it was, for ``--resume`` to continue from.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from goboom_env import process  # noqa: E402
from goboom_env.agents.ppo import read_metadata  # noqa: E402
from goboom_env.config import GameConfig  # noqa: E402
from goboom_env.training.artifacts.model_files import model_metadata  # noqa: E402
from goboom_env.training.artifacts.run_folder import RunFiles  # noqa: E402
from goboom_env.training.fast import ppo  # noqa: E402
from goboom_env.training.fast.run import STATE_NAME, check_run_folder, load_checkpoint, save_checkpoint  # noqa: E402
from goboom_env.training.settings import VectorArgs  # noqa: E402

REAL_SAVE = torch.save


def state(steps: int) -> dict[str, Any]:
    """A minimal checkpoint, as :func:`load_checkpoint` requires it."""
    return {"net": {"weight": torch.full((4,), float(steps))}, "optimizer": {}, "steps": steps, "episodes": 1,
            "train_s": 0.5, "snapshots": [], "meta": model_metadata(GameConfig())}


def cut_short(obj: Any, f: Any, *args: Any, **kwargs: Any) -> None:
    """``torch.save`` stopped halfway: half the bytes written to ``f`` (a path or a file), then Ctrl-C."""
    buf = io.BytesIO()
    REAL_SAVE(obj, buf, *args, **kwargs)
    half = buf.getvalue()[: len(buf.getvalue()) // 2]
    if isinstance(f, (str, os.PathLike)):
        Path(f).write_bytes(half)
    else:
        f.write(half)
    raise KeyboardInterrupt


def flush_half(fd: int) -> None:
    """``os.fsync`` stopped halfway: half of the file on disk, then Ctrl-C."""
    os.ftruncate(fd, os.fstat(fd).st_size // 2)
    raise KeyboardInterrupt


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


CUTS = {"in-torch-save": (torch, "save", cut_short), "on-disk": (os, "fsync", flush_half)}
"""The places a checkpoint's write is cut short: the attribute replaced, and by what."""


@pytest.mark.parametrize("cut", CUTS)
def test_a_checkpoint_cut_short_leaves_no_file_and_the_previous_one_intact(
        cut: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = RunFiles(tmp_path / "run")
    save_checkpoint(state(256), paths.state(256))
    before = paths.state(256).read_bytes()
    monkeypatch.setattr(*CUTS[cut])
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(state(512), paths.state(512))
    monkeypatch.undo()
    assert names(paths.checkpoints) == ["state_256.pt"]  # a half-written file is removed again
    assert paths.latest_checkpoint(STATE_NAME) == paths.state(256) and paths.state(256).read_bytes() == before
    assert load_checkpoint(paths.state(256))["steps"] == 256


def test_resume_ignores_the_partial_file_a_killed_write_leaves(tmp_path: Path) -> None:
    paths = RunFiles(tmp_path / "run")
    save_checkpoint(state(256), paths.state(256))
    (paths.checkpoints / ".state_512.pt.partial").write_bytes(b"half")  # what a killed process leaves
    assert paths.latest_checkpoint(STATE_NAME) == paths.state(256)  # the glob state_*.pt skips the hidden file
    args = VectorArgs(out=str(paths.root), resume=True)
    assert check_run_folder(args, paths) == paths.state(256)
    assert load_checkpoint(paths.state(256))["steps"] == 256
    save_checkpoint(state(512), paths.state(512))  # the next write replaces the partial file
    assert names(paths.checkpoints) == ["state_256.pt", "state_512.pt"]
    assert load_checkpoint(paths.state(512))["steps"] == 512


def tiny(out: Path, **changes: Any) -> VectorArgs:
    """A small train-fast run with a checkpoint after each iteration."""
    settings: dict[str, Any] = dict(timesteps=100_000_000, num_envs=16, num_steps=16, minibatch_size=128,
                                    net_arch=[32, 32], eval_every=-1, checkpoint_every=256,
                                    snapshot_every=100_000_000, opponents=["random=1"], bc_games=0, threads=1,
                                    progress=False, out=str(out))
    return VectorArgs(**{**settings, **changes})


def stop_at_iteration(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """Ctrl-C at the start of the ``n``-th training iteration."""
    real, calls = ppo.Trainer.iteration, []

    def iteration(self: Any) -> Any:
        calls.append(1)
        if len(calls) == n:
            raise KeyboardInterrupt
        return real(self)

    monkeypatch.setattr(ppo.Trainer, "iteration", iteration)


def test_an_interrupted_train_fast_names_its_checkpoint_and_the_resume_in_the_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run"
    stop_at_iteration(monkeypatch, 3)
    with process.handled("goboom train-fast") as handling, pytest.raises(KeyboardInterrupt):
        ppo.train(tiny(out, checkpoint_every=100_000_000))
    paths = RunFiles(out)
    checkpoint = paths.latest_checkpoint(STATE_NAME)
    assert checkpoint is not None and [p.name for p in paths.checkpoints.iterdir()] == [checkpoint.name]
    steps = load_checkpoint(checkpoint)["steps"]
    assert steps > 0 and checkpoint == paths.state(steps)  # the steps of the two iterations before Ctrl-C
    assert handling.message() == (f"goboom train-fast: interrupted; kept the checkpoint {checkpoint}; "
                                  f"continue with --resume --out {out}")
    assert not list(paths.checkpoints.glob(".*"))


def test_resume_continues_from_the_checkpoint_before_a_write_cut_short(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C during the second checkpoint's write, and the save after it cut short too (a forced exit)."""
    out = tmp_path / "run"
    saves: list[int] = []

    def save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> None:
        saves.append(obj["steps"])
        if len(saves) > 1:
            cut_short(obj, f, *args, **kwargs)
        REAL_SAVE(obj, f, *args, **kwargs)

    monkeypatch.setattr(torch, "save", save)
    with process.handled("goboom train-fast") as handling, pytest.raises(KeyboardInterrupt):
        ppo.train(tiny(out))
    monkeypatch.undo()
    paths = RunFiles(out)
    first, second, _ = saves  # the periodic checkpoints, then the one on Ctrl-C, at the second one's steps
    assert saves == [first, second, second] and second > first
    assert names(paths.checkpoints) == [f"model_{first}.zip", f"state_{first}.pt"]
    assert handling.message() == "goboom train-fast: interrupted"  # nothing kept: no line claims a checkpoint
    assert paths.latest_checkpoint(STATE_NAME) == paths.state(first)
    assert load_checkpoint(paths.state(first))["steps"] == first
    model = ppo.train(tiny(out, resume=True, timesteps=first + 1))  # one more iteration, from the first checkpoint
    steps = read_metadata(model)["timesteps"]
    assert first < steps < second + first and load_checkpoint(paths.state(steps))["steps"] == steps
