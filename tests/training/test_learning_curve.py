"""The learning curve of a run folder: against steps always, against training seconds when the run logs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from goboom_env.training.artifacts.learning_curve import curve_axes, plot_learning_curve
from goboom_env.training.artifacts.run_folder import RunFiles


def write_run(out: Path, seconds: bool) -> RunFiles:
    files = RunFiles(out)
    files.root.mkdir(parents=True, exist_ok=True)
    extra = ",train_s" if seconds else ""
    files.progress.write_text(f"timesteps,win_rate/heuristic{extra}\n" + "".join(
        f"{s},{0.2 + s / 1e7}{',' + str(s / 1000) if seconds else ''}\n" for s in range(1000, 6000, 1000)))
    files.eval.write_text(f"timesteps,win_rate/heuristic,ci_low/heuristic,ci_high/heuristic{extra}\n"
                          f"5000,0.3,0.25,0.35{',5.0' if seconds else ''}\n")
    files.args.write_text(json.dumps({"num_players": 3}))
    return files


@pytest.mark.parametrize(("seconds", "axes"), [(True, ["timesteps", "train_s"]), (False, ["timesteps"])])
def test_the_curve_is_drawn_against_the_seconds_the_run_logged(tmp_path: Path, seconds: bool, axes: list[str]) -> None:
    files = write_run(tmp_path / "run", seconds)
    assert curve_axes(files) == axes
    path = plot_learning_curve(files)
    assert path == files.curve and path.stat().st_size > 0
    from matplotlib.image import imread

    height, width = imread(path).shape[:2]
    assert width / height == pytest.approx(7 * len(axes) / 4, rel=0.05)  # one 7 x 4 panel per axis


def test_no_progress_log_no_curve(tmp_path: Path) -> None:
    assert plot_learning_curve(RunFiles(tmp_path / "empty")) is None


def test_append_csv_keeps_the_columns_of_an_existing_log(tmp_path: Path) -> None:
    """A run resumed by a version that logs one more column still writes rows that fit the log's header."""
    from goboom_env.training.artifacts.run_folder import append_csv

    log = tmp_path / "progress.csv"
    append_csv(log, {"timesteps": 1, "loss": 0.5}, ["timesteps", "loss"])
    append_csv(log, {"timesteps": 2, "loss": 0.4, "entropy": 0.1}, ["timesteps", "loss", "entropy"])
    assert log.read_text().splitlines() == ["timesteps,loss", "1,0.5", "2,0.4"]
    fresh = tmp_path / "fresh.csv"
    fresh.touch()  # an empty file gets its header
    append_csv(fresh, {"timesteps": 1}, ["timesteps"])
    assert fresh.read_text().splitlines() == ["timesteps", "1"]


def test_a_resumed_run_cuts_its_logs_back_and_an_empty_log_still_gets_its_header(tmp_path: Path) -> None:
    from goboom_env.training.artifacts.run_folder import append_csv, truncate_logs

    files = RunFiles(tmp_path)
    for steps in (256, 512):
        append_csv(files.progress, {"timesteps": steps, "loss": 0.5}, ["timesteps", "loss"])
    files.eval.touch()  # an interrupt can leave a log created but not yet written
    truncate_logs(files, 256)
    assert files.progress.read_text().splitlines() == ["timesteps,loss", "256,0.5"]
    assert files.eval.read_text() == ""
    append_csv(files.eval, {"timesteps": 512}, ["timesteps"])
    assert files.eval.read_text().splitlines() == ["timesteps", "512"]
