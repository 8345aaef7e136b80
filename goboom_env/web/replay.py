"""Game records for the page: the records a server saves (one file per game), and a record turned into replay
frames, the table after the deal and after every move with every hand face up. An answer holds at most
:data:`MAX_PAGE_FRAMES` frames: the whole record is replayed (every move checked), only the page's are built. Only
regular files listed in the records folder are read (never a symbolic link).
"""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path
from typing import Any, NamedTuple

from goboom_env import records
from goboom_env.records import GameRecord
from goboom_env.web.limits import excerpt
from goboom_env.web.session import GameError, event_view, move_code, refused_as_bad_request, table_view

RECORD_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.jsonl")  # no folder, no path
MAX_RECORD_BYTES = 8 * 1024 * 1024
"""The largest saved record file read (as large as a record file the page may send)."""
MAX_PAGE_FRAMES = 500
"""The most frames one answer holds: some 2.5 MB for a table of 12 players (a frame shows every hand)."""


def save_game(folder: Path, game_id: str, record: GameRecord) -> None:
    """Write one finished game to its own file in ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    records.write(folder / f"game-{time.strftime('%Y%m%d-%H%M%S')}-{game_id}.jsonl", [record], append=False)


def saved_records(folder: Path | None) -> list[str]:
    """The record files in ``folder`` (regular files, not symbolic links), newest first."""
    if folder is None or not folder.is_dir():
        return []
    with os.scandir(folder) as entries:
        found = [(entry.stat(follow_symlinks=False).st_mtime, entry.name) for entry in entries
                 if RECORD_NAME.fullmatch(entry.name) and entry.is_file(follow_symlinks=False)]
    return [name for _, name in sorted(found, reverse=True)]


def read_saved(folder: Path | None, name: str) -> str:
    """The text of the saved record file ``name``: GameError 404 unless :func:`saved_records` lists it (a file
    swapped for a link meanwhile is not followed), 413 past :data:`MAX_RECORD_BYTES`."""
    missing = GameError(404, f"no saved record {excerpt(name)} on this server")
    if folder is None or not RECORD_NAME.fullmatch(name) or name not in saved_records(folder):
        raise missing
    try:
        fd = os.open(folder / name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        raise missing from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise missing
        if info.st_size > MAX_RECORD_BYTES:
            raise GameError(413, f"the record file {excerpt(name)} is larger than {MAX_RECORD_BYTES} bytes")
        data = file.read(MAX_RECORD_BYTES + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise GameError(400, f"the record file {excerpt(name)} is not UTF-8 text") from None


def replay_page(text: str, game: int = 0, start: int = 0, count: int = MAX_PAGE_FRAMES) -> dict[str, Any]:
    """The games of a record file (a summary each) and one page of frames of game number ``game`` (0-based), with
    its frame count and the first frame of each hand; GameError 400 for a game, start or count out of range."""
    if not 1 <= count <= MAX_PAGE_FRAMES:
        raise GameError(400, f"count must be in 1..{MAX_PAGE_FRAMES} frames (a page), got {count}; ask for the "
                             "next frames with start=")
    with refused_as_bad_request():  # a record that does not read: 400 naming the line and the field
        games = records.loads_records(text.splitlines())
    if not games:
        raise GameError(400, "the record file holds no game (one JSON object a line)")
    if not 0 <= game < len(games):
        raise GameError(400, f"game must be in 0..{len(games) - 1}, got {game}")
    page = frames(games[game], start, start + count)
    if start >= page.total:
        raise GameError(400, f"start must be in 0..{page.total - 1} (game {game} has {page.total} frames), "
                             f"got {start}")
    listed = [{"seats": list(g.seats), "episode": g.episode, "config": g.config.to_dict(), "hands": len(g.hands),
               "winners": list(g.result.winners), "points": list(g.result.points)} for g in games]
    return {"games": listed, "game": game, "start": start, "total": page.total, "page_size": MAX_PAGE_FRAMES,
            "hand_starts": page.hand_starts, "frames": page.frames}


class Frames(NamedTuple):
    """Some frames of a replay, the frame count of the whole record and the first frame (the deal) of each hand."""

    frames: list[dict[str, Any]]
    total: int
    hand_starts: list[int]


def frames(record: GameRecord, start: int = 0, stop: int | None = None) -> Frames:
    """The frames ``start`` to ``stop`` of a record (all by default); the whole record is replayed, GameError 400
    when it does not (an illegal move, events or results that differ from the engine's)."""
    out, hand_starts, number = [], [], 0
    try:
        for step in records.replay(record):
            if step.move_index is None:
                hand_starts.append(number)
            if start <= number and (stop is None or number < stop):
                out.append(_frame(record, step))
            number += 1
    except ValueError as exc:
        raise GameError(400, f"the record does not replay: {exc}") from None
    return Frames(out, number, hand_starts)


def _frame(record: GameRecord, step: records.ReplayStep) -> dict[str, Any]:
    """The table after one step of a replay, every hand face up."""
    recorded = record.hands[step.hand_index]
    last = step.move_index == len(recorded.moves) - 1
    frame = table_view(step.hand, None, reveal=True, names=list(record.seats), with_events=False) | {
        "hand_number": step.hand_index + 1,
        "move_number": 0 if step.move_index is None else step.move_index + 1,
        "moves_in_hand": len(recorded.moves),
        "move": None if step.move is None else {"seat": step.move.seat, "card": move_code(step.move.action)},
        "step_events": [event_view(e) for e in step.events],
        "scores": list(recorded.scores if last else step.scores),
        "status": "replay"}
    if last and step.hand_index == len(record.hands) - 1:
        frame["winners"] = list(record.result.winners)
    return frame
