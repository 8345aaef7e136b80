"""``goboom serve`` under load: the scripted clients of ``benchmarks/serve_load.py`` play whole games on a real
server, 10, 50 and 100 at once, and the server must answer every request, let every game be played to its end,
drop the games once idle and give their memory back; and its connections send small answers at once (Nagle's
algorithm off), which no timing could check on a loaded machine.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from types import ModuleType

import pytest
from helpers import benchmark_fixture

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

IDLE_SECONDS = 2.0
"""``goboom serve --idle-minutes`` of the loaded server, in seconds: a game is dropped 2 s after its last request."""
SECONDS = 3.0
"""Seconds each load starts games (its last games are then played to their end)."""
MEMORY_MARGIN_MB = 10.0
"""How far above its level after the warm-up the server's resident memory may be once the games of a load have
expired. Measured on a shared 2-core machine: 60-70 MB after the warm-up, and at most 2 MB above that after any
load (five runs); a finished game holds some 20 KB of Python objects, so a leak of every game is near the margin
by the last load (some 500 games after the warm-up), and any larger leak past it."""


serve_load = benchmark_fixture("serve_load")


@pytest.mark.slow  # whole server processes under load: 100 clients at once, some 40 s on a loaded 2-core machine
def test_the_server_plays_10_50_and_100_games_at_once_and_gives_their_memory_back(serve_load: ModuleType,
                                                                                    tmp_path: Path) -> None:
    with serve_load.serve(tmp_path, *serve_load.load_options(tmp_path, 100, IDLE_SECONDS)) as server:
        serve_load.run_load(server, 100, 2.0)  # warm-up: the threads, the allocator's arenas, the agents' code
        warm = serve_load.settle(server, IDLE_SECONDS)
        seen = [f"after the warm-up: {warm:.0f} MB"]
        for clients in (10, 50, 100):
            run = serve_load.run_load(server, clients, SECONDS, seed=clients)
            after = serve_load.settle(server, IDLE_SECONDS)
            seen.append(f"{clients} at once: {run.played.games} games, {run.moves_per_s:.0f} moves/s, "
                        f"p99 {run.latency_ms(0.99):.0f} ms, {run.rss_before:.0f}/{run.rss_peak:.0f}/{after:.0f} MB")
            assert not run.played.errors, (clients, run.played.errors[:3])
            # every client played at least one game to its end, and its last one was played out
            assert run.played.games >= clients and len(run.played.last_games) == clients, seen
            assert serve_load.still_live(server, run.played.last_games) == 0, seen  # expired: 404
            assert after <= warm + MEMORY_MARGIN_MB, seen
        print("; ".join(seen))
    log = server.log.read_text()
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log[-5000:]
    assert len(list((tmp_path / "games").glob("*.jsonl"))) >= 160  # every game played to its end saved its record


def test_goboom_serve_turns_nagle_off_on_its_connections() -> None:
    """The socket ``goboom serve`` listens on says it is TCP, so asyncio sets ``TCP_NODELAY`` on each connection:
    otherwise every answer after the first on a kept-alive connection waits some 40 ms for a delayed ACK."""
    from goboom_env.cli.serve import listen

    async def accepted_nodelay() -> int:
        loop = asyncio.get_running_loop()
        found: asyncio.Future[int] = loop.create_future()

        class Accept(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                sock = transport.get_extra_info("socket")
                found.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        sock = listen("127.0.0.1", 0)
        assert sock.proto == socket.IPPROTO_TCP
        server = await loop.create_server(Accept, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname())
            try:
                return await asyncio.wait_for(found, 10)
            finally:
                writer.close()

    assert asyncio.run(accepted_nodelay()) != 0
