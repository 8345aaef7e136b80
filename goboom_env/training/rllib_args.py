"""The settings of ``goboom train-rllib``: :class:`RLlibArgs` and the check of a Ray cluster's address.

The game and PPO settings are those of every trainer (:class:`goboom_env.training.config.PPOArgs`, mapped to
RLlib's names by :func:`goboom_env.training.config.rllib_ppo_kwargs`). This module imports no Ray, so that the
command can check its options (and reach the cluster) before the slow Ray import.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

from goboom_env.training.config import PPOArgs, check_bounds


@dataclass
class RLlibArgs(PPOArgs):
    """Everything one RLlib self-play run (``goboom train-rllib``) needs; saved in ``goboom.json`` of the run folder."""

    learning_rate: float = 3e-4
    n_epochs: int = 4
    minibatch_size: int = 500
    ent_coef: float = 0.01
    vf_coef: float = 1.0
    snapshot_every: int = 20_000
    checkpoint_every: int = 40_000
    timesteps: int = 200_000
    """Stop once this many env steps (decisions of any seat) have been sampled."""
    num_env_runners: int = 1
    """Ray actors that sample episodes (0 = sample in the driver process)."""
    num_envs_per_env_runner: int = 16
    """Environments stepped together (one batched forward pass) inside each env runner."""
    train_batch_size: int = 4000
    """Env steps sampled per training iteration."""
    league_size: int = 4
    """Frozen snapshot slots that play the non-learner seats."""
    self_play: float = 0.5
    """Probability that a non-learner seat is played by main itself instead of a snapshot."""
    out: str = "runs/rllib"
    """Run folder: checkpoints/, policy/, goboom.json, progress.csv, tensorboard/."""
    resume: bool = False
    """Continue the run in --out from its latest checkpoint (same arguments)."""
    address: str | None = None
    """Ray cluster to join (e.g. auto or HOST:6379); default: start a local Ray instance."""
    num_cpus: int | None = None
    """CPUs of the local Ray instance (default: all); ignored with --address."""
    seed: int = 0
    """Seed of the networks and the environments (league matchmaking draws from the random episode ids)."""
    eval_games: int = 0
    """After training, play this many games 1-vs-(n-1) against random and against heuristic (0 = skip)."""
    progress: bool = True
    """Show a live progress display."""

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        self.validate_game()
        self.validate_ppo()
        check_bounds(self, ">= 1", "timesteps", "train_batch_size", "league_size", "num_envs_per_env_runner")
        check_bounds(self, ">= 0", "num_env_runners", "eval_games")
        if self.minibatch_size > self.train_batch_size:
            raise ValueError(f"minibatch_size ({self.minibatch_size}) must be <= train_batch_size "
                             f"({self.train_batch_size})")
        if not 0.0 <= self.self_play <= 1.0:
            raise ValueError(f"self_play must be a probability in [0, 1], got {self.self_play}")
        if self.num_cpus is not None:
            check_bounds(self, ">= 1", "num_cpus")
        if self.address is not None:
            cluster_endpoint(self.address)


def cluster_endpoint(address: str) -> tuple[str, int] | None:
    """The (host, port) of a ``--address`` (``HOST:PORT``, ``[IPv6]:PORT`` or Ray Client's
    ``ray://HOST:PORT``); None for ``auto``, which Ray looks up itself. Raises ValueError otherwise."""
    if address == "auto":
        return None
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(f"address must be auto, HOST:PORT or ray://HOST:PORT (port 1..65535), got {address!r}")
    return host, int(port)


CONNECT_TIMEOUT_S = 5.0
"""How long :func:`probe` waits for a TCP connection to a cluster's address."""


def probe(address: str, timeout: float = CONNECT_TIMEOUT_S, shown: str | None = None) -> None:
    """Raise ValueError unless a TCP connection to ``address`` (``HOST:PORT`` or ``ray://HOST:PORT``)
    opens within ``timeout`` seconds: ``ray.init`` retries an unreachable address for minutes
    without a word. ``shown`` is how the message names the address (default ``repr(address)``)."""
    endpoint = cluster_endpoint(address)
    if endpoint is None:
        raise ValueError("probe needs HOST:PORT; Ray looks up 'auto' itself")
    try:
        socket.create_connection(endpoint, timeout=timeout).close()
    except OSError as exc:
        raise ValueError(f"no Ray cluster reachable at --address {shown or repr(address)}: {exc}; "
                         "check the address, or start the cluster with `ray start --head`") from exc
