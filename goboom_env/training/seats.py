"""The learner's seats in a batch of games: the one base of every view that plays some seats as the learner.

A seat not to move still wins or loses when another player goes out (R1.9, R2.9), so each view keeps per game which
seats the learner plays and what each seat received since its last move, with the illegal-action rule (R3.2) and the
autoreset draw of the next learner seats. Numpy only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import as_int
from goboom_env.engine import IllegalActionError

ILLEGAL_REWARD = -1.0
"""What the learner receives for an illegal action in a view that ends the episode for it (PettingZoo's rule)."""


class LearnerSeats:
    """``learner[b, s]``: the learner plays seat ``s`` of game ``b`` (every seat until :meth:`assign` or
    :meth:`redraw`); ``seat[b]``: its (first) seat there; ``reward[b, s]``: what seat ``s`` received since its last
    move. ``width``: the widest table; ``table[b]``: game ``b``'s own seats; ``rng`` draws the learner seats;
    ``dealt[b]``: game ``b`` has had a learner seat from :meth:`choose` (``"rotate"`` starts from a drawn one)."""

    def __init__(self, num_games: int, width: int, rng: np.random.Generator | None = None, *,
                 table: np.ndarray | None = None) -> None:
        self.width = width
        self.table = np.full(num_games, width, np.int64) if table is None else np.asarray(table, np.int64)
        self.rng = np.random.default_rng() if rng is None else rng
        self.learner = np.ones((num_games, width), bool)
        self.seat = np.zeros(num_games, np.int64)
        self.reward = np.zeros((num_games, width), np.float64)
        self.dealt = np.zeros(num_games, bool)

    def assign(self, games: np.ndarray, seats: np.ndarray) -> None:
        """The learner plays seat ``seats[i]`` (only) of game ``games[i]`` from a new episode on, rewards from zero."""
        self.learner[games] = False
        self.learner[games, seats] = True
        self.seat[games] = seats
        self.reward[games] = 0.0

    def redraw(self, games: np.ndarray) -> np.ndarray:
        """Autoreset: a learner seat drawn uniformly in each game of the ``[B]`` bool mask; returns their indices."""
        idx = np.flatnonzero(games)
        if len(idx):
            self.assign(idx, self.rng.integers(self.table[idx]))
        return idx

    def choose(self, games: np.ndarray, seat: Any, mode: str) -> None:
        """The learner's seat of a new episode in each game of the ``[B]`` bool mask: ``seat`` (a reset option) when
        given, else a drawn one (``mode`` ``"random"``, or not :attr:`dealt` yet) or the next one (``"rotate"``)."""
        idx = np.flatnonzero(games)
        if seat is not None:
            index = as_int(seat)
            if index is None or not 0 <= index < self.width:
                raise ValueError(f"seat must be in 0..{self.width - 1}, got {seat!r}")
            self.assign(idx, np.full(len(idx), index))
        else:
            draw = games & ((mode == "random") | ~self.dealt)
            self.redraw(draw)
            turn = np.flatnonzero(games & ~draw)
            self.assign(turn, (self.seat[turn] + 1) % self.width)
        self.dealt[idx] = True

    def credit(self, rewards: np.ndarray, games: np.ndarray | None = None) -> None:
        """Add what each seat received from one engine call (``[B, width]``; only the ``games`` that moved)."""
        if games is None:
            self.reward += rewards
        else:
            self.reward[games] += rewards[games]

    def take(self, games: Any, seats: Any = None) -> np.ndarray:
        """What seat ``seats[i]`` of game ``games[i]`` (every seat without ``seats``) received since its last move,
        counted from zero again: call it when the seat moves or its episode ends."""
        index = games if seats is None else (games, seats)
        got = self.reward[index].copy()
        self.reward[index] = 0.0
        return got

    def clear(self) -> None:
        """A new episode in every game, the learner seats kept."""
        self.reward[:] = 0.0

    @staticmethod
    def illegal(actions: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``[B]`` bool: the ``actions`` outside 0..53 or masked out by ``masks [B, 54]`` (R3.2)."""
        actions = np.asarray(actions, np.int64)
        inside = (actions >= 0) & (actions < NUM_ACTIONS)
        legal = np.zeros(len(actions), bool)
        legal[inside] = np.asarray(masks, bool)[np.flatnonzero(inside), actions[inside]]
        return ~legal

    def refuse_illegal(self, actions: np.ndarray, masks: np.ndarray, seats: np.ndarray) -> None:
        """``IllegalActionError`` naming the first game whose action is illegal, its seat and the legal actions."""
        bad = np.flatnonzero(self.illegal(actions, masks))
        if len(bad):
            b = int(bad[0])
            where = f"game {b}, seat {int(seats[b])}" if len(self.seat) > 1 else f"seat {int(seats[b])}"
            raise IllegalActionError(f"{where}: action {int(np.asarray(actions)[b])} is not legal; legal actions: "
                                     f"{np.flatnonzero(masks[b]).tolist()} (R3.2)")
