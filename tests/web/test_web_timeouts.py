"""Requests that arrive too slowly are cut off: a real uvicorn (``goboom_env.web.server``) on a port of 127.0.0.1.

The server runs in a thread with a deadline of :data:`DEADLINE` seconds a request, far shorter than the one
``goboom serve`` uses, so that the tests are quick; every wait of a test is bounded by :data:`HANG_GUARD` (a
guard against a hang, not a measure). A request that sends its head a byte at a time, or its body in part, is
cut off while the server goes on answering others; an open websocket and a slow answer are not.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
websockets_client = pytest.importorskip("websockets.sync.client")
from helpers.web import CLASSIC, JSON, record_line, served  # noqa: E402

from goboom_env.web import ServerSettings, create_app  # noqa: E402

DEADLINE = 1.0
"""Seconds a request may take to arrive, in these tests."""
HANG_GUARD = 60.0
"""Seconds a test waits for something that should happen within about :data:`DEADLINE` (a guard only)."""


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    with served(create_app(ServerSettings()), request_timeout=DEADLINE) as port:
        yield port


@pytest.fixture
def server_errors() -> Iterator[list[logging.LogRecord]]:
    """The errors uvicorn logs meanwhile (an exception of the app: "Exception in ASGI application")."""
    errors: list[logging.LogRecord] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = errors.append  # type: ignore[method-assign]
    logger = logging.getLogger("uvicorn.error")
    logger.addHandler(handler)
    try:
        yield errors
    finally:
        logger.removeHandler(handler)


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD)
    sock.settimeout(0.05)
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    """True when the server has closed the connection (what it sent before, if anything, is read and dropped)."""
    try:
        while data := sock.recv(65536):
            del data
        return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def answered(port: int) -> int:
    """The status of a new game asked for on a new connection: the server still serves others."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG_GUARD)
    try:
        connection.request("POST", "/api/games", json.dumps(CLASSIC), JSON)
        return connection.getresponse().status
    finally:
        connection.close()


def test_a_head_sent_a_byte_at_a_time_is_cut_off_while_others_are_answered(port: int) -> None:
    head = b"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"x" * 10_000
    with connect(port) as slow, connect(port) as silent:
        start = time.monotonic()
        sent = 0
        while not closed_by_server(slow):  # a byte every 50 ms, never the blank line that ends the head
            assert time.monotonic() - start < HANG_GUARD, "a head sent a byte at a time held its connection"
            try:
                slow.sendall(head[sent:sent + 1])
            except (BrokenPipeError, ConnectionResetError):
                break  # closed meanwhile
            sent = min(sent + 1, len(head) - 1)
            if sent == 3:
                assert answered(port) == 201  # meanwhile the server answers others
        assert sent > 3  # it had begun its head
        while not closed_by_server(silent):  # a connection that never says anything
            assert time.monotonic() - start < HANG_GUARD, "a silent connection was kept open"
    assert answered(port) == 201


def test_a_body_sent_in_part_is_cut_off(port: int, server_errors: list[logging.LogRecord]) -> None:
    body = record_line().encode()
    with connect(port) as slow:
        slow.sendall(b"POST /api/replay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-ndjson\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body[:100])
        start = time.monotonic()
        while not closed_by_server(slow):
            assert time.monotonic() - start < HANG_GUARD, "a body sent in part held its connection"
    assert answered(port) == 201
    assert not server_errors, [record.getMessage() for record in server_errors]  # the app saw the client go


def test_an_open_websocket_lasts_past_the_deadline(port: int) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG_GUARD)
    connection.request("POST", "/api/games", json.dumps(CLASSIC), JSON)
    game = json.loads(connection.getresponse().read())
    connection.close()
    with websockets_client.connect(f"ws://127.0.0.1:{port}/api/games/{game['game']}/play?token={game['token']}",
                                   open_timeout=HANG_GUARD) as ws:
        assert json.loads(ws.recv(timeout=HANG_GUARD))["type"] == "frame"
        time.sleep(2 * DEADLINE)
        ws.send(json.dumps({"type": "state"}))
        assert json.loads(ws.recv(timeout=HANG_GUARD))["type"] == "frame"


def test_an_answer_that_takes_longer_than_the_deadline_is_not_cut_off() -> None:
    async def slow_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await receive()
        await asyncio.sleep(3 * DEADLINE)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"done"})

    with served(slow_app, request_timeout=DEADLINE) as port:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG_GUARD)
        connection.request("POST", "/", b"x" * 1000)
        assert connection.getresponse().read() == b"done"
        connection.close()
