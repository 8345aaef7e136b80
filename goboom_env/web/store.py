"""The games of one server, by id: looked up with their secret token, capped in number, expired when idle."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable

from goboom_env.web.limits import excerpt
from goboom_env.web.session import GameError, GameSession


class GameStore:
    """Live games by id. A game unused for ``ttl`` seconds is dropped; a finished one keeps its table for a reload
    of its page for ``finished_ttl`` seconds, and is dropped first to make room past ``max_games``."""

    def __init__(self, ttl: float = 1800.0, max_games: int = 100, clock: Callable[[], float] = time.monotonic,
                 finished_ttl: float = 120.0) -> None:
        if ttl <= 0 or finished_ttl <= 0 or max_games < 1:
            raise ValueError(f"ttl and finished_ttl must be > 0 and max_games >= 1, got {ttl}, {finished_ttl} "
                             f"and {max_games}")
        self.ttl, self.finished_ttl, self.max_games, self.clock = ttl, finished_ttl, max_games, clock
        self._games: dict[str, GameSession] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def add(self, session: GameSession) -> None:
        """Keep a new game; GameError 503 when ``max_games`` games are still being played."""
        self.expire()
        with self._lock:
            if len(self._games) >= self.max_games:  # drop finished games to make room, the longest unused first
                finished = sorted((s for s in self._games.values() if s.finished), key=lambda s: s.last_active)
                for dropped in finished[:len(self._games) - self.max_games + 1]:
                    del self._games[dropped.id]
            if len(self._games) >= self.max_games:
                raise GameError(503, f"the server already runs {self.max_games} games; try again later")
            session.last_active = self.clock()
            self._games[session.id] = session

    def get(self, game_id: str, token: str | None) -> GameSession:
        """The game ``game_id`` if ``token`` is its token (GameError 404 or 403); using a game keeps it alive."""
        self.expire()
        session = self._games.get(game_id)
        if session is None:
            raise GameError(404, f"no game {excerpt(game_id)} on this server (it may have expired); start a new game")
        if not isinstance(token, str) or not secrets.compare_digest(token.encode("utf-8", "surrogateescape"),
                                                                    session.token.encode()):
            raise GameError(403, "this game belongs to another page (missing or wrong game token)")
        session.last_active = self.clock()
        return session

    def remove(self, game_id: str) -> None:
        with self._lock:
            self._games.pop(game_id, None)

    def expire(self) -> list[str]:
        """Drop the games idle for longer than ``ttl`` (finished ones: ``finished_ttl``); returns their ids."""
        now = self.clock()
        with self._lock:
            old = [gid for gid, s in self._games.items()
                   if now - s.last_active > (self.finished_ttl if s.finished else self.ttl)]
            for gid in old:
                del self._games[gid]
        return old
