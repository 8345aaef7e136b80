"""Reaching a Ray cluster before Ray starts (no Ray imported): ``goboom train-rllib --address`` checks the address
with :func:`probe`, as ``ray.init`` retries an unreachable one for minutes without a word."""

from __future__ import annotations

import socket

from goboom_env.training.settings import cluster_endpoint

CONNECT_TIMEOUT_S = 5.0
"""How long :func:`probe` waits for a TCP connection to a cluster's address."""


def probe(address: str, timeout: float = CONNECT_TIMEOUT_S, shown: str | None = None) -> None:
    """Raise ValueError unless a TCP connection to ``address`` (``HOST:PORT`` or ``ray://HOST:PORT``) opens within
    ``timeout`` seconds. ``shown`` is how the message names the address (default ``repr(address)``)."""
    endpoint = cluster_endpoint(address)
    if endpoint is None:
        raise ValueError("probe needs HOST:PORT; Ray looks up 'auto' itself")
    try:
        socket.create_connection(endpoint, timeout=timeout).close()
    except OSError as exc:
        raise ValueError(f"no Ray cluster reachable at --address {shown or repr(address)}: {exc}; "
                         "check the address, or start the cluster with `ray start --head`") from exc
