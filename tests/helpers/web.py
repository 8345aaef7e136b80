"""Helpers of the web tests (tests/web): game bodies, a scripted player over the ASGI test client, record files,
a real server in a thread. The web extra is imported only by :func:`served`, when it is called."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from goboom_env import records
from goboom_env.agents import make_agent
from goboom_env.config import GameConfig
from goboom_env.engine import Match

if TYPE_CHECKING:
    from starlette.testclient import TestClient

    from goboom_env.web.store import GameStore

CLASSIC = {
    "preset": "classic",
    "seat": 0,
    "opponents": ["classic-tricks", "random"],
    "episode": "hand",
    "seed": 11,
    "delay_ms": 0,
}
"""The body of a new game: a classic hand, the human in seat 0."""
JSON = {"Content-Type": "application/json"}
JSON_LINES = {"Content-Type": "application/x-ndjson"}
"""How the page labels a record file it posts for replay."""
EVIL = "http://evil.example"
"""The origin of another web site."""
MAX_REPLY = 1000
"""The longest error reply expected (a message and a short excerpt of the input)."""


Clocked = Callable[..., "tuple[TestClient, GameStore, list[float]]"]
"""The ``clocked`` fixture of tests/web/conftest.py: ``clocked(**settings)`` starts an app whose game store runs on
a clock the test sets."""


def new_game(client: Any, body: dict[str, Any] = CLASSIC) -> tuple[str, dict[str, str], dict[str, Any]]:
    """Start a game through the test client: its id, the headers that carry its token, its first frame."""
    response = client.post("/api/games", json=body)
    assert response.status_code == 201, response.text
    data = response.json()
    return data["game"], {"X-Game-Token": data["token"]}, data["frame"]


def refused_host(client: Any, host: str) -> str:
    """The error of ``GET /api/options`` sent with the Host header ``host``, which the server must refuse (400)."""
    response = client.get("/api/options", headers={"Host": host})
    assert response.status_code == 400, (host, response.text[:MAX_REPLY])
    return response.json()["error"]


def ws_url(game: str, headers: dict[str, str]) -> str:
    """The websocket path of ``game`` with the token of ``headers``."""
    return f"/api/games/{game}/play?token={headers['X-Game-Token']}"


def first_legal(frame: dict[str, Any]) -> str:
    """The move a scripted player makes: the lowest legal card of the hand, else draw (= the lowest legal action,
    :class:`~helpers.LowestLegal`'s move on the engine)."""
    return next((c["code"] for c in frame["your_hand"] if c["legal"]), "draw")


def play_to_end(client: Any, game: str, headers: dict[str, str]) -> tuple[dict[str, Any], list[list[str]]]:
    """Play the human's seat with :func:`first_legal` to the end; the last frame and the legal moves of each turn."""
    frame = client.post(f"/api/games/{game}/advance", headers=headers).json()["frames"][-1]
    turns = []
    while frame["status"] != "over":
        if frame["status"] == "hand_over":
            frame = client.post(f"/api/games/{game}/next", headers=headers).json()["frames"][-1]
            continue
        assert frame["status"] == "your_turn"
        turns.append(sorted(frame["legal"]))
        response = client.post(f"/api/games/{game}/move", headers=headers, json={"move": first_legal(frame)})
        assert response.status_code == 200, response.text
        frame = response.json()["frames"][-1]
    return frame, turns


def record_line(seed: int = 1) -> str:
    """One valid game record line (a random classic 3-player hand)."""
    config = GameConfig(variant="classic", num_players=3)
    agents = [make_agent("random", config, seed + s) for s in range(3)]
    _, record = records.record_episode(Match(config, np.random.default_rng(seed)), agents, "hand", seats=["random"] * 3)
    return records.dumps_record(record) + "\n"


def long_match() -> records.GameRecord:
    """The record of one long match: 12 random players of classic Go Boom to 1000 points, some twenty hands and
    over three pages of the server's replay frames (a frame of 12 seats shows every hand, so it is large)."""
    config = GameConfig.preset("classic-12p", target_score=1000)
    agents = [make_agent("random", config, seat) for seat in range(12)]
    _, record = records.record_episode(Match(config, np.random.default_rng(5)), agents, "match", seats=["random"] * 12)
    return record


def records_folder_with_links(root: Path) -> Path:
    """``root/games``, a records folder holding one record, ``game-own.jsonl``, and what a server must neither list
    nor read: ``link.jsonl``, a symbolic link to a record outside it (``root/elsewhere/private.jsonl``),
    ``passwd.jsonl``, one to /etc/passwd, and ``dir.jsonl``, a folder."""
    folder, outside = root / "games", root / "elsewhere"
    folder.mkdir()
    outside.mkdir()
    (folder / "game-own.jsonl").write_text(record_line(1))
    (outside / "private.jsonl").write_text(record_line(2))
    (folder / "link.jsonl").symlink_to(outside / "private.jsonl")
    (folder / "passwd.jsonl").symlink_to("/etc/passwd")
    (folder / "dir.jsonl").mkdir()
    return folder


START_GUARD = 60.0
"""Seconds a server in a thread may take to start before a test calls it a failure (it takes well under one)."""


@contextlib.contextmanager
def served(app: Any, **settings: Any) -> Iterator[int]:
    """``app`` served by uvicorn in a thread as ``goboom serve`` sets it up (``server_config``; ``settings`` such as
    ``request_timeout`` replace its own), on a port of 127.0.0.1 the system picks; yields the port once the server
    listens, and stops it when the block ends."""
    import uvicorn

    from goboom_env.web.server import server_config

    server = uvicorn.Server(server_config(app, "127.0.0.1", 0, **settings))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_GUARD
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.02)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=START_GUARD)
