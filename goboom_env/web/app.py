"""The web app: a Starlette application that serves the page and plays games over HTTP and a websocket.

======================================  =====================================================================
route                                   what it does
======================================  =====================================================================
``GET /``                               the page (``static/index.html``; its script and style under ``/static``)
``GET /api/options``                    presets, the GameConfig fields, the opponents offered
``POST /api/games``                     a new game: ``{config | preset, seat, opponents, episode, seed, delay_ms}``
``GET /api/games/{id}``                 the table as the player sees it (header ``X-Game-Token``)
``POST /api/games/{id}/move``           ``{"move": "7D" | "draw" | 0..53}``, then the agents move up to your turn
``POST /api/games/{id}/next``           deal the next hand of a match
``POST /api/games/{id}/advance``        let the agents move up to your turn (when they start)
``DELETE /api/games/{id}``              end the game
``WS /api/games/{id}/play?token=...``   live play: messages ``{"type": "move" | "next" | "state"}``
``GET /api/records``                    the game records this server saved
``GET /api/records/{name}``             one saved record, as replay frames
``POST /api/replay``                    a record file's text (JSON Lines), as replay frames
======================================  =====================================================================

Every refusal is a 4xx JSON ``{"error": "..."}`` (on the websocket: a ``{"type": "error", "status": ...,
"error": ...}`` message, and the connection stays open unless the game cannot be played from it). Agents
run on worker threads, one game at a time under its lock, so a slow agent holds up only its own game.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from goboom_env.config import DERIVED_FIELDS, PRESETS, GameConfig, check_choice, check_int
from goboom_env.episode import EPISODES
from goboom_env.records import GameRecord
from goboom_env.web import replay
from goboom_env.web.catalog import Catalog
from goboom_env.web.session import Frame, GameError, GameSession
from goboom_env.web.store import GameStore

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 8 * 1024 * 1024
"""The largest request body read (a record file posted for replay)."""
MAX_DELAY_MS = 5000
TOKEN_HEADER = "x-game-token"


@dataclass
class ServerSettings:
    """What one server offers and how long it keeps games."""

    catalog: Catalog = field(default_factory=Catalog)
    ttl: float = 1800.0
    """Seconds a game may stay unused before it is dropped."""
    max_games: int = 100
    records: Path | None = None
    """Folder where finished hands are saved as game records (None: not saved)."""
    sweep_every: float = 60.0
    """Seconds between two sweeps for idle games."""
    allowed_hosts: list[str] | None = None
    """Host names the server answers to (None: any). ``goboom serve`` on a loopback address answers only to
    localhost names, so that a web site whose name is made to point at 127.0.0.1 cannot use the server."""


def create_app(settings: ServerSettings | None = None) -> Starlette:
    """The web app with its own game store (two apps share nothing)."""
    settings = settings or ServerSettings()
    store = GameStore(settings.ttl, settings.max_games)
    api = _Api(settings, store)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async def sweep() -> None:
            while True:
                await asyncio.sleep(settings.sweep_every)
                store.expire()

        task = asyncio.create_task(sweep())
        try:
            yield
        finally:
            task.cancel()

    routes = [
        Route("/", api.index),
        Route("/api/options", api.options),
        Route("/api/games", api.create, methods=["POST"]),
        Route("/api/games/{game}", api.state, methods=["GET"]),
        Route("/api/games/{game}", api.delete, methods=["DELETE"]),
        Route("/api/games/{game}/move", api.move, methods=["POST"]),
        Route("/api/games/{game}/next", api.next_hand, methods=["POST"]),
        Route("/api/games/{game}/advance", api.advance, methods=["POST"]),
        WebSocketRoute("/api/games/{game}/play", api.play),
        Route("/api/records", api.records),
        Route("/api/records/{name}", api.record),
        Route("/api/replay", api.replay, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    handlers = {GameError: _game_error, HTTPException: _http_error, Exception: _server_error}
    middleware = [] if settings.allowed_hosts is None else [
        Middleware(TrustedHostMiddleware, allowed_hosts=settings.allowed_hosts)]
    app = Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan,  # type: ignore[arg-type]
                    middleware=middleware)
    app.state.store = store
    app.state.settings = settings
    return app


class _Api:
    """The route handlers over one store."""

    def __init__(self, settings: ServerSettings, store: GameStore) -> None:
        self.settings, self.store = settings, store

    async def index(self, request: Request) -> Response:
        """``GET /``: the page."""
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def options(self, request: Request) -> Response:
        """``GET /api/options``: what the new-game form offers (presets, GameConfig defaults, opponents)."""
        fields = GameConfig().to_dict()  # the derived fields are None: the rules derive them
        return JSONResponse({"presets": PRESETS,
                             "defaults": {k: None if k in DERIVED_FIELDS else v for k, v in fields.items()},
                             "episodes": list(EPISODES), "agents": self.settings.catalog.public(),
                             "max_delay_ms": MAX_DELAY_MS})

    async def create(self, request: Request) -> Response:
        """``POST /api/games``: a new game from the form (201 with its id, token and first frame)."""
        body = await _json_object(request)
        session = await run_in_threadpool(self._new_game, body)
        self.store.add(session)
        return JSONResponse({"game": session.id, "token": session.token, "delay_ms": session.delay_ms,
                             "frame": session.frame()}, status_code=201)

    def _new_game(self, body: dict[str, Any]) -> GameSession:
        """A game from the page's form (every field checked: GameError 400 naming the first bad one)."""
        unknown = sorted(set(body) - {"config", "preset", "seat", "opponents", "episode", "seed", "delay_ms"})
        if unknown:
            raise GameError(400, f"unknown fields {unknown} in the new-game request")
        try:
            config = _config(body.get("preset"), body.get("config", {}))
            seat = check_int("seat", body.get("seat", 0), 0, config.num_players - 1)
            episode = body.get("episode", "hand")
            check_choice("episode", episode, EPISODES)
            seed = body.get("seed")
            seed = None if seed is None else check_int("seed", seed, 0, 2**63 - 1)
            delay = check_int("delay_ms", body.get("delay_ms", 700), 0, MAX_DELAY_MS)
            opponents = body.get("opponents", ["heuristic"])
            if not isinstance(opponents, list) or not opponents:
                raise ValueError(f"opponents must be a non-empty list of opponent ids, got {opponents!r}")
            if len(opponents) > config.num_players - 1:
                raise ValueError(f"{len(opponents)} opponents for {config.num_players - 1} other seats")
            opponents = opponents + [opponents[-1]] * (config.num_players - 1 - len(opponents))
            specs = [self.settings.catalog.spec(o, config) for o in opponents]
            return GameSession(config, seat, specs, opponents, episode=episode, seed=seed, delay_ms=delay,
                               on_game_end=self._save_game)
        except (ValueError, TypeError) as exc:
            raise GameError(400, str(exc)) from None

    def _save_game(self, session: GameSession, record: GameRecord) -> None:
        """Save a finished game's record; a folder that cannot be written costs the record, not the game."""
        if self.settings.records is None:
            return
        try:
            replay.save_game(self.settings.records, session.id, record)
        except OSError as exc:
            print(f"goboom serve: warning: the record of game {session.id} was not saved: {exc}", file=sys.stderr)

    def _game(self, request: Request) -> GameSession:
        """The game the path names, if the request carries its token (GameError 404 otherwise)."""
        return self.store.get(request.path_params["game"], request.headers.get(TOKEN_HEADER))

    async def state(self, request: Request) -> Response:
        """``GET /api/games/{game}``: the table as the human sees it now."""
        session = self._game(request)
        return JSONResponse({"frame": session.frame()})

    async def delete(self, request: Request) -> Response:
        """``DELETE /api/games/{game}``: drop the game."""
        session = self._game(request)
        self.store.remove(session.id)
        return Response(status_code=204)

    async def move(self, request: Request) -> Response:
        """``POST /api/games/{game}/move``: play the human's move, then the agents' up to the next turn."""
        session = self._game(request)
        body = await _json_object(request)
        if set(body) != {"move"}:
            raise GameError(400, 'a move request is {"move": CARD}, e.g. {"move": "7D"} or {"move": "draw"}')
        return await self._frames(session, lambda: session.play(body["move"]))

    async def next_hand(self, request: Request) -> Response:
        """``POST /api/games/{game}/next``: deal the next hand of a match."""
        session = self._game(request)
        return await self._frames(session, session.next_hand)

    async def advance(self, request: Request) -> Response:
        """``POST /api/games/{game}/advance``: let the agents move up to the human's turn."""
        session = self._game(request)
        return await self._frames(session, session.advance)

    async def _frames(self, session: GameSession, step: Callable[[], list[Frame]]) -> Response:
        if session.attached:
            raise GameError(409, "this game is open in another tab or window, which plays it")
        return JSONResponse({"frames": await _locked(session, step)})

    async def play(self, ws: WebSocket) -> None:
        """Live play: the table after every move, the agents' moves ``delay_ms`` apart."""
        await ws.accept()
        try:
            session = self.store.get(ws.path_params["game"], ws.query_params.get("token"))
            if session.attached:
                raise GameError(409, "this game is already open in another tab or window")
        except GameError as exc:
            await _send_error(ws, exc.status, exc.message)
            await ws.close(code=4000 + exc.status)
            return
        session.attached = True
        try:
            await ws.send_json({"type": "frame", "frame": session.frame()})
            await self._stream(ws, session, session.advance)  # the table again, then the agents' moves
            while True:
                text = await ws.receive_text()
                try:
                    step = self._ws_step(session, text)
                    self.store.get(session.id, session.token)  # expired meanwhile: 404
                except GameError as exc:
                    await _send_error(ws, exc.status, exc.message)
                    continue
                await self._stream(ws, session, step)
        except WebSocketDisconnect:
            pass
        finally:
            session.attached = False

    @staticmethod
    def _ws_step(session: GameSession, text: str) -> Callable[[], list[Frame]]:
        """What a websocket message asks for; GameError 400 for a malformed one."""
        try:
            message = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GameError(400, f"malformed JSON: {exc}") from None
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "move" and set(message) == {"type", "move"}:
            return lambda: session.play(message["move"])
        if kind == "next" and set(message) == {"type"}:
            return session.next_hand
        if kind == "state" and set(message) == {"type"}:
            return lambda: [session.frame()]
        raise GameError(400, 'a message is {"type": "move", "move": CARD}, {"type": "next"} or {"type": "state"}')

    async def _stream(self, ws: WebSocket, session: GameSession, step: Callable[[], list[Frame]]) -> None:
        try:
            frames = await _locked(session, step)
        except GameError as exc:
            await _send_error(ws, exc.status, exc.message)
            return
        except Exception as exc:  # an agent that failed: say so on the page; the server keeps running
            message = f"internal error: {type(exc).__name__}: {exc}"
            await _send_error(ws, 500, message)
            return
        for i, frame in enumerate(frames):  # the first at once, then one agent move every delay_ms
            if i:
                await asyncio.sleep(session.delay_ms / 1000)
            await ws.send_json({"type": "frame", "frame": frame})

    async def records(self, request: Request) -> Response:
        """``GET /api/records``: the names of the saved record files, newest first."""
        return JSONResponse({"records": replay.saved_records(self.settings.records)})

    async def record(self, request: Request) -> Response:
        """``GET /api/records/{name}?game=K``: the games of a saved record file and the frames of game K."""
        text = await run_in_threadpool(replay.read_saved, self.settings.records, request.path_params["name"])
        return JSONResponse(await run_in_threadpool(replay.replay_of_text, text, _game_number(request)))

    async def replay(self, request: Request) -> Response:
        """``POST /api/replay?game=K``: the same for the text of a record file the page sends."""
        body = await _body(request)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise GameError(400, "a record file must be UTF-8 text (JSON Lines)") from None
        return JSONResponse(await run_in_threadpool(replay.replay_of_text, text, _game_number(request)))


async def _send_error(ws: WebSocket, status: int, message: str) -> None:
    """A refusal on the websocket: the HTTP status it would have had and the message the page shows."""
    await ws.send_json({"type": "error", "status": status, "error": message})


def _game_number(request: Request) -> int:
    """The ``?game=K`` of a replay request: which game of a record file (0-based)."""
    text = request.query_params.get("game", "0")
    if not text.isdigit():
        raise GameError(400, f"game must be a game number 0, 1, ..., got {text!r}")
    return int(text)


async def _locked(session: GameSession, step: Callable[[], list[Frame]]) -> list[Frame]:
    """Run ``step`` on a worker thread under the game's lock (agents never run on the event loop)."""

    def run() -> list[Frame]:
        with session.lock:
            return step()

    return await run_in_threadpool(run)


async def _body(request: Request) -> bytes:
    """The request's body, refused (413) past :data:`MAX_BODY` bytes."""
    size = request.headers.get("content-length")
    if size is not None and (not size.isdigit() or int(size) > MAX_BODY):
        raise GameError(413, f"the request body is larger than {MAX_BODY} bytes")
    chunks, total = [], 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > MAX_BODY:
            raise GameError(413, f"the request body is larger than {MAX_BODY} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _json_object(request: Request) -> dict[str, Any]:
    """The request's JSON object; GameError 400 for malformed JSON or anything but an object, 415 for a body
    not sent as JSON (which a form on another web site could send without the browser asking first)."""
    body = await _body(request)
    kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if body and kind != "application/json":
        raise GameError(415, f"send the request body as JSON (Content-Type: application/json), not {kind!r}")
    try:
        data = json.loads(body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise GameError(400, f"malformed JSON: {exc}") from None
    if not isinstance(data, dict):
        raise GameError(400, f"the request body must be a JSON object, got {type(data).__name__}")
    return data


def _config(preset: Any, fields: Any) -> GameConfig:
    """The game's configuration: a preset (optional) with ``fields`` over it; None values derive."""
    if not isinstance(fields, dict):
        raise ValueError(f"config must be an object of GameConfig fields, got {fields!r}")
    fields = {k: v for k, v in fields.items() if v is not None}
    if preset is None:
        return GameConfig.from_dict(fields)
    if not isinstance(preset, str):
        raise ValueError(f"preset must be a preset name, got {preset!r}")
    return GameConfig.preset(preset, **fields)


async def _game_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, GameError)
    return JSONResponse({"error": exc.message}, status_code=exc.status)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return JSONResponse({"error": exc.detail}, status_code=exc.status_code)


async def _server_error(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": f"internal error: {type(exc).__name__}: {exc}"}, status_code=500)
