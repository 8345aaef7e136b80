"""The search baseline ``ismcts:iters=N``: single-observer information-set Monte-Carlo tree search (SO-ISMCTS,
Cowling, Powley and Whitehouse, IEEE TCIAIG 2012) over deals consistent with the public events
(:mod:`goboom_env.agents.determinize`), rolled out with the variant's best heuristic
(:mod:`goboom_env.agents.rollout`). docs/evaluation.md describes the algorithm and its options.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

import numpy as np

from goboom_env.agents.determinize import Determinizer
from goboom_env.agents.montecarlo import seat_results
from goboom_env.agents.policy import Observation, SearchAgent
from goboom_env.agents.rollout import HEURISTIC_MOVES, Move, play_out, random_move, seen_mask
from goboom_env.cards import faces_in
from goboom_env.config import GameConfig, check_choice, check_int, check_number
from goboom_env.engine import Hand
from goboom_env.hand_state import Phase
from goboom_env.player_view import PlayerView

MAX_ITERS = 10_000_000
DEFAULT_ITERS = 200
ROLLOUTS = ("heuristic", "random")
OPTIONS = ("iters", "ms", "c", "rollout", "infer")
MOVER_SHIFT = 6
ACTION_BITS = (1 << MOVER_SHIFT) - 1  # a child's key is ``seat << MOVER_SHIFT | action``


class Node:
    """A move in the tree: who made it, and the statistics of the iterations through it."""

    __slots__ = ("available", "children", "seat", "total", "visits")

    def __init__(self, seat: int) -> None:
        self.seat = seat  # who chose this move (whose result it accumulates)
        self.visits = 0
        self.available = 0  # iterations in which this move was legal when its parent was reached
        self.total = 0.0
        # keyed by mover and action: in classic, who is to move after the same public history depends on the deal
        self.children: dict[int, Node] = {}


class ISMCTSAgent(SearchAgent):
    """Single-observer information-set MCTS with heuristic rollouts (see the module docstring)."""

    def __init__(self, config: GameConfig, seed: int | None = None, iters: int | None = None,
                 ms: float | None = None, c: float = 0.7, rollout: str = "heuristic", infer: bool = True) -> None:
        if iters is not None:
            iters = check_int("iters", iters, 1, MAX_ITERS)
        if ms is not None:
            ms = check_number("ms", ms)
        c = check_number("c", c, allow_zero=True)
        check_choice("rollout", rollout, ROLLOUTS)
        if not isinstance(infer, bool):
            raise ValueError(f"infer must be true or false, got {infer!r}")
        self.iters = iters if iters is not None else (MAX_ITERS if ms is not None else DEFAULT_ITERS)
        self.ms = ms
        self.replayable = ms is None  # with a time limit a game cannot be played again exactly from its seed
        self.c = c
        self.infer = infer
        self.move: Move = HEURISTIC_MOVES[config.variant] if rollout == "heuristic" else random_move
        options = [f"iters={self.iters}"] if iters is not None or ms is None else []
        options += [f"ms={ms:g}"] if ms is not None else []
        options += [f"c={c:g}"] if c != 0.7 else []
        options += [f"rollout={rollout}"] if rollout != "heuristic" else []
        options += ["infer=no"] if not infer else []
        self.name = "ismcts:" + ",".join(options)
        super().__init__(config, seed)

    def choose(self, observation: Observation, view: PlayerView, legal: list[int]) -> int:
        """The most visited move of the root after the search."""
        root = self.search(view)
        best = max(root.children.items(), key=lambda item: (item[1].visits, item[1].total))[0]
        return best & ACTION_BITS

    def search(self, view: PlayerView) -> Node:
        """Run the iterations from ``view`` and return the root of the tree."""
        determinizer = Determinizer(view, self.infer)
        root = Node(-1)
        rng = self.py_rng
        deadline = None if self.ms is None else time.perf_counter() + self.ms / 1000.0
        for i in range(self.iters):
            if deadline is not None and i and time.perf_counter() >= deadline:
                break
            self._iterate(root, determinizer.sample(rng), rng)
        return root

    def _root_bias(self, action: int, child: Node) -> float:
        """A bonus added to a root child's UCB score (none here; a guided search adds its prior's)."""
        return 0.0

    def _iterate(self, root: Node, hand: Hand, rng: random.Random) -> None:
        """One determinized descent, expansion, rollout and back-up."""
        path = []
        node = root
        c = self.c
        while hand.phase != Phase.OVER:
            children = node.children
            mover = hand.current << MOVER_SHIFT
            untried = []
            best, best_score = None, -math.inf
            for action in faces_in(hand.legal_mask()):
                child = children.get(mover | action)
                if child is None:
                    untried.append(action)
                    continue
                child.available += 1
                if not untried:
                    score = child.total / child.visits + c * math.sqrt(math.log(child.available) / child.visits)
                    if node is root:
                        score += self._root_bias(action, child)
                    if score > best_score:
                        best, best_score = mover | action, score
            if untried:
                action = untried[0] if len(untried) == 1 else self._expansion(hand, untried, rng, node is root)
                child = Node(hand.current)
                child.available = 1
                children[mover | action] = child
                hand.apply(action)
                path.append(child)
                break
            node = children[best]
            hand.apply(best & ACTION_BITS)
            path.append(node)
        if hand.phase != Phase.OVER:
            play_out(hand, self.move, rng)
        results = seat_results(hand)
        for node in path:
            node.visits += 1
            node.total += results[node.seat]

    def _expansion(self, hand: Hand, untried: list[int], rng: random.Random, at_root: bool) -> int:
        """The untried move to add: the rollout policy's own choice while it is untried, else a random one."""
        preferred = self.move(hand, seen_mask(hand), rng)
        if preferred in untried:
            return preferred
        return untried[int(rng.random() * len(untried))]


Guide = Callable[[Observation, PlayerView], np.ndarray]
"""A trained model's prior for one decision, from the searcher's observation and view: ``[54]``, the policy's
probability of each of the searcher's moves (0 on the illegal ones)."""


class GuidedISMCTSAgent(ISMCTSAgent):
    """ISMCTS guided by a trained model's policy (:data:`Guide`): the root's children are expanded in the order of
    its probabilities, and a root child's UCB score gains ``prior x P(move) / (1 + visits)`` (progressive bias).
    ``name`` names the model (``ppo-ismcts:PATH``); the other options are :class:`ISMCTSAgent`'s."""

    def __init__(self, config: GameConfig, guide: Guide, name: str, seed: int | None = None, prior: float = 1.0,
                 **options: object) -> None:
        if unknown := sorted(set(options) - set(OPTIONS)):
            raise ValueError(f"unknown {name.partition(':')[0]} option(s) {', '.join(unknown)}; the options are "
                             f"path, {', '.join(OPTIONS)}, prior")
        super().__init__(config, seed, **options)  # type: ignore[arg-type]
        self.guide = guide
        self.prior = check_number("prior", prior, allow_zero=True)
        search = self.name.partition(":")[2]
        extra = [f"prior={self.prior:g}"] if self.prior != 1.0 else []
        self.name = ",".join([name, *filter(None, [search, *extra])])
        self._prior: np.ndarray | None = None

    def choose(self, observation: Observation, view: PlayerView, legal: list[int]) -> int:
        self._prior = self.guide(observation, view)
        try:
            return super().choose(observation, view, legal)
        finally:
            self._prior = None

    def _root_bias(self, action: int, child: Node) -> float:
        if self._prior is None:
            return 0.0
        return self.prior * float(self._prior[action]) / (1 + child.visits)

    def _expansion(self, hand: Hand, untried: list[int], rng: random.Random, at_root: bool) -> int:
        if at_root and self._prior is not None:
            prior = self._prior
            return max(untried, key=lambda a: prior[a])
        return super()._expansion(hand, untried, rng, at_root)

