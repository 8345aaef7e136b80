"""A Ray cluster of two nodes on this machine, joined by ``goboom train-rllib --address`` (slow tier).

Slow because it runs whole Ray processes: ``ray start --head`` and a second node with ``ray start --address``, each
with one CPU (the second one also has the custom resource ``node2``), then a one-iteration run with two env runners
that joins the cluster. One CPU per node and one CPU per runner leave Ray a single way to place the runners, one on
each node, and the run's ``cluster.json`` records the node that each runner itself reports: the test checks that the
two runners ran on the two nodes.

The one exception to the suite's loopback-only Ray (tests/conftest.py sets ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``):
``ray start`` refuses a second node unless it is 1, and then Ray's nodes bind the machine's own address. The test
still connects through 127.0.0.1 only, and the cluster uses token authentication with a token of its own
(``RAY_AUTH_MODE=token``, ``RAY_AUTH_TOKEN_PATH``), as docs/rllib.md describes for a real cluster.

Beside other tests (the slow tier runs ``pytest -n 2``): the cluster is this test's own, so it takes no lock and no
xdist group. It has its own temporary folder (``--temp-dir``: its sockets, logs and ``ray_current_cluster``, so
``--address auto`` elsewhere never finds it) and free ports for what Ray otherwise binds at fixed ports. It is stopped
by signalling the two ``ray start --block`` processes it started (each stops its own node's processes; a process
group left over is killed), never with ``ray stop``: that stops every Ray process of the user on the machine,
the local Ray instances of the rllib tests running in the other worker included.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("ray.rllib")

REPO = Path(__file__).resolve().parents[2]
RAY = Path(sys.executable).parent / "ray"
START_TIMEOUT_S = 120.0
"""How long one ``ray start`` may take to bring its node up (a loaded 2-core machine takes 5-15 s)."""
STOP_TIMEOUT_S = 60.0
"""How long one ``ray start --block`` may take to stop its node after SIGTERM before its group is killed."""


def free_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports that nothing listens on (bound together, then released)."""
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) for _ in range(count)]
        for sock in socks:
            sock.bind(("", 0))
        return [sock.getsockname()[1] for sock in socks]


@dataclass
class Node:
    """One ``ray start --block`` process (the leader of its own process group) and its log."""

    name: str
    process: subprocess.Popen
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


class Cluster:
    """Ray nodes started with ``ray start --block`` in a temporary folder of their own; :meth:`stop` stops them."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port, self.client_port, self.dashboard_port, *self.agent_ports = free_ports(5)
        self.address = f"127.0.0.1:{self.port}"
        token = folder / "auth_token"
        token.write_text(secrets.token_hex(32))
        token.chmod(0o600)
        self.env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_AUTH_TOKEN")} | {
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1",  # else `ray start --address` refuses to add a node
            "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token),
            "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0",  # SIGTERM stops a node at once (no drain wait)
        }
        self.nodes: list[Node] = []

    def start(self, name: str, *flags: str) -> None:
        """``ray start --block FLAGS`` in a new session; returns once the node is up."""
        log = self.folder / f"{name}.log"
        with log.open("w") as out:
            process = subprocess.Popen([str(RAY), "start", "--block", "--disable-usage-stats", *flags], env=self.env,
                                       stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True)
        node = Node(name, process, log)
        self.nodes.append(node)
        deadline = time.monotonic() + START_TIMEOUT_S
        while "will now block" not in log.read_text(errors="replace"):
            assert process.poll() is None, f"ray start ({name}) exited with {process.returncode}:\n{node.output()}"
            assert time.monotonic() < deadline, f"ray start ({name}) not up after {START_TIMEOUT_S:g} s:\n" \
                                                f"{node.output()}"
            time.sleep(0.5)

    def wait_for_nodes(self, count: int) -> str:
        """``ray status`` once it lists ``count`` active nodes."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            done = subprocess.run([str(RAY), "status", f"--address={self.address}"], env=self.env,
                                  capture_output=True, text=True, timeout=START_TIMEOUT_S)
            active = done.stdout.split("Active:", 1)[-1].split("Pending:", 1)[0]
            if done.returncode == 0 and len(re.findall(r"\bnode_[0-9a-f]+", active)) == count:
                return done.stdout
            assert time.monotonic() < deadline, f"ray status never showed {count} nodes:\n{done.stdout}{done.stderr}"
            time.sleep(1.0)

    def stop(self) -> None:
        """Stop the nodes in reverse order: SIGTERM to each ``ray start --block`` (it stops its node's
        processes), then SIGKILL to its process group, for whatever is left. Only this cluster's processes."""
        for node in reversed(self.nodes):
            if node.process.poll() is None:
                node.process.send_signal(signal.SIGTERM)
                with suppress(subprocess.TimeoutExpired):
                    node.process.wait(timeout=STOP_TIMEOUT_S)
            with suppress(ProcessLookupError):
                os.killpg(node.process.pid, signal.SIGKILL)
            node.process.wait(timeout=STOP_TIMEOUT_S)

    def leftovers(self) -> list[str]:
        """Command lines of live processes that name this cluster's folder (its GCS, raylets, agents, monitors)."""
        found = []
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                args = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(self.folder) in args:
                found.append(args[:200])
        return found


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    """A head node and a second node (custom resource ``node2``), one CPU each, stopped after the test."""
    # a short folder: Ray's Unix sockets live under --temp-dir and their paths are limited to 107 bytes
    folder = Path(tempfile.mkdtemp(prefix="goboom-ray-", dir="/tmp"))
    ray_cluster = Cluster(folder)
    try:
        head_agent, node2_agent = ray_cluster.agent_ports
        ray_cluster.start("head", "--head", f"--port={ray_cluster.port}", "--num-cpus=1", "--num-gpus=0",
                          "--include-dashboard=false", f"--dashboard-port={ray_cluster.dashboard_port}",
                          f"--ray-client-server-port={ray_cluster.client_port}",
                          f"--dashboard-agent-listen-port={head_agent}", f"--temp-dir={folder}")
        ray_cluster.start("node2", f"--address={ray_cluster.address}", "--num-cpus=1", "--num-gpus=0",
                          '--resources={"node2": 1}', f"--dashboard-agent-listen-port={node2_agent}")
        ray_cluster.wait_for_nodes(2)
        yield ray_cluster
    finally:
        ray_cluster.stop()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while (left := ray_cluster.leftovers()) and time.monotonic() < deadline:
            time.sleep(1.0)
        shutil.rmtree(folder, ignore_errors=True)
        assert not left, f"processes of the cluster still running after it was stopped: {left}"


# Whole Ray processes: two `ray start` nodes and a training run that joins them.
@pytest.mark.slow
def test_train_rllib_joins_a_two_node_cluster_and_runs_an_env_runner_on_each_node(cluster, tmp_path):
    run = tmp_path / "run"
    tiny = ["--num-envs", "1", "--timesteps", "128", "--train-batch-size", "128", "--minibatch-size",
            "64", "--n-epochs", "1", "--net-arch", "16", "--pool-size", "1", "--seed", "3", "--no-progress"]
    done = subprocess.run([sys.executable, "-m", "goboom_env.cli", "train-rllib", "--address", cluster.address,
                           "--num-env-runners", "2", *tiny, "--out", str(run)],
                          cwd=REPO, env=cluster.env, capture_output=True, text=True, timeout=300)
    logs = "\n".join(f"--- {node.name}\n{node.output()}" for node in cluster.nodes)
    assert done.returncode == 0, f"{done.stderr[-4000:]}\n{logs}"
    assert f"rllib:{run}" in done.stdout
    assert len((run / "progress.csv").read_text().splitlines()) == 2  # the header and one iteration
    assert (run / "policy" / "goboom.json").is_file()

    record = json.loads((run / "cluster.json").read_text())
    nodes = {node["node_id"]: node for node in record["nodes"]}
    assert len(nodes) == 2, record
    (head,) = (node_id for node_id, node in nodes.items() if node["head"])
    (node2,) = (node_id for node_id, node in nodes.items() if node["resources"].get("node2") == 1)
    assert head != node2 and all(node["resources"]["CPU"] == 1 for node in nodes.values()), record
    runners = record["env_runners"]
    assert [runner["index"] for runner in runners] == [1, 2], record
    assert {runner["node_id"] for runner in runners} == {head, node2}, record  # one env runner on each node
    assert record["driver"]["node_id"] in nodes, record
