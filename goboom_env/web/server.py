"""The HTTP server that ``goboom serve`` runs the app on: uvicorn over h11, with a deadline on each request
against "slowloris" clients, which uvicorn would wait for for ever (heads are bounded by h11, bodies by the app,
an open websocket by its pings)."""

from __future__ import annotations

import asyncio
from typing import Any

from goboom_env.hints import needs_extra

with needs_extra("goboom serve (goboom_env.web)"):
    import h11
    import uvicorn
    from uvicorn.protocols.http.h11_impl import H11Protocol

REQUEST_TIMEOUT = 30.0
"""Seconds a request may take to arrive whole (a record file of 8 MB needs some 2 Mbit/s)."""
WS_MAX_SIZE = 64 * 1024
"""The largest websocket message the server reads (a move is a few dozen bytes)."""
_ARRIVING = (h11.IDLE, h11.SEND_BODY)  # the client's h11 states while the server waits for (part of) a request


class DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline: a request not arrived whole (head and body) :attr:`request_timeout`
    seconds after the server began to wait for it (a new connection, or the previous answer sent) is cut off."""

    request_timeout: float = REQUEST_TIMEOUT
    _deadline: asyncio.TimerHandle | None = None
    _upgraded = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._upgraded = True  # the websocket protocol takes the connection over
        self._stop()
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        super().connection_lost(exc)

    def _watch(self) -> None:
        """Start the deadline when the server begins to wait for a request, stop it once the request is in."""
        arriving = self.conn.their_state in _ARRIVING and not self._upgraded and not self.transport.is_closing()
        if arriving and self._deadline is None:
            self._deadline = self.loop.call_later(self.request_timeout, self._cut_off)
        elif not arriving:
            self._stop()

    def _stop(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _cut_off(self) -> None:
        """Close the connection of a request that is still arriving."""
        self._deadline = None
        if self.conn.their_state in _ARRIVING and not self._upgraded:
            self.transport.close()


def server_config(app: Any, host: str, port: int, request_timeout: float = REQUEST_TIMEOUT) -> uvicorn.Config:
    """uvicorn's settings for ``app`` on ``host:port``: h11 with a deadline per request, warnings logged only."""
    protocol = type("DeadlineProtocol", (DeadlineProtocol,), {"request_timeout": request_timeout})
    return uvicorn.Config(app, host=host, port=port, http=protocol, log_level="warning", ws_max_size=WS_MAX_SIZE)
