"""``goboom train-rllib``: multi-agent self-play PPO on Ray RLlib (arguments: :class:`RLlibArgs`).

This module imports no Ray, so ``goboom --help`` stays fast; the training itself lives in
:mod:`goboom_env.training.rllib_train` and is imported when the command runs. Examples::

    goboom train-rllib --players 4 --timesteps 500000 --num-env-runners 2 --out runs/rllib4
    goboom train-rllib --address auto --num-env-runners 16 --out runs/big     # an existing cluster
    goboom train-rllib --out runs/rllib4 --resume --timesteps 1000000
    goboom train-rllib --measure-sampling 4000 --num-env-runners 2            # env steps/s, no training
    goboom evaluate --players 4 --agents rllib:runs/rllib4 heuristic --games 2000 --duplicate
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path

from goboom_env.training.config import GameArgs, add_arguments, from_namespace

PROG = "goboom train-rllib"


@dataclass
class RLlibArgs(GameArgs):
    """Everything one RLlib self-play run needs; saved in ``goboom.json`` of the run folder."""

    timesteps: int = 200_000
    """Stop once this many env steps (decisions of any seat) have been sampled."""
    num_env_runners: int = 1
    """Ray actors that sample episodes (0 = sample in the driver process)."""
    num_envs_per_env_runner: int = 16
    """Environments stepped together (one batched forward pass) inside each env runner."""
    train_batch_size: int = 4000
    """Env steps sampled per training iteration."""
    minibatch_size: int = 500
    """SGD minibatch size (learner agent steps)."""
    num_epochs: int = 4
    """Passes over each train batch."""
    lr: float = 3e-4
    """Adam learning rate."""
    gamma: float = 0.995
    """Discount factor."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    entropy_coeff: float = 0.01
    """Entropy bonus coefficient."""
    clip_param: float = 0.2
    """PPO clip range."""
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy and value MLPs."""
    league_size: int = 4
    """Frozen snapshot slots that play the non-learner seats."""
    snapshot_every: int = 5
    """Copy main into the next league slot every this many iterations."""
    self_play: float = 0.5
    """Probability that a non-learner seat is played by main itself instead of a snapshot."""
    checkpoint_every: int = 10
    """Save a full algorithm checkpoint every this many iterations (and always at the end)."""
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
        for name in ("timesteps", "train_batch_size", "minibatch_size", "num_epochs", "league_size",
                     "snapshot_every", "checkpoint_every", "num_envs_per_env_runner"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("num_env_runners", "eval_games"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.minibatch_size > self.train_batch_size:
            raise ValueError(f"minibatch_size ({self.minibatch_size}) must be <= train_batch_size "
                             f"({self.train_batch_size})")
        if not 0.0 <= self.self_play <= 1.0:
            raise ValueError(f"self_play must be a probability in [0, 1], got {self.self_play}")
        if not self.hidden or any(h < 1 for h in self.hidden):
            raise ValueError(f"hidden must be a non-empty list of positive sizes, got {self.hidden}")
        if self.num_cpus is not None and self.num_cpus < 1:
            raise ValueError(f"num_cpus must be >= 1, got {self.num_cpus}")
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


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> argparse.ArgumentParser:
    """Register the ``train-rllib`` sub-command: one flag per :class:`RLlibArgs` field."""
    parser = subparsers.add_parser(name, help=help_text, description=(RLlibArgs.__doc__ or "").strip(),
                                   formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_arguments(parser, RLlibArgs)
    parser.add_argument("--measure-sampling", type=int, default=0, metavar="STEPS",
                        help="instead of training, sample STEPS env steps per env runner and print env steps/s")
    parser.set_defaults(run=run)
    return parser


def run(ns: argparse.Namespace) -> int:
    """Train (or measure sampling speed), print where the policy went; 2 on bad arguments."""
    try:
        args = from_namespace(ns, RLlibArgs)
        if ns.measure_sampling < 0:
            raise ValueError(f"--measure-sampling must be >= 0, got {ns.measure_sampling}")
        if args.address is not None and cluster_endpoint(args.address) is not None:
            probe(args.address)  # before the slow Ray import; training checks again (auto included)
    except ValueError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    try:
        from goboom_env.training import rllib_train
    except ImportError as exc:
        print(f"{PROG}: error: Ray RLlib is not installed ({exc}); pip install 'goboom-env[rllib]'", file=sys.stderr)
        return 2
    try:
        if ns.measure_sampling:
            print(json.dumps(rllib_train.measure_sampling(args, ns.measure_sampling)))
            return 0
        run_dir = rllib_train.train(args)
    except ValueError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    print(f"policy: {run_dir / 'policy'} (agent spec rllib:{run_dir})")
    print(f"checkpoints: {run_dir / 'checkpoints'}  tensorboard: {run_dir / 'tensorboard'}")
    if args.eval_games:
        _print_eval(run_dir)
    return 0


def _print_eval(run_dir: Path) -> None:
    data = json.loads((run_dir / "eval.json").read_text())
    for opponent, rows in data.items():
        for row in rows:
            print(f"vs {opponent}: {row['agent']:>24}  win rate {row['win_rate']:.3f} "
                  f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]  games {row['games']}")
