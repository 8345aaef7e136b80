"""The search baseline ``mc:budget=N``: determinized (perfect-information) Monte-Carlo sampling.

For each decision the agent spends ``budget`` rollouts, spread evenly over its legal actions:
each rollout draws a :meth:`PlayerView.sample_hand` determinization (the hidden cards dealt at
random consistently with what the seat knows, R4.1), applies the candidate action and plays the
hand to its end with a fast rollout policy for every seat: ``greedy`` (default: random matching
cards, boom cards only instead of drawing) or ``random`` (uniform legal moves). The action with
the best mean result wins; a result is the seat's share of the hand win (1/k among k winners,
R2.10 blocked rounds) minus 0.001 per point left in its hand, so that lost rollouts still rank
the moves.

The agent receives only the observation and its :class:`~goboom_env.player_view.PlayerView`; it never
sees the engine's state, so it cannot peek at hidden cards (tested by permuting them).
It optimises the current hand, also in ``episode="match"`` games.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from goboom_env.cards import boom_mask, faces_in
from goboom_env.config import GameConfig, check_int
from goboom_env.engine import DRAW_BIT, Hand
from goboom_env.player_view import PlayerView

MAX_BUDGET = 1_000_000
POINTS_WEIGHT = 1e-3
"""Per point held at the end of a rollout, subtracted from its result (ranks lost rollouts)."""


def moves_to_search(name: str, observation: dict[str, np.ndarray], view: PlayerView | None) -> list[int]:
    """The legal actions of a search agent's turn (a forced move needs no search, and no view); ValueError
    when the mask is empty, or when there is a choice to search but no ``view``."""
    legal = [int(a) for a in np.flatnonzero(observation["action_mask"])]
    if not legal:
        raise ValueError(f"{name}: the action_mask has no legal action (is this seat to move?)")
    if len(legal) > 1 and view is None:
        raise ValueError(f"{name} needs the seat's PlayerView (needs_view=True): pass act(obs, view)")
    return legal


class MonteCarloAgent:
    """Determinized Monte-Carlo search; ``budget`` = rollouts per decision, each on a fresh sample."""

    needs_view = True

    def __init__(self, config: GameConfig, seed: int | None = None, budget: int = 64,
                 rollout: str = "greedy") -> None:
        budget = check_int("budget", budget, 1, MAX_BUDGET)  # rollouts per move
        if rollout not in PLAYOUTS:
            raise ValueError(f"rollout must be one of {sorted(PLAYOUTS)}, got {rollout!r}")
        self.config = config
        self.budget = budget
        self.playout = PLAYOUTS[rollout]
        self.name = f"mc:budget={budget}" + ("" if rollout == "greedy" else f",rollout={rollout}")
        self.reseed(seed)

    def reseed(self, seed: int | None) -> None:
        """Restart the sampling generators (runners call this before each game)."""
        self.rng = np.random.default_rng(seed)
        self._py = random.Random(int(self.rng.integers(2**63)))

    def act(self, observation: dict[str, np.ndarray], view: PlayerView | None = None) -> int:
        """The legal action with the best mean rollout result."""
        legal = moves_to_search(self.name, observation, view)
        if len(legal) == 1:
            return legal[0]
        totals = dict.fromkeys(legal, 0.0)
        runs = dict.fromkeys(legal, 0)
        for i in range(max(self.budget, len(legal))):
            action = legal[i % len(legal)]
            totals[action] += self._rollout(view, action)
            runs[action] += 1
        return int(max(legal, key=lambda a: totals[a] / runs[a]))

    def _rollout(self, view: PlayerView, action: int) -> float:
        """One determinization of the hidden cards, ``action``, then the rollout policy to the end."""
        hand = view.sample_hand(self.rng)
        hand.apply(action)
        self.playout(hand, self._py)
        winners = hand.winners()
        share = 1.0 / len(winners) if view.seat in winners else 0.0
        return share - POINTS_WEIGHT * hand.hand_points()[view.seat]


def random_playout(hand: Hand, rng: random.Random) -> None:
    """Play ``hand`` to its end with uniformly random legal actions."""
    while not hand.over:
        legal = faces_in(hand.legal_mask())
        hand.apply(legal[int(rng.random() * len(legal))] if len(legal) > 1 else legal[0])


def greedy_playout(hand: Hand, rng: random.Random) -> None:
    """Play ``hand`` to its end like a sensible beginner: a random matching card when there is one,
    a boom card (R2.6, R2.8) only instead of drawing, and draw only when nothing else is legal.
    In classic Go Boom this is the same as :func:`random_playout` (draws are forced there, R1.5)."""
    boom = boom_mask(hand.config.aces_mode)
    while not hand.over:
        legal = hand.legal_mask()
        plain = legal & ~boom & ~DRAW_BIT
        pick = plain or (legal & boom) or legal
        choices = faces_in(pick)
        hand.apply(choices[int(rng.random() * len(choices))] if len(choices) > 1 else choices[0])


PLAYOUTS: dict[str, Callable[[Hand, random.Random], None]] = {"random": random_playout, "greedy": greedy_playout}
"""Rollout policies by name (``mc:budget=N,rollout=greedy``)."""
