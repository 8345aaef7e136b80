"""Training arguments of ``goboom train``: one dataclass, a docstring per field (= ``--help``), CleanRL style.

Values come from three layers, later ones winning: the defaults below, a TOML file
(``--config run.toml``, keys = field names, e.g. ``timesteps = 2000000``) and the command line.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import itertools
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goboom_env.config import GameConfig
from goboom_env.env import EPISODES, REWARDS

VEC_ENVS = ("dummy", "subproc")
SEAT_MODES = ("rotate", "random")


@dataclass
class GameArgs:
    """The game a training run plays: shared by ``goboom train`` and ``goboom train-rllib``."""

    variant: str = "classic"
    """Rule system: classic (R1) or jokers (R2)."""
    players: int = 4
    """Number of seats (2..12)."""
    scoring: str | None = None
    """Classic scoring: standard or reverse (default: the variant's own)."""
    num_jokers: int | None = None
    """Jokers variant: number of jokers (0 = aces mode, R2.8)."""
    after_joker: str = "match"
    """Jokers variant: match (R2.6) or any."""
    episode: str = "hand"
    """Episode unit: hand (one deal) or match (a whole game)."""
    reward: str = "win"
    """Reward: win (zero-sum +1 / -1/(n-1)) or points (centred hand points / 100)."""

    def game_config(self) -> GameConfig:
        """The GameConfig these arguments choose (validated: a bad field raises ValueError)."""
        fields: dict[str, Any] = {"variant": self.variant, "num_players": self.players}
        if self.scoring is not None:
            fields["scoring"] = self.scoring
        if self.num_jokers is not None:
            fields["num_jokers"] = self.num_jokers
        if self.variant == "jokers":
            fields["after_joker"] = self.after_joker
        return GameConfig.from_dict(fields)

    def validate_game(self) -> None:
        """Raise ValueError naming the first bad game field (or any field of the wrong type)."""
        check_field_types(dataclasses.asdict(self), type(self), "the arguments")
        self.game_config()
        check_choice("episode", self.episode, EPISODES)
        check_choice("reward", self.reward, REWARDS)


@dataclass
class TrainArgs(GameArgs):
    """Everything one MaskablePPO self-play run needs; saved as ``args.json`` in the run folder."""

    timesteps: int = 200_000
    """Learner decisions to train for (SB3 timesteps)."""
    n_envs: int = 16
    """Parallel environments (one batched policy call serves all of them)."""
    vec_env: str = "dummy"
    """Vectorisation: dummy (one process, fastest on few cores) or subproc."""
    seed: int = 0
    """Seed of the model, the environments and the opponent sampling."""
    device: str = "cpu"
    """Torch device: cpu, cuda, cuda:N, or auto (the GPU when torch sees one, else the CPU); asking for a GPU
    that torch cannot use is an error, never a silent CPU run."""
    opponents: list[str] = field(default_factory=lambda: ["random=1", "heuristic=4", "self=1"])
    """Opponent pool as SPEC=WEIGHT items; SPEC is an agent spec (random, heuristic, mc:budget=20, ppo:PATH)
    or `self` for the snapshots of the learner. Each episode draws one entry for all opponent seats."""
    snapshot_every: int = 100_000
    """Add a frozen copy of the learner to the opponent pool every this many steps."""
    pool_size: int = 8
    """Keep at most this many (most recent) snapshots in the pool."""
    seat: str = "rotate"
    """Learner seat per episode: rotate (next seat each episode) or random."""
    bc_games: int = 5000
    """Warm start: clone the --bc-teacher on this many of its self-play hands before PPO (0 = off)."""
    bc_teacher: str = "heuristic"
    """Agent spec whose moves the warm start imitates."""
    bc_epochs: int = 4
    """Passes over the teacher's decisions in the warm start."""
    learning_rate: float = 5e-4
    """Adam learning rate."""
    n_steps: int = 1024
    """Rollout length per environment between updates."""
    batch_size: int = 1024
    """Minibatch size."""
    n_epochs: int = 6
    """Optimisation epochs per rollout."""
    gamma: float = 0.995
    """Discount factor."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    ent_coef: float = 0.001
    """Entropy bonus coefficient."""
    clip_range: float = 0.2
    """PPO clip range."""
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy and value networks."""
    shaping: float = 0.0
    """Potential-based reward shaping: this x (opponents' mean hand size - own hand size) as the potential
    (0 = off; e.g. 0.05). Pays at once for shedding and for making others draw; the best policy is unchanged."""
    privileged_critic: bool = False
    """Let the value network (only) see the hidden cards during training: lower-variance advantages;
    the actor, the only part ever played, still sees just the observation (training/privileged.py)."""
    eval_every: int = 250_000
    """Evaluate against the baselines every this many steps (0 = only at the end, -1 = never)."""
    eval_games: int = 2000
    """Games per baseline in each periodic evaluation (1-vs-(n-1), seat-rotated, duplicate)."""
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "heuristic"])
    """Baselines of the periodic evaluation; the last one picks the best model."""
    checkpoint_every: int = 100_000
    """Save a resumable checkpoint every this many steps."""
    out: str = "runs/ppo"
    """Run folder: model.zip, best_model.zip, checkpoints/, snapshots/, progress.csv, eval.csv, tensorboard/."""
    resume: bool = False
    """Continue the run in --out from its latest checkpoint (same arguments)."""
    force: bool = False
    """Replace an existing non-empty --out: its old files are deleted when the new run starts. Without it
    (or --resume) such a folder is refused."""
    progress: bool = True
    """Show a progress bar."""
    threads: int = 1
    """Torch CPU threads (1 is fastest for small networks on a shared machine)."""

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        self.validate_game()
        check_choice("vec_env", self.vec_env, VEC_ENVS)
        check_choice("seat", self.seat, SEAT_MODES)
        for name in ("timesteps", "n_envs", "n_steps", "batch_size", "n_epochs", "pool_size", "eval_games"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not self.shaping >= 0:
            raise ValueError(f"shaping must be >= 0, got {self.shaping}")
        if not self.net_arch or any(h < 1 for h in self.net_arch):
            raise ValueError(f"net_arch must be a non-empty list of positive sizes, got {self.net_arch}")
        parse_opponents(self.opponents)
        if self.eval_every >= 0 and not self.eval_opponents:
            raise ValueError("eval_opponents must name at least one agent spec (or set eval_every to -1)")
        self.check_agent_specs()
        check_output_folder(self.out)

    def check_agent_specs(self) -> None:
        """Build every agent the run will need (league opponents, the warm-start teacher, the evaluation
        baselines) once, so that a bad spec fails now, not after hours of training."""
        from goboom_env.agents import make_agent

        config = self.game_config()
        uses = [("opponents", spec) for spec, _ in parse_opponents(self.opponents) if spec != "self"]
        uses += [("bc_teacher", self.bc_teacher)] if self.bc_games > 0 else []
        uses += [("eval_opponents", spec) for spec in self.eval_opponents] if self.eval_every >= 0 else []
        for option, spec in uses:
            try:
                make_agent(spec, config, 0)
            except ValueError as exc:
                raise ValueError(f"{option}: {exc}") from None


def check_field_types(values: dict[str, Any], cls: type, source: str) -> dict[str, Any]:
    """``values`` with each field checked against its annotation (int, float, str, bool, list[int], list[str],
    optionally None); raises ValueError naming the field and ``source`` (e.g. the TOML file) on a mismatch.
    Integers are accepted for float fields (and returned as floats); booleans are never numbers."""
    kinds = {f.name: f.type if isinstance(f.type, str) else f.type.__name__ for f in dataclasses.fields(cls)}
    out = {}
    for name, value in values.items():
        kind = kinds[name].replace(" ", "")
        ok, value = _typed(kind, value)
        if not ok:
            raise ValueError(f"{name} in {source} must be {_KIND_WORDS.get(kind, kind)}, got {value!r}")
        out[name] = value
    return out


_KIND_WORDS = {
    "int": "an integer", "float": "a number", "str": "a string", "bool": "true or false",
    "list[int]": "a list of integers", "list[str]": "a list of strings", "str|None": "a string",
    "int|None": "an integer",
}


def _typed(kind: str, value: Any) -> tuple[bool, Any]:
    """(whether ``value`` fits the annotation ``kind``, the value converted where needed)."""
    if kind.endswith("|None"):
        if value is None:
            return True, None
        kind = kind[: -len("|None")]
    if kind.startswith("list["):
        item = kind[len("list["):-1]
        if not isinstance(value, list):
            return False, value
        checked = [_typed(item, v) for v in value]
        return all(ok for ok, _ in checked), [v for _, v in checked]
    if kind == "bool":
        return isinstance(value, bool), value
    if isinstance(value, bool):
        return False, value
    if kind == "int":
        return isinstance(value, int), value
    if kind == "float":
        return isinstance(value, (int, float)), float(value) if isinstance(value, (int, float)) else value
    if kind == "str":
        return isinstance(value, str), value
    return True, value  # another annotation: left to the field's own validation


def check_output_folder(out: str | Path, flag: str = "--out") -> None:
    """Raise ValueError, before any work, when the run folder cannot be created or written: ``out`` is a file,
    lies under a file, or its nearest existing folder is not writable."""
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{flag} {path} is a file, not a folder")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"{flag} {path} cannot be created: {existing} is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {path} is not writable: no write permission in {existing}")


def parse_opponents(items: list[str]) -> list[tuple[str, float]]:
    """``["random=1", "self=3"]`` -> ``[("random", 1.0), ("self", 3.0)]``; the weight follows the last '='."""
    out = []
    for item in items:
        spec, sep, weight = str(item).rpartition("=")
        try:
            value = float(weight)
        except ValueError:
            value = -1.0
        if not sep or not spec or value < 0:
            raise ValueError(f"opponents item {item!r} must be SPEC=WEIGHT with a weight >= 0, e.g. heuristic=2")
        out.append((spec, value))
    if not any(w > 0 for _, w in out):
        raise ValueError(f"opponents must give at least one positive weight, got {items}")
    return out


def check_choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    """Raise ValueError unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each dataclass field, inherited ones included (the source of ``--help``)."""
    docs: dict[str, str] = {}
    for klass in reversed([k for k in cls.__mro__ if dataclasses.is_dataclass(k)]):
        body = ast.parse(inspect.getsource(klass)).body[0].body  # type: ignore[attr-defined]
        for node, nxt in itertools.pairwise(body):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)):
                docs[node.target.id] = " ".join(str(nxt.value.value).split())
    return docs


def add_arguments(parser: argparse.ArgumentParser, cls: type = TrainArgs) -> None:
    """One ``--flag`` per dataclass field; unset flags stay absent so TOML values can fill them."""
    docs = field_docs(cls)
    parser.add_argument("--config", type=Path, help="TOML file with any of the fields below")
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        kind = f.type if isinstance(f.type, str) else f.type.__name__
        help_text = f"{docs.get(f.name, '')} (default: {default})"
        common = {"dest": f.name, "default": argparse.SUPPRESS, "help": help_text}
        if kind == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, **common)
        elif kind.startswith("list[int]"):
            parser.add_argument(flag, type=int, nargs="+", **common)
        elif kind.startswith("list"):
            parser.add_argument(flag, nargs="+", **common)
        else:
            parser.add_argument(flag, type=_CASTS[kind], **common)


_CASTS = {"int": int, "float": float, "str": str, "str | None": str, "int | None": int}


def from_namespace(ns: argparse.Namespace, cls: type = TrainArgs) -> Any:
    """Defaults, then the TOML file of ``--config``, then the flags given on the command line."""
    values: dict[str, Any] = {}
    config_path = getattr(ns, "config", None)
    if config_path is not None:
        values.update(load_toml(config_path, cls))
    names = {f.name for f in dataclasses.fields(cls)}
    values.update(check_field_types({k: v for k, v in vars(ns).items() if k in names}, cls, "the command line"))
    args = cls(**values)
    args.validate()
    return args


def load_toml(path: Path, cls: type = TrainArgs) -> dict[str, Any]:
    """The fields of a TOML file; unknown keys are an error naming the allowed ones."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"config file {path} does not exist")
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"config file {path} is not valid TOML: {exc}") from exc
    except OSError as exc:
        raise ValueError(f"cannot read config file {path}: {exc.strerror}") from exc
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"unknown keys {unknown} in {path}; allowed: {sorted(names)}")
    return check_field_types(data, cls, str(path))
