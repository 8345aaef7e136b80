"""Load on a real ``goboom serve``: scripted clients on 127.0.0.1 play whole games at once over the HTTP API.

Starts ``goboom serve`` on a free port of 127.0.0.1 (records saved in a temporary folder, games dropped after
``--idle-seconds``), warms it up, then for each count N of ``--games`` runs N clients at once, each on its own
keep-alive connection. A client starts a classic 4-player hand against ``--opponent``, plays a legal move (the
frame lists them) at each of its turns to the end, and starts another until ``--seconds`` have passed (the game
under way is played to its end). Reported per N: games/s, moves/s, the p50 and p99 latency of a move request (the
move and the agents' replies up to the client's next turn), the server's CPU time over the run's wall time (on
a shared machine: how much of a core it got), its resident memory (VmRSS) before, at its peak and after the games
expired, and how many of the clients' last games it still answered for then (none: they expired). The clients
run in this process, on the same machine as the server: on a small machine they share its cores. Example::

    .venv/bin/python benchmarks/serve_load.py --games 10 50 100 --seconds 10

``tests/web/test_web_load.py`` (slow tier) runs the same load and checks it.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GAME = {"preset": "classic", "seat": 0, "episode": "hand", "delay_ms": 0}
"""The body of each new game, less its opponents and seed: a classic 4-player hand, the client in seat 0."""
START_TIMEOUT = 60.0
"""Seconds the server may take to answer its first request."""
REQUEST_TIMEOUT = 60.0
"""Seconds a client waits for one answer before it counts the request as failed."""


@dataclass
class Server:
    """A running ``goboom serve`` subprocess."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    def rss_mb(self) -> float:
        """The server's resident memory now, in MB (``VmRSS`` of ``/proc/PID/status``; Linux only)."""
        for line in self._proc("status").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS line in /proc/PID/status")

    def cpu_seconds(self) -> float:
        """The CPU time the server has used so far (user + system, of ``/proc/PID/stat``; Linux only)."""
        fields = self._proc("stat").rpartition(")")[2].split()  # the fields after the command's name
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def _proc(self, name: str) -> str:
        """``/proc/PID/NAME`` of the server; RuntimeError with its log once it has stopped."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                return Path(f"/proc/{self.process.pid}/{name}").read_text()
        raise RuntimeError(f"goboom serve stopped (exit status {self.process.poll()}):\n{self.log.read_text()[-3000:]}")


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (free when probed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def serve(folder: Path, *options: str) -> Iterator[Server]:
    """``goboom serve OPTIONS`` on a free port of 127.0.0.1, its log ``folder/server.log``, from when it answers
    until the block ends; the server is stopped (Ctrl-C, then killed) however the block ends. The load runs' server,
    and the web tests' real ``goboom serve`` (tests/web)."""
    port, log = free_port(), folder / "server.log"
    command = [sys.executable, "-m", "goboom_env.cli", "serve", "--port", str(port), *options]
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        server = Server(process, port, log)
        _wait_until_up(server)
        yield server
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def load_options(folder: Path, max_games: int, idle_seconds: float) -> list[str]:
    """The options of the loaded server: its records in ``folder/games``, at most ``max_games`` games at once, each
    dropped ``idle_seconds`` after its last request."""
    return ["--records", str(folder / "games"), "--max-games", str(max_games), "--idle-minutes", str(idle_seconds / 60)]


def _wait_until_up(server: Server) -> None:
    """Return once the server answers; RuntimeError with its log when it stops or takes too long."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        with contextlib.suppress(OSError), contextlib.closing(Connection(server.port)) as connection:
            if connection.request("GET", "/api/options")[0] == 200:
                return
        if server.process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"goboom serve did not start:\n{server.log.read_text()[-3000:]}")
        time.sleep(0.2)


class Connection:
    """One keep-alive HTTP connection to the server on 127.0.0.1, as one page (or script) holds it."""

    def __init__(self, port: int) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                token: str | None = None) -> tuple[int, Any]:
        """The status and the JSON answer (None when the answer is not JSON) of one request."""
        headers = {"Content-Type": "application/json"} if method == "POST" else {}
        if token is not None:
            headers["X-Game-Token"] = token
        self.http.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = self.http.getresponse()
        raw = response.read()
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, None

    def close(self) -> None:
        self.http.close()


@dataclass
class Played:
    """What the clients of one run did."""

    games: int = 0
    """Games played to their end."""
    moves: int = 0
    latencies: list[float] = field(default_factory=list)
    """Seconds of each move request."""
    errors: list[str] = field(default_factory=list)
    """Each answer that was not the expected one (a client stops at its first)."""
    last_games: list[tuple[str, str]] = field(default_factory=list)
    """The id and token of each client's last game (to check later that it expired)."""

    def add(self, other: Played) -> None:
        self.games += other.games
        self.moves += other.moves
        self.latencies += other.latencies
        self.errors += other.errors
        self.last_games += other.last_games


class ClientError(Exception):
    """An answer a well-behaved client should not get (a 5xx, or a 4xx to a legal request)."""


def play_game(connection: Connection, opponent: str, rng: random.Random, played: Played) -> tuple[str, str]:
    """Start a game and play it to its end with a random legal move at each turn: its id and token; ClientError
    on a bad answer."""
    body = GAME | {"opponents": [opponent], "seed": rng.randrange(2**31)}
    data = _expect(connection.request("POST", "/api/games", body), 201, "POST /api/games")
    game, token, frame = data["game"], data["token"], data["frame"]
    while frame["status"] != "over":
        if frame["status"] == "agents":
            reply = connection.request("POST", f"/api/games/{game}/advance", token=token)
            frame = _expect(reply, 200, "POST advance")["frames"][-1]
            continue
        if frame["status"] != "your_turn" or not frame["legal"]:
            raise ClientError(f"a frame with status {frame['status']!r} and legal moves {frame['legal']}")
        started = time.perf_counter()
        reply = connection.request("POST", f"/api/games/{game}/move", {"move": rng.choice(frame["legal"])}, token)
        played.latencies.append(time.perf_counter() - started)
        played.moves += 1
        frame = _expect(reply, 200, "POST move")["frames"][-1]
    played.games += 1
    return game, token


def _expect(reply: tuple[int, Any], status: int, what: str) -> Any:
    """The JSON answer of ``reply`` if its status is ``status``; ClientError naming ``what`` otherwise."""
    got, data = reply
    if got != status or not isinstance(data, dict):
        raise ClientError(f"{what}: {got} {json.dumps(data)[:300]}")
    return data


def client(port: int, opponent: str, seed: int, deadline: float) -> Played:
    """One client: games played one after another until ``deadline`` (``time.monotonic``), the last to its end."""
    played, rng = Played(), random.Random(seed)
    connection = Connection(port)
    try:
        while not played.games or time.monotonic() < deadline:
            last = play_game(connection, opponent, rng, played)
        played.last_games.append(last)
    except (ClientError, OSError, http.client.HTTPException) as exc:
        played.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        connection.close()
    return played


@dataclass
class Run:
    """One load run: ``clients`` at once for about ``seconds``."""

    clients: int
    elapsed: float
    played: Played
    rss_before: float
    rss_peak: float
    cpu: float
    """Seconds of CPU time the server used meanwhile."""

    @property
    def games_per_s(self) -> float:
        return self.played.games / self.elapsed

    @property
    def moves_per_s(self) -> float:
        return self.played.moves / self.elapsed

    @property
    def server_cpu(self) -> float:
        """The server's CPU time over the wall time (1.0: one core all along)."""
        return self.cpu / self.elapsed

    def latency_ms(self, q: float) -> float:
        """The ``q`` quantile (0..1, nearest rank) of the move latencies, in milliseconds."""
        ordered = sorted(self.played.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def run_load(server: Server, clients: int, seconds: float, opponent: str = "heuristic", seed: int = 0) -> Run:
    """``clients`` clients at once on their own threads, starting games for ``seconds``; the server's memory is
    sampled meanwhile for its peak."""
    deadline = time.monotonic() + seconds
    results: list[Played] = [Played() for _ in range(clients)]

    def one(i: int) -> None:
        results[i] = client(server.port, opponent, seed * 100_003 + i, deadline)

    rss_before = peak = server.rss_mb()
    cpu_before = server.cpu_seconds()
    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        peak = max(peak, server.rss_mb())
        time.sleep(0.1)
    elapsed = time.perf_counter() - started
    cpu = server.cpu_seconds() - cpu_before
    played = Played()
    for result in results:
        played.add(result)
    return Run(clients, elapsed, played, rss_before, max(peak, server.rss_mb()), cpu)


def settle(server: Server, idle_seconds: float) -> float:
    """The server's memory (MB) once the games of the last run expired: after two idle periods (the server
    sweeps once per idle period) and a second to spare."""
    time.sleep(2 * idle_seconds + 1)
    return server.rss_mb()


def still_live(server: Server, games: list[tuple[str, str]]) -> int:
    """How many of ``games`` (id, token) the server still answers for (the others are gone: 404)."""
    connection = Connection(server.port)
    try:
        return sum(connection.request("GET", f"/api/games/{game}", token=token)[0] != 404 for game, token in games)
    finally:
        connection.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, nargs="+", default=[10, 50, 100],
                        help="games played at once, one run each (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="seconds each run starts games (default: %(default)s)")
    parser.add_argument("--opponent", default="heuristic", help="the opponent of every seat (default: %(default)s)")
    parser.add_argument("--idle-seconds", type=float, default=3.0,
                        help="goboom serve --idle-minutes, in seconds (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if min(args.games) < 1 or args.seconds <= 0 or args.idle_seconds <= 0:
        parser.error("--games must be at least 1, --seconds and --idle-seconds above 0")
    with tempfile.TemporaryDirectory() as folder, \
            serve(Path(folder), *load_options(Path(folder), max(args.games), args.idle_seconds)) as server:
        warm_up = run_load(server, max(args.games), min(args.seconds, 3.0), args.opponent, args.seed)
        for error in warm_up.played.errors[:3]:
            print(f"  warm-up error: {error}", file=sys.stderr)
        print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; after the warm-up "
              f"({warm_up.played.games} games), the server's memory: {settle(server, args.idle_seconds):.0f} MB\n")
        print("| games at once | games | games/s | moves/s | move p50 ms | move p99 ms | errors | server CPU "
              "| RSS before MB | RSS peak MB | RSS after MB | live after |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for clients in args.games:
            run = run_load(server, clients, args.seconds, args.opponent, args.seed + clients)
            after = settle(server, args.idle_seconds)
            print(f"| {clients} | {run.played.games} | {run.games_per_s:.1f} | {run.moves_per_s:.0f} "
                  f"| {run.latency_ms(0.5):.0f} | {run.latency_ms(0.99):.0f} | {len(run.played.errors)} "
                  f"| {run.server_cpu:.0%} | {run.rss_before:.0f} | {run.rss_peak:.0f} | {after:.0f} "
                  f"| {still_live(server, run.played.last_games)} |", flush=True)
            for error in run.played.errors[:3]:
                print(f"  error: {error}", file=sys.stderr)
        print(f"\nload average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
