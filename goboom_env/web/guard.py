"""Who may use the server, as three ASGI middlewares: :class:`AllowedHosts` (the Host names it answers to),
:class:`SameOrigin` (which pages may change its state) and :class:`NoFraming` (no other site may frame it, where
it could trick a click). Refusals are the app's JSON error; a websocket handshake is refused before it is accepted.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from goboom_env.hints import needs_extra
from goboom_env.web.limits import excerpt

with needs_extra("goboom serve (goboom_env.web)"):
    from starlette.datastructures import Headers
    from starlette.responses import JSONResponse
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
    from starlette.websockets import WebSocket

SAFE_METHODS = frozenset({"GET", "HEAD"})  # change nothing: another site may send them (it cannot read the answers)
DEFAULT_PORTS = {"http": 80, "https": 443}
PAGE_SCHEMES = {"http": "http", "https": "https", "ws": "http", "wss": "https"}  # the scheme of a request's page
NO_FRAMING = ((b"x-frame-options", b"DENY"), (b"content-security-policy", b"frame-ancestors 'none'"))
TRUSTED_FETCH_SITES = frozenset({"same-origin", "none"})  # ``none``: the person typed or bookmarked the address


def endpoint(netloc: str, default_port: int) -> tuple[str, int] | None:
    """``(host name, port)`` of a ``Host`` header or of an origin's ``host[:port]``, lower case and without a
    trailing dot (``'[::1]:8000'`` -> ``('::1', 8000)``); None when it is not one."""
    try:
        parts = urlsplit(f"//{netloc}")
        name, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not name or parts.path or parts.query or parts.fragment or parts.username is not None:
        return None
    return name.rstrip("."), port or default_port


async def refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
    """Answer the request with ``{"error": message}`` and ``status`` (a websocket handshake: as its HTTP answer where
    the server supports that, else a plain refusal)."""
    response = JSONResponse({"error": message}, status_code=status)
    if scope["type"] != "websocket":
        await response(scope, receive, send)
        return
    websocket = WebSocket(scope, receive, send)
    if "websocket.http.response" in scope.get("extensions", {}):
        await websocket.send_denial_response(response)
    else:
        await websocket.close(code=1008)  # closed before accepted: the server answers 403


class AllowedHosts:
    """Refuse (400) a request whose ``Host`` does not name one of ``hosts`` (any port), against DNS rebinding: a site
    whose name is made to point at this machine reaches the port, but its requests carry its own name."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str]) -> None:
        self.app = app
        self.hosts = frozenset(h.strip("[]").rstrip(".").lower() for h in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            header = Headers(scope=scope).get("host", "")
            found = endpoint(header, 0)
            if found is None or found[0] not in self.hosts:
                names = ", ".join(sorted(self.hosts))
                await refuse(scope, receive, send, 400, f"this server answers only to the host names {names}, "
                             f"not to Host {excerpt(header)}; open the address goboom serve printed, or start "
                             "it with --allow-host NAME for the name you open it under")
                return
        await self.app(scope, receive, send)


class SameOrigin:
    """Refuse (403) a state-changing request or a websocket handshake that a browser marks as sent by another site
    (its ``Origin`` or ``Sec-Fetch-Site``); a request with neither header is not from a web page."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        checked = scope["type"] == "websocket" or (scope["type"] == "http" and scope["method"] not in SAFE_METHODS)
        problem = cross_site(Headers(scope=scope), PAGE_SCHEMES.get(scope.get("scheme", ""), "")) if checked else None
        if problem is not None:
            await refuse(scope, receive, send, 403, f"{problem}: only this server's own page may play on it")
            return
        await self.app(scope, receive, send)


def cross_site(headers: Headers, scheme: str) -> str | None:
    """Why a request over ``scheme`` (the page's) comes from another web site, or None."""
    site = headers.get("sec-fetch-site")
    if site is not None and site.lower() not in TRUSTED_FETCH_SITES:
        return f"the browser marks this request as {excerpt(site)}"
    origin = headers.get("origin")
    if origin is not None and not same_origin(origin, scheme, headers.get("host", "")):
        return f"the request was sent by another web site (Origin {excerpt(origin)})"
    return None


def same_origin(origin: str, scheme: str, host: str) -> bool:
    """True when ``origin`` (``scheme://name[:port]``) has the scheme, name and port of the server ``scheme`` and
    the ``Host`` header ``host`` ask for."""
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    default = DEFAULT_PORTS.get(scheme)
    if default is None or parts.scheme != scheme or parts.path or parts.query or parts.fragment:
        return False
    own = endpoint(host, default)
    return own is not None and endpoint(parts.netloc, default) == own


class NoFraming:
    """Add :data:`NO_FRAMING` to every HTTP answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *NO_FRAMING]
            await send(message)

        await self.app(scope, receive, send_with_headers)
