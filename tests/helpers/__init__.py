"""Helpers shared by the test folders (``from helpers import ...``: pyproject.toml puts ``tests`` on the path):
build fixed deck orders, play scripted and random games, the configuration matrices, the soak counts. Helpers of
one folder's modules are a module of this package named after the folder (``from helpers.web import ...``); helpers
of one concern that several folders share, a module named after it (``helpers.processes``: processes read from
/proc).

Deck orders follow RULES.md R0.5 (index 0 = top) and the deal of R1.3/R2.3: one card at a time,
starting with the dealer's left. :func:`deck_for` turns "these are the hands, this is the stock"
into the deck order that deals exactly that, which keeps scenario tests readable.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np
import pytest

import goboom_env
from goboom_env import GameConfig, Hand, Match
from goboom_env.agents import Agent
from goboom_env.cards import code_of, deck_faces, face_of
from goboom_env.outdir import mark

ROOT = Path(__file__).resolve().parents[2]
"""The checkout: the folder of pyproject.toml."""
DATA = ROOT / "tests" / "data"
"""The golden data of the tests: hands.json, playthroughs/, shipped_models_tournament.json."""
TestFunction = TypeVar("TestFunction", bound=Callable[..., Any])

FULL_SOAK = os.environ.get("GOBOOM_SOAK") == "full"
"""Set by ``make soak``: the soak tests (marker ``soak``) play their full counts. Without it (CI's slow tier) each
plays a sample with the same assertions: every configuration, fewer games."""


def soak_count(full: int, sample: int) -> int:
    """How many games (or examples) a soak test plays: ``full`` under ``make soak``, else ``sample``."""
    return full if FULL_SOAK else sample


def soak(test: TestFunction) -> TestFunction:
    """Mark a soak test: ``slow`` (CI's slow tier plays its sample) and ``soak`` (``make soak`` plays its full
    count); its counts come from :func:`soak_count`."""
    return pytest.mark.slow(pytest.mark.soak(test))


EVERY_EXTRA = os.environ.get("GOBOOM_TEST_EVERY_EXTRA") == "1"
"""Set by ``make test``, which installs every extra: then a test module that calls ``pytest.importorskip`` for an
optional dependency (torch, stable-baselines3, ray) fails instead of being skipped (the hooks of tests/conftest.py),
so nothing is skipped for a missing extra. Without it, ``pip install -e ".[dev]" && pytest`` runs the core tests and
skips the rest."""


def needs_extra_of(command: str) -> None:
    """Skip a test of ``goboom COMMAND`` when the extra that command needs is not installed (the command would
    only print its install hint); under :data:`EVERY_EXTRA` that skip is a failure like any other."""
    from goboom_env.cli import SUBCOMMANDS, missing_module

    extra = SUBCOMMANDS[command][2] if command in SUBCOMMANDS else None
    module = missing_module(extra) if extra else None
    if module:
        pytest.importorskip(module)  # fails to import: the standard "could not import" skip


CLASSIC_MATRIX: list[GameConfig] = [
    GameConfig(variant="classic", num_players=n, scoring=s)
    for n in (2, 3, 4, 6, 7, 12)
    for s in ("standard", "reverse")
]
"""Classic player counts x both scorings (the invariant matrix)."""
JOKERS_MATRIX: list[GameConfig] = [
    GameConfig(variant="jokers", num_players=n, **extra)
    for n in (3, 4)
    for extra in ({}, {"num_jokers": 0}, {"after_joker": "any"})
]
"""Jokers 3 and 4 players x {2 jokers, aces mode, after_joker="any"}."""
MATRIX = CLASSIC_MATRIX + JOKERS_MATRIX
RULE_CONFIGS: list[GameConfig] = [
    GameConfig(variant="classic", num_players=3),
    GameConfig(variant="classic", num_players=7, scoring="reverse"),
    GameConfig(variant="jokers", num_players=3),
    GameConfig(variant="jokers", num_players=4, num_jokers=0),
    GameConfig(variant="jokers", num_players=4, after_joker="any"),
]
"""One configuration per rule option (both scorings, two decks, jokers, aces mode, after_joker="any"): the
short matrix of the tests too slow for :data:`MATRIX`."""


def config_id(config: GameConfig) -> str:
    """Short readable test id of a config, e.g. ``classic7-reverse`` or ``jokers4-any``."""
    if config.is_classic:
        return f"classic{config.num_players}-{config.scoring}"
    mode = "aces" if config.aces_mode else ("any" if config.after_joker == "any" else f"{config.num_jokers}jk")
    return f"jokers{config.num_players}-{mode}"


on_matrix = pytest.mark.parametrize("config", MATRIX, ids=config_id)
"""Run a test (argument ``config``) once per configuration of :data:`MATRIX`."""
on_rule_configs = pytest.mark.parametrize("config", RULE_CONFIGS, ids=config_id)
"""Run a test (argument ``config``) once per configuration of :data:`RULE_CONFIGS`."""


def deck_for(
    config: GameConfig,
    hands: Sequence[Sequence[str]],
    stock: Sequence[str] = (),
    dealer: int = 0,
) -> list[str]:
    """The deck order (codes, index 0 = top) that deals ``hands[seat]`` to each seat from ``dealer``
    and leaves ``stock`` (top first) on top of the stock; the unused cards go under it in face order."""
    n, size = config.num_players, config.hand_size
    if len(hands) != n or any(len(h) != size for h in hands):
        raise ValueError(f"need {n} hands of {size} cards, got sizes {[len(h) for h in hands]}")
    dealt = [hands[(dealer + 1 + i) % n][i // n] for i in range(n * size)]
    return [*dealt, *stock, *rest_of_deck(config, [*dealt, *stock])]


def rest_of_deck(config: GameConfig, used: Sequence[str]) -> list[str]:
    """The codes of the deck that ``used`` leaves, in face order; ValueError when ``used`` holds a card
    more often than the deck does."""
    counts = Counter(face_of(c) for c in used)
    rest = []
    for face in deck_faces(config.num_decks, config.num_jokers):
        if counts[face]:
            counts[face] -= 1
        else:
            rest.append(code_of(face))
    if +counts:
        raise ValueError(f"cards used more often than the deck holds: {sorted(code_of(f) for f in +counts)}")
    return rest


def make_hand(
    config: GameConfig, hands: Sequence[Sequence[str]], stock: Sequence[str] = (), dealer: int = 0
) -> Hand:
    """A :class:`Hand` dealt from :func:`deck_for`."""
    return Hand(config, [face_of(c) for c in deck_for(config, hands, stock, dealer)], dealer)


def suited_hands(ranks: str, suits: str) -> list[list[str]]:
    """One hand a seat, for :func:`deck_for`: seat ``i`` holds the cards of ``ranks`` (e.g. ``"2345678"``) in
    the suit ``suits[i]`` (e.g. ``"CDHS"``), so no two seats share a suit."""
    return [[rank + suit for rank in ranks] for suit in suits]



def hidden_twins(config: GameConfig) -> tuple[Hand, Hand]:
    """Two classic 4-player hands that seat 0 cannot tell apart: the same own hand and public state, other cards
    swapped between the opponents and the stock (for leak tests: a fair agent picks the same move in both)."""
    hand = make_hand(config, suited_hands("2345678", "CDHS"), stock=["9C", "9D", "9H"], dealer=3)
    other = make_hand(config, [["2C", "3C", "4C", "5C", "6C", "7C", "8C"],
                               ["9D", "3D", "4S", "5D", "6H", "7D", "8D"],
                               ["2H", "3H", "4H", "5H", "6D", "7H", "8H"],
                               ["2S", "3S", "4D", "5S", "6S", "7S", "8S"]], stock=["9C", "2D", "9H"], dealer=3)
    return hand, other

def jokers_state(
    config: GameConfig,
    hands: Sequence[Sequence[str]],
    stock: Sequence[str],
    top: str,
    match: str | None = None,
    current: int = 0,
    dealer: int | None = None,
    passes: int = 0,
) -> Hand:
    """A hand-built mid-round jokers state (R2): the given hands, stock (top first), top of the
    discard pile and match card; every other card of the deck is out of play (seen), via
    :meth:`Hand.from_dict`. ``match`` defaults to ``top`` (it must differ when ``top`` is a joker)."""
    n = config.num_players
    seen = rest_of_deck(config, [*(c for h in hands for c in h), *stock])
    data = {
        "config": config.to_dict(), "dealer": (current - 1) % n if dealer is None else dealer,
        "hands": [list(h) for h in hands], "stock": list(stock), "seen": seen, "drawn": [0] * n,
        "events": [], "current": current, "phase": "DISCARD", "trick": [-1] * n, "leader": -1,
        "led": None, "best_face": None, "best_seat": -1, "turns": 0, "top": top,
        "match_face": match or top, "passes": passes, "winner": None, "blocked": False,
    }
    return Hand.from_dict(data)


def codes(hand: Hand, seat: int) -> list[str]:
    """The cards in ``seat``'s hand as sorted codes."""
    return sorted(code_of(f) for f in hand.hand_faces(seat))


def play(hand: Hand, *actions: int | str) -> None:
    """Apply actions given as faces, card codes or ``"draw"`` (DRAW_OR_PASS)."""
    for action in actions:
        if action == "draw":
            hand.apply(53)
        elif isinstance(action, str):
            hand.apply(face_of(action))
        else:
            hand.apply(action)


def legal_codes(hand: Hand) -> list[str]:
    """The legal actions as codes, ``"draw"`` for DRAW_OR_PASS (R3.1), ascending by action id."""
    return ["draw" if a == 53 else code_of(a) for a in hand.legal_actions()]


def random_move(hand: Hand, rng: np.random.Generator) -> int:
    """Apply a uniformly random legal action to ``hand``; return it."""
    legal = hand.legal_actions()
    action = legal[int(rng.integers(len(legal)))]
    hand.apply(action)
    return action


def random_hand_steps(hand: Hand, rng: np.random.Generator) -> Iterator[int]:
    """Play ``hand`` to the end with uniformly random legal actions, yielding each action after it
    is applied (so the caller can inspect every intermediate state)."""
    while not hand.over:
        yield random_move(hand, rng)


def new_hands(config: GameConfig, rng: np.random.Generator, count: int) -> Iterator[Hand]:
    """The first hands of ``count`` new matches of ``config``, each dealt from ``rng`` when it is asked for (so the
    caller may play it with the same ``rng`` before the next one is dealt)."""
    for _ in range(count):
        yield Match(config, rng).hand


def random_match_states(match: Match, rng: np.random.Generator) -> Iterator[Hand]:
    """Play ``match`` to its end with uniformly random legal actions, yielding its hand in every state: before
    each action, and once each hand is over (before :meth:`Match.finish_hand` scores it)."""
    while not match.over:
        hand = match.hand
        yield hand
        for _ in random_hand_steps(hand, rng):
            yield hand
        match.finish_hand()


def through_json(data: Any) -> Any:
    """``data`` written as JSON and read back (what a saved state holds once it is on disk)."""
    return json.loads(json.dumps(data))


GOBOOM = [sys.executable, "-m", "goboom_env.cli"]
"""The ``goboom`` command of this interpreter."""


def goboom(*args: str, stdin: str = "", timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``goboom ARGS`` in a subprocess from the checkout, ``stdin`` as its input; its exit code and output."""
    return subprocess.run([*GOBOOM, *args], cwd=ROOT, capture_output=True, text=True, input=stdin, timeout=timeout)


def goboom_evaluate(out: Path, *args: str) -> subprocess.CompletedProcess:
    """Run ``goboom evaluate ARGS --out OUT --no-progress`` (:func:`goboom`) and check that it succeeded (a failure
    shows its standard error); its output."""
    done = goboom("evaluate", *args, "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    return done


EARLIER_RUN = "an earlier run's file"
"""What :func:`earlier_run` writes in its folder's file."""


def earlier_run(out: Path, file: str = "report.md") -> Path:
    """``out`` made the folder of an earlier goboom run, which ``--force`` may replace: goboom's marker in it and
    ``file``, which reads :data:`EARLIER_RUN`; ``out``."""
    out.mkdir()
    mark(out)
    (out / file).write_text(EARLIER_RUN)
    return out


def python_output(code: str, timeout: float = 120) -> str:
    """Run ``python -c CODE`` in a fresh interpreter from the checkout; its standard output, stripped (a failure
    shows its standard error)."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def ctrl_c_once_started(args: Sequence[str], started: Path | Callable[[], bool], cwd: Path, timeout: float = 120.0,
                        settle: float = 0.0) -> tuple[int, str]:
    """Run ``python -m goboom_env.cli ARGS`` in its own process group, send SIGINT to the whole group (as Ctrl-C
    in a terminal) ``settle`` seconds after the file ``started`` exists (or the call ``started()`` is true), and
    return the exit code and stderr."""
    ready = started.exists if isinstance(started, Path) else started
    proc = subprocess.Popen([*GOBOOM, *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while not ready():
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, f"{started if isinstance(started, Path) else 'the start'} did not come"
            time.sleep(0.1)
        time.sleep(settle)
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, stderr


def tiny_train_args(**changes: Any) -> Any:
    """The ``TrainArgs`` of a ``goboom train`` run small enough for a test (256 steps, 2 environments, a small
    network, random opponents, no progress bar); ``changes`` replace fields."""
    import dataclasses

    from goboom_env.training.settings import TrainArgs

    args = TrainArgs(timesteps=256, num_envs=2, num_steps=64, minibatch_size=64, n_epochs=1, net_arch=[32, 32],
                     opponents=["random=1"], progress=False)
    return dataclasses.replace(args, **changes)


def save_untrained_model(args: Any, config: GameConfig, path: Path, timesteps: int = 0) -> Path:
    """A MaskablePPO model freshly built for ``args`` and ``config`` (untrained: cheap, and as complete a file
    as a trained one), saved at ``path`` with its metadata."""
    from goboom_env.training.artifacts.model_files import model_metadata
    from goboom_env.training.sb3.model import build_model, make_vec_env, save_model

    vec = make_vec_env(args, config)
    try:
        return save_model(build_model(args, vec, None), path, model_metadata(config, args, timesteps))
    finally:
        vec.close()


class LowestLegal(Agent):
    """Plays the lowest legal action (action 53, draw, is the highest): a deterministic opponent, and the smallest
    complete agent (the Agent base class supplies ``needs_view`` and ``reseed``)."""

    name = "lowest"

    def act(self, observation: dict[str, np.ndarray], view: Any = None) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


class AECStep(NamedTuple):
    """What ``env.last()`` shows the agent about to act, as :func:`aec_steps` yields it."""

    agent: str
    observation: dict[str, np.ndarray]
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]

    @property
    def done(self) -> bool:
        """The agent's episode is over: its next step must be ``None``."""
        return self.terminated or self.truncated


def random_legal(rng: np.random.Generator) -> Callable[[dict[str, np.ndarray]], int]:
    """A chooser for :func:`aec_steps`: a uniformly random legal action of the observation's action mask."""
    return lambda observation: int(rng.choice(np.flatnonzero(observation["action_mask"])))


def aec_steps(env: Any, choose: Callable[[dict[str, np.ndarray]], int], max_iter: int = 2**63) -> Iterator[AECStep]:
    """Drive a reset AEC env to its end (or ``max_iter`` steps): yield what ``last()`` shows each agent, then
    step with ``choose(observation)``, or ``None`` once that agent is done. The one AEC loop of the tests;
    the caller inspects each step (and the env) between the yield and the step."""
    for agent in env.agent_iter(max_iter=max_iter):
        step = AECStep(agent, *env.last())
        yield step
        env.step(None if step.done else choose(step.observation))


def play_aec(env: Any, choose: Callable[[dict[str, np.ndarray]], int], max_iter: int = 2**63) -> dict[str, float]:
    """:func:`aec_steps` to the end; each agent's total reward."""
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for step in aec_steps(env, choose, max_iter):
        totals[step.agent] += step.reward
    return totals


def random_match_play(config: GameConfig, seed: int, max_iter: int) -> tuple[Any, Iterator[AECStep]]:
    """A ``goboom_env.env`` of a whole match of ``config``, reset with ``seed``, and the :func:`aec_steps` of random
    legal play chosen by a generator of the same seed, up to ``max_iter``: lazy, so the caller inspects the env
    before and between the steps."""
    env = goboom_env.env(config=config, episode="match")
    env.reset(seed=seed)
    return env, aec_steps(env, random_legal(np.random.default_rng(seed)), max_iter)


def random_moves(env: Any, seed: int, max_iter: int = 2**63) -> np.random.Generator:
    """Reset ``env`` with ``seed`` and make random legal moves chosen by a generator of the same seed, up to
    ``max_iter`` (fewer where the episode ends first); that generator, for the caller's further draws."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    play_aec(env, random_legal(rng), max_iter)
    return rng


class Payload:
    """A pickled object that creates ``marker`` when it is unpickled: a harmless stand-in for the code a crafted
    file would run. A loader is safe when, after refusing such a file, ``marker`` does not exist."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str, ...]]:
        return os.system, (f"touch '{self.marker}'",)


@contextlib.contextmanager
def benchmark_module(name: str) -> Iterator[Any]:
    """``benchmarks/NAME.py`` imported as a module (it is a script, not part of the package), in ``sys.modules``
    while the block runs (its dataclasses look their module up there), with ``benchmarks/`` on the module path, as
    when the script runs (the scripts import ``_timing`` from there)."""
    import importlib.util

    folder = str(ROOT / "benchmarks")
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(folder)
        del sys.modules[spec.name]


def benchmark_fixture(name: str) -> Callable[[], Iterator[Any]]:
    """A module-scoped fixture: :func:`benchmark_module` of ``benchmarks/NAME.py`` while the module's tests run."""

    @pytest.fixture(scope="module")
    def fixture() -> Iterator[Any]:
        with benchmark_module(name) as module:
            yield module

    return fixture
