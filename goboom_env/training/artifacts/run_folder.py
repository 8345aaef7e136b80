"""The run folder of the PPO trainers (``goboom train`` and ``goboom train-fast``): its files (:class:`RunFiles`), its
rules, its CSV logs."""

from __future__ import annotations

import csv
import dataclasses
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NamedTuple, Protocol

import numpy as np

from goboom_env.hints import needs_extra, shown
from goboom_env.outdir import Inputs, OutputError, StagedFolder, is_marked, mark, write_atomically
from goboom_env.process import say

CHECKPOINT_NAME = re.compile(r"model_(\d+)\.zip")
SNAPSHOT_NAME = re.compile(r"snapshot_(\d+)\.npz")


class RunFiles:
    """The files of one run folder: the models, the logs, ``args.json``, ``checkpoints/model_STEPS.zip``,
    ``checkpoints/state_STEPS.pt`` (train-fast's resumable state), ``snapshots/snapshot_STEPS.npz`` (league
    snapshots) and ``tensorboard/``."""

    def __init__(self, out: str | Path) -> None:
        root = self.root = Path(out)
        # the models: the final one, the best evaluated one, the one being evaluated
        self.model, self.best, self.eval_model = root / "model.zip", root / "best_model.zip", root / "eval_model.zip"
        self.progress, self.eval, self.args = root / "progress.csv", root / "eval.csv", root / "args.json"
        self.curve = root / "learning_curve.png"
        self.checkpoints, self.snapshots = root / "checkpoints", root / "snapshots"
        self.tensorboard = root / "tensorboard"

    def checkpoint(self, steps: int) -> Path:
        """The checkpoint's model at ``steps``."""
        return self.checkpoints / f"model_{steps}.zip"

    def state(self, steps: int) -> Path:
        """The fast trainer's resumable checkpoint at ``steps``."""
        return self.checkpoints / f"state_{steps}.pt"

    def latest_checkpoint(self, name: re.Pattern[str] = CHECKPOINT_NAME) -> Path | None:
        """The checkpoint (``model_STEPS.zip``, or the files named as ``name`` says) with the most steps, if any."""
        found = numbered_files(self.checkpoints, name)
        return found[-1][1] if found else None

    def snapshot_files(self) -> list[tuple[int, Path]]:
        """``(step, path)`` of the saved league snapshots, oldest first."""
        return numbered_files(self.snapshots, SNAPSHOT_NAME)

    def keep_best(self, model: Path, score: float, best: float) -> float:
        """The best evaluation score so far; ``model`` becomes ``best_model.zip`` when ``score`` beats ``best``."""
        if score > best and model != self.best:
            write_atomically(self.best, model.read_bytes())
        return max(best, score)


def numbered_files(folder: Path, pattern: re.Pattern[str]) -> list[tuple[int, Path]]:
    """``(step, path)`` of the files in ``folder`` whose whole name matches ``pattern``, by step."""
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := pattern.fullmatch(p.name)) and p.is_file()]
    return sorted(found)


def planned_settings(args: Any, exact: bool) -> Any:
    """A PPO run's settings sized to its budget (``args.sized()``) and checked, after the run's plan line (rollouts of
    ``num_envs x num_steps`` steps, ``exact`` as for ``plan``) is said."""
    sized = args.sized()
    sized.validate()
    say(args.plan(args.num_envs * args.num_steps, exact=exact))
    return sized


def start_run_folder(args: Any, files: RunFiles, command: str | None, *, resume: bool,
                     inputs: Inputs = ()) -> None:
    """Start the run folder once the run is ready to begin: ``args.json`` (the run's settings dataclass) and the
    ``commands.txt`` line. A fresh run's folder is staged (:class:`~goboom_env.outdir.StagedFolder`), so that
    ``--force`` replaces an earlier run only now; a resumed run writes into its own. ValueError when it cannot."""
    line = f"{time.strftime('%Y-%m-%d %H:%M:%S')}  {command}\n" if command else ""
    settings = json.dumps(dataclasses.asdict(args), indent=1)
    try:
        if resume:
            write_atomically(files.args, settings.encode())  # a resumed run replaces its own
            with (files.root / "commands.txt").open("a") as fh:
                fh.write(line)
            if not is_marked(files.root):
                mark(files.root)
            return
        with StagedFolder(files.root, force=args.force, inputs=inputs, kept=None) as staged:
            (staged / files.args.name).write_text(settings)
            (staged / "commands.txt").write_text(line)
    except (OSError, OutputError) as exc:
        raise ValueError(f"cannot write the run folder {files.root}: {getattr(exc, 'strerror', None) or exc}") from exc


class Resumable(Protocol):
    """The settings of a run that ``--resume`` continues."""

    resume: bool

    def network(self) -> dict[str, Any]:
        """What a resumed run must keep: the network's sizes and inputs."""
        ...


def checkpoint_to_resume(args: Resumable, latest: Callable[[], Path | None], name: str, folder: Path,
                         train_args: Callable[[Path], dict[str, Any]]) -> Path | None:
    """With ``args.resume`` the newest checkpoint (``latest()``), whose ``train_args(checkpoint)`` must have the run's
    ``network()``; ValueError when there is none. None for a fresh run."""
    if not args.resume:
        return None
    checkpoint = latest()
    if checkpoint is None:
        raise ValueError(f"--resume: no checkpoint ({name}) in {folder}")
    saved = train_args(checkpoint)
    for key, value in args.network().items():
        was = saved.get(key, value)
        if (list(was or []) if isinstance(value, list) else bool(was)) != value:
            raise ValueError(f"--resume: {key}={value} differs from the checkpoint's {was}")
    return checkpoint


class Log(NamedTuple):
    """A CSV log of a run folder (``progress.csv``, ``eval.csv``) as :func:`read_log` reads it."""

    columns: list[str]
    rows: list[dict[str, str]]


def read_log(path: Path) -> Log:
    """The columns and rows of a CSV log (none without the file); ValueError naming the file and the line when it is
    unreadable, has no ``timesteps`` column or a row's is not a non-negative integer."""
    if not path.exists():
        return Log([], [])
    try:
        with path.open(newline="") as fh:
            reader = csv.DictReader(fh)
            rows = list(reader)
            columns = list(reader.fieldnames or [])
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"cannot read the log {path}: {exc}") from None
    if columns and "timesteps" not in columns:
        raise ValueError(f"the log {path} has no timesteps column (its columns: {shown(columns, 200)}): not a log "
                         "of this run folder")
    for line, row in enumerate(rows, 2):
        if not (row.get("timesteps") or "").isdigit():
            raise ValueError(f"the log {path}, line {line}: timesteps must be a non-negative integer, got "
                             f"{shown(row.get('timesteps'))}")
    return Log(columns, rows)


def log_number(path: Path, row: dict[str, str], column: str) -> float | None:
    """The number in ``column`` of a row of the log at ``path`` (None for an empty cell); ValueError otherwise."""
    cell = row.get(column)
    if not cell:
        return None
    try:
        return float(cell)
    except ValueError:
        raise ValueError(f"the log {path}: {column} must be a number, got {shown(cell)}") from None


def best_win_rate(path: Path, baseline: str) -> float:
    """The best ``win_rate/BASELINE`` in the ``eval.csv`` at ``path`` so far (-1 when there is none)."""
    values = [log_number(path, r, f"win_rate/{baseline}") for r in read_log(path).rows]
    return max((v for v in values if v is not None), default=-1.0)


def last_evaluated(files: RunFiles) -> int | None:
    """The step count of the last row of ``eval.csv``, or None when nothing was evaluated yet."""
    rows = read_log(files.eval).rows
    return int(rows[-1]["timesteps"]) if rows else None


def last_evaluation(files: RunFiles) -> tuple[int, list[dict[str, Any]]] | None:
    """The last row of ``eval.csv`` as ``(steps, rows)``, one row per baseline column (``B`` of ``win_rate/B``) with
    its ``win_rate``, ``ci_low`` and ``ci_high``; None when nothing was evaluated."""
    rows = read_log(files.eval).rows
    if not rows:
        return None
    last = rows[-1]
    baselines = [key.partition("/")[2] for key in last if key and key.startswith("win_rate/")]
    return int(last["timesteps"]), [{"baseline": b, **{name: log_number(files.eval, last, f"{name}/{b}")
                                                      for name in ("win_rate", "ci_low", "ci_high")}}
                                    for b in baselines]


class StepBar:
    """A trainer's progress bar over learner steps (:func:`goboom_env.process.bar`): it never counts past its total,
    and :meth:`finish` raises the total to the steps done when a last whole rollout passed it."""

    def __init__(self, total: int, desc: str, enabled: bool = True, start: int = 0) -> None:
        from goboom_env.process import bar

        self.total = total
        self.count = min(start, total)  # kept here: an undrawn tqdm bar ignores its updates
        self.bar = bar(total=total, desc=desc, enabled=enabled, unit="step", initial=self.count)

    def to(self, steps: int) -> None:
        """Show ``steps`` learner steps done."""
        shown = min(steps, self.total)
        if shown > self.count:
            self.bar.update(shown - self.count)
            self.count = shown

    def finish(self, steps: int) -> None:
        """The run ended after ``steps`` learner steps: past the total, the total becomes ``steps``."""
        if steps > self.total:
            self.total = self.bar.total = steps
        self.to(steps)

    def close(self) -> None:
        self.bar.close()


def whole_rollouts(start: int, budget: int, rollout: int) -> int:
    """The step count a run resumed at ``start`` ends at, learning whole rollouts until it has ``budget`` (SB3)."""
    return start if budget <= start else start + -(-(budget - start) // rollout) * rollout


def next_multiple(steps: int, every: int) -> int:
    """The first multiple of ``every`` after ``steps`` (never, for ``every`` <= 0)."""
    return (steps // every + 1) * every if every > 0 else 1 << 62


class Schedule:
    """Which named step intervals a run's step count has reached: each falls due at the multiples of its ``every``
    (never when that is 0 or less), so that a resumed run stays on the same step grid."""

    def __init__(self, steps: int, **every: int) -> None:
        self.every = every
        self.due_at = {name: next_multiple(steps, each) for name, each in every.items()}

    def due(self, steps: int) -> set[str]:
        """The names due at ``steps``; each falls due next at its first multiple after ``steps``."""
        due = {name for name, at in self.due_at.items() if steps >= at}
        self.due_at |= {name: next_multiple(steps, self.every[name]) for name in due}
        return due


def mean_or_blank(values: Any) -> float | str:
    """The mean rounded to 4 places, or "" (an empty CSV cell) for no values."""
    values = list(values)
    return round(float(np.mean(values)), 4) if values else ""


def truncate_logs(files: RunFiles, timesteps: int) -> None:
    """Drop the rows of ``progress.csv`` and ``eval.csv`` written after ``timesteps`` (the checkpoint a resumed run
    restarts from: they are written again). An empty log, which an interrupt can leave, stays empty."""
    for path in (files.progress, files.eval):
        columns, rows = read_log(path)
        if columns:
            with path.open("w", newline="") as fh:
                writer = csv.DictWriter(fh, fieldnames=columns)
                writer.writeheader()
                writer.writerows(r for r in rows if int(r["timesteps"]) <= timesteps)


def append_csv(path: Path, row: dict[str, Any], columns: list[str]) -> None:
    """Append ``row`` to the CSV log at ``path`` (a header first for a new file; an existing log keeps its
    columns)."""
    new = not path.exists() or path.stat().st_size == 0
    if not new:
        with path.open(newline="") as fh:
            columns = next(csv.reader(fh), None) or columns
    with path.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerow(row)


def load_tensors(source: Path | IO[bytes], name: str | Path, device: str = "cpu") -> Any:
    """``torch.load`` with ``weights_only`` (a crafted checkpoint runs no code); ValueError naming ``name`` for a
    pickled object or a damaged file."""
    import pickle

    with needs_extra("loading a checkpoint's tensors"):
        import torch

    try:
        return torch.load(source, map_location=device, weights_only=True)
    except pickle.UnpicklingError as exc:
        found = next((line.strip() for line in str(exc).splitlines() if "GLOBAL" in line), "")  # what it wanted
        raise ValueError(f"{name} is not tensors and plain data; refused, not loaded"
                         + (f" ({found})" if found else "")) from None
    except (EOFError, OSError, RuntimeError) as exc:
        raise ValueError(f"cannot read {name}: {exc}") from None
