"""The one output rule of every command that writes (goboom_env.outdir): never the current folder, a folder
above it, the home folder or ``/``; ``--force`` replaces only what goboom wrote (a folder with its marker, a goboom
model file) and never a command's own input; nothing is removed before the new output is ready. Each case runs on a
real folder of user files in a temporary directory and checks that every file survives, byte for byte."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import EARLIER_RUN, GOBOOM, ROOT, earlier_run

from goboom_env import outdir
from goboom_env.cli import main
from goboom_env.models import model_path
from goboom_env.outdir import MARKER, OutputError, StagedFolder, check_output_folder, mark
from goboom_env.training.settings import RLlibArgs

QUICK_EVALUATE = ["--games", "2", "--episode", "hand", "--no-progress"]
WRITERS = {
    "train": ["train", "--timesteps", "64", "--no-progress"],
    "train-fast": ["train-fast", "--timesteps", "64", "--no-progress"],
    "exploit": ["exploit", "random", "--timesteps", "64", "--no-progress"],
    "evaluate": ["evaluate", *QUICK_EVALUATE],
}
"""Commands with ``--force`` that write an output folder, with settings that would finish in seconds."""


def user_files(folder: Path) -> dict[str, bytes]:
    """A folder of a user's own files (a source tree), created; its files by relative path."""
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "game.py").write_text("print('my code')\n")
    (folder / "notes.txt").write_text("my notes\n")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return tree(folder)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder``, by relative path, with its content."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``goboom ARGV`` in this process; assert it was refused with exit status 2 and one line on stderr, and
    return that line."""
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


# -- the current folder, the folders above it, home and root ------------------------------------------------------


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_force_never_empties_the_current_folder(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    before = user_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    err = refused(capsys, [*WRITERS[command], "--out", ".", "--force"])
    assert f"--out {tmp_path} is the current folder or a folder above it" in err
    assert tree(tmp_path) == before


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_force_never_empties_a_folder_above_the_current_one(command: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    before = user_files(tmp_path)
    monkeypatch.chdir(tmp_path / "src")
    err = refused(capsys, [*WRITERS[command], "--out", "..", "--force"])
    assert f"--out {tmp_path} is the current folder or a folder above it" in err
    assert tree(tmp_path) == before


def test_the_reported_command_leaves_the_source_tree_whole(tmp_path: Path) -> None:
    """``goboom train --out . --force`` run as a user runs it, in a folder of their files."""
    before = user_files(tmp_path)
    done = subprocess.run([*GOBOOM, *WRITERS["train"], "--out", ".", "--force"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2 and done.stderr.splitlines() == [
        f"goboom train: error: --out {tmp_path} is the current folder or a folder above it; name a new folder"]
    assert tree(tmp_path) == before


def test_the_demo_and_train_rllib_follow_the_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    before = user_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert "is the current folder or a folder above it" in refused(capsys, ["demo", "--timesteps", "64",
                                                                            "--out", "."])
    with pytest.raises(ValueError, match="is the current folder or a folder above it"):
        RLlibArgs(out="..", force=True).validate()
    with pytest.raises(ValueError, match="was not written by goboom"):
        RLlibArgs(out=str(tmp_path / "src"), force=True).validate()
    assert tree(tmp_path) == before


def test_home_and_root_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    before = user_files(home)
    mark(home)  # even a home folder that looks like goboom's
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    assert f"--out {home} is your home folder" in refused(capsys, [*WRITERS["evaluate"], "--out", "~", "--force"])
    with pytest.raises(ValueError, match=r"--out / is (the current folder or a folder above it|the root folder)"):
        check_output_folder("/", force=True)
    assert {k: v for k, v in tree(home).items() if k != MARKER} == before


# -- --force replaces only what goboom wrote ---------------------------------------------------------------------


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_force_refuses_a_folder_goboom_did_not_write(command: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mine"
    before = user_files(out)
    err = refused(capsys, [*WRITERS[command], "--out", str(out), "--force"])
    assert f"--out {out} was not written by goboom (it has no {MARKER} file), so --force does not replace it: it " \
           "would remove .git/, notes.txt and src/; choose another --out" in err
    assert tree(out) == before


def test_force_replaces_a_folder_goboom_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert main([*WRITERS["evaluate"], "--out", str(out)]) == 0
    assert (out / MARKER).read_text() == outdir.MARKER_TEXT
    (out / "stale.txt").write_text("left from before")
    assert main([*WRITERS["evaluate"], "--out", str(out), "--force"]) == 0
    assert not (out / "stale.txt").exists() and (out / "report.md").is_file() and outdir.is_marked(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]  # no staging folder left
    capsys.readouterr()


def test_a_marker_of_another_content_or_a_link_is_not_goboom_s(tmp_path: Path) -> None:
    forged = tmp_path / "forged"
    forged.mkdir()
    (forged / MARKER).write_text("something else\n")
    linked = tmp_path / "linked"
    linked.mkdir()
    mark(tmp_path)
    (linked / MARKER).symlink_to(tmp_path / MARKER)
    for folder in (forged, linked):
        assert not outdir.is_marked(folder)
        with pytest.raises(ValueError, match="was not written by goboom"):
            check_output_folder(folder, force=True)


def test_the_folder_is_replaced_only_once_the_new_one_is_ready(tmp_path: Path) -> None:
    out = earlier_run(tmp_path / "results")
    with pytest.raises(RuntimeError), StagedFolder(out, force=True) as staged:
        (staged / "report.md").write_text("half")
        raise RuntimeError("the run failed")
    assert (out / "report.md").read_text() == EARLIER_RUN
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]


def test_a_folder_filled_by_someone_else_during_the_run_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "results"
    with (pytest.raises(OutputError, match="was filled by something else while this command ran") as raised,
          StagedFolder(out, force=True) as staged):
        (staged / "report.md").write_text("new")
        out.mkdir()
        (out / "mine.txt").write_text("a user's file")
    assert tree(out) == {"mine.txt": b"a user's file"}
    kept = next(p for p in tmp_path.iterdir() if p.name.endswith(".partial"))
    assert str(kept) in str(raised.value) and (kept / "report.md").read_text() == "new"


# -- a command never replaces its input ---------------------------------------------------------------------------


def test_force_never_replaces_the_models_an_evaluation_plays(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert main([*WRITERS["evaluate"], "--out", str(out)]) == 0
    model = out / "mine.zip"
    shutil.copy(model_path("classic-4p-hands"), model)
    before = tree(out)
    err = refused(capsys, [*WRITERS["evaluate"], "--agents", f"ppo:{model}", "heuristic", "--out", str(out),
                           "--force"])
    assert f"--out {out} holds {model}, which this command reads (--agents); choose another --out" in err
    assert tree(out) == before


def test_the_trainers_never_replace_the_models_they_read(tmp_path: Path) -> None:
    from goboom_env.training.settings import ExploitArgs, VectorArgs

    out = earlier_run(tmp_path / "run")
    model = out / "model.zip"
    shutil.copy(model_path("classic-4p-hands"), model)
    before = tree(out)
    with pytest.raises(ValueError, match=f"holds {model}, which this command reads \\(--init-actor\\)"):
        VectorArgs(out=str(out), force=True, init_actor=str(model), timesteps=64).validate()
    with pytest.raises(ValueError, match=f"holds {model}, which this command reads \\(agent\\)"):
        ExploitArgs(out=str(out), force=True, agent=f"ppo:{model}").validate()
    assert tree(out) == before


def test_leaderboard_never_replaces_the_results_it_rates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    assert main([*WRITERS["evaluate"], "--out", str(results / "a")]) == 0
    mark(results)
    before = tree(results)
    err = refused(capsys, ["leaderboard", str(results / "a"), "--out", str(results), "--force"])
    assert f"holds {results / 'a'}, which this command reads (DIR)" in err
    assert tree(results) == before


# -- goboom export and goboom play --save --------------------------------------------------------------------------


def test_export_never_replaces_a_file_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "notes.zip"
    out.write_text("my notes")
    err = refused(capsys, ["export", str(model_path("classic-4p-hands")), "--out", str(out)])
    assert f"--out {out} already exists; pass --force to replace it, or choose another --out" in err
    err = refused(capsys, ["export", str(model_path("classic-4p-hands")), "--out", str(out), "--force"])
    assert f"--out {out} is not a goboom model file, so --force does not replace it" in err
    assert out.read_text() == "my notes" and sorted(p.name for p in tmp_path.iterdir()) == ["notes.zip"]


def test_export_force_replaces_a_goboom_model_but_never_its_input(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "model.zip"
    shutil.copy(model_path("classic-4p-hands"), model)
    err = refused(capsys, ["export", str(model), "--out", str(model), "--force"])
    assert f"--out {model} is {model}, which this command reads (MODEL); choose another --out" in err
    assert model.read_bytes() == model_path("classic-4p-hands").read_bytes()
    other = tmp_path / "other.zip"
    shutil.copy(model_path("classic-2p"), other)
    assert main(["export", str(model), "--out", str(other), "--force"]) == 0
    assert main(["evaluate", "--agents", f"ppo:{other}", "heuristic", *QUICK_EVALUATE,
                 "--out", str(tmp_path / "results")]) == 0  # the classic 4p model now
    capsys.readouterr()


def test_export_into_a_folder_is_one_line_and_leaves_nothing(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    err = refused(capsys, ["export", str(model_path("classic-4p-hands")), "--out", str(folder)])
    assert f"--out {folder} is a folder; give the name of the file to write" in err
    assert list(folder.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["models"]


def test_play_save_appends_only_to_a_file_of_game_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    err = refused(capsys, ["play", "--save", str(notes)])
    assert f"--save {notes} is not a file of game records (its first line is not one)" in err
    assert notes.read_text() == "my notes\n"
