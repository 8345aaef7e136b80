"""Output folders that appear only when complete: files are written into a hidden sibling folder,
which is renamed to the requested name once everything is in it.

A run that fails or is interrupted removes its hidden folder and leaves an earlier folder of the same
name untouched; only a killed process (SIGKILL, power loss) can leave a ``.NAME.*.partial`` folder
behind, whose name says it is incomplete.

One rule for every command that writes a folder: an existing non-empty folder is refused unless
``force`` is given, and then it is replaced as a whole (never merged with the new files).
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from pathlib import Path
from types import TracebackType

from goboom_env.evaluation import interrupt


class OutputError(Exception):
    """The results could not be written (disk full, folder removed, ...); the message says where and why."""


def check_output_folder(out: Path, *, force: bool, option: str = "--out") -> Path:
    """The absolute folder ``out`` after checks that need no writing; ValueError naming the problem.

    Refused: an existing file, a path under a file, the current folder or one above it, a folder that is
    not writable, and an existing non-empty folder unless ``force``."""
    out = Path(os.path.abspath(out))
    if out.is_symlink():  # replace the folder it points to, keep the link
        out = out.resolve()
    if out.exists() and not out.is_dir():
        raise ValueError(f"{option} {out} is a file, not a folder")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(f"{option} {out} lies under {parent}, which is a file")
            break
    cwd = Path.cwd()
    if out == cwd or out in cwd.parents:
        raise ValueError(f"{option} {out} is the current folder or above it; name a folder to create")
    if out.is_dir() and not os.access(out, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {out} is not writable")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise ValueError(f"{option} {out} already exists and is not empty; pass --force to replace it "
                         f"or choose another {option}")
    return out


def fresh_folder(base: Path, stem: str) -> Path:
    """A folder name under ``base`` that does not exist yet: ``stem-<date>-<time>`` (``-2``, ``-3`` if taken)."""
    name = f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    path, k = base / name, 2
    while path.exists():
        path, k = base / f"{name}-{k}", k + 1
    return path


class StagedFolder:
    """``with StagedFolder(out, force=...) as tmp:`` write every file into ``tmp``; when the block ends
    without an exception, ``tmp`` replaces ``out``; on an exception (Ctrl-C included) it is removed, and so
    it is by the forced exit of :mod:`goboom_env.evaluation.interrupt` (a second Ctrl-C).

    The constructor checks ``out`` (:func:`check_output_folder`) and entering creates the hidden sibling,
    so an unwritable place fails with ValueError before any work is done."""

    def __init__(self, out: Path, *, force: bool, option: str = "--out") -> None:
        self.out = check_output_folder(out, force=force, option=option)
        self.option = option
        self.tmp: Path | None = None
        self.created = [p for p in self.out.parents if not p.exists()]
        """Parent folders this run creates, innermost first (removed again if the run fails)."""

    def __enter__(self) -> Path:
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.out.parent / f".{self.out.name}.{uuid.uuid4().hex[:12]}.partial"
            tmp.mkdir()  # the permissions of any new folder (umask), unlike tempfile.mkdtemp's 0700
            self.tmp = tmp
            interrupt.staging(tmp)  # removed by a forced exit too
        except OSError as exc:
            self._discard()
            raise ValueError(f"cannot write {self.option} {self.out}: {exc.strerror or exc}") from exc
        return self.tmp

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        assert self.tmp is not None
        if kind is not None:
            self._discard()
            return
        try:
            with interrupt.uninterrupted():  # a signal meanwhile takes effect once the results are in place
                self._replace()
                interrupt.staging(self.tmp, done=True)
                interrupt.kept(f"the complete results in {self.out}")
        except OSError as error:
            self._discard()
            raise OutputError(f"cannot write the results to {self.out}: {error.strerror or error}") from error

    def _discard(self) -> None:
        """Remove the staged folder and the parent folders made for it: a failed run leaves nothing."""
        with interrupt.uninterrupted():
            if self.tmp is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)
                interrupt.staging(self.tmp, done=True)
            for parent in self.created:
                try:
                    parent.rmdir()
                except OSError:  # not empty (something else was put there) or already gone
                    break

    def _replace(self) -> None:
        """Rename the staged folder to ``out``; an existing ``out`` is moved aside first, then deleted."""
        assert self.tmp is not None
        if not self.out.exists():
            os.rename(self.tmp, self.out)
            return
        old = self.tmp.with_suffix(".old")
        os.rename(self.out, old)
        os.rename(self.tmp, self.out)
        shutil.rmtree(old, ignore_errors=True)
