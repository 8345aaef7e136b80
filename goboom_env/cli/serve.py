"""``goboom serve``: play Go Boom in the browser against the agents, and replay recorded games.

Examples::

    goboom serve                       # http://127.0.0.1:8000
    goboom serve --port 8080 --model runs/x   # also offer the model files of runs/x as opponents
    goboom serve --host 0.0.0.0 --allow-host mybox.lan   # others on the network open http://mybox.lan:8000

The page plays a game of your choice against the agents and the models of the ``--model`` folders, and replays the
games saved in ``--records`` or a record file you open (docs/web.md). The server has no accounts: it listens on
127.0.0.1 unless ``--host`` says otherwise (bind another address only on a network you trust), answers only to the
loopback names, its address and the ``--allow-host`` names, and takes moves only from its own page.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import tyro

from goboom_env.cli.options import run_parsed
from goboom_env.config import check_int, errors_prefixed

if TYPE_CHECKING:
    from goboom_env.web import ServerSettings

LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")  # this machine's names, always answered to
HOST_NAME = re.compile(r"(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*")


@dataclass
class ServeArgs:
    """The options of ``goboom serve``."""

    host: str = "127.0.0.1"
    """Address to listen on (127.0.0.1: this machine only)."""
    port: int = 8000
    """Port to listen on."""
    model: list[Path] = field(default_factory=list)
    """Folders of model .zip files (goboom train) to offer as opponents, named model:FILE-STEM."""
    allow_host: Annotated[list[str], tyro.conf.UseAppendAction, tyro.conf.arg(metavar="NAME")] = field(
        default_factory=list)
    """Another host name or address the server answers to (besides localhost, 127.0.0.1, ::1 and --host): the one
    others open it under."""
    records: Path | None = Path("goboom-games")
    """Folder where finished games are saved as game records (JSON Lines); None = save nothing."""
    idle_minutes: float = 30.0
    """A game unused for this long is dropped (a finished one after two minutes, or this if shorter)."""
    max_games: int = 100
    """Games that may be live at once."""

    def validate(self) -> None:
        """Raise ValueError naming the first bad option."""
        check_int("port", self.port, 1, 65535)
        check_int("max_games", self.max_games, 1)
        if not self.idle_minutes > 0:
            raise ValueError(f"idle_minutes must be > 0, got {self.idle_minutes!r}")
        if not self.host:
            raise ValueError("host must be an address such as 127.0.0.1")
        for name in self.allow_host:
            host_name(name)
        if self.records is not None:
            check_records_folder(self.records)


def check_records_folder(folder: Path) -> None:
    """ValueError unless ``folder`` is, or can be made, a folder the server can save records in."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        what = "is not a folder" if existing == folder else f"cannot be made: {existing} is not a folder"
        raise ValueError(f"--records {folder} {what} (give the folder where finished games are saved, or None)")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"--records {folder}: {existing} is not writable")


def loopback_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The loopback address ``host`` is (``127.1``, ``::ffff:127.0.0.1`` ...) or only resolves to, else None."""
    name = host.strip("[]").partition("%")[0]
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(name)
    except ValueError:
        try:
            address = ipaddress.IPv4Address(socket.inet_aton(name))  # the short forms: 127.1, 2130706433
        except OSError:
            return _resolved_loopback(name)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address if address.is_loopback else None


def _resolved_loopback(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The first address of the name ``name`` when every address it resolves to is a loopback one."""
    with contextlib.suppress(OSError, UnicodeError):
        found = [ipaddress.ip_address(str(info[4][0]).partition("%")[0])
                 for info in socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)]
        if found and all(a.is_loopback for a in found):
            return found[0]
    return None


def host_name(name: str) -> str:
    """``name`` as the Host check compares it; ValueError naming the option unless it is an IP address or a DNS
    name without a port, a scheme or a path."""
    plain = name.strip().removeprefix("[").removesuffix("]").rstrip(".").lower()
    with contextlib.suppress(ValueError):
        return str(ipaddress.ip_address(plain))
    if HOST_NAME.fullmatch(plain) is None:
        raise ValueError(f"--allow-host {name[:80]!r} is not a host name or an IP address (give the name alone, "
                         "e.g. mybox.lan or 192.168.1.20, without http:// or a port)")
    return plain


def allowed_hosts(host: str, others: Sequence[str] = ()) -> list[str]:
    """The host names a server listening on ``host`` answers to: :data:`LOCAL_NAMES`, the host (and its loopback
    address written out) and ``others``; a wildcard host answers to the same names only."""
    names = {*LOCAL_NAMES, host.strip("[]").rstrip(".").lower(), *map(host_name, others)}
    address = loopback_address(host)
    if address is not None:
        names.add(str(address))
    return sorted(names)


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (ValueError naming the address when it cannot), marked TCP so that asyncio
    turns Nagle's algorithm off (each kept-alive answer would wait some 40 ms for the client's delayed ACK)."""
    with errors_prefixed(f"cannot listen on {host}:{port}", OSError, ValueError):
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.create_server((host, port), family=family)  # its proto is 0
    return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())


def server_settings(args: ServeArgs) -> ServerSettings:
    """What the server of ``args`` offers and whom it answers to."""
    from goboom_env.web import ServerSettings
    from goboom_env.web.catalog import Catalog

    ttl = args.idle_minutes * 60  # a finished game, and the time between two sweeps, never longer
    return ServerSettings(catalog=Catalog(list(args.model)), ttl=ttl,
                          finished_ttl=min(ServerSettings.finished_ttl, ttl),
                          sweep_every=min(ServerSettings.sweep_every, ttl),
                          max_games=args.max_games, records=args.records,
                          allowed_hosts=allowed_hosts(args.host, args.allow_host))


def main(argv: Sequence[str], prog: str = "goboom serve") -> int:
    """Serve the page until Ctrl-C; 2 on a bad option."""
    return run_parsed(ServeArgs, argv, prog, __doc__, serve)


def serve(args: ServeArgs) -> int:
    """Serve the page of ``args`` until Ctrl-C."""
    import uvicorn

    from goboom_env.web import create_app
    from goboom_env.web.server import server_config

    settings = server_settings(args)
    sock = listen(args.host, args.port)  # before uvicorn configures logging: a taken port changes nothing
    server = uvicorn.Server(server_config(create_app(settings), args.host, args.port))
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"goboom serve: open http://{host}:{args.port}/ in a browser (Ctrl-C stops the server)", flush=True)
    if loopback_address(args.host) is None:
        print(f"it answers to the host names {', '.join(settings.allowed_hosts or [])} only; --allow-host NAME "
              "adds the name or address others open it under", flush=True)
    if args.records is not None:
        print(f"finished games are saved in {args.records}/", flush=True)
    with sock:
        server.run(sockets=[sock])
    return 0
