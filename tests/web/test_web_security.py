"""``goboom serve`` against hostile pages and requests, through the ASGI test client.

A page of another web site may send requests to the server on this machine (no CORS preflight for a
bodyless POST or a text/plain body) and open websockets to it; a site whose name is made to point at
127.0.0.1 reaches it under its own Host name; any request may carry deep JSON, huge integers or huge
strings. Each must get a 4xx JSON naming the problem, without a traceback, a server path or a long echo of
the input, and the server must keep its slots for the person at the keyboard.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx2")
from helpers.web import (
    CLASSIC,
    EVIL,
    JSON,
    JSON_LINES,
    MAX_REPLY,
    first_legal,
    new_game,
    play_to_end,
    record_line,
    records_folder_with_links,
    refused_host,
    ws_url,
)
from starlette.testclient import TestClient, WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect

from goboom_env.agents import Agent, register_agent, unregister_agent
from goboom_env.config import GameConfig
from goboom_env.models import model_path
from goboom_env.web import ServerSettings, create_app
from goboom_env.web.catalog import Catalog, Choice
from goboom_env.web.store import GameStore

if TYPE_CHECKING:
    from helpers.web import Clocked

HUGE = "x" * 3_000_000
"""A string far longer than any field: a reply may quote only a short excerpt of it."""
LONG = "x" * 50_000
"""A long string that still fits the body of a new game or a move (64 KB)."""


# -- other web sites -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method, path, kwargs", [
    ("POST", "/api/games", {"headers": {"Origin": EVIL}}),  # fetch(url, {method: "POST", mode: "no-cors"})
    ("POST", "/api/games", {"headers": {"Origin": EVIL} | JSON, "json": CLASSIC}),
    ("POST", "/api/games", {"headers": {"Sec-Fetch-Site": "cross-site"} | JSON, "json": CLASSIC}),
    ("POST", "/api/games", {"headers": {"Sec-Fetch-Site": "same-site"} | JSON, "json": CLASSIC}),
    ("POST", "/api/games", {"headers": {"Origin": "null"} | JSON, "json": CLASSIC}),  # a sandboxed frame
    ("POST", "/api/games", {"headers": {"Origin": "http://testserver.evil.example"} | JSON, "json": CLASSIC}),
    ("POST", "/api/games", {"headers": {"Origin": "http://testserver:8080"} | JSON, "json": CLASSIC}),
    ("POST", "/api/games", {"headers": {"Origin": "https://testserver"} | JSON, "json": CLASSIC}),  # another scheme
    ("POST", "/api/games", {"headers": {"Origin": "https://testserver:80"} | JSON, "json": CLASSIC}),
    ("POST", "/api/replay", {"headers": {"Origin": EVIL, "Content-Type": "text/plain"}, "content": "x" * 1000}),
    ("DELETE", "/api/games/GAME", {"headers": {"Origin": EVIL}}),
    ("POST", "/api/games/GAME/move", {"headers": {"Origin": EVIL} | JSON, "json": {"move": "draw"}}),
])
def test_a_state_change_sent_by_another_site_is_refused(client: TestClient, method: str, path: str,
                                                        kwargs: dict[str, Any]) -> None:
    game, token, _ = new_game(client)
    kwargs = dict(kwargs)
    kwargs["headers"] = kwargs["headers"] | token
    response = client.request(method, path.replace("GAME", game), **kwargs)
    assert response.status_code == 403
    assert "only this server's own page may play on it" in response.json()["error"]
    store: GameStore = client.app.state.store
    assert len(store) == 1 and client.get(f"/api/games/{game}", headers=token).status_code == 200


@pytest.mark.parametrize("headers", [
    {"Origin": "http://testserver"}, {"Origin": "http://TestServer:80"}, {"Sec-Fetch-Site": "same-origin"},
    {"Sec-Fetch-Site": "none"}, {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}, {},
])
def test_the_servers_own_page_and_scripts_may_play(client: TestClient, headers: dict[str, str]) -> None:
    response = client.post("/api/games", json=CLASSIC, headers=headers)
    assert response.status_code == 201, response.text
    assert client.get("/api/options", headers={"Origin": EVIL}).status_code == 200  # reading changes nothing


def test_a_websocket_opened_by_another_site_is_refused(client: TestClient) -> None:
    game, token, _ = new_game(client)
    for headers in ({"Origin": EVIL}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://testserver"}):
        with pytest.raises(WebSocketDenialResponse) as refused, \
                client.websocket_connect(ws_url(game, token), headers=headers):
            pass
        assert refused.value.status_code == 403
        assert "only this server's own page may play on it" in refused.value.json()["error"]
    with client.websocket_connect(ws_url(game, token), headers={"Origin": "http://testserver"}) as ws:
        assert ws.receive_json()["type"] == "frame"


@pytest.mark.parametrize("method, path, kwargs", [
    ("GET", "/", {}), ("GET", "/static/app.js", {}), ("GET", "/api/options", {}),
    ("POST", "/api/games", {"headers": {"Origin": EVIL}}),  # a refusal
    ("GET", "/api/games/nope", {}),  # an error of the app
])
def test_no_page_may_show_the_server_in_a_frame(client: TestClient, method: str, path: str,
                                                kwargs: dict[str, Any]) -> None:
    response = client.request(method, path, **kwargs)
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["content-security-policy"] == "frame-ancestors 'none'"


def test_a_new_game_must_be_sent_as_json_even_without_a_body(client: TestClient) -> None:
    for headers in ({}, {"Content-Type": "text/plain"}, {"Content-Type": "application/x-www-form-urlencoded"}):
        response = client.post("/api/games", headers=headers)
        assert response.status_code == 415 and "Content-Type: application/json" in response.json()["error"]
    assert len(client.app.state.store) == 0
    assert client.post("/api/games", headers=JSON).status_code == 201  # an empty JSON request: every default


def test_a_finished_game_frees_its_slot(clocked: Clocked) -> None:
    client, store, now = clocked(max_games=1, finished_ttl=60)
    game, token, _ = new_game(client)
    assert client.post("/api/games", json=CLASSIC).status_code == 503  # one game being played: full
    play_to_end(client, game, token)
    assert client.get(f"/api/games/{game}", headers=token).json()["frame"]["status"] == "over"
    second, second_token, _ = new_game(client)  # the finished game made room
    assert client.get(f"/api/games/{game}", headers=token).status_code == 404
    play_to_end(client, second, second_token)
    now[0] = 30
    assert client.get(f"/api/games/{second}", headers=second_token).status_code == 200  # kept for a reload
    now[0] = 91
    assert store.expire() == [second] and len(store) == 0  # then dropped, long before the idle timeout


# -- DNS rebinding -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "127.1", "::1", "[::1]", "localhost",
                                  "::ffff:127.0.0.1", "2130706433"])
def test_goboom_serve_on_any_loopback_address_answers_only_to_local_names(host: str) -> None:
    from goboom_env.cli.serve import allowed_hosts

    names = allowed_hosts(host)
    assert names is not None and "rebind.evil.example" not in names
    assert {"localhost", "127.0.0.1", "::1"} <= set(names)


@pytest.mark.parametrize("host, base", [("0.0.0.0", "http://127.0.0.1:8000"), ("::", "http://[::1]:8000"),
                                        ("192.0.2.7", "http://192.0.2.7:8000")])
def test_goboom_serve_on_any_address_answers_only_to_local_names_its_address_and_allowed_ones(host: str,
                                                                                           base: str) -> None:
    from goboom_env.cli.options import parse
    from goboom_env.cli.serve import ServeArgs, server_settings

    for allowed in ([], ["--allow-host", "MyBox.lan.", "--allow-host", "[2001:db8::7]"]):
        args = parse(ServeArgs, ["--host", host, "--records", "None", *allowed], "goboom serve")
        args.validate()
        with TestClient(create_app(server_settings(args)), base_url=base) as client:
            for name in ("localhost:8000", "127.0.0.1", "[::1]:8000", host if ":" not in host else f"[{host}]"):
                assert client.get("/api/options", headers={"Host": name}).status_code == 200, name
            for name in ("rebind.evil.example", "rebind.evil.example:8000", "192.0.2.99:8000", "mybox.lan.evil"):
                assert "start it with --allow-host NAME" in refused_host(client, name)
            refused = client.post("/api/games", json=CLASSIC, headers={"Host": "rebind.evil.example"})
            assert refused.status_code == 400 and len(client.app.state.store) == 0  # no game made
            for name in ("mybox.lan:8000", "MYBOX.LAN", "[2001:db8::7]:8000"):
                assert client.get("/api/options", headers={"Host": name}).status_code == (200 if allowed else 400)


@pytest.mark.parametrize("name", ["http://mybox.lan", "mybox.lan:8000", "mybox.lan/x", "*", "my box", "my_box.lan", ""])
def test_goboom_serve_refuses_an_allowed_host_that_is_not_a_name(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    from goboom_env.cli import main

    assert main(["serve", "--allow-host", name, "--records", "None"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("goboom serve: error: --allow-host") and "without http:// or a port" in err


@pytest.mark.parametrize("host, base", [("::1", "http://[::1]:8000"), ("127.1", "http://127.0.0.1:8000"),
                                        ("127.0.0.2", "http://127.0.0.2:8000")])
def test_a_rebinding_host_name_gets_a_json_refusal(host: str, base: str) -> None:
    from goboom_env.cli.serve import allowed_hosts

    with TestClient(create_app(ServerSettings(allowed_hosts=allowed_hosts(host))), base_url=base) as client:
        assert client.get("/api/options").status_code == 200
        assert client.get("/api/options", headers={"Host": "localhost:8000"}).status_code == 200
        for bad in ("rebind.evil.example", "rebind.evil.example:8000", "", "[::1"):
            assert "answers only to the host names" in refused_host(client, bad)
        with pytest.raises(WebSocketDenialResponse) as denied, \
                client.websocket_connect("/api/games/x/play?token=y", headers={"Host": "rebind.evil.example"}):
            pass
        assert denied.value.status_code == 400


# -- deep, huge and odd input --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path, body, words", [
    ("/api/games", "[" * 20_000 + "]" * 20_000, "nested more than 32 levels"),
    ("/api/games", '{"config": ' + '{"a": ' * 40 + "1" + "}" * 41, "nested more than 32 levels"),
    ("/api/games", '{"seed": ' + "9" * 5000 + "}", "an integer of 5000 digits"),
    ("/api/games", '{"seed": -' + "9" * 30 + "}", "an integer of 30 digits"),
    ("/api/games", '{"seed": NaN}', "NaN is not a JSON number"),
    ("/api/replay", "[" * 100_000 + "\n", "line 1: not JSON we read: nested more than 32 levels"),
    ("/api/replay", '{"format": ' + "9" * 5000 + "}\n", "line 1: format: an integer of 5000 digits"),
])
def test_deep_json_and_huge_integers_are_a_400_naming_the_problem(client: TestClient, path: str, body: str,
                                                                   words: str) -> None:
    headers = JSON if path == "/api/games" else JSON_LINES
    response = client.post(path, content=body, headers=headers)
    assert response.status_code == 400 and words in response.json()["error"]


@pytest.mark.parametrize("query", ["²", "\u0661", "1²", "-1", "+1", " 1", "1" * 30, "0x1"])
def test_a_game_number_must_be_ascii_digits(client: TestClient, query: str) -> None:
    response = client.post("/api/replay", params={"game": query}, content=record_line(), headers=JSON_LINES)
    assert response.status_code == 400 and "game must be a game number" in response.json()["error"]
    assert client.get("/api/records/nosuch.jsonl", params={"game": query}).status_code == 400


@pytest.mark.parametrize("message, words", [
    ("[" * 2000, "nested more than 32 levels"),  # under the size limit of a message, over the parser's recursion
    ('{"type": "move", "move": ' + "9" * 4000 + "}", "an integer of 4000 digits"),
    ('{"type": "move", "move": "' + "x" * 10_000 + '"}', "a message is at most 4096 characters"),
    (b'{"type": "state"}', "send messages as text"),
])
def test_a_bad_websocket_message_gets_an_error_and_the_socket_stays_open(client: TestClient, message: str | bytes,
                                                                         words: str) -> None:
    game, token, _ = new_game(client, CLASSIC | {"seat": 3})
    with client.websocket_connect(ws_url(game, token)) as ws:
        while ws.receive_json()["frame"]["status"] != "your_turn":
            pass
        ws.send_bytes(message) if isinstance(message, bytes) else ws.send_text(message)
        error = ws.receive_json()
        assert error["type"] == "error" and error["status"] == 400 and words in error["error"]
        ws.send_json({"type": "state"})
        assert ws.receive_json()["frame"]["status"] == "your_turn"  # still open, still playing


@pytest.mark.parametrize("token", ["%C2%B2", "%FF"])
def test_an_odd_token_is_a_403_not_a_crash(client: TestClient, token: str) -> None:
    game, _, _ = new_game(client)
    with client.websocket_connect(f"/api/games/{game}/play?token={token}") as ws:
        assert ws.receive_json()["status"] == 403
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 4403


# -- long echoes ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("body, words", [
    ({"preset": LONG}, "preset must be a number or a word"),
    ({"opponents": [LONG]}, "unknown opponent 'xxxx"),
    ({"opponents": LONG}, "opponents must be a non-empty list"),
    ({"config": {"variant": LONG}}, "config field 'variant'"),
    ({"config": {LONG: 1}}, "unknown configuration fields: ['xxxx"),
    ({"config": LONG}, "config must be an object"),
    ({"seat": list(range(10_000))}, "seat must be a number or a word"),
    ({LONG: 1}, "unknown fields"),
])
def test_a_refusal_quotes_only_a_short_excerpt_of_a_new_game(client: TestClient, body: Any, words: str) -> None:
    response = client.post("/api/games", json=body)
    assert response.status_code == 400, response.text[:MAX_REPLY]
    assert words in response.json()["error"] and len(response.text) < MAX_REPLY


def test_a_huge_new_game_is_refused_before_it_is_read(client: TestClient) -> None:
    response = client.post("/api/games", json={"preset": HUGE})
    assert response.status_code == 413 and len(response.text) < MAX_REPLY


def test_a_refused_move_or_record_quotes_only_a_short_excerpt(client: TestClient) -> None:
    game, token, _ = new_game(client, CLASSIC | {"seat": 3})
    client.post(f"/api/games/{game}/advance", headers=token)
    move = client.post(f"/api/games/{game}/move", headers=token, json={"move": LONG})
    assert move.status_code == 400 and "not a move: 'xxx" in move.json()["error"] and len(move.text) < MAX_REPLY
    tampered = (("format", HUGE), ("version", HUGE), ("config", {"variant": HUGE}), ("episode", list(range(10**5))))
    for field, value in tampered:
        record = json.loads(record_line())
        record[field] = value
        response = client.post("/api/replay", content=json.dumps(record), headers=JSON_LINES)
        assert response.status_code == 400 and len(response.text) < MAX_REPLY, field
        assert f"line 1: {field}" in response.json()["error"]
    long_id = client.get("/api/games/" + "g" * 5000, headers=token)
    assert long_id.status_code == 404 and len(long_id.text) < MAX_REPLY
    with client.websocket_connect(ws_url(game, token)) as ws:
        while ws.receive_json()["frame"]["status"] != "your_turn":
            pass
        ws.send_json({"type": "move", "move": "x" * 4000})
        error = ws.receive_json()
        assert error["status"] == 400 and len(json.dumps(error)) < MAX_REPLY


# -- failing agents and server paths -------------------------------------------------------------------------------


class BrokenAgent(Agent):
    """An agent whose model file cannot be read: its error names a path of the server."""

    name = "broken"
    path = "/srv/secret-models/run-7/model.zip"

    def act(self, observation: Any, view: Any = None) -> int:
        raise RuntimeError(f"cannot read {self.path}: the model file is damaged")


@pytest.fixture
def broken_client() -> TestClient:
    register_agent("broken-test-agent", lambda config, seed=None: BrokenAgent(config))
    catalog = Catalog()
    catalog.choices["broken"] = Choice("broken", "broken-test-agent", "fails")
    try:
        with TestClient(create_app(ServerSettings(catalog=catalog))) as client:
            yield client
    finally:
        unregister_agent("broken-test-agent")


def test_a_failing_agent_ends_its_game_naming_the_agent_and_no_path(broken_client: TestClient,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    game, token, _ = new_game(broken_client, CLASSIC | {"seat": 3, "opponents": ["broken"]})
    response = broken_client.post(f"/api/games/{game}/advance", headers=token)
    assert response.status_code == 200
    last = response.json()["frames"][-1]
    assert last["status"] == "failed" and "(broken) failed (RuntimeError" in last["error"]
    assert "model.zip" in last["error"] and "secret-models" not in response.text
    err = capsys.readouterr().err
    assert BrokenAgent.path in err and "Traceback" in err  # the full error is in the server's log
    for path, body in (("/advance", None), ("/move", {"move": "draw"}), ("/next", None)):
        again = broken_client.post(f"/api/games/{game}{path}", headers=token, json=body)
        assert again.status_code == 410 and "(broken) failed" in again.json()["error"], path
    assert broken_client.get(f"/api/games/{game}", headers=token).json()["frame"]["status"] == "failed"
    assert broken_client.get("/api/options").status_code == 200  # the server keeps running


def test_a_failing_agent_on_the_websocket_sends_the_end_and_closes(broken_client: TestClient) -> None:
    game, token, _ = new_game(broken_client, CLASSIC | {"seat": 3, "opponents": ["broken"]})
    with broken_client.websocket_connect(ws_url(game, token)) as ws:
        frames = []
        while (message := ws.receive_json())["type"] == "frame":
            frames.append(message)
        assert frames[-1]["frame"]["status"] == "failed"
        assert message["status"] == 410 and "(broken) failed" in message["error"]
        assert "secret-models" not in json.dumps(frames) + json.dumps(message)
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 4410
    with broken_client.websocket_connect(ws_url(game, token)) as again:  # a reload shows the end, once
        assert again.receive_json()["frame"]["status"] == "failed"
        assert again.receive_json()["status"] == 410


SECRET_FOLDERS = ["secret-folder", "My Secret (models) ü/run 7, final", "a b/c;d/[e]"]
"""Folder names a page must never learn: one word, and names with spaces, punctuation and brackets (which a
filter of paths in words does not see as one path)."""


def secret_words(folder: str) -> list[str]:
    """The words of a folder name: none may reach the page."""
    return [word for word in re.split(r"[\s/(),;\[\]]+", folder) if len(word) > 1]


@pytest.mark.parametrize("secret", SECRET_FOLDERS)
def test_a_damaged_model_file_is_refused_naming_its_choice_not_its_folder(tmp_path: Path, secret: str) -> None:
    folder = tmp_path / secret
    folder.mkdir(parents=True)
    with zipfile.ZipFile(model_path("classic-4p-hands")) as source, zipfile.ZipFile(folder / "bad.zip", "w") as damaged:
        for info in source.infolist():  # the metadata intact, the network not
            damaged.writestr(info, source.read(info) if "meta" in info.filename else b"garbage")
    with TestClient(create_app(ServerSettings(catalog=Catalog([folder])))) as client:
        response = client.post("/api/games", json=CLASSIC | {"opponents": ["model:bad"]})
        assert response.status_code == 400 and "model:bad is damaged" in response.json()["error"]
        assert str(tmp_path) not in response.text
        assert not [word for word in secret_words(secret) if word in response.text], response.text


@pytest.fixture
def refusing_loader(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """``ppo:`` models load through a loader that refuses every file with a ValueError naming its path, as the
    loaders refuse a crafted file (an array header of 4 TiB); yields the paths it was asked for."""
    asked: list[str] = []

    def refuse(config: GameConfig, seed: int | None = None, path: str = "") -> Any:
        asked.append(path)
        raise ValueError(f"{path}: member goboom_actor.npz declares an array of shape (1048576, 1048576), "
                         f"over the bound of the model's metadata ({path})")

    register_agent("ppo", refuse, replace=True)  # a registered name hides the entry point of the same name
    try:
        yield asked
    finally:
        unregister_agent("ppo")


@pytest.mark.parametrize("secret", SECRET_FOLDERS)
def test_a_model_the_loader_refuses_is_a_4xx_naming_its_choice(tmp_path: Path, secret: str,
                                                               refusing_loader: list[str]) -> None:
    folder = tmp_path / secret
    folder.mkdir(parents=True)
    shutil.copyfile(model_path("classic-4p-hands"), folder / "crafted.zip")
    with TestClient(create_app(ServerSettings(catalog=Catalog([folder]))), raise_server_exceptions=False) as client:
        response = client.post("/api/games", json=CLASSIC | {"opponents": ["model:crafted"]})
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error.startswith("opponent P1 (model:crafted) cannot play: model:crafted: member goboom_actor.npz")
        assert error.endswith("over the bound of the model's metadata (model:crafted)")
        assert not [word for word in secret_words(secret) if word in error] and str(tmp_path) not in error, error
        assert refusing_loader == [str(folder / "crafted.zip")] and len(client.app.state.store) == 0


def test_a_model_that_fails_mid_game_is_named_by_its_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / SECRET_FOLDERS[1]
    folder.mkdir(parents=True)
    shutil.copyfile(model_path("classic-4p-hands"), folder / "mine.zip")

    class Refusing(Agent):
        name = "refusing"

        def __init__(self, config: GameConfig, path: str) -> None:
            super().__init__(config)
            self.path = path

        def act(self, observation: Any, view: Any = None) -> int:
            raise ValueError(f"{self.path}: the network's output is not finite")

    register_agent("ppo", lambda config, seed=None, path="": Refusing(config, path), replace=True)
    try:
        with TestClient(create_app(ServerSettings(catalog=Catalog([folder])))) as client:
            game, token, _ = new_game(client, CLASSIC | {"seat": 3, "opponents": ["model:mine"]})
            response = client.post(f"/api/games/{game}/advance", headers=token)
    finally:
        unregister_agent("ppo")
    error = response.json()["frames"][-1]["error"]
    assert "(model:mine) failed (ValueError: model:mine: the network's output is not finite)" in error
    assert not [word for word in secret_words(SECRET_FOLDERS[1]) if word in response.text], error


def test_an_internal_error_shows_no_traceback_and_no_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from goboom_env.web import replay

    def broken(*args: Any) -> Any:
        raise RuntimeError("/srv/secret/file.py went wrong")

    monkeypatch.setattr(replay, "replay_page", broken)
    with TestClient(create_app(ServerSettings()), raise_server_exceptions=False) as client:
        response = client.post("/api/replay", content=record_line(), headers=JSON_LINES)
        assert response.status_code == 500
        assert response.json() == {"error": "internal error; the server's log has the details"}


# -- frames in order -----------------------------------------------------------------------------------------------


def human_leads(client: TestClient) -> tuple[str, dict[str, str]]:
    """A new game in which the human moves first (there is nothing for the agents to do at first)."""
    for seed in range(50):
        game, token, frame = new_game(client, CLASSIC | {"seed": seed})
        if frame["status"] == "your_turn":
            return game, token
        client.delete(f"/api/games/{game}", headers=token)
    raise AssertionError("no deal of seeds 0..49 lets the human lead")


def test_a_new_websocket_gets_its_first_frame_once_and_every_frame_a_rising_seq(client: TestClient) -> None:
    game, token = human_leads(client)
    with client.websocket_connect(ws_url(game, token)) as ws:
        first = ws.receive_json()
        assert first["seq"] == 1 and first["frame"]["status"] == "your_turn"
        ws.send_json({"type": "state"})  # the next message answers it: no second copy of the first frame
        assert ws.receive_json()["seq"] == 2
        ws.send_json({"type": "move", "move": first_legal(first["frame"])})
        seqs = [2]
        while True:
            message = ws.receive_json()
            seqs.append(message["seq"])
            if message["frame"]["status"] in ("your_turn", "over"):
                break
    assert seqs == list(range(2, 2 + len(seqs)))
    with client.websocket_connect(ws_url(game, token)) as again:  # numbers go on over a new socket of the game
        assert again.receive_json()["seq"] == seqs[-1] + 1


# -- records folder ------------------------------------------------------------------------------------------------


def test_the_records_folder_lists_and_reads_only_its_own_regular_files(tmp_path: Path) -> None:
    folder = records_folder_with_links(tmp_path)
    with TestClient(create_app(ServerSettings(records=folder))) as client:
        assert client.get("/api/records").json()["records"] == ["game-own.jsonl"]
        assert client.get("/api/records/game-own.jsonl").status_code == 200
        for name in ("link.jsonl", "passwd.jsonl", "dir.jsonl", "..%2Felsewhere%2Fprivate.jsonl",
                     "%2Fetc%2Fpasswd"):
            response = client.get(f"/api/records/{name}")
            assert response.status_code == 404 and response.json()["error"], name  # a path: no route at all


def test_goboom_serve_refuses_a_records_path_that_is_not_a_folder(tmp_path: Path, taken_port: int,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from goboom_env.cli import main

    file = tmp_path / "records.txt"
    file.write_text("not a folder")
    port = str(taken_port)  # were the option let through, the server would stop at the taken port
    assert main(["serve", "--port", port, "--records", str(file)]) == 2
    assert f"--records {file} is not a folder" in capsys.readouterr().err
    assert main(["serve", "--port", port, "--records", str(file / "sub")]) == 2
    assert f"{file} is not a folder" in capsys.readouterr().err
    assert os.path.isfile(file)
