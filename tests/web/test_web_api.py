"""The web app of ``goboom serve`` through the ASGI test client: every route, every refusal, games kept apart.

A game played over the API must end exactly as the same game played on the engine (same seed, same agents,
the same choices for the human), and every bad request must get a 4xx JSON naming the problem while the
server keeps running.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx2")
from helpers import LowestLegal, benchmark_module
from helpers.web import (
    CLASSIC,
    JSON_LINES,
    first_legal,
    new_game,
    play_to_end,
    refused_host,
    ws_url,
)
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from goboom_env import records
from goboom_env.agents import make_agent, register_agent, unregister_agent
from goboom_env.cards import DRAW_OR_PASS
from goboom_env.config import GameConfig
from goboom_env.engine import Match
from goboom_env.game_loop import play_episode
from goboom_env.models import model_path
from goboom_env.web import ServerSettings, create_app
from goboom_env.web.catalog import Catalog, Choice
from goboom_env.web.session import GameError, parse_move

if TYPE_CHECKING:
    from helpers.web import Clocked

JOKERS_MATCH = {"preset": "jokers-3p", "seat": 1, "opponents": ["jokers-shed"], "episode": "match", "seed": 4,
                "delay_ms": 0}


def as_request(body: Any, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """The keyword arguments that send ``body``: JSON data, or a string sent as it is (labelled JSON)."""
    headers = dict(headers or {})
    if isinstance(body, str):
        return {"content": body, "headers": headers | {"Content-Type": "application/json"}}
    return {"json": body, "headers": headers}


def engine_result(body: dict[str, Any]) -> tuple[Any, Match]:
    """The same game on the engine: ``Match(config, default_rng(seed))``, seat ``s`` seeded ``seed + 1 + s``."""
    config = GameConfig.preset(body["preset"])
    seed, seat = body["seed"], body["seat"]
    specs = body["opponents"] + [body["opponents"][-1]] * (config.num_players - 1 - len(body["opponents"]))
    others = iter(specs)
    agents = [LowestLegal(config) if s == seat else make_agent(next(others), config, seed + 1 + s)
              for s in range(config.num_players)]
    match = Match(config, np.random.default_rng(seed))
    return play_episode(match, agents, body["episode"]), match


# -- the page and the options ----------------------------------------------------------------------------


def test_the_page_and_its_files_are_served_without_external_assets(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    for name in ("app.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200
        assert f"/static/{name}" in page.text
    for text in (page.text, client.get("/static/app.js").text, client.get("/static/style.css").text):
        assert "http://" not in text and "https://" not in text  # nothing fetched from elsewhere
    assert client.get("/static/nosuch.js").json() == {"error": "Not Found"}


def test_options_list_the_presets_fields_and_opponents_without_paths(client: TestClient, tmp_path: Path) -> None:
    options = client.get("/api/options").json()
    assert "classic" in options["presets"] and options["episodes"] == ["hand", "match"]
    assert set(options["defaults"]) == set(GameConfig().to_dict())
    ids = [a["id"] for a in options["agents"]]
    assert {"random", "heuristic", "ismcts:iters=200", "ppo:classic-4p-hands", "ppo:jokers-4p-hands"} <= set(ids)
    assert all(set(a) == {"id", "label", "variant", "config", "player_counts"} for a in options["agents"])  # no spec
    assert str(Path(__file__).resolve().parents[2]) not in json.dumps(options)


def test_model_folders_are_offered_by_name_only(tmp_path: Path) -> None:
    folder = tmp_path / "secret-folder"
    folder.mkdir()
    (folder / "mine.zip").write_bytes(model_path("classic-4p-hands").read_bytes())
    with TestClient(create_app(ServerSettings(catalog=Catalog([folder])))) as client:
        options = client.get("/api/options").json()
        assert "model:mine" in [a["id"] for a in options["agents"]]
        assert "secret-folder" not in json.dumps(options)
        game, headers, _ = new_game(client, CLASSIC | {"opponents": ["model:mine"]})
        assert client.get(f"/api/games/{game}", headers=headers).json()["frame"]["players"][1]["name"] == "model:mine"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match=r"holds no model \.zip"):
        Catalog([empty])
    with pytest.raises(ValueError, match="not a folder"):
        Catalog([tmp_path / "nosuch"])


def test_two_model_files_of_one_name_are_refused_not_one_dropped(tmp_path: Path) -> None:
    for run in ("run-a", "run-b"):
        (tmp_path / run).mkdir()
        (tmp_path / run / "model.zip").write_bytes(model_path("classic-4p-hands").read_bytes())
    with pytest.raises(ValueError, match=r"run-a/model\.zip and \S+run-b/model\.zip would both be offered as model:"):
        Catalog([tmp_path / "run-a", tmp_path / "run-b"])


# -- playing -------------------------------------------------------------------------------------------------


def test_a_classic_hand_over_the_api_ends_as_on_the_engine(client: TestClient) -> None:
    game, headers, frame = new_game(client)
    assert frame["status"] in ("your_turn", "agents") and len(frame["your_hand"]) == 7
    assert all("cards" not in p for p in frame["players"] if p["seat"] != 0)  # the others' hands stay hidden
    last, turns = play_to_end(client, game, headers)
    result, match = engine_result(CLASSIC)
    assert last["winners"] == list(result.winners) and last["scores"] == list(result.points)
    assert last["hand_result"]["points"] == match.hand.hand_points()
    assert all("cards" in p for p in last["players"])  # every hand revealed at the end
    assert turns


def test_a_jokers_match_over_the_api_ends_as_on_the_engine(client: TestClient) -> None:
    game, headers, _ = new_game(client, JOKERS_MATCH)
    last, _ = play_to_end(client, game, headers)
    result, match = engine_result(JOKERS_MATCH)
    assert last["scores"] == list(result.points) == match.scores
    assert last["winners"] == list(result.winners)
    assert [r["deltas"] for r in last["results"]] == [list(r.score_deltas) for r in match.results]
    assert last["hand_number"] == match.hands_played == len(last["results"])


def test_the_agents_move_one_frame_at_a_time(client: TestClient) -> None:
    body = CLASSIC | {"seat": 3}
    game, headers, frame = new_game(client, body)
    assert frame["status"] == "agents"
    frames = client.post(f"/api/games/{game}/advance", headers=headers).json()["frames"]
    assert [len(f["events"]) for f in frames] == sorted({len(f["events"]) for f in frames})  # one move each
    assert frames[-1]["status"] == "your_turn" and frames[-1]["legal"]
    again = client.post(f"/api/games/{game}/advance", headers=headers).json()["frames"]
    assert again == [frames[-1]]  # nothing to do on your turn


def test_games_are_isolated(client: TestClient) -> None:
    one, h1, _ = new_game(client)
    two, h2, before = new_game(client)
    play_to_end(client, one, h1)
    assert client.get(f"/api/games/{two}", headers=h2).json()["frame"] == before
    assert client.get(f"/api/games/{one}", headers=h2).status_code == 403  # one game's token opens no other


# -- refusals ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("body, status, words", [
    ("{not json", 400, "not JSON: "),
    ("[1, 2]", 400, "must be a JSON object"),
    ({"colour": "red"}, 400, "unknown fields ['colour']"),
    ({"config": {"num_players": 13}}, 400, "num_players must be an integer in 2..12"),
    ({"config": {"variant": "poker"}}, 400, "variant must be one of"),
    ({"config": {"wild": 1}}, 400, "unknown configuration fields"),
    ({"config": "classic"}, 400, "config must be an object"),
    ({"preset": "nosuch"}, 400, "unknown preset 'nosuch'"),
    ({"seat": 4}, 400, "seat must be an integer in 0..3"),
    ({"seat": True}, 400, "seat must be an integer"),
    ({"episode": "season"}, 400, "episode must be one of"),
    ({"seed": "x"}, 400, "seed must be an integer"),
    ({"delay_ms": 60000}, 400, "delay_ms must be an integer in 0..5000"),
    ({"opponents": []}, 400, "opponents must be a non-empty list"),
    ({"opponents": ["random"] * 4}, 400, "4 opponents for 3 other seats"),
    ({"opponents": ["ppo:/etc/passwd"]}, 400, "unknown opponent 'ppo:"),  # the path itself is never shown
    ({"opponents": ["jokers-shed"]}, 400, "plays the jokers variant"),
    ({"opponents": ["ppo:classic-4p-hands"], "config": {"num_players": 3}}, 400, "trained for a different game"),
])
def test_a_bad_new_game_is_a_400_naming_the_problem(client: TestClient, body: Any, status: int, words: str) -> None:
    response = client.post("/api/games", **as_request(body))
    assert response.status_code == status
    assert words in response.json()["error"]
    assert client.get("/api/options").status_code == 200  # the server keeps running


def test_unknown_games_and_wrong_tokens(client: TestClient) -> None:
    game, headers, _ = new_game(client)
    for method, path in (("GET", ""), ("POST", "/move"), ("POST", "/next"), ("POST", "/advance"), ("DELETE", "")):
        unknown = client.request(method, f"/api/games/nosuch{path}", headers=headers, json={"move": "draw"})
        assert unknown.status_code == 404 and "no game 'nosuch'" in unknown.json()["error"]
        stranger = client.request(method, f"/api/games/{game}{path}", headers={"X-Game-Token": "x"},
                                  json={"move": "draw"})
        assert stranger.status_code == 403 and "token" in stranger.json()["error"]
    assert client.delete(f"/api/games/{game}", headers=headers).status_code == 204
    assert client.get(f"/api/games/{game}", headers=headers).status_code == 404


def test_bad_moves_are_refused_and_leave_the_game_as_it_was(client: TestClient) -> None:
    game, headers, _ = new_game(client, CLASSIC | {"seat": 2})
    url = f"/api/games/{game}"
    out_of_turn = client.post(f"{url}/move", headers=headers, json={"move": "draw"})
    assert out_of_turn.status_code == 409 and "not your turn: P1" in out_of_turn.json()["error"]
    frame = client.post(f"{url}/advance", headers=headers).json()["frames"][-1]
    illegal = next((c["code"] for c in frame["your_hand"] if not c["legal"]), None) or "draw"
    if illegal == "draw" and frame["can_draw"]:
        pytest.fail("the scripted deal must leave the human an illegal card")
    refused = client.post(f"{url}/move", headers=headers, json={"move": illegal})
    assert refused.status_code == 422 and f"{illegal} is not a legal move now; legal moves:" in refused.json()["error"]
    for body, words in (({"move": "ZZ"}, "not a move: 'ZZ'"), ({"move": 99}, "action numbers are 0..53"),
                        ({"move": True}, "a move must be"), ({"card": "7D"}, 'a move request is {"move": CARD}'),
                        ("{oops", "not JSON: ")):
        response = client.post(f"{url}/move", **as_request(body, headers))
        assert response.status_code == 400 and words in response.json()["error"], body
    assert client.get(url, headers=headers).json()["frame"] == frame
    assert client.post(f"{url}/next", headers=headers).status_code == 409  # the hand is still being played
    play_to_end(client, game, headers)
    for path, body in (("move", {"move": "draw"}), ("next", None)):
        over = client.post(f"{url}/{path}", headers=headers, json=body)
        assert over.status_code == 409 and "the game is over" in over.json()["error"]


def test_a_huge_body_is_refused(client: TestClient) -> None:
    response = client.post("/api/replay", content=b"x" * (8 * 1024 * 1024 + 1), headers=JSON_LINES)
    assert response.status_code == 413
    big_move = client.post("/api/games", content=b" " * (64 * 1024 + 1), headers={"Content-Type": "application/json"})
    assert big_move.status_code == 413  # a new game or a move is far smaller than a record file


def test_a_body_that_is_not_sent_as_json_is_refused(client: TestClient) -> None:
    """A form on another web site can post text without the browser asking the server first; JSON it cannot."""
    response = client.post("/api/games", content=json.dumps(CLASSIC), headers={"Content-Type": "text/plain"})
    assert response.status_code == 415 and "application/json" in response.json()["error"]
    assert client.post("/api/games", content=json.dumps(CLASSIC),
                       headers={"Content-Type": "application/json; charset=utf-8"}).status_code == 201
    bodyless = client.post("/api/games")  # what a page of another site may send without asking first
    assert bodyless.status_code == 415 and "application/json" in bodyless.json()["error"]
    text = client.post("/api/replay", content="{}", headers={"Content-Type": "text/plain"})
    assert text.status_code == 415 and "application/x-ndjson" in text.json()["error"]


def test_a_loopback_server_answers_only_to_local_host_names() -> None:
    with TestClient(create_app(ServerSettings(allowed_hosts=["127.0.0.1", "localhost"])),
                    base_url="http://localhost:8000") as client:
        assert client.get("/api/options").status_code == 200
        assert "answers only to the host names" in refused_host(client, "evil.example:8000")


def test_parse_move_reads_codes_words_and_numbers() -> None:
    assert parse_move("10h") == parse_move("TH") == parse_move(34) == parse_move("34") == 34
    assert parse_move("Draw") == parse_move("pass") == DRAW_OR_PASS
    assert parse_move("K♣") == parse_move("kc") == 11  # the cards as the page shows them, as goboom play reads them
    with pytest.raises(GameError, match="action numbers"):
        parse_move(-1)


# -- the websocket ---------------------------------------------------------------------------------------------


def receive_until(ws: Any, status: set[str]) -> dict[str, Any]:
    while True:
        message = ws.receive_json()
        if message["type"] == "frame" and message["frame"]["status"] in status:
            return message["frame"]


def test_live_play_over_the_websocket_and_its_refusals(client: TestClient) -> None:
    game, headers, _ = new_game(client, JOKERS_MATCH)
    with client.websocket_connect(ws_url(game, headers)) as ws:
        frame = receive_until(ws, {"your_turn"})
        with client.websocket_connect(ws_url(game, headers)) as second:  # a second tab on the same game
            message = second.receive_json()
            assert message == {"type": "error", "status": 409,
                               "error": "this game is already open in another tab or window"}
            with pytest.raises(WebSocketDisconnect) as closed:
                second.receive_json()
            assert closed.value.code == 4409
        busy = client.post(f"/api/games/{game}/move", headers=headers, json={"move": "draw"})
        assert busy.status_code == 409 and "another tab" in busy.json()["error"]
        for text, status in (("{bad", 400), ('{"type": "dance"}', 400), ('{"type": "move", "move": "QQ"}', 400),
                             ('{"type": "next"}', 409)):
            ws.send_text(text)
            message = ws.receive_json()
            assert message["type"] == "error" and message["status"] == status, text
        illegal = next((c["code"] for c in frame["your_hand"] if not c["legal"]), None)
        if illegal:
            ws.send_json({"type": "move", "move": illegal})
            assert ws.receive_json()["status"] == 422
        while frame["status"] != "over":
            if frame["status"] == "hand_over":
                ws.send_json({"type": "next"})
            else:
                ws.send_json({"type": "move", "move": first_legal(frame)})
            frame = receive_until(ws, {"your_turn", "hand_over", "over"})
        ws.send_json({"type": "state"})
        assert ws.receive_json()["frame"] == frame
    result, _ = engine_result(JOKERS_MATCH)
    assert frame["scores"] == list(result.points)
    with client.websocket_connect(ws_url(game, headers)) as again:  # the tab closed: the game opens again
        assert again.receive_json()["frame"]["status"] == "over"


def test_the_websocket_shows_the_agents_moves_the_chosen_delay_apart(client: TestClient) -> None:
    game, headers, _ = new_game(client, CLASSIC | {"seat": 3, "delay_ms": 150})
    with client.websocket_connect(ws_url(game, headers)) as ws:
        assert ws.receive_json()["frame"]["status"] == "agents"  # the table as it is, at once
        arrivals = [time.monotonic()]
        while True:
            frame = ws.receive_json()["frame"]
            arrivals.append(time.monotonic())
            if frame["status"] == "your_turn":
                break
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert len(gaps) >= 2 and min(gaps) >= 0.14, gaps


@pytest.mark.parametrize("game, token, code", [("nosuch", "x", 4404), (None, "wrong", 4403)])
def test_the_websocket_refuses_unknown_games_and_tokens(client: TestClient, game: str | None, token: str,
                                                         code: int) -> None:
    real, _, _ = new_game(client)
    with client.websocket_connect(f"/api/games/{game or real}/play?token={token}") as ws:
        assert ws.receive_json()["status"] == code - 4000
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == code


# -- the server: expiry, limits, agents off the event loop ------------------------------------------------


def test_idle_games_expire(clocked: Clocked) -> None:
    client, app_store, now = clocked(max_games=2, ttl=10)
    game, headers, _ = new_game(client)
    now[0] = 9
    assert client.get(f"/api/games/{game}", headers=headers).status_code == 200  # used: kept alive
    new_game(client)
    full = client.post("/api/games", json=CLASSIC)
    assert full.status_code == 503 and "already runs 2 games" in full.json()["error"]
    now[0] = 20
    assert client.get(f"/api/games/{game}", headers=headers).status_code == 404
    assert len(app_store) == 0
    new_game(client)  # room again


class SlowAgent(LowestLegal):
    """Thinks until the test lets it move (at most a few seconds), then plays its lowest legal move."""

    name = "slow"
    thinking = threading.Event()
    release = threading.Event()

    def act(self, observation: Any, view: Any = None) -> int:
        self.thinking.set()
        self.release.wait(timeout=5)
        return super().act(observation, view)


def test_a_slow_agent_holds_up_only_its_own_game() -> None:
    register_agent("slow-test-agent", lambda config, seed=None: SlowAgent(config))
    SlowAgent.thinking.clear()
    SlowAgent.release.clear()
    try:
        catalog = Catalog()
        catalog.choices["slow"] = Choice("slow", "slow-test-agent", "thinks for a while")
        with TestClient(create_app(ServerSettings(catalog=catalog))) as client:
            slow, slow_headers, frame = new_game(client, CLASSIC | {"seat": 3, "opponents": ["slow"]})
            assert frame["status"] == "agents"
            done = threading.Event()
            thread = threading.Thread(target=lambda: (client.post(f"/api/games/{slow}/advance",
                                                                  headers=slow_headers), done.set()))
            thread.start()
            assert SlowAgent.thinking.wait(timeout=5)
            game, headers, _ = new_game(client)
            play_to_end(client, game, headers)  # served while the slow agent thinks on its worker thread
            assert not done.is_set()
            SlowAgent.release.set()
            thread.join(timeout=10)
            assert done.is_set()
    finally:
        SlowAgent.release.set()
        unregister_agent("slow-test-agent")


# -- records and replays ----------------------------------------------------------------------------------------


def test_finished_games_are_saved_and_replay_to_the_same_end(client: TestClient, tmp_path: Path) -> None:
    game, headers, _ = new_game(client, JOKERS_MATCH)
    last, _ = play_to_end(client, game, headers)
    names = client.get("/api/records").json()["records"]
    assert len(names) == 1 and game in names[0]
    (record,) = records.read(tmp_path / "games" / names[0])
    assert record.seats == ("jokers-shed", "you", "jokers-shed") and list(record.result.points) == last["scores"]
    replay = client.get(f"/api/records/{names[0]}").json()
    final = replay["frames"][-1]
    assert final["scores"] == last["scores"] and final["winners"] == last["winners"]
    assert [p["cards"] for p in final["players"]] == [p["cards"] for p in last["players"]]
    assert replay["games"][0]["hands"] == len(last["results"])
    for name in ("..%2Fgames", "nosuch.jsonl", "..%2F..%2Fetc%2Fpasswd", ".hidden.jsonl"):
        assert client.get(f"/api/records/{name}").status_code == 404


def test_a_posted_record_file_replays_or_is_refused_naming_the_line(client: TestClient) -> None:
    config = GameConfig(variant="classic", num_players=3)
    rng = np.random.default_rng(2)
    lines = []
    for seed in (1, 2):
        agents = [make_agent("random", config, seed + s) for s in range(3)]
        _, record = records.record_episode(Match(config, rng), agents, "hand", seats=["random"] * 3)
        lines.append(records.dumps_record(record))
    text = "\n".join(lines) + "\n"
    second = client.post("/api/replay?game=1", content=text, headers=JSON_LINES).json()
    assert len(second["games"]) == 2 and second["game"] == 1
    assert second["frames"][-1]["scores"] == list(records.loads_record(lines[1]).result.points)
    assert second["frames"][0]["move"] is None and second["frames"][1]["move"]["seat"] is not None
    tampered = json.loads(lines[0])
    tampered["hands"][0]["moves"][0]["seat"] = (tampered["hands"][0]["moves"][0]["seat"] + 1) % 3
    for body, query, words in ((text, "?game=2", "game must be in 0..1"),
                               (text, "?game=x", "game must be a game number"),
                               ("not json\n", "", "line 1: not JSON"), ("", "", "holds no game"),
                               (json.dumps(tampered), "", "the record does not replay: hands[0].moves[0].seat")):
        response = client.post(f"/api/replay{query}", content=body, headers=JSON_LINES)
        assert response.status_code == 400 and words in response.json()["error"], words


# -- goboom serve ------------------------------------------------------------------------------------------------


def test_goboom_serve_prints_its_url_and_serves_the_page_to_local_names_only(tmp_path: Path) -> None:
    with benchmark_module("serve_load") as serve_load, \
            serve_load.serve(tmp_path, "--records", str(tmp_path / "games")) as server:
        assert server.log.read_text().splitlines()[0] == (f"goboom serve: open http://127.0.0.1:{server.port}/ in a "
                                                          "browser (Ctrl-C stops the server)")
        url = f"http://127.0.0.1:{server.port}/api/options"
        with urllib.request.urlopen(url, timeout=5) as response:
            assert "ppo:classic-4p-hands" in response.read().decode()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(url, headers={"Host": "evil.example"}), timeout=5)
        assert refused.value.code == 400


@pytest.mark.parametrize("argv, words", [
    (["--port", "0"], "port must be an integer in 1..65535"),
    (["--model", "no/such/folder"], "--model no/such/folder: not a folder"),
    (["--idle-minutes", "0"], "idle_minutes must be > 0"),
])
def test_goboom_serve_refuses_bad_options(argv: list[str], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    from goboom_env.cli import main

    assert main(["serve", *argv]) == 2
    assert words in capsys.readouterr().err


def test_goboom_serve_on_a_port_in_use_says_so_before_offering_a_url(taken_port: int,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from goboom_env.cli import main

    assert main(["serve", "--port", str(taken_port), "--records", "None"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"goboom serve: error: cannot listen on 127.0.0.1:{taken_port}: ") and "open http" not in out


def test_the_page_files_are_package_data() -> None:
    """Every file of the page is shipped in the wheel (a file the globs miss would be a 404 once installed)."""
    import fnmatch
    import tomllib

    import goboom_env.web

    root = Path(__file__).resolve().parents[2]
    patterns = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    folder = Path(goboom_env.web.__file__).parent
    files = [p.relative_to(folder).as_posix() for p in (folder / "static").rglob("*") if p.is_file()]
    assert {"static/index.html", "static/app.js", "static/style.css"} <= set(files)
    assert all(any(fnmatch.fnmatch(f, pattern) for pattern in patterns["goboom_env.web"]) for f in files), files
