"""The learner's seats in a batch of games: the one base of every view that plays some seats as the learner.

Go Boom is turn-based: each engine call (or AEC step) moves one seat, and a seat that is not to move still wins
or loses when another player goes out (R1.9, R2.9). A view that trains some seats therefore keeps, per game, which
seats the learner plays and what each seat has received since its last move. :class:`LearnerSeats` holds that
once, with the two other rules every such view shares:

* the illegal-action rule (R3.2): an action outside 0..53 or not in the mask is illegal (:meth:`~LearnerSeats.illegal`);
  a view either refuses it (:meth:`~LearnerSeats.refuse_illegal` raises ``IllegalActionError``) or ends the learner's
  episode with :data:`ILLEGAL_REWARD` (PettingZoo's ``TerminateIllegalWrapper``);
* autoreset: when a game ends, :meth:`~LearnerSeats.redraw` draws its learner seats for the next episode and
  starts its rewards again.

The views are ``goboom train``'s Gymnasium env (one game, one learner seat), the batched single-agent env
(``goboom_env.training.vector_env``, one learner seat per game; also the SB3 ``VecEnv`` of the batched engine), the
RLlib env (one game, every seat a learner seat) and the fast trainer's seat plan (a learner seat per game, or every
seat). Numpy only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from goboom_env.cards import NUM_ACTIONS
from goboom_env.engine import IllegalActionError

ILLEGAL_REWARD = -1.0
"""What the learner receives for an illegal action in a view that ends the episode for it."""


class LearnerSeats:
    """Which seats of ``num_games`` games the learner plays, and what each seat received since its last move.

    ``learner[b, s]``: the learner plays seat ``s`` of game ``b``; ``seat[b]``: its (first) seat there;
    ``reward[b, s]``: what seat ``s`` received since its last move. ``width`` is the seats per game (the widest
    table); ``table[b]``, when given, is game ``b``'s own number of seats. ``rng`` draws the learner seats. Until
    :meth:`assign` or :meth:`redraw` gives a game its learner seat, every seat of it is the learner's."""

    def __init__(
        self, num_games: int, width: int, rng: np.random.Generator | None = None, *, table: np.ndarray | None = None
    ) -> None:
        self.width = width
        self.table = np.full(num_games, width, np.int64) if table is None else np.asarray(table, np.int64)
        self.rng = np.random.default_rng() if rng is None else rng
        self.learner = np.ones((num_games, width), bool)
        self.seat = np.zeros(num_games, np.int64)
        self.reward = np.zeros((num_games, width), np.float64)

    @property
    def num_games(self) -> int:
        """The number of games (rows)."""
        return len(self.seat)

    # -- who plays -------------------------------------------------------------------------------------

    def assign(self, games: np.ndarray, seats: np.ndarray) -> None:
        """The learner plays seat ``seats[i]`` (only that one) of game ``games[i]``, from a new episode on: the
        games' rewards since the last move start again."""
        self.learner[games] = False
        self.learner[games, seats] = True
        self.seat[games] = seats
        self.reward[games] = 0.0

    def redraw(self, games: np.ndarray) -> np.ndarray:
        """Autoreset: a learner seat drawn uniformly among each marked game's seats (``games`` is a ``[B]`` bool
        mask); returns the indices of those games."""
        idx = np.flatnonzero(games)
        if len(idx):
            self.assign(idx, self.rng.integers(self.table[idx]))
        return idx

    # -- what each seat received since its last move ----------------------------------------------------

    def credit(self, rewards: np.ndarray, games: np.ndarray | None = None) -> None:
        """Add what each seat received from one engine call (``[B, width]``; only the marked ``games`` rows when
        given: the games that moved)."""
        if games is None:
            self.reward += rewards
        else:
            self.reward[games] += rewards[games]

    def take(self, games: Any, seats: Any = None) -> np.ndarray:
        """What seat ``seats[i]`` of game ``games[i]`` received since its last move (every seat of ``games``
        without ``seats``), counted again from zero: call it when the seat moves or its episode ends."""
        index = games if seats is None else (games, seats)
        got = self.reward[index].copy()
        self.reward[index] = 0.0
        return got

    def clear(self) -> None:
        """A new episode in every game, the learner seats kept: every seat's count starts again."""
        self.reward[:] = 0.0

    # -- the illegal-action rule ------------------------------------------------------------------------

    @staticmethod
    def illegal(actions: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``[B]`` bool: which of ``actions`` (one per game) are illegal under the legal ``masks`` ``[B, 54]``:
        outside 0..53 or masked out (R3.2)."""
        actions = np.asarray(actions, np.int64)
        inside = (actions >= 0) & (actions < NUM_ACTIONS)
        legal = np.zeros(len(actions), bool)
        legal[inside] = np.asarray(masks, bool)[np.flatnonzero(inside), actions[inside]]
        return ~legal

    def refuse_illegal(self, actions: np.ndarray, masks: np.ndarray, seats: np.ndarray) -> None:
        """Raise ``IllegalActionError`` naming the first game whose action is illegal, the seat that chose it
        (``seats[b]``), the action and the legal ones."""
        bad = np.flatnonzero(self.illegal(actions, masks))
        if len(bad):
            b = int(bad[0])
            where = f"game {b}, seat {int(seats[b])}" if self.num_games > 1 else f"seat {int(seats[b])}"
            raise IllegalActionError(
                f"{where}: action {int(np.asarray(actions)[b])} is not legal; legal actions: "
                f"{np.flatnonzero(masks[b]).tolist()} (R3.2)"
            )
