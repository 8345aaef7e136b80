"""The web app: a Starlette application that serves the page and plays games over HTTP and a websocket.

Every refusal is a 4xx JSON ``{"error": "..."}`` (on the websocket a ``{"type": "error", ...}`` message). Agents run
on worker threads under their game's lock. Only the server's own page may change state (:mod:`~goboom_env.web.guard`);
bodies are size-capped, JSON bodies labelled as JSON, and no message echoes a server path or a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import traceback
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goboom_env.config import DERIVED_FIELDS, PRESETS, GameConfig, check_int
from goboom_env.episode import EPISODES, check_episode
from goboom_env.hints import needs_extra
from goboom_env.records import GameRecord
from goboom_env.untrusted import parse_json
from goboom_env.web import replay
from goboom_env.web.catalog import Catalog
from goboom_env.web.guard import AllowedHosts, NoFraming, SameOrigin
from goboom_env.web.limits import excerpt, public
from goboom_env.web.session import Frame, GameError, GameSession, refused_as_bad_request
from goboom_env.web.store import GameStore

with needs_extra("goboom serve (goboom_env.web)"):
    import anyio
    import anyio.to_thread
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import FileResponse, JSONResponse, Response
    from starlette.routing import Mount, Route, WebSocketRoute
    from starlette.staticfiles import StaticFiles
    from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

STATIC = Path(__file__).resolve().parent / "static"
MAX_JSON_BODY = 64 * 1024  # a new game or a move
MAX_WS_MESSAGE = 4096
MAX_WORD = 60
"""The longest text accepted in a field of the new-game form (names of presets, variants, opponents)."""
MAX_DELAY_MS = 5000
TOKEN_HEADER = "x-game-token"
JSON_TYPES = frozenset({"application/json"})
RECORD_TYPES = frozenset({"application/json", "application/x-ndjson", "application/jsonl"})
"""A posted record file's content types; not text/plain, which another web site's page may send unasked."""
NUMBER = re.compile(r"[0-9]{1,6}")  # a number in a query (?game=, ?start=, ?count=)
REPLAYS_AT_ONCE = 2
"""Replays built at the same time (the largest take seconds of CPU); more wait their turn."""
INTERNAL_ERROR = "internal error; the server's log has the details"


@dataclass
class ServerSettings:
    """What one server offers and how long (in seconds) it keeps games."""

    catalog: Catalog = field(default_factory=Catalog)
    ttl: float = 1800.0  # a game unused this long is dropped
    finished_ttl: float = 120.0  # a finished game stays this long (holding no slot)
    max_games: int = 100
    records: Path | None = None  # the folder where finished games are saved as records (None: not saved)
    sweep_every: float = 60.0
    allowed_hosts: list[str] | None = None
    """Host names the server answers to (None: any); ``goboom serve`` always gives them, so that a web site whose
    name points at this machine cannot use the server."""


def create_app(settings: ServerSettings | None = None) -> Starlette:
    """The web app with its own game store (two apps share nothing)."""
    settings = settings or ServerSettings()
    store = GameStore(settings.ttl, settings.max_games, finished_ttl=settings.finished_ttl)
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
    handlers = {GameError: _refusal, HTTPException: _refusal, Exception: _server_error}
    middleware = [Middleware(NoFraming), Middleware(SameOrigin)]
    if settings.allowed_hosts is not None:
        middleware.insert(1, Middleware(AllowedHosts, hosts=settings.allowed_hosts))
    app = Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan,  # type: ignore[arg-type]
                    middleware=middleware)
    app.state.store = store
    return app


class _Api:
    """The route handlers over one store."""

    def __init__(self, settings: ServerSettings, store: GameStore) -> None:
        self.settings, self.store = settings, store
        self.replays = anyio.CapacityLimiter(REPLAYS_AT_ONCE)

    async def index(self, request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def options(self, request: Request) -> Response:
        """What the new-game form offers."""
        fields = GameConfig().to_dict()  # the derived fields are None: the rules derive them
        return JSONResponse({"presets": PRESETS,
                             "defaults": {k: None if k in DERIVED_FIELDS else v for k, v in fields.items()},
                             "episodes": list(EPISODES), "agents": self.settings.catalog.public(),
                             "max_delay_ms": MAX_DELAY_MS})

    async def create(self, request: Request) -> Response:
        """A new game from the form (201 with its id, token and first frame)."""
        body = await _json_object(request)
        session = await run_in_threadpool(self._new_game, body)
        self.store.add(session)
        return JSONResponse({"game": session.id, "token": session.token, "delay_ms": session.delay_ms,
                             "frame": session.frame()}, status_code=201)

    def _new_game(self, body: dict[str, Any]) -> GameSession:
        """A game from the page's form; GameError 400 naming the first bad field."""
        unknown = sorted(set(body) - {"config", "preset", "seat", "opponents", "episode", "seed", "delay_ms"})
        if unknown:
            raise GameError(400, f"unknown fields {excerpt(unknown)} in the new-game request")
        with refused_as_bad_request(TypeError):
            _check_form(body)
            config = _config(body.get("preset"), body.get("config", {}))
            seat = check_int("seat", body.get("seat", 0), 0, config.num_players - 1)
            episode = body.get("episode", "hand")
            check_episode(episode)
            seed = None if body.get("seed") is None else check_int("seed", body["seed"], 0, 2**63 - 1)
            delay = check_int("delay_ms", body.get("delay_ms", 700), 0, MAX_DELAY_MS)
            opponents = _opponents(body.get("opponents", ["heuristic"]), config)
            specs = [self.settings.catalog.spec(o, config) for o in opponents]
            return GameSession(config, seat, specs, opponents, episode=episode, seed=seed, delay_ms=delay,
                               on_game_end=self._save_game, redact=self.settings.catalog.without_files)

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
        return JSONResponse({"frame": self._game(request).frame()})

    async def delete(self, request: Request) -> Response:
        self.store.remove(self._game(request).id)
        return Response(status_code=204)

    async def move(self, request: Request) -> Response:
        session = self._game(request)
        body = await _json_object(request)
        if set(body) != {"move"}:
            raise GameError(400, 'a move request is {"move": CARD}, e.g. {"move": "7D"} or {"move": "draw"}')
        return await self._frames(session, lambda game: game.play(body["move"]))

    async def next_hand(self, request: Request) -> Response:
        return await self._frames(self._game(request), GameSession.next_hand)

    async def advance(self, request: Request) -> Response:
        return await self._frames(self._game(request), GameSession.advance)

    async def _frames(self, session: GameSession, step: Callable[[GameSession], list[Frame]]) -> Response:
        if session.attached:
            raise GameError(409, "this game is open in another tab or window, which plays it")
        return JSONResponse({"frames": await _locked(session, lambda: step(session))})

    async def play(self, ws: WebSocket) -> None:
        """Live play, the agents' moves ``delay_ms`` apart. A refused message gets an error and the connection stays
        open; a game that cannot be played from here closes it with code 4000 + the status."""
        await ws.accept()
        try:
            session = self.store.get(ws.path_params["game"], ws.query_params.get("token"))
            if session.attached:
                raise GameError(409, "this game is already open in another tab or window")
        except GameError as exc:
            await _close_with_error(ws, exc.status, exc.message)
            return
        session.attached = True
        try:
            await self._live(ws, session)
        except WebSocketDisconnect:
            pass
        except Exception:  # a bug, not a refusal: the page hears of it, the log has the traceback
            traceback.print_exc(file=sys.stderr)
            await _close_with_error(ws, 500, INTERNAL_ERROR, code=1011)
        finally:
            session.attached = False

    async def _live(self, ws: WebSocket, session: GameSession) -> None:
        if not await self._stream(ws, session, session.resume):
            return
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                raise WebSocketDisconnect(message.get("code", 1000))
            try:
                step = self._ws_step(session, message.get("text"))  # None: a binary message
                self.store.get(session.id, session.token)  # expired meanwhile: 404
            except GameError as exc:
                await _send_error(ws, exc.status, exc.message)
                continue
            if not await self._stream(ws, session, step):
                return

    @staticmethod
    def _ws_step(session: GameSession, text: str | None) -> Callable[[], list[Frame]]:
        """What a websocket message asks for; GameError 400 for a malformed one."""
        if text is None:
            raise GameError(400, "send messages as text (JSON), not binary")
        if len(text) > MAX_WS_MESSAGE:
            raise GameError(400, f"a message is at most {MAX_WS_MESSAGE} characters, got {len(text)}")
        message = _parse_json(text)
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "move" and set(message) == {"type", "move"}:
            return lambda: session.play(message["move"])
        if kind == "next" and set(message) == {"type"}:
            return session.next_hand
        if kind == "state" and set(message) == {"type"}:
            return lambda: [session.frame()]
        raise GameError(400, 'a message is {"type": "move", "move": CARD}, {"type": "next"} or {"type": "state"}')

    async def _stream(self, ws: WebSocket, session: GameSession, step: Callable[[], list[Frame]]) -> bool:
        """Send the frames of ``step``, ``delay_ms`` apart; False when the game has failed (the socket closed)."""
        try:
            frames = await _locked(session, step)
        except GameError as exc:
            if exc.status != 410:
                await _send_error(ws, exc.status, exc.message)
                return True
            frames = []
        for i, frame in enumerate(frames):
            if i:
                await asyncio.sleep(session.delay_ms / 1000)
            session.seq += 1
            await ws.send_json({"type": "frame", "seq": session.seq, "frame": frame})
        if session.failure is not None:
            await _close_with_error(ws, 410, session.failure)
            return False
        return True

    async def records(self, request: Request) -> Response:
        return JSONResponse({"records": await run_in_threadpool(replay.saved_records, self.settings.records)})

    async def record(self, request: Request) -> Response:
        """A page of replay frames of a saved record file (:func:`~goboom_env.web.replay.replay_page`)."""
        page = _page(request)
        folder, name = self.settings.records, request.path_params["name"]
        return await self._replay(lambda: replay.replay_page(replay.read_saved(folder, name), *page))

    async def replay(self, request: Request) -> Response:
        """The same for the text of a record file the page sends."""
        page = _page(request)
        _check_content_type(request, RECORD_TYPES)
        body = await _body(request, replay.MAX_RECORD_BYTES)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise GameError(400, "a record file must be UTF-8 text (JSON Lines)") from None
        return await self._replay(lambda: replay.replay_page(text, *page))

    async def _replay(self, build: Callable[[], dict[str, Any]]) -> Response:
        """The answer of ``build``, made on a worker thread, at most :data:`REPLAYS_AT_ONCE` at a time."""
        return await anyio.to_thread.run_sync(lambda: JSONResponse(build()), limiter=self.replays)


async def _send_error(ws: WebSocket, status: int, message: str) -> None:
    await ws.send_json({"type": "error", "status": status, "error": public(message)})


async def _close_with_error(ws: WebSocket, status: int, message: str, code: int | None = None) -> None:
    """Send the error, then close the websocket (code ``4000 + status`` unless given); nothing if it is gone."""
    if ws.application_state != WebSocketState.CONNECTED or ws.client_state != WebSocketState.CONNECTED:
        return
    with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
        await _send_error(ws, status, message)
        await ws.close(code=code if code is not None else 4000 + status)


def _page(request: Request) -> tuple[int, int, int]:
    """``game``, ``start`` and ``count`` of a replay request (``?game=K&start=S&count=C``)."""
    return (_query_number(request, "game", "a game number", 0), _query_number(request, "start", "a frame number", 0),
            _query_number(request, "count", "a number of frames", replay.MAX_PAGE_FRAMES))


def _query_number(request: Request, name: str, what: str, default: int) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    if not NUMBER.fullmatch(text):
        raise GameError(400, f"{name} must be {what} 0, 1, ..., got {excerpt(text)}")
    return int(text)


async def _locked(session: GameSession, step: Callable[[], list[Frame]]) -> list[Frame]:
    """Run ``step`` on a worker thread under the game's lock (agents never run on the event loop)."""

    def run() -> list[Frame]:
        with session.lock:
            return step()

    return await run_in_threadpool(run)


async def _body(request: Request, limit: int) -> bytes:
    """The request's body; GameError 413 past ``limit`` bytes, 400 when the client went away before sending it."""
    too_large = GameError(413, f"the request body is larger than {limit} bytes")
    size = request.headers.get("content-length")
    if size is not None and (not size.isascii() or not size.isdigit() or int(size) > limit):
        raise too_large
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise too_large
    except ClientDisconnect:
        raise GameError(400, "the request body was cut off") from None
    return bytes(body)


def _check_content_type(request: Request, allowed: frozenset[str]) -> None:
    """GameError 415 unless the request's content type is one of ``allowed`` (another site's page can send
    text/plain or a form unasked, never JSON)."""
    kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind not in allowed:
        wanted = " or ".join(sorted(allowed))
        raise GameError(415, f"send the request as JSON (Content-Type: {wanted}), not {excerpt(kind or 'none')}")


async def _json_object(request: Request) -> dict[str, Any]:
    """The request's JSON object (an empty body is ``{}``); GameError 415, 413 or 400 otherwise."""
    _check_content_type(request, JSON_TYPES)
    body = await _body(request, MAX_JSON_BODY)
    data = _parse_json(body or b"{}")
    if not isinstance(data, dict):
        raise GameError(400, f"the request body must be a JSON object, got {type(data).__name__}")
    return data


def _parse_json(text: str | bytes) -> Any:
    with refused_as_bad_request():
        return parse_json(text)


def _check_form(body: dict[str, Any]) -> None:
    """ValueError unless each field of the new-game form is a number or a short word (no message quotes a big value)."""
    named = [(name, body.get(name)) for name in ("preset", "seat", "episode", "seed", "delay_ms")]
    fields = body.get("config", {})
    if isinstance(fields, dict):
        named += [(f"config field {excerpt(key)}", value) for key, value in fields.items()]
    for name, value in named:
        if isinstance(value, (dict, list)) or (isinstance(value, str) and len(value) > MAX_WORD):
            raise ValueError(f"{name} must be a number or a word of at most {MAX_WORD} characters, got "
                             f"{excerpt(value)}")


def _opponents(opponents: Any, config: GameConfig) -> list[Any]:
    """One opponent id per other seat: the list given, its last one repeated."""
    if not isinstance(opponents, list) or not opponents:
        raise ValueError(f"opponents must be a non-empty list of opponent ids, got {excerpt(opponents)}")
    if len(opponents) > config.num_players - 1:
        raise ValueError(f"{len(opponents)} opponents for {config.num_players - 1} other seats")
    return opponents + [opponents[-1]] * (config.num_players - 1 - len(opponents))


def _config(preset: Any, fields: Any) -> GameConfig:
    """A preset (optional) with ``fields`` over it; None values derive."""
    if not isinstance(fields, dict):
        raise ValueError(f"config must be an object of GameConfig fields, got {excerpt(fields)}")
    fields = {k: v for k, v in fields.items() if v is not None}
    if preset is None:
        return GameConfig.from_dict(fields)
    if not isinstance(preset, str):
        raise ValueError(f"preset must be a preset name, got {excerpt(preset)}")
    return GameConfig.preset(preset, **fields)


async def _refusal(request: Request, exc: Exception) -> Response:
    """A GameError or Starlette's HTTPException (an unknown route, a wrong method) as the page's JSON error."""
    if isinstance(exc, GameError):
        return JSONResponse({"error": public(exc.message)}, status_code=exc.status)
    assert isinstance(exc, HTTPException)
    return JSONResponse({"error": public(str(exc.detail))}, status_code=exc.status_code)


async def _server_error(request: Request, exc: Exception) -> Response:
    """A bug: a 500 without a traceback or a path (the server logs the error)."""
    return JSONResponse({"error": INTERNAL_ERROR}, status_code=500)
