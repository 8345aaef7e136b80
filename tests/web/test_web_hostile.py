"""A real ``goboom serve`` against the requests of a hostile web page and of hostile clients (slow tier).

The server runs as ``goboom serve --host 127.1`` (a short form of 127.0.0.1: it listens there, and must still
refuse other Host names) in a subprocess; plain HTTP (``http.client``, which sends any Host and Origin asked
for) and the ``websockets`` client replay what a page of another site, a DNS-rebinding site and a careless or
hostile script send. Every request goes to 127.0.0.1, every loop is bounded, and the server is stopped at the
end; its log must hold no unhandled error.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
websockets_client = pytest.importorskip("websockets.sync.client")
from helpers.web import EVIL, JSON, MAX_REPLY, free_port, record_line, records_folder_with_links  # noqa: E402
from websockets.exceptions import InvalidStatus  # noqa: E402

pytestmark = pytest.mark.slow

GAME = {"preset": "classic", "seat": 3, "opponents": ["random"], "seed": 3, "delay_ms": 0}
START_TIMEOUT = 60.0


@dataclass
class Server:
    port: int
    records: Path
    log: Path

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def request(self, method: str, path: str, body: bytes | str | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, Any, bytes]:
        """One request to the server on 127.0.0.1: the status, the JSON reply (None if not JSON) and the raw reply."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request(method, path, body=body, headers={"Host": self.host} | (headers or {}))
            response = connection.getresponse()
            raw = response.read()
        finally:
            connection.close()
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        return response.status, data, raw

    def new_game(self) -> tuple[str, str]:
        status, data, raw = self.request("POST", "/api/games", json.dumps(GAME), JSON)
        assert status == 201, raw[:MAX_REPLY]
        return data["game"], data["token"]

    def ws(self, game: str, token: str, **kwargs: Any) -> Any:
        return websockets_client.connect(f"ws://{self.host}/api/games/{game}/play?token={token}", open_timeout=10,
                                         close_timeout=5, **kwargs)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``goboom serve --host 127.1`` on :func:`records_folder_with_links` (one record, two symbolic links, a folder)."""
    root = tmp_path_factory.mktemp("hostile")
    folder = records_folder_with_links(root)
    port, log = free_port(), root / "server.log"
    command = [sys.executable, "-m", "goboom_env.cli", "serve", "--host", "127.1", "--port", str(port),
               "--records", str(folder), "--max-games", "3"]
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    instance = Server(port, folder, log)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            with contextlib.suppress(OSError):
                if instance.request("GET", "/api/options")[0] == 200:
                    break
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield instance
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    text = log.read_text()
    assert "Traceback" not in text and "Exception in ASGI application" not in text, text[-5000:]


def assert_refusal(reply: tuple[int, Any, bytes], status: int, words: str) -> None:
    code, data, raw = reply
    assert code == status, raw[:MAX_REPLY]
    assert isinstance(data, dict) and words in data["error"], raw[:MAX_REPLY]
    assert len(raw) < MAX_REPLY and b"Traceback" not in raw and b"/tmp" not in raw


def test_a_page_of_another_site_cannot_fill_or_change_the_server(server: Server) -> None:
    for _ in range(10):  # what fetch(url, {method: "POST", mode: "no-cors"}) sends, again and again
        assert_refusal(server.request("POST", "/api/games", headers={"Origin": EVIL}), 403, "another web site")
    assert_refusal(server.request("POST", "/api/games", json.dumps(GAME), JSON | {"Sec-Fetch-Site": "cross-site"}),
                   403, "marks this request")
    assert_refusal(server.request("POST", "/api/replay", "x" * 1_000_000, {"Origin": EVIL,
                                                                          "Content-Type": "text/plain"}),
                   403, "another web site")
    game, token = server.new_game()  # the person at the keyboard still gets a game
    assert_refusal(server.request("DELETE", f"/api/games/{game}", headers={"Origin": EVIL, "X-Game-Token": token}),
                   403, "another web site")
    assert server.request("GET", f"/api/games/{game}", headers={"X-Game-Token": token})[0] == 200
    assert_refusal(server.request("POST", "/api/games"), 415, "Content-Type: application/json")
    status, _, _ = server.request("DELETE", f"/api/games/{game}", headers={"Origin": f"http://{server.host}",
                                                                           "X-Game-Token": token})
    assert status == 204  # the server's own page may


def test_a_rebinding_host_name_is_refused(server: Server) -> None:
    for host in ("rebind.evil.example", f"rebind.evil.example:{server.port}", "127.0.0.1.evil.example"):
        assert_refusal(server.request("GET", "/api/options", headers={"Host": host}), 400,
                       "answers only to the host names")
    assert server.request("GET", "/api/options", headers={"Host": f"localhost:{server.port}"})[0] == 200
    with pytest.raises(InvalidStatus) as refused:
        websockets_client.connect(f"ws://{server.host}/api/games/x/play?token=y", open_timeout=10,
                                  additional_headers={"Host": "rebind.evil.example"}).close()
    assert refused.value.response.status_code == 400


@pytest.mark.parametrize("path, body, content_type, words", [
    ("/api/games", "[" * 20_000 + "]" * 20_000, "application/json", "nested more than 32 levels"),
    ("/api/games", '{"seed": ' + "9" * 5000 + "}", "application/json", "an integer of 5000 digits"),
    ("/api/replay", "[" * 100_000, "application/x-ndjson", "nested more than 32 levels"),
    ("/api/replay", '{"version": ' + "9" * 5000 + "}", "application/x-ndjson", "an integer of 5000 digits"),
    ("/api/replay?game=%C2%B2", "{}", "application/x-ndjson", "game must be a game number"),
    ("/api/games", json.dumps({"preset": "x" * 50_000}), "application/json", "preset must be a number or a word"),
    ("/api/games", json.dumps({"opponents": ["x" * 50_000]}), "application/json", "unknown opponent"),
    ("/api/replay", "TAMPERED", "application/x-ndjson", "line 1: format"),
])
def test_deep_huge_and_odd_input_is_a_short_400(server: Server, path: str, body: str, content_type: str,
                                                words: str) -> None:
    if body == "TAMPERED":  # a whole record whose format field is a 3 MB string
        body = json.dumps(json.loads(record_line(1)) | {"format": "x" * 3_000_000})
    assert_refusal(server.request("POST", path, body, {"Content-Type": content_type}), 400, words)


def test_the_websocket_refuses_other_sites_and_survives_bad_messages(server: Server) -> None:
    game, token = server.new_game()
    with pytest.raises(InvalidStatus) as refused:
        server.ws(game, token, origin=EVIL).close()
    assert refused.value.response.status_code == 403
    with server.ws(game, token, origin=f"http://{server.host}") as ws:
        seqs = []
        while True:
            message = json.loads(ws.recv(timeout=10))
            seqs.append(message["seq"])
            if message["frame"]["status"] == "your_turn":
                break
        assert seqs == list(range(1, len(seqs) + 1))  # one first frame, then each frame numbered in turn
        for text, words in (("[" * 2000, "nested more than 32 levels"),
                            ('{"type": "move", "move": ' + "9" * 4000 + "}", "an integer of 4000 digits"),
                            ('{"type": "move", "move": "' + "x" * 3000 + '"}', "not a move")):
            ws.send(text)
            error = json.loads(ws.recv(timeout=10))
            assert error["type"] == "error" and error["status"] == 400 and words in error["error"]
            assert len(json.dumps(error)) < MAX_REPLY
        ws.send(json.dumps({"type": "state"}))
        assert json.loads(ws.recv(timeout=10))["seq"] == seqs[-1] + 1  # still open
    server.request("DELETE", f"/api/games/{game}", headers={"X-Game-Token": token})


def test_symbolic_links_in_the_records_folder_are_neither_listed_nor_read(server: Server) -> None:
    status, data, _ = server.request("GET", "/api/records")
    assert status == 200 and data["records"] == ["game-own.jsonl"]
    assert server.request("GET", "/api/records/game-own.jsonl")[0] == 200
    for name in ("link.jsonl", "passwd.jsonl", "dir.jsonl"):
        assert_refusal(server.request("GET", f"/api/records/{name}"), 404, "no saved record")
