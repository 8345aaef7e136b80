"""Where the commands write: one rule for every output folder and file, and folders that appear only when complete.

The rule, checked before any work, is the Evaluation guide's "Where output goes: --out and --force" (``--force``
replaces only a folder holding the :data:`MARKER` or a file the command recognises as its own). :class:`StagedFolder`
writes into a hidden sibling renamed into place at the end, so a failed or interrupted run leaves an earlier folder
untouched; :func:`write_atomically` does the same for one file.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType

from goboom_env import process
from goboom_env.hints import joined

MARKER = ".goboom-output"
"""The file goboom writes in every output folder it creates: ``--force`` replaces only a folder that holds it."""
MARKER_TEXT = "This folder was written by goboom; `--force` may replace it as a whole.\n"
SHOWN_ENTRIES = 5  # a refused folder's entries its error names

Inputs = Iterable[tuple[str, str | Path]]
"""What a command reads, as ``(option, path)`` pairs: its ``--out`` may not hold any of them."""


class OutputError(Exception):
    """The results could not be written (disk full, folder removed, ...); the message says where and why."""


def check_output_folder(out: str | Path, *, force: bool, option: str = "--out", inputs: Inputs = (),
                        resume: bool = False, resumable: bool = False) -> Path:
    """The absolute folder ``out`` once the rule allows writing it (nothing written here); ValueError naming the
    problem otherwise. ``resume``: the run in ``out`` continues; ``resumable``: the refusal offers ``--resume``."""
    if resume and force:
        raise ValueError("--force starts the run over and --resume continues it: give one of them")
    out = Path(os.path.abspath(Path(out).expanduser()))
    if out.is_symlink():  # replace the folder it points to, keep the link
        out = out.resolve()
    _refuse_protected(out, option)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{option} {out} is a file, not a folder")
    _check_parent(out, option)
    if out.is_dir() and not os.access(out, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {out} is not writable")
    entries = _entries(out)
    if resume or not entries:
        return out
    if not force:
        hint = "--resume to continue its run, --force to replace it" if resumable else "--force to replace it"
        raise ValueError(f"{option} {out} already exists and is not empty; pass {hint}, or choose another {option}")
    if not is_marked(out):
        rest = len(entries) - SHOWN_ENTRIES
        listing = joined(entries[:SHOWN_ENTRIES] + ([f"{rest} more"] if rest > 0 else []))
        raise ValueError(f"{option} {out} was not written by goboom (it has no {MARKER} file), so --force does not "
                         f"replace it: it would remove {listing}; choose another {option}")
    _refuse_inputs(out, inputs, option)
    return out


def check_output_file(out: str | Path, *, force: bool, ours: Callable[[Path], bool], what: str,
                      option: str = "--out", inputs: Inputs = ()) -> Path:
    """The absolute file ``out`` once the rule allows writing it: an existing one only with ``force`` and
    ``ours(out)`` (the command's kind of file, ``what``); ValueError naming the problem otherwise."""
    out = Path(os.path.abspath(Path(out).expanduser()))
    if out.is_dir():
        raise ValueError(f"{option} {out} is a folder; give the name of the file to write")
    _check_parent(out, option)
    if not out.exists():
        return out
    _refuse_inputs(out, inputs, option)
    if not force:
        raise ValueError(f"{option} {out} already exists; pass --force to replace it, or choose another {option}")
    if not out.is_file() or not ours(out):
        raise ValueError(f"{option} {out} is not {what}, so --force does not replace it; choose another {option}")
    return out


def is_marked(folder: Path) -> bool:
    """Whether ``folder`` holds goboom's :data:`MARKER` (a regular file with its text)."""
    marker = folder / MARKER
    if marker.is_symlink() or not marker.is_file():
        return False
    try:
        with marker.open("rb") as fh:
            return fh.read(len(MARKER_TEXT) + 1) == MARKER_TEXT.encode()
    except OSError:
        return False


def mark(folder: Path) -> None:
    """Write the :data:`MARKER` into ``folder``, an output folder goboom created."""
    (folder / MARKER).write_text(MARKER_TEXT)


def _refuse_protected(out: Path, option: str) -> None:
    """ValueError when ``out`` is the current folder or above it, the home folder or the root."""
    real = Path(os.path.realpath(out))
    cwd = Path(os.path.realpath(Path.cwd()))
    if real == cwd or real in cwd.parents:
        raise ValueError(f"{option} {out} is the current folder or a folder above it; name a new folder")
    home = os.path.expanduser("~")
    if home != "~" and real == Path(os.path.realpath(home)):
        raise ValueError(f"{option} {out} is your home folder; name a new folder")
    if real == Path(real.anchor):
        raise ValueError(f"{option} {out} is the root folder; name a new folder")


def _check_parent(out: Path, option: str) -> None:
    """ValueError when ``out`` cannot be created: its nearest existing parent is a file or not writable."""
    existing = out.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"{option} {out} lies under {existing}, which is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {out} is not writable: no write permission in {existing}")


def _entries(folder: Path) -> list[str]:
    """The names in ``folder`` (folders with a trailing ``/``), sorted."""
    if not folder.is_dir():
        return []
    with os.scandir(folder) as found:
        return sorted(e.name + ("/" if e.is_dir(follow_symlinks=False) else "") for e in found)


def _refuse_inputs(out: Path, inputs: Inputs, option: str) -> None:
    """ValueError when ``out`` is, or holds, one of the ``(option, path)`` inputs the command reads."""
    real_out = Path(os.path.realpath(out))
    for flag, path in inputs:
        real = Path(os.path.realpath(Path(path).expanduser()))
        if real.exists() and (real == real_out or real_out in real.parents):
            what = "is" if real == real_out else "holds"
            raise ValueError(f"{option} {out} {what} {path}, which this command reads ({flag}); "
                             f"choose another {option}")


def fresh_folder(base: Path, stem: str) -> Path:
    """A folder name under ``base`` that does not exist yet: ``stem-<date>-<time>`` (``-2``, ``-3`` if taken)."""
    name = f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    path, k = base / name, 2
    while path.exists():
        path, k = base / f"{name}-{k}", k + 1
    return path


class StagedFolder:
    """``with StagedFolder(out, force=...) as tmp:`` write every file into ``tmp``, which replaces ``out`` when the
    block ends without an exception and is removed otherwise (or by a forced exit). The constructor checks ``out``
    and entering creates ``tmp``, so an unwritable place fails before any work; ``kept`` names what the folder
    holds for a later interruption's line (None: nothing yet)."""

    def __init__(self, out: str | Path, *, force: bool, option: str = "--out", inputs: Inputs = (),
                 kept: str | None = "the complete results") -> None:
        self.out = check_output_folder(out, force=force, option=option, inputs=inputs)
        self.option = option
        self.kept = kept
        self.tmp: Path | None = None
        self.created = [p for p in self.out.parents if not p.exists()]  # removed again if the run fails

    def __enter__(self) -> Path:
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.out.parent / f".{self.out.name}.{uuid.uuid4().hex[:12]}.partial"
            tmp.mkdir()  # the permissions of any new folder (umask), unlike tempfile.mkdtemp's 0700
            self.tmp = tmp
            process.staging(tmp)  # removed by a forced exit too
            mark(tmp)
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
            with process.uninterrupted():  # a signal meanwhile takes effect once the results are in place
                self._replace()
                process.staging(self.tmp, done=True)
                if self.kept:
                    process.kept(f"{self.kept} in {self.out}")
        except OSError as error:
            self._discard()
            raise OutputError(f"cannot write the results to {self.out}: {error.strerror or error}") from error

    def _discard(self) -> None:
        """Remove the staged folder and the parent folders made for it."""
        with process.uninterrupted():
            if self.tmp is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)
                process.staging(self.tmp, done=True)
            for parent in self.created:
                try:
                    parent.rmdir()
                except OSError:  # not empty (something else was put there) or already gone
                    break

    def _replace(self) -> None:
        """Rename the staged folder to ``out``, an existing one moved aside, then deleted (unless something else
        filled it meanwhile: then both stay, the error names the staged files)."""
        assert self.tmp is not None
        if not self.out.exists():
            os.rename(self.tmp, self.out)
            return
        if not self.out.is_dir() or (_entries(self.out) and not is_marked(self.out)):
            process.staging(self.tmp, done=True)
            raise OutputError(f"{self.option} {self.out} was filled by something else while this command ran, so it "
                              f"was not replaced; the new files are in {self.tmp}")
        old = self.tmp.with_suffix(".old")
        os.rename(self.out, old)
        os.rename(self.tmp, self.out)
        shutil.rmtree(old, ignore_errors=True)


def write_atomically(path: Path, data: bytes) -> Path:
    """Write ``data`` to the hidden ``.NAME.partial`` beside ``path`` (its folder made if missing), flushed to disk,
    then rename it into place: a reader never sees half a file, and a failed write removes its partial file. One
    writer per path: a second one at the same time would share the partial file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    try:
        with partial.open("wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return path
