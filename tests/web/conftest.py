"""Fixtures of the web tests (``goboom serve``, goboom_env.web): the app behind Starlette's test client (saving
records, or on a clock the test sets) and a port of 127.0.0.1 already taken.

Every module here needs the web extra and starts with ``pytest.importorskip`` for the packages it uses (starlette;
httpx2 for the test client; uvicorn, websockets or playwright for a real server), so a missing one skips it, or
fails it under ``make test``; a fixture imports the extra when it runs, for the same reason.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from helpers.web import Clocked
    from starlette.testclient import TestClient

    from goboom_env.web.store import GameStore


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    """The app of ``goboom serve`` behind Starlette's test client, saving its records in ``tmp_path/games``."""
    testclient = pytest.importorskip("starlette.testclient")
    from goboom_env.web import ServerSettings, create_app

    with testclient.TestClient(create_app(ServerSettings(records=tmp_path / "games"))) as test_client:
        yield test_client


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port of 127.0.0.1 that a socket listens on during the test."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


@pytest.fixture
def clocked() -> Iterator[Clocked]:
    """``clocked(**settings)``: the app of ``ServerSettings(**settings)`` behind Starlette's test client, its game
    store on a clock the test sets; returns the client, the store and ``now``, whose ``now[0]`` is the store's time
    in seconds (0 at first)."""
    testclient = pytest.importorskip("starlette.testclient")
    from goboom_env.web import ServerSettings, create_app

    with contextlib.ExitStack() as clients:

        def start(**settings: Any) -> tuple[TestClient, GameStore, list[float]]:
            now = [0.0]
            client = clients.enter_context(testclient.TestClient(create_app(ServerSettings(**settings))))
            store = client.app.state.store
            store.clock = lambda: now[0]
            return client, store, now

        yield start
