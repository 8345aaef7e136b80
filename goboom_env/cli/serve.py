"""``goboom serve``: play Go Boom in the browser against the agents, and replay recorded games.

Examples::

    goboom serve                       # http://127.0.0.1:8000
    goboom serve --port 8080 --model runs/x   # also offer the model files of runs/x as opponents

The page offers every preset and GameConfig field, your seat, the opponents (the baselines, the search
agents and the shipped models by name, plus the ``--model`` folders: the page never names a file), one
hand or a whole match, and a seed. Finished games are saved as game records in ``--records``; the page
replays them, or a record file you open (``goboom evaluate --save-games``). The server listens on
127.0.0.1 only unless ``--host`` says otherwise: it has no accounts, so bind it to another address only
on a network you trust. On a loopback address (``127.0.0.1``, ``127.1``, ``::1``, ``localhost``) it answers
only to this machine's names, and it takes moves only from its own page.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from goboom_env.cli.options import parse, run_command
from goboom_env.config import check_int

LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")
"""Names of this machine that a server on a loopback address always answers to."""
WS_MAX_SIZE = 64 * 1024
"""The largest websocket message the server reads (a move is a few dozen bytes)."""


@dataclass
class ServeArgs:
    """The options of ``goboom serve``."""

    host: str = "127.0.0.1"
    """Address to listen on (127.0.0.1: this machine only)."""
    port: int = 8000
    """Port to listen on."""
    model: list[Path] = field(default_factory=list)
    """Folders of model .zip files (goboom train) to offer as opponents, named model:FILE-STEM."""
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
        if self.records is not None:
            check_records_folder(self.records)


def check_records_folder(folder: Path) -> None:
    """ValueError unless ``folder`` is a folder the server can save records in, or one it can make (the first
    part of the path that exists must be a writable folder)."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        what = "is not a folder" if existing == folder else f"cannot be made: {existing} is not a folder"
        raise ValueError(f"--records {folder} {what} (give the folder where finished games are saved, or None)")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"--records {folder}: {existing} is not writable")


def loopback_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The loopback address ``host`` is (``127.0.0.2``, the short form ``127.1``, ``::1``, ``::ffff:127.0.0.1``),
    or that a name such as ``localhost`` only resolves to; None for any other host."""
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


def allowed_hosts(host: str) -> list[str] | None:
    """The host names a server listening on ``host`` answers to: on a loopback address this machine's names
    (:data:`LOCAL_NAMES`, the host as given and its address written out); None (any name) for other hosts."""
    address = loopback_address(host)
    if address is None:
        return None
    return sorted({*LOCAL_NAMES, host.strip("[]").lower(), str(address)})


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` for the server, bound before the URL is printed; ValueError naming
    the address when it cannot be (the port is taken, the host is not an address of this machine).

    The socket says it is TCP (``proto``), as one asyncio binds itself does: asyncio turns Nagle's algorithm off
    (``TCP_NODELAY``) only on the connections of such a socket, and without that each answer on a kept-alive
    connection, written as its headers then its body, waits some 40 ms for the client's delayed ACK."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.create_server((host, port), family=family)  # its proto is 0
    except OSError as exc:
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())


def main(argv: Sequence[str], prog: str = "goboom serve") -> int:
    """Serve the page until Ctrl-C; 2 on a bad option."""

    def run() -> int:
        args = parse(ServeArgs, argv, prog, __doc__)
        args.validate()
        import uvicorn

        from goboom_env.web import ServerSettings, create_app
        from goboom_env.web.catalog import Catalog

        ttl = args.idle_minutes * 60  # a finished game, and the time between two sweeps, never longer
        settings = ServerSettings(catalog=Catalog(list(args.model)), ttl=ttl,
                                  finished_ttl=min(ServerSettings.finished_ttl, ttl),
                                  sweep_every=min(ServerSettings.sweep_every, ttl),
                                  max_games=args.max_games, records=args.records,
                                  allowed_hosts=allowed_hosts(args.host))
        sock = listen(args.host, args.port)  # before uvicorn configures logging: a taken port changes nothing
        server = uvicorn.Server(uvicorn.Config(create_app(settings), host=args.host, port=args.port,
                                               log_level="warning", ws_max_size=WS_MAX_SIZE))
        host = f"[{args.host}]" if ":" in args.host else args.host
        print(f"goboom serve: open http://{host}:{args.port}/ in a browser (Ctrl-C stops the server)", flush=True)
        if args.records is not None:
            print(f"finished games are saved in {args.records}/", flush=True)
        with sock:
            server.run(sockets=[sock])
        return 0

    return run_command(prog, run)
