"""Damaged, foreign and play-only model files: every one is a ValueError naming the file and what is wrong,
through the Python loader, ``goboom evaluate --agents ppo:FILE`` and ``goboom play --opponents ppo:FILE``;
``--resume`` reads only real checkpoints."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from helpers import goboom, save_untrained_model, tiny_train_args

pytest.importorskip("sb3_contrib")  # the train extra: the fixtures train and save a model

from goboom_env import GameConfig
from goboom_env.agents import make_agent
from goboom_env.agents.ppo import ACTOR_NAME, META_NAME, FrozenMlp, save_snapshot
from goboom_env.observation import observation_size
from goboom_env.training.artifacts.model_files import export_policy
from goboom_env.training.artifacts.run_folder import RunFiles
from goboom_env.training.sb3 import load_ppo_agent, train

CLASSIC = GameConfig(variant="classic", num_players=4)


def tiny_args(tmp: Path, **changes: object) -> object:
    return tiny_train_args(**{"net_arch": [16], "bc_games": 0, "eval_every": -1, "out": str(tmp / "run"), **changes})


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real (untrained) saved model: cheap, and as complete as a trained one."""
    tmp = tmp_path_factory.mktemp("model")
    return save_untrained_model(tiny_args(tmp), CLASSIC, tmp / "m.zip", timesteps=64)


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def rewrite(src: Path, dst: Path, changes: dict[str, bytes | None], compression: int = zipfile.ZIP_STORED) -> Path:
    """A copy of the zip ``src`` with members replaced (bytes) or dropped (None)."""
    items = {**members(src), **changes}
    with zipfile.ZipFile(dst, "w", compression=compression) as zf:
        for name, data in items.items():
            if data is not None:
                zf.writestr(name, data)
    return dst


def overwrite_member_data(path: Path, name: str, garbage: Callable[[bytes], bytes]) -> Path:
    """Replace the stored (possibly compressed) bytes of one member in place, leaving its header and CRC."""
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(name)
    raw = bytearray(path.read_bytes())
    name_len, extra_len = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little"), \
        int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len
    new = garbage(bytes(raw[start:start + info.compress_size]))
    assert len(new) == info.compress_size
    raw[start:start + info.compress_size] = new
    path.write_bytes(bytes(raw))
    return path


def actor_npz(model: Path, edit: Callable[[dict[str, np.ndarray]], None]) -> bytes:
    """The model's actor .npz with its arrays edited."""
    with np.load(io.BytesIO(members(model)[ACTOR_NAME])) as data:
        arrays = {k: data[k] for k in data.files}
    edit(arrays)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def meta_of(model: Path) -> dict:
    return json.loads(members(model)[META_NAME])


def actor_edited(edit: Callable[[dict[str, np.ndarray]], None]) -> Callable[[Path, Path], Path]:
    """A damage for :data:`DAMAGES`: the model's actor arrays changed by ``edit``."""
    return lambda src, dst: rewrite(src, dst, {ACTOR_NAME: actor_npz(src, edit)})


def metadata_changed(change: Callable[[dict], dict]) -> Callable[[Path, Path], Path]:
    """A damage for :data:`DAMAGES`: the model's metadata replaced by ``change(metadata)``."""
    return lambda src, dst: rewrite(src, dst, {META_NAME: json.dumps(change(meta_of(src))).encode()})


def truncate(src: Path, dst: Path) -> Path:
    dst.write_bytes(src.read_bytes()[: src.stat().st_size // 2])
    return dst


def _flip_middle(data: bytes) -> bytes:
    i = len(data) // 2
    return data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]


def _set_nan(arrays: dict[str, np.ndarray]) -> None:
    arrays["w0"] = arrays["w0"].copy()
    arrays["w0"][0, 0] = np.nan


def _object_activation(arrays: dict[str, np.ndarray]) -> None:
    arrays["activation"] = np.array([{"evil": 1}], dtype=object)


def _drop_bias(arrays: dict[str, np.ndarray]) -> None:
    del arrays["b1"]


def _narrow_input(arrays: dict[str, np.ndarray]) -> None:
    arrays["w0"] = arrays["w0"][:, :10]


def _bad_chain(arrays: dict[str, np.ndarray]) -> None:
    arrays["w1"] = arrays["w1"][:, :3]


DAMAGES: dict[str, tuple[Callable[[Path, Path], Path], str]] = {
    # name: (make the damaged file from the model at src into dst, what the error must say)
    "deflate-stream-broken": (
        lambda src, dst: overwrite_member_data(rewrite(src, dst, {}, zipfile.ZIP_DEFLATED), META_NAME,
                                               lambda d: b"\xff" * len(d)),
        f"damaged or not a goboom-env model: cannot read {META_NAME}"),
    "bad-crc": (lambda src, dst: overwrite_member_data(rewrite(src, dst, {}), ACTOR_NAME, _flip_middle),
                "Bad CRC-32"),
    "truncated": (lambda src, dst: truncate(src, dst), "damaged or not a goboom-env model"),
    "missing-actor": (lambda src, dst: rewrite(src, dst, {ACTOR_NAME: None}), f"it has no {ACTOR_NAME} member"),
    "missing-metadata": (lambda src, dst: rewrite(src, dst, {META_NAME: None}), f"it has no {META_NAME} member"),
    "missing-config": (metadata_changed(lambda meta: {k: v for k, v in meta.items() if k != "config"}),
                       "has no game configuration"),
    "metadata-is-a-list": (lambda src, dst: rewrite(src, dst, {META_NAME: b"[1, 2]"}),
                           "must hold a JSON object, not a list"),
    "metadata-not-json": (lambda src, dst: rewrite(src, dst, {META_NAME: b"{config:"}), f"{META_NAME}: not JSON"),
    "config-invalid": (metadata_changed(lambda meta: {**meta, "config": {"variant": "poker"}}),
                       "invalid game configuration"),
    "timesteps-not-int": (metadata_changed(lambda meta: {**meta, "timesteps": "many"}),
                          "non-negative integer 'timesteps'"),
    "pickled-object-data": (actor_edited(_object_activation), "holds Python objects (a pickle); refused, not loaded"),
    "nan-weights": (actor_edited(_set_nan), "NaN or infinite weights"),
    "missing-array": (actor_edited(_drop_bias), "array is missing"),
    "shapes-do-not-chain": (actor_edited(_bad_chain), "reads 3 inputs but layer 0 gives 16"),
    "wrong-input-size": (actor_edited(_narrow_input), "its actor reads 10 inputs"),
    "actor-not-npz": (lambda src, dst: rewrite(src, dst, {ACTOR_NAME: b"not numpy"}), "not a usable actor"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_damaged_model_is_a_value_error_naming_file_and_problem(model_file: Path, tmp_path: Path,
                                                                 damage: str) -> None:
    make, message = DAMAGES[damage]
    bad = make(model_file, tmp_path / f"{damage}.zip")
    for load in (lambda: load_ppo_agent(CLASSIC, 0, str(bad)), lambda: make_agent(f"ppo:{bad}", CLASSIC)):
        with pytest.raises(ValueError) as info:
            load()
        assert str(bad) in str(info.value) and message in str(info.value), str(info.value)


def test_the_undamaged_model_loads(model_file: Path) -> None:
    agent = load_ppo_agent(CLASSIC, 0, str(model_file))
    assert agent.net.input_size == observation_size(CLASSIC.num_players)


@pytest.mark.parametrize("damage", ["bad-crc", "nan-weights", "metadata-is-a-list"])
def test_command_line_reports_a_damaged_model_in_one_line(model_file: Path, tmp_path: Path, damage: str) -> None:
    make, message = DAMAGES[damage]
    bad = make(model_file, tmp_path / f"{damage}.zip")
    evaluate = goboom("evaluate", "--agents", f"ppo:{bad}", "random", "--games", "4", "--out",
                      str(tmp_path / "results"), "--no-progress")
    play = goboom("play", "--opponents", f"ppo:{bad}", "--seed", "1", stdin="quit\n")
    for result in (evaluate, play):
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr and str(bad) in result.stderr and message in result.stderr
    assert not (tmp_path / "results").exists()


def test_resume_refuses_a_play_only_model_and_ignores_stray_checkpoint_files(model_file: Path,
                                                                              tmp_path: Path) -> None:
    args = tiny_args(tmp_path, resume=True)
    files = RunFiles(args.out)
    files.checkpoints.mkdir(parents=True)
    (files.checkpoints / "model_backup.zip").write_bytes(model_file.read_bytes())
    (files.checkpoints / "notes.txt").write_text("x")
    assert files.latest_checkpoint() is None
    with pytest.raises(ValueError, match=r"--resume: no checkpoint \(model_STEPS.zip\)"):
        train(args)
    export_policy(model_file, files.checkpoints / "model_64.zip")
    assert files.latest_checkpoint() == files.checkpoints / "model_64.zip"
    with pytest.raises(ValueError, match=r"model_64\.zip is a play-only model"):
        train(args)
    files.snapshots.mkdir()
    save_snapshot(files.snapshots / "snapshot_64.npz", FrozenMlp([(np.zeros((54, 517)), np.zeros(54))]).state())
    (files.snapshots / "snapshot_old.npz").write_text("stray")
    assert [step for step, _ in files.snapshot_files()] == [64]


def test_resume_names_a_damaged_checkpoint(model_file: Path, tmp_path: Path) -> None:
    args = tiny_args(tmp_path, resume=True)
    files = RunFiles(args.out)
    files.checkpoints.mkdir(parents=True)
    bad = files.checkpoints / "model_64.zip"
    rewrite(model_file, bad, {"policy.pth": b"garbage"})
    with pytest.raises(ValueError, match=r"--resume: .*model_64\.zip \(policy\.pth\) is not tensors and plain data"):
        train(args)
    assert not files.args.exists()


def test_ppo_spec_options_are_parsed_strictly(model_file: Path) -> None:
    assert make_agent(f"ppo:path={model_file},deterministic=no", CLASSIC).rng is not None  # samples
    assert make_agent(f"ppo:path={model_file},deterministic=yes", CLASSIC).rng is None  # greedy
    for word in ("off", "maybe"):
        with pytest.raises(ValueError, match=f"option 'deterministic' must be true/false, yes/no or 1/0, got '{word}'"):
            make_agent(f"ppo:path={model_file},deterministic={word}", CLASSIC)
    with pytest.raises(ValueError, match="is a folder, not a model file"):
        make_agent(f"ppo:{model_file.parent}", CLASSIC)


def test_an_overflowing_network_is_an_error_naming_the_agent() -> None:
    """Finite weights so large that the scores overflow: a clear error naming the agent, greedy or sampled,
    never a NaN probability from numpy or an illegal arg-max."""
    from goboom_env.agents.ppo import PPOAgent

    size = observation_size(4)
    huge = FrozenMlp([(np.full((8, size), 3e38, np.float32), np.zeros(8, np.float32)),
                      (np.full((54, 8), 3e38, np.float32), np.zeros(54, np.float32))], activation="relu")
    observation = {"observation": np.ones(size, np.float32), "action_mask": np.eye(54, dtype=np.int8)[3]}
    for deterministic in (True, False):
        agent = PPOAgent("ppo:huge.zip", huge, seed=0, deterministic=deterministic)
        with pytest.raises(ValueError, match=r"agent ppo:huge\.zip: the network's scores of the legal actions are "
                                             "not finite"):
            agent.act(observation)
    with pytest.raises(ValueError, match=r"agent ppo:huge\.zip: the action mask has no legal action"):
        agent.act({**observation, "action_mask": np.zeros(54, np.int8)})


def _npz_declaring(shape: tuple[int, ...], arrays: dict[str, np.ndarray]) -> bytes:
    """An actor .npz holding ``arrays`` and a ``w0`` whose header declares ``shape`` (float32) over 64 bytes of data."""
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": shape})
    with zipfile.ZipFile(buf, "a") as zf:
        zf.writestr("w0.npy", header.getvalue() + bytes(64))
    return buf.getvalue()


def test_a_model_member_past_its_size_limit_is_refused_before_it_is_read(model_file: Path, tmp_path: Path) -> None:
    """Metadata that inflates to more than its 4 MiB limit (a few KiB compressed: a zip bomb's shape) is refused by
    the size its zip declares, before a byte of it is inflated; so is an actor array whose header declares 4 TiB."""
    padded = json.dumps({**meta_of(model_file), "pad": " " * (5 * 2**20)}).encode()
    bomb = rewrite(model_file, tmp_path / "bomb.zip", {META_NAME: padded}, zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 2**20
    with pytest.raises(ValueError, match=rf"bomb\.zip is damaged or not a goboom-env model: its {META_NAME} declares "
                                         r"5,24\d,\d\d\d bytes, more than the 4,194,304"):
        load_ppo_agent(CLASSIC, 0, str(bomb))
    with np.load(io.BytesIO(members(model_file)[ACTOR_NAME])) as data:
        arrays = {k: data[k] for k in data.files if k != "w0"}
    huge = rewrite(model_file, tmp_path / "huge.zip", {ACTOR_NAME: _npz_declaring((2**20, 2**20), arrays)})
    with pytest.raises(ValueError, match=r"huge\.zip is damaged: goboom_actor\.npz is not a usable actor network "
                                         r"\(not a weights \.npz file: array w0\.npy declares \(1048576, 1048576\)"):
        load_ppo_agent(CLASSIC, 0, str(huge))
    done = goboom("evaluate", "--agents", f"ppo:{huge}", "random", "--games", "2", "--episode", "hand", "--out",
                  str(tmp_path / "r"), "--no-progress")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "declares (1048576, 1048576)" in done.stderr


def test_deeply_nested_metadata_is_one_error_line(model_file: Path, tmp_path: Path) -> None:
    deep = rewrite(model_file, tmp_path / "deep.zip", {META_NAME: b"[" * 100_000 + b"]" * 100_000})
    with pytest.raises(ValueError, match=rf"deep\.zip is damaged: {META_NAME}: not JSON we read: nested more than 32 "
                                         r"levels deep$"):
        load_ppo_agent(CLASSIC, 0, str(deep))


def test_a_device_or_folder_given_as_a_model_is_refused_without_reading_it(tmp_path: Path) -> None:
    """``ppo:/dev/zero`` would be read without end by zipfile: it is refused as not a regular file."""
    done = goboom("evaluate", "--agents", "ppo:/dev/zero", "random", "--games", "2", "--out", str(tmp_path / "r"),
                  "--no-progress", timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr == "goboom evaluate: error: /dev/zero is not a regular file: a model file is a .zip saved by " \
                          "`goboom train`\n"
