"""Random-legal-play throughput of Go Boom next to OpenSpiel and PettingZoo games.

Measures **decisions per second** (chance nodes and the AEC loop's dead steps are not counted,
but their time is) of:

* ``engine``: the pure rules engine, ``Hand.legal_actions()`` / pick / ``Hand.apply``, a fresh
  shuffled deal per episode;
* ``raw_env``: the AEC loop (``agent_iter`` / ``last`` / ``step``) over ``goboom_env.raw_env``,
  an observation vector and an action mask built every decision, the action drawn with
  ``rng.choice(np.flatnonzero(mask))``;
* ``env``: the same loop over the wrapped ``goboom_env.env()`` (PettingZoo's
  TerminateIllegal, AssertOutOfBounds and OrderEnforcing wrappers);

* ``VectorGame B=...``: :class:`goboom_env.vector.VectorGame` (the ``vector`` extra, numba) stepping
  B games at once with autoreset, the observation and mask of every game written every step, the
  actions drawn from the masks by ``random_legal_actions``; each step is one decision per game;

for classic 4p, classic 12p and jokers 4p, and, when the ``bench`` extra is installed, of
OpenSpiel's ``crazy_eights`` (4 players) through pyspiel, bare (``legal_actions`` / pick /
``apply_action``) and with a numpy observation (two ways) plus an action mask built every decision, and of
PettingZoo's ``connect_four_v3`` and ``texas_holdem_v4`` through ``env()`` with the same AEC loop.
Two reference rows show the ceiling of the AEC loop itself: a ``null`` env that does no game work
(constant observation and mask, 32 decisions per episode), bare and under the same three wrappers.

Timing method, identical for every row (``_timing.py``, shared with ``vector_env.py``): each measurement runs
whole episodes until ``--seconds`` have passed on the clock and divides the decisions by the elapsed time. The
default clock is this process's CPU time (``time.process_time``), so on a shared machine the time the scheduler
gives to other processes is not charged to the row; ``--clock wall`` uses ``time.perf_counter`` instead. All rows
are measured once per round, round-robin, ``--repeat`` rounds (so background load hits every row alike), and a row
reports its best round. The one-time numba compile time of VectorGame is measured in two fresh subprocesses sharing
an empty cache directory: the first compiles (no cache), the second loads the cache. Run
``python benchmarks/throughput.py --help``.

Every timed loop sits in this one script, next to the others it is compared with.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from tempfile import TemporaryDirectory

import _timing
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

import goboom_env
from goboom_env import GameConfig, Hand
from goboom_env.cards import DRAW_OR_PASS, NUM_ACTIONS, deck_faces
from goboom_env.env import start_episode
from goboom_env.observation import observation_size

Episode = Callable[[], int]
"""Plays one episode and returns the number of decisions it made."""

CONFIGS: dict[str, GameConfig] = {
    "classic 4p": GameConfig(variant="classic", num_players=4),
    "classic 12p": GameConfig(variant="classic", num_players=12),
    "jokers 4p": GameConfig(variant="jokers", num_players=4),
}
CRAZY_EIGHTS_PLAYERS = 4
VECTOR_BATCHES = (1, 64, 1024, 4096)
VECTOR_DECISIONS_PER_CALL = 4096
"""A VectorGame "episode" function makes at least this many decisions (whole batch steps)."""


@dataclass
class Row(_timing.Row):
    """One measured throughput, in decisions per second: a subject (what is stepped) on a game."""

    subject: str
    game: str
    make: Callable[[int], Episode]
    """Builds the episode function from a seed (called once, before timing)."""
    note: str = ""

    @property
    def key(self) -> str:
        """``"subject / game"``: the name ``--only`` and the ratios refer to."""
        return f"{self.subject} / {self.game}"


# -- episode functions ---------------------------------------------------------------------------


def engine_episode(config: GameConfig, seed: int) -> Episode:
    """Random legal play on the pure engine: a shuffled deal, then legal_actions / pick / apply."""
    pick = random.Random(seed).randrange
    rng = np.random.default_rng(seed)
    faces = np.array(deck_faces(config.num_decks, config.num_jokers))
    n = config.num_players

    def episode() -> int:
        hand = Hand(config, rng.permutation(faces).tolist(), pick(n))
        decisions = 0
        while not hand.over:
            legal = hand.legal_actions()
            hand.apply(legal[pick(len(legal))])
            decisions += 1
        return decisions

    return episode


def aec_episode(env: AECEnv, seed: int) -> Episode:
    """The standard AEC loop: agent_iter / last / step, action = rng.choice(np.flatnonzero(mask))."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)

    def episode() -> int:
        env.reset()
        decisions = 0
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                action = None
            else:
                action = rng.choice(np.flatnonzero(obs["action_mask"]))
                decisions += 1
            env.step(action)
        return decisions

    return episode


def vector_episode(config: GameConfig, batch: int, seed: int) -> Episode:
    """VectorGame with autoreset: enough batch steps for ``VECTOR_DECISIONS_PER_CALL`` decisions,
    actions drawn from the masks in numba; every step is one decision in each of the ``batch`` games."""
    from goboom_env.vector import VectorGame, random_legal_actions

    game = VectorGame(config, num_envs=batch, seed=seed)
    rng = np.random.default_rng(seed)
    steps = max(1, VECTOR_DECISIONS_PER_CALL // batch)
    state = {"mask": game.reset()[1]}

    def episode() -> int:
        mask = state["mask"]
        for _ in range(steps):
            mask = game.step(random_legal_actions(mask, rng))[1]
        state["mask"] = mask
        return steps * batch

    return episode


_COMPILE_SNIPPET = """
import time
start, cpu = time.perf_counter(), time.process_time()
import numpy as np
from goboom_env import GameConfig
from goboom_env.vector import VectorGame, random_legal_actions
game = VectorGame(GameConfig(), num_envs=2)
_, mask, _ = game.reset()
game.step(random_legal_actions(mask, np.random.default_rng(0)))
print(time.perf_counter() - start, time.process_time() - cpu)
"""


def vector_compile_times() -> dict[str, dict[str, float]]:
    """Wall and CPU seconds of importing VectorGame and making its first reset and step, in a fresh
    interpreter: once with an empty numba cache (compiles and fills it), once loading that cache."""
    out = {}
    with TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        for name in ("no cache", "cached"):
            done = subprocess.run([sys.executable, "-c", _COMPILE_SNIPPET], env=env, check=True,
                                  capture_output=True, text=True)
            wall, cpu = map(float, done.stdout.split())
            out[name] = {"wall_s": wall, "cpu_s": cpu}
    return out


CRAZY_EIGHTS_OBSERVE = ("bare", "observer", "list")


def crazy_eights_episode(seed: int, observe: str) -> Episode:
    """OpenSpiel crazy_eights via pyspiel: chance outcomes sampled, decisions by random legal play.

    ``observe="bare"``: ``legal_actions`` / pick / ``apply_action``. Otherwise every decision also
    builds a fresh numpy observation and an int8 action mask of ``game.num_distinct_actions()``
    (58) entries and draws the action from the mask as the AEC loops do; the observation comes
    from OpenSpiel's Observer (``"observer"``: written in C++ into a buffer, then copied so it does
    not alias) or from ``state.observation_tensor()`` (``"list"``: a Python list made an array).
    """
    if observe not in CRAZY_EIGHTS_OBSERVE:
        raise ValueError(f"observe must be one of {CRAZY_EIGHTS_OBSERVE}, got {observe!r}")
    import pyspiel
    from open_spiel.python.observation import make_observation

    game = pyspiel.load_game("crazy_eights", {"players": CRAZY_EIGHTS_PLAYERS})
    width = game.num_distinct_actions()
    observer = make_observation(game)
    pick = random.Random(seed).randrange
    rng = np.random.default_rng(seed)

    def episode() -> int:
        state = game.new_initial_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()  # uniform in crazy_eights
                state.apply_action(outcomes[pick(len(outcomes))][0])
                continue
            legal = state.legal_actions()
            if observe != "bare":
                if observe == "observer":
                    observer.set_from(state, state.current_player())
                    _obs = observer.tensor.copy()
                else:
                    _obs = np.array(state.observation_tensor(state.current_player()), np.float32)
                mask = np.zeros(width, np.int8)
                mask[legal] = 1
                action = rng.choice(np.flatnonzero(mask))
            else:
                action = legal[pick(len(legal))]
            state.apply_action(action)
            decisions += 1
        return decisions

    return episode


class NullEnv(AECEnv):
    """An AEC env doing no game work: the loop's and the wrappers' own cost (a reference row)."""

    metadata = {"name": "null_v0", "render_modes": [], "is_parallelizable": False}
    EPISODE_DECISIONS = 32

    def __init__(self) -> None:
        super().__init__()
        self.possible_agents = [f"player_{i}" for i in range(4)]
        mask = np.zeros(NUM_ACTIONS, np.int8)
        mask[[3, 17, DRAW_OR_PASS]] = 1
        self._obs = {"observation": np.zeros(observation_size(4), np.float32), "action_mask": mask}
        self._observation_space = spaces.Dict({
            "observation": spaces.Box(0, 1, (observation_size(4),), np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)})
        self._action_space = spaces.Discrete(NUM_ACTIONS)

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_space  # every seat's

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_space

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        start_episode(self)  # the bookkeeping of goboom_env.raw_env's reset
        self.agent_selection = self.agents[0]
        self._turn = 0

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self._obs  # shared constant arrays: fine for a cost floor, not for a real env

    def step(self, action: int | None) -> None:
        if self.terminations[self.agent_selection]:
            self._was_dead_step(action)
            return
        self._turn += 1
        if self._turn == self.EPISODE_DECISIONS:
            self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = self.agents[self._turn % 4]


def null_env(wrapped: bool) -> AECEnv:
    """:class:`NullEnv`, optionally under exactly the wrappers of ``goboom_env.env()``."""
    env = NullEnv()
    if wrapped:
        env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
        env = wrappers.AssertOutOfBoundsWrapper(env)
        env = wrappers.OrderEnforcingWrapper(env)
    return env


def pettingzoo_env(name: str) -> AECEnv:
    """A PettingZoo classic env through its ``env()`` (standard wrappers), from PettingZoo's registry."""
    import pettingzoo

    ids = {"connect_four_v3": "classic/connect_four-v3", "texas_holdem_v4": "classic/texas_holdem-v4"}
    return pettingzoo.make("aec", ids[name])


# -- the run ---------------------------------------------------------------------------------------


def build_rows(external: bool) -> tuple[list[Row], list[str]]:
    """All rows to measure, plus notes on the external baselines that could not be loaded."""
    rows: list[Row] = []
    missing: list[str] = []
    for game, config in CONFIGS.items():
        rows.append(Row("engine", game, lambda s, c=config: engine_episode(c, s), "Hand.legal_actions/apply"))
        rows.append(Row("raw_env", game, lambda s, c=config: aec_episode(goboom_env.raw_env(config=c), s),
                        "AEC loop, obs + mask"))
        rows.append(Row("env", game, lambda s, c=config: aec_episode(goboom_env.env(config=c), s),
                        "AEC loop through env() wrappers"))
    try:
        from goboom_env.vector import VectorGame  # noqa: F401 (numba installed?)

        for game, config in CONFIGS.items():
            for batch in VECTOR_BATCHES:
                rows.append(Row(f"VectorGame B={batch}", game,
                                lambda s, c=config, b=batch: vector_episode(c, b, s),
                                "numba batch, obs + mask, actions from the masks"))
    except ImportError as exc:
        missing.append(f"VectorGame unavailable ({exc})")
    rows.append(Row("null raw", "(no game work)", lambda s: aec_episode(null_env(False), s),
                    "reference: AEC loop + action draw only"))
    rows.append(Row("null env()", "(no game work)", lambda s: aec_episode(null_env(True), s),
                    "reference: + the env() wrappers"))
    if not external:
        return rows, missing
    try:
        import pyspiel  # noqa: F401

        rows.append(Row("pyspiel", "crazy_eights 4p", lambda s: crazy_eights_episode(s, "bare"), "bare"))
        rows.append(Row("pyspiel+obs", "crazy_eights 4p", lambda s: crazy_eights_episode(s, "observer"),
                        "Observer obs (319) + 58-wide mask"))
        rows.append(Row("pyspiel+obs list", "crazy_eights 4p", lambda s: crazy_eights_episode(s, "list"),
                        "observation_tensor() list + 58-wide mask"))
    except ImportError as exc:
        missing.append(f"open_spiel not installed ({exc}); pip install 'goboom-env[bench]'")
    for name in ("connect_four_v3", "texas_holdem_v4"):
        try:
            pettingzoo_env(name)
        except Exception as exc:  # missing pygame / rlcard: report, measure the rest
            missing.append(f"pettingzoo {name} unavailable ({type(exc).__name__}: {exc}); "
                           "pip install 'pettingzoo[classic]'")
            continue
        rows.append(Row("pettingzoo env", name, lambda s, m=name: aec_episode(pettingzoo_env(m), s),
                        "AEC loop through env() wrappers"))
    return rows, missing


def run(rows: list[Row], args: argparse.Namespace) -> None:
    """Measure every row ``repeat`` times, round-robin (after one untimed warm-up episode each)."""
    for i, row in enumerate(rows):
        row.call = row.make(args.seed + i)
        row.call()
    _timing.measure_rounds(rows, args)


RATIOS = [
    ("engine / classic 4p", "pyspiel / crazy_eights 4p", 0.5),
    ("raw_env / classic 4p", "pyspiel+obs / crazy_eights 4p", 1.0),
    ("env / classic 4p", "pettingzoo env / connect_four_v3", 2.0),
    ("raw_env / classic 4p", "pyspiel+obs list / crazy_eights 4p", None),
    ("null raw / (no game work)", "pyspiel+obs / crazy_eights 4p", None),
    ("null env() / (no game work)", "pettingzoo env / connect_four_v3", None),
    ("VectorGame B=4096 / classic 4p", "raw_env / classic 4p", 25.0),
    ("VectorGame B=4096 / jokers 4p", "raw_env / jokers 4p", 25.0),
    ("VectorGame B=4096 / classic 12p", "raw_env / classic 12p", None),
]
"""The targets (numerator row, denominator row, required ratio), then context ratios
(no target): against the slower list observation, and the no-work ceilings of the two loops."""

ABSOLUTE = [
    ("VectorGame B=4096 / classic 4p", 2_000_000),
    ("VectorGame B=4096 / jokers 4p", 2_000_000),
    ("VectorGame B=4096 / classic 12p", 1_000_000),
]
"""Rows with a decisions/s target of their own."""


def ratios(rows: list[Row]) -> list[dict]:
    """The target ratios that both rows of which were measured, with pass/fail."""
    by_key = {r.key: r.best for r in rows}
    out = []
    for num, den, target in RATIOS:
        if num in by_key and den in by_key:
            value = by_key[num] / by_key[den]
            out.append({"numerator": num, "denominator": den, "ratio": value, "target": target,
                        "met": None if target is None else value >= target})
    return out


def absolute_targets(rows: list[Row]) -> list[dict]:
    """The decisions/s targets of :data:`ABSOLUTE` whose rows were measured, with pass/fail."""
    by_key = {r.key: r.best for r in rows}
    return [{"row": key, "decisions_per_s": by_key[key], "target": target, "met": by_key[key] >= target}
            for key, target in ABSOLUTE if key in by_key]


def report(rows: list[Row], missing: list[str], args: argparse.Namespace) -> dict:
    """Print the table and the ratios; return the same data for ``--json``."""
    print(f"\ndecisions/s, best of {args.repeat} x {args.seconds:g} s of {args.clock} time, "
          f"{platform.python_implementation()} "
          f"{platform.python_version()}, {platform.machine()}")
    print(f"{'subject':<18}{'game':<18}{'decisions/s':>12}  {'spread (k)':>11}   note")
    for r in rows:
        spread = f"{min(r.rates) / 1e3:.0f}-{max(r.rates) / 1e3:.0f}"
        print(f"{r.subject:<18}{r.game:<18}{r.best:>12,.0f}  {spread:>11}   {r.note}")
    found = ratios(rows)
    if found:
        print("\nratios:")
        for q in found:
            if q["target"] is None:
                verdict = "(context)"
            else:
                verdict = f"(target >= {q['target']:.1f}x: {'met' if q['met'] else 'MISSED'})"
            print(f"  {q['numerator']:<27} / {q['denominator']:<35} = {q['ratio']:5.2f}x  {verdict}")
    targets = absolute_targets(rows)
    for t in targets:
        print(f"  {t['row']:<31} {t['decisions_per_s']:>12,.0f}/s  (target >= {t['target']:,}/s: "
              f"{'met' if t['met'] else 'MISSED'})")
    compile_times = getattr(args, "compile_times", None)
    if compile_times:
        print("\nVectorGame one-time numba compile (import + first reset and step, fresh interpreter):")
        for name, t in compile_times.items():
            print(f"  {name:<9} {t['wall_s']:6.1f} s wall  {t['cpu_s']:6.1f} s cpu")
    for line in missing:
        print(f"skipped: {line}")
    return {
        "seconds": args.seconds, "repeat": args.repeat, "clock": args.clock, "seed": args.seed,
        "python": platform.python_version(), "machine": platform.machine(),
        "rows": [{"subject": r.subject, "game": r.game, "decisions_per_s": r.best, "runs": r.rates,
                  "note": r.note} for r in rows],
        "ratios": found, "absolute_targets": targets, "compile_times": compile_times, "skipped": missing,
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _timing.add_options(parser, seconds=1.0)
    parser.add_argument("--no-external", action="store_true", help="measure Go Boom only (skip OpenSpiel/PettingZoo)")
    parser.add_argument("--only", nargs="+", metavar="TEXT",
                        help="measure only the rows whose 'subject / game' contains one of these texts")
    return _timing.parse_args(parser, argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows, missing = build_rows(not args.no_external)
    if args.only:
        rows = [r for r in rows if any(text in r.key for text in args.only)]
        if not rows:
            print(f"no row matches --only {args.only}", file=sys.stderr)
            return 2
    run(rows, args)
    if any(r.subject.startswith("VectorGame") for r in rows):
        args.compile_times = vector_compile_times()
    _timing.write_json(args.json, report(rows, missing, args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
