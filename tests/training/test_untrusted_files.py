"""No file a user may have been handed runs code when a command loads it: the resumable checkpoints of
``goboom train`` and ``goboom train-fast`` are read as tensors and plain data only, and a file that holds a
pickled object is refused with a ValueError naming it (the RLlib loader's test is in test_rllib.py)."""

from __future__ import annotations

import base64
import io
import json
import pickle
import shutil
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("torch")  # the train extra
pytest.importorskip("sb3_contrib")
import torch
from helpers import Payload, tiny_train_args

from goboom_env.agents.ppo import read_metadata


def rewrite_zip(path: Path, member: str, data: bytes) -> None:
    """Replace one member of the zip at ``path``."""
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    members[member] = data
    with zipfile.ZipFile(path, "w") as zf:
        for name, content in members.items():
            zf.writestr(name, content)


def torch_payload(marker: Path, **fields: object) -> bytes:
    buf = io.BytesIO()
    torch.save({**fields, "payload": Payload(marker)}, buf)
    return buf.getvalue()


@pytest.fixture(scope="module")
def sb3_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished 256-step ``goboom train`` run folder with a checkpoint at step 256."""
    from goboom_env.training.sb3 import train

    out = tmp_path_factory.mktemp("sb3") / "run"
    train(tiny_train_args(out=str(out), checkpoint_every=256, eval_every=-1, bc_games=0))
    return out


@pytest.fixture
def run_copy(sb3_run: Path, tmp_path: Path) -> Path:
    """A copy of :func:`sb3_run` (``tmp_path/run``) for one test to tamper with."""
    run = tmp_path / "run"
    shutil.copytree(sb3_run, run)
    return run


def sb3_resume(run: Path, timesteps: int) -> Path:
    from goboom_env.training.sb3 import train

    return train(tiny_train_args(out=str(run), checkpoint_every=256, eval_every=-1, bc_games=0, timesteps=timesteps,
                                 resume=True))


def test_sb3_resume_refuses_a_pickled_payload_in_the_weights(run_copy: Path, tmp_path: Path) -> None:
    run, marker = run_copy, tmp_path / "ran"
    checkpoint = run / "checkpoints" / "model_256.zip"
    rewrite_zip(checkpoint, "policy.pth", torch_payload(marker))
    refused = rf"{checkpoint} \(policy.pth\) is not tensors and plain data; refused, not loaded \(.*posix.system"
    with pytest.raises(ValueError, match=refused):
        sb3_resume(run, 512)
    assert not marker.exists()


def test_sb3_resume_never_unpickles_the_data_member(run_copy: Path, tmp_path: Path) -> None:
    """SB3 stores objects in ``data`` as base64 cloudpickle (``:serialized:``); resume reads only its counters."""
    run, marker = run_copy, tmp_path / "ran"
    checkpoint = run / "checkpoints" / "model_256.zip"
    with zipfile.ZipFile(checkpoint) as zf:
        data = json.loads(zf.read("data"))
    pickled = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    serialized = {":type:": "<class 'object'>", ":serialized:": pickled}
    data["policy_class"] = data["observation_space"] = data["lr_schedule"] = serialized
    rewrite_zip(checkpoint, "data", json.dumps(data).encode())
    model = sb3_resume(run, 512)
    assert not marker.exists()
    assert read_metadata(model)["timesteps"] == 512  # the counters were read: it went on from step 256

    (run / "checkpoints" / "model_512.zip").unlink()  # resume from the tampered checkpoint again
    data["num_timesteps"] = {"nested": 1}
    rewrite_zip(checkpoint, "data", json.dumps(data).encode())
    with pytest.raises(ValueError, match=f"{checkpoint} is damaged: its data member has no count 'num_timesteps'"):
        sb3_resume(run, 768)


def test_fast_resume_refuses_a_pickled_payload(tmp_path: Path) -> None:
    from goboom_env.training.fast.ppo import train
    from goboom_env.training.settings import VectorArgs

    out = tmp_path / "run"
    args = dict(timesteps=300, num_envs=8, num_steps=16, minibatch_size=64, eval_every=-1, checkpoint_every=250,
                snapshot_every=100, opponents=["learner=1", "self=1"], out=str(out), progress=False, net_arch=[16])
    train(VectorArgs(**args))
    latest = max((out / "checkpoints").glob("state_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    state = torch.load(latest, weights_only=True)
    assert state["snapshots"], "the run saved snapshots (their arrays are stored as tensors)"
    train(VectorArgs(**{**args, "timesteps": 400, "resume": True}))  # an honest checkpoint resumes

    latest = max((out / "checkpoints").glob("state_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    marker = tmp_path / "ran"
    latest.write_bytes(torch_payload(marker, **state))
    with pytest.raises(ValueError, match=f"{latest} is not tensors and plain data; refused, not loaded"):
        train(VectorArgs(**{**args, "timesteps": 600, "resume": True}))
    assert not marker.exists()

    latest.write_bytes(b"not a torch file")
    with pytest.raises(ValueError, match=f"--resume: {latest} is not tensors and plain data"):
        train(VectorArgs(**{**args, "timesteps": 600, "resume": True}))


def test_sb3_resume_names_a_crafted_field_of_the_checkpoint(run_copy: Path) -> None:
    """Deeply nested JSON in ``data``, a ``policy.pth`` that holds no state dict, a log without its column: each
    one error naming the file, never a traceback."""
    run = run_copy
    checkpoint = run / "checkpoints" / "model_256.zip"
    with zipfile.ZipFile(checkpoint) as zf:
        original = {name: zf.read(name) for name in ("data", "policy.pth")}
    rewrite_zip(checkpoint, "data", b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(ValueError, match=f"{checkpoint} is damaged: its data member: not JSON we read: nested more "
                                         "than 32 levels deep$"):
        sb3_resume(run, 512)
    rewrite_zip(checkpoint, "data", original["data"])
    buf = io.BytesIO()
    torch.save([1, 2, 3], buf)
    rewrite_zip(checkpoint, "policy.pth", buf.getvalue())
    with pytest.raises(ValueError, match=f"{checkpoint} is damaged: policy.pth holds no state dict"):
        sb3_resume(run, 512)
    rewrite_zip(checkpoint, "policy.pth", original["policy.pth"])
    (run / "progress.csv").write_text("steps,loss\n10,0.5\n")
    with pytest.raises(ValueError, match=r"the log .*progress\.csv has no timesteps column"):
        sb3_resume(run, 512)


FAST_ARGS = dict(timesteps=300, num_envs=8, num_steps=16, minibatch_size=64, eval_every=-1, checkpoint_every=250,
                 snapshot_every=100, opponents=["learner=1", "self=1"], progress=False, net_arch=[16])


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished 300-step ``goboom train-fast`` run folder with its checkpoints."""
    from goboom_env.training.fast.ppo import train
    from goboom_env.training.settings import VectorArgs

    out = tmp_path_factory.mktemp("fast") / "run"
    train(VectorArgs(**FAST_ARGS, out=str(out)))
    return out


@pytest.mark.parametrize(("change", "message"), [
    (lambda s: s.pop("steps"), r"is not a goboom train-fast checkpoint \(no steps\)"),
    (lambda s: s.update(steps="many"), "is damaged: steps must be a non-negative integer, got 'many'"),
    (lambda s: s.update(train_s=[1]), "is damaged: train_s must be a non-negative number"),
    (lambda s: s.update(net=[1, 2]), r"is damaged: net must be a state dict \(a mapping of names\), got list"),
    (lambda s: s.update(net={"w": "x"}), "is damaged: net must map each name to a tensor"),
    (lambda s: s.update(snapshots=[("s", {"layers": 5})]), r"is damaged: snapshots\[0\] must be \[name, "),
    (lambda s: s.update(snapshots=7), "is damaged: snapshots must be a list, got int"),
    (lambda s: s["meta"].pop("config"), r"is damaged: its meta has no game configuration"),
    (lambda s: s.update(meta=[{"config": 1}] * 40), "is damaged: its meta must hold a JSON object, not a list"),
], ids=["no-steps", "steps-text", "train-s-list", "net-list", "net-not-tensors", "snapshot-layers", "snapshots-int",
        "meta-no-config", "meta-list"])
def test_fast_resume_names_a_crafted_field_of_the_checkpoint(fast_run: Path, tmp_path: Path, change,
                                                             message: str) -> None:
    from goboom_env.training.fast.ppo import train
    from goboom_env.training.settings import VectorArgs

    out = tmp_path / "run"
    shutil.copytree(fast_run, out)
    latest = max((out / "checkpoints").glob("state_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    state = torch.load(latest, weights_only=True)
    change(state)
    torch.save(state, latest)
    with pytest.raises(ValueError, match=f"--resume: {latest} {message}"):
        train(VectorArgs(**{**FAST_ARGS, "out": str(out), "timesteps": 600, "resume": True}))
