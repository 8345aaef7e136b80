"""Processes read from /proc (Linux), for the tests of what a command leaves running: a process's fields, whether
it still runs, its children and descendants, the members of a process group. Written apart from
``goboom_env.process``, whose clean-up these tests check."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

STATE, PARENT, GROUP, START_TIME = 0, 1, 2, 19
"""Indices of :func:`stat`'s fields: the state (``Z``: a zombie, ended but not yet reaped), the parent's pid, the
process group and the start time (clock ticks after boot)."""


def proc_file(pid: int, name: str) -> str | None:
    """The text of ``/proc/PID/NAME``, or None once the process has gone."""
    try:
        return Path(f"/proc/{pid}/{name}").read_text()
    except OSError:
        return None


def stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name, or None once the process has gone."""
    text = proc_file(pid, "stat")
    return None if text is None else text[text.rindex(")") + 2:].split()


def live_processes() -> Iterator[tuple[int, list[str]]]:
    """Every live process (zombies excluded) and its :func:`stat` fields."""
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := stat(int(entry))) is not None and fields[STATE] != "Z":
            yield int(entry), fields


def alive(pid: int, started: str | None = None) -> bool:
    """Whether process ``pid`` still runs (a zombie has ended); with ``started``, its start time as
    :func:`descendants` gives it, only that process, not a later one given the same pid."""
    fields = stat(pid)
    return fields is not None and fields[STATE] != "Z" and started in (None, fields[START_TIME])


def children(pid: int) -> list[int]:
    """The live child processes of ``pid``."""
    return [child for child, fields in live_processes() if int(fields[PARENT]) == pid]


def descendants(root: int) -> dict[int, str]:
    """The live descendants of ``root``: pid -> start time (for :func:`alive`)."""
    parents: dict[int, list[tuple[int, str]]] = {}
    for pid, fields in live_processes():
        parents.setdefault(int(fields[PARENT]), []).append((pid, fields[START_TIME]))
    found, todo = {}, [root]
    while todo:
        for pid, started in parents.get(todo.pop(), []):
            found[pid] = started
            todo.append(pid)
    return found


def group_members(pgid: int) -> list[int]:
    """The live members of process group ``pgid``."""
    return [pid for pid, fields in live_processes() if int(fields[GROUP]) == pgid]
