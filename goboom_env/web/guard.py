"""Who may use the server: the Host names it answers to, which pages may change its state, who may frame it.

Three ASGI middlewares; the first two answer a refusal with the app's JSON error (a websocket handshake is
refused before it is accepted):

* :class:`AllowedHosts` answers only to the given host names (400 otherwise), against DNS rebinding: a web
  site whose name is made to point at this machine reaches the port, but its requests carry its own name in
  ``Host``. ``goboom serve`` uses it on every address it listens on, a wildcard (``0.0.0.0``, ``::``) included.
* :class:`SameOrigin` refuses (403) every request that may change state (any method but GET and HEAD) and
  every websocket handshake that a browser marks as sent by another web site: an ``Origin`` that is not the
  server's own (the scheme it is asked over and the ``Host`` it is asked under), or a ``Sec-Fetch-Site`` of
  ``cross-site`` or ``same-site``. A request with neither header (curl, scripts, test clients) is not from a
  web page and is let through.
* :class:`NoFraming` adds :data:`NO_FRAMING` to every answer: no page of another site may show the server's
  page in a frame (where it could trick a click).
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

SAFE_METHODS = frozenset({"GET", "HEAD"})
"""Methods that change nothing: a page of another site may send them (it cannot read the answers)."""
DEFAULT_PORTS = {"http": 80, "https": 443}
PAGE_SCHEMES = {"http": "http", "https": "https", "ws": "http", "wss": "https"}
"""The scheme of the page that may send a request over each scheme (a websocket's page is served over HTTP)."""
NO_FRAMING = ((b"x-frame-options", b"DENY"), (b"content-security-policy", b"frame-ancestors 'none'"))
"""Headers that forbid every page to show this server's answers in a frame (the old and the current form)."""
TRUSTED_FETCH_SITES = frozenset({"same-origin", "none"})
"""``Sec-Fetch-Site`` values of this server's own page (``none``: the person typed or bookmarked the address)."""


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
    """Answer the request with ``{"error": message}`` and ``status``; a websocket handshake gets it as the
    handshake's HTTP answer where the server supports that, else a plain refusal."""
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
    """Refuse (400) a request whose ``Host`` header does not name one of ``hosts`` (names or addresses, without
    a port: any port is accepted, since the name is what a rebinding site cannot choose)."""

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
    """Refuse (403) a state-changing request or a websocket handshake that a browser sent for another site."""

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
    """Why a request over ``scheme`` (``http`` or ``https``: the page's) comes from another web site, or None
    when it does not (or says nothing about it)."""
    site = headers.get("sec-fetch-site")
    if site is not None and site.lower() not in TRUSTED_FETCH_SITES:
        return f"the browser marks this request as {excerpt(site)}"
    origin = headers.get("origin")
    if origin is not None and not same_origin(origin, scheme, headers.get("host", "")):
        return f"the request was sent by another web site (Origin {excerpt(origin)})"
    return None


def same_origin(origin: str, scheme: str, host: str) -> bool:
    """True when ``origin`` (``scheme://name[:port]``) names the server that ``scheme`` and the ``Host`` header
    ``host`` ask for: the same scheme, name and port (``https://name`` is another site than ``http://name``)."""
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
