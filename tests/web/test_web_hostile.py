"""A real ``goboom serve`` against the requests of a hostile web page and of hostile clients (slow tier).

The server runs as ``goboom serve --host 127.1`` (a short form of 127.0.0.1: it listens there, and must still
refuse other Host names) in a subprocess; plain HTTP (``http.client``, which sends any Host and Origin asked
for) and the ``websockets`` client replay what a page of another site, a DNS-rebinding site and a careless or
hostile script send, and the names of records, models and page files that try to reach a file outside their
folder. Every request goes to 127.0.0.1, every loop is bounded, and the server is stopped at the end; its log must
hold no unhandled error.
"""

from __future__ import annotations

import http.client
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
websockets_client = pytest.importorskip("websockets.sync.client")
from helpers import benchmark_module  # noqa: E402
from helpers.web import EVIL, JSON, MAX_REPLY, record_line, records_folder_with_links  # noqa: E402
from websockets.exceptions import InvalidStatus  # noqa: E402

from goboom_env.models import model_path  # noqa: E402

pytestmark = pytest.mark.slow

GAME = {"preset": "classic", "seat": 3, "opponents": ["random"], "seed": 3, "delay_ms": 0}
SECRET = "SECRET-OUTSIDE-THE-RECORDS-FOLDER"
"""The text of ``ROOT/secret.txt``, a file outside every folder the server reads, that no reply may hold."""


class Server:
    """The running server, as its clients reach it; ``root`` is the folder above the records folder (``secret.txt``,
    ``elsewhere/``, ``models/``, ``outside-models/``)."""

    def __init__(self, port: int, root: Path) -> None:
        self.port, self.root = port, root
        self.host = f"127.0.0.1:{port}"  # as its own page names it: the Host header of every request

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
    """``goboom serve --host 127.1`` (started and stopped by ``serve`` of ``benchmarks/serve_load.py``) on
    :func:`records_folder_with_links` (one record, two symbolic links, a folder), with two more links there,
    ``secret.jsonl`` to ``ROOT/secret.txt`` and ``elsewhere`` to the folder ``ROOT/elsewhere``; ``--model
    ROOT/models``, which holds ``mine.zip`` (a copy of a shipped model), while ``ROOT/outside-models/theirs.zip`` is
    a model outside it."""
    root = tmp_path_factory.mktemp("hostile")
    folder = records_folder_with_links(root)
    (root / "secret.txt").write_text(SECRET + "\n")
    (folder / "secret.jsonl").symlink_to(root / "secret.txt")
    (folder / "elsewhere").symlink_to(root / "elsewhere", target_is_directory=True)
    for name, file in (("models", "mine.zip"), ("outside-models", "theirs.zip")):
        (root / name).mkdir()
        shutil.copyfile(model_path("classic-4p-hands"), root / name / file)
    with benchmark_module("serve_load") as serve_load, serve_load.serve(
            root, "--host", "127.1", "--records", str(folder), "--max-games", "3", "--model", str(root / "models")
    ) as running:
        yield Server(running.port, root)
    text = running.log.read_text()
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


def assert_nothing_read(server: Server, reply: tuple[int, Any, bytes]) -> None:
    """A short 4xx JSON refusal that holds no content of a file outside the folder and no path of the server."""
    code, data, raw = reply
    assert 400 <= code < 500 and isinstance(data, dict) and data["error"], raw[:MAX_REPLY]
    assert len(raw) < MAX_REPLY and b"Traceback" not in raw, raw[:MAX_REPLY]
    assert SECRET.encode() not in raw and b"root:" not in raw and b'"games"' not in raw, raw[:MAX_REPLY]
    assert str(server.root).encode() not in raw and quote(str(server.root)).encode() not in raw, raw[:MAX_REPLY]


def test_symbolic_links_in_the_records_folder_are_neither_listed_nor_read(server: Server) -> None:
    status, data, _ = server.request("GET", "/api/records")
    assert status == 200 and data["records"] == ["game-own.jsonl"]
    assert server.request("GET", "/api/records/game-own.jsonl")[0] == 200
    for name in ("link.jsonl", "passwd.jsonl", "dir.jsonl", "secret.jsonl"):
        reply = server.request("GET", f"/api/records/{name}")
        assert_refusal(reply, 404, "no saved record")
        assert_nothing_read(server, reply)
    for path in ("elsewhere%2Fprivate.jsonl", "elsewhere/private.jsonl"):  # through the link to a folder
        assert_nothing_read(server, server.request("GET", f"/api/records/{path}"))


OUTSIDE_NAMES = [
    "..", "%2e%2e", "%2E%2E", ".%2e", "%2e.",  # the folder above the records folder
    "../secret.txt", "../../secret.txt", "%2e%2e/secret.txt", "..%2Fsecret.txt", "%2e%2e%2fsecret.txt",
    "%2e%2e%2F%2e%2e%2Fsecret.txt", "..%5Csecret.txt", "%2e%2e%5csecret.txt",  # a separator spelled out or encoded
    "%252e%252e%252fsecret.txt", "..%252Fsecret.txt",  # encoded twice
    "game-own.jsonl/../../secret.txt", "game-own.jsonl%2F..%2F..%2Fsecret.txt", "./../secret.txt",
    "/etc/passwd", "%2Fetc%2Fpasswd", "%2F%2Fetc%2Fpasswd", "ROOT/secret.txt", "ROOT%2Fsecret.txt",  # absolute
    "..%00.jsonl", "game-own.jsonl%00", "secret.txt", "private.jsonl",
]
"""Record names that try to leave the records folder; ``ROOT`` stands for the folder above it (an absolute path)."""


@pytest.mark.parametrize("name", OUTSIDE_NAMES)
def test_a_record_name_cannot_leave_the_records_folder(server: Server, name: str) -> None:
    name = name.replace("ROOT/", str(server.root).lstrip("/") + "/")
    name = name.replace("ROOT%2F", quote(str(server.root).lstrip("/"), safe="") + "%2F")
    for query in ("", "?game=0"):
        assert_nothing_read(server, server.request("GET", f"/api/records/{name}{query}"))


MODEL_NAMES = [
    "model:../outside-models/theirs", "model:..%2Foutside-models%2Ftheirs", "model:%2e%2e%2foutside-models%2ftheirs",
    "model:..\\outside-models\\theirs", "model:mine/../../outside-models/theirs", "model:ROOT/outside-models/theirs",
    "model:mine.zip", "model:../models/mine", "model:./mine",
    "ppo:ROOT/outside-models/theirs.zip", "ppo:../outside-models/theirs.zip", "ppo:ROOT/models/mine.zip",
    "ppo:./classic-4p-hands", "ppo:classic-4p-hands.zip", "ppo:goboom_env/models/classic-4p-hands.zip",
    "ppo:../classic-4p-hands",
    "ppo:/etc/passwd", "ppo:%2Fetc%2Fpasswd", "ppo:ROOT/secret.txt", "ROOT/models/mine.zip", "/etc/passwd",
]
"""Opponents that name a model file, inside the ``--model`` folder or outside it, rather than a choice offered."""


@pytest.mark.parametrize("opponent", MODEL_NAMES)
def test_a_model_is_chosen_by_name_never_by_a_path(server: Server, opponent: str) -> None:
    opponent = opponent.replace("ROOT", str(server.root))
    body = json.dumps(GAME | {"preset": "classic", "seat": 0, "opponents": [opponent]})
    reply = server.request("POST", "/api/games", body, JSON)
    assert_refusal(reply, 400, "unknown opponent")
    assert_nothing_read(server, reply)


def test_the_model_of_the_model_folder_is_offered_by_its_name(server: Server) -> None:
    status, data, _ = server.request("GET", "/api/options")
    assert status == 200 and "model:mine" in [agent["id"] for agent in data["agents"]]
    assert str(server.root).encode() not in json.dumps(data).encode()
    body = json.dumps(GAME | {"preset": "classic", "seat": 0, "opponents": ["model:mine"]})
    status, data, raw = server.request("POST", "/api/games", body, JSON)
    assert status == 201, raw[:MAX_REPLY]
    server.request("DELETE", f"/api/games/{data['game']}", headers={"X-Game-Token": data["token"]})


@pytest.mark.parametrize("path", [
    "../app.py", "%2e%2e/app.py", "..%2Fapp.py", "%2e%2e%2fapp.py", "..%5Capp.py", "%252e%252e%252fapp.py",
    "../../cli/serve.py", "..%2F..%2F..%2Fpyproject.toml", "/etc/passwd", "%2Fetc%2Fpasswd", "ROOT/secret.txt",
    "ROOT%2Fsecret.txt", ".%2e/app.py", "app.js%00", "app.js/../../app.py",
])
def test_a_page_file_name_cannot_leave_the_page_folder(server: Server, path: str) -> None:
    path = path.replace("ROOT/", str(server.root).lstrip("/") + "/")
    path = path.replace("ROOT%2F", quote(str(server.root).lstrip("/"), safe="") + "%2F")
    reply = server.request("GET", f"/static/{path}")
    assert_nothing_read(server, reply)
    assert b"create_app" not in reply[2] and b"[project]" not in reply[2] and b"def " not in reply[2]
    assert server.request("GET", "/static/app.js")[0] == 200
