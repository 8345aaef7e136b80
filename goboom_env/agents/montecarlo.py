"""The search baseline ``mc:budget=N``: determinized (perfect-information) Monte-Carlo sampling, ``budget`` rollouts
a decision spread evenly over the legal actions, each on a deal consistent with the seat's
:class:`~goboom_env.player_view.PlayerView` (R4.1); the action with the best mean :func:`seat_results` wins.
"""

from __future__ import annotations

import random

from goboom_env.agents.policy import Observation, SearchAgent
from goboom_env.agents.rollout import Move, play_out, random_move
from goboom_env.cards import boom_mask, faces_in
from goboom_env.config import GameConfig, check_choice, check_int
from goboom_env.engine import DRAW_BIT, Hand
from goboom_env.player_view import PlayerView

MAX_BUDGET = 1_000_000
POINTS_WEIGHT = 1e-3
"""Per point held at the end of a rollout, subtracted from a seat's result (so that lost hands still rank moves)."""


class MonteCarloAgent(SearchAgent):
    """Determinized Monte-Carlo search; ``budget`` = rollouts per decision, each on a fresh sample."""

    def __init__(self, config: GameConfig, seed: int | None = None, budget: int = 64, rollout: str = "greedy") -> None:
        self.budget = check_int("budget", budget, 1, MAX_BUDGET)  # rollouts per move
        check_choice("rollout", rollout, tuple(PLAYOUTS))
        self.playout = PLAYOUTS[rollout]
        self.name = f"mc:budget={self.budget}" + ("" if rollout == "greedy" else f",rollout={rollout}")
        super().__init__(config, seed)

    def choose(self, observation: Observation, view: PlayerView, legal: list[int]) -> int:
        """The legal action with the best mean rollout result."""
        totals = dict.fromkeys(legal, 0.0)
        runs = dict.fromkeys(legal, 0)
        for i in range(max(self.budget, len(legal))):  # each rollout: a fresh deal, the action, then the playout
            action = legal[i % len(legal)]
            hand = view.sample_hand(self.rng)
            hand.apply(action)
            play_out(hand, self.playout, self.py_rng)
            totals[action] += seat_results(hand)[view.seat]
            runs[action] += 1
        return int(max(legal, key=lambda a: totals[a] / runs[a]))


def seat_results(hand: Hand) -> list[float]:
    """Each seat's result of a finished hand: its win share (1/k among k winners) minus a little per point held."""
    winners = hand.winners()
    share = 1.0 / len(winners)
    points = hand.hand_points()
    return [(share if seat in winners else 0.0) - POINTS_WEIGHT * points[seat] for seat in range(hand.n)]


def greedy_move(hand: Hand, seen: int, rng: random.Random) -> int:
    """A sensible beginner: a random matching card, a boom card (R2.6, R2.8) only instead of drawing, and a draw
    only when nothing else is legal (in classic, the same as a random move: draws are forced there, R1.5)."""
    legal = hand.legal_mask()
    boom = boom_mask(hand.config.aces_mode)
    choices = faces_in(legal & ~boom & ~DRAW_BIT or legal & boom or legal)
    return choices[int(rng.random() * len(choices))] if len(choices) > 1 else choices[0]


PLAYOUTS: dict[str, Move] = {"greedy": greedy_move, "random": random_move}
"""Rollout policies by name (``mc:budget=N,rollout=greedy``)."""
