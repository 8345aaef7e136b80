"""``goboom serve``: play Go Boom in the browser against the agents, and replay recorded games.

Examples::

    goboom serve                       # http://127.0.0.1:8000
    goboom serve --port 8080 --model runs/x   # also offer the model files of runs/x as opponents

The page offers every preset and GameConfig field, your seat, the opponents (the baselines, the search
agents and the shipped models by name, plus the ``--model`` folders: the page never names a file), one
hand or a whole match, and a seed. Finished games are saved as game records in ``--records``; the page
replays them, or a record file you open (``goboom evaluate --save-games``). The server listens on
127.0.0.1 only unless ``--host`` says otherwise: it has no accounts, so bind it to another address only
on a network you trust.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from goboom_env.cli.options import parse, run_command
from goboom_env.config import check_int

LOOPBACK = ["127.0.0.1", "localhost"]
"""Names of this machine: a server bound to one of them answers only to these host names."""


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
    """A game unused for this long is dropped."""
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


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` for the server, bound before the URL is printed; ValueError naming
    the address when it cannot be (the port is taken, the host is not an address of this machine)."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def main(argv: Sequence[str], prog: str = "goboom serve") -> int:
    """Serve the page until Ctrl-C; 2 on a bad option."""

    def run() -> int:
        args = parse(ServeArgs, argv, prog, __doc__)
        args.validate()
        import uvicorn

        from goboom_env.web import ServerSettings, create_app
        from goboom_env.web.catalog import Catalog

        settings = ServerSettings(catalog=Catalog(list(args.model)), ttl=args.idle_minutes * 60,
                                  max_games=args.max_games, records=args.records,
                                  allowed_hosts=LOOPBACK if args.host in LOOPBACK else None)
        sock = listen(args.host, args.port)  # before uvicorn configures logging: a taken port changes nothing
        server = uvicorn.Server(uvicorn.Config(create_app(settings), host=args.host, port=args.port,
                                               log_level="warning"))
        host = f"[{args.host}]" if ":" in args.host else args.host
        print(f"goboom serve: open http://{host}:{args.port}/ in a browser (Ctrl-C stops the server)", flush=True)
        if args.records is not None:
            print(f"finished games are saved in {args.records}/", flush=True)
        with sock:
            server.run(sockets=[sock])
        return 0

    return run_command(prog, run)
