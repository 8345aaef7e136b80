"""The global state of a game as one flat ``float32`` vector, hidden cards included: what a centralised critic
(PettingZoo's ``state()``) and the privileged critic (:mod:`goboom_env.training.privileged`) read.

Seen from ``seat`` it is that seat's observation followed by the blocks only the engine sees, in the same
relative seat order; ``raw_env.state()`` is ``encode(match, 0)``, where relative seats are absolute seats.

The blocks after the observation (``hands``: the other seats' hands, ``stock``, ``stock_top``, ``phase``) are
tabled on the Environment page (docs/environment.md, "State").

The stock is encoded by its contents and top card, not its whole order (``deck size x 53`` entries); the exact
order is in ``raw_env.state_dict()``. For ``n = 4`` the state has ``517 + 3 x 53 + 53 + 53 + 4 = 786`` entries.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from goboom_env.cards import NUM_FACES
from goboom_env.config import GameConfig
from goboom_env.engine import Hand, Match
from goboom_env.hand_state import Phase
from goboom_env.observation import ObservationEncoder, block_slices, encoder_for, face_copies, observation_size

NUM_PHASES = len(Phase)


def state_layout(num_players: int) -> dict[str, slice]:
    """The named slices of the hidden blocks, as indices into the whole state vector."""
    n, f = num_players, NUM_FACES
    sizes = [("hands", (n - 1) * f), ("stock", f), ("stock_top", f), ("phase", NUM_PHASES)]
    return block_slices(sizes, observation_size(n))


def state_size(num_players: int) -> int:
    """The observation's length plus ``(n + 2) x 53 + 4``."""
    return state_layout(num_players)["phase"].stop


class StateEncoder:
    """Encodes the full state of a hand from one seat's point of view (seat 0: absolute seats)."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.n = config.num_players
        self.observation: ObservationEncoder = encoder_for(config)
        self.slices = state_layout(self.n)
        self.size = state_size(self.n)
        self.hidden_size = self.size - self.observation.size
        self._scale = (1.0 / face_copies(config)).astype(np.float32)  # the scale of the observation's hand block
        self._hands_scale = np.tile(self._scale, self.n - 1)  # once: tiling on every call was 40% of hidden()
        self.low = np.concatenate([self.observation.low, np.zeros(self.hidden_size, np.float32)])
        self.high = np.concatenate([self.observation.high, np.ones(self.hidden_size, np.float32)])

    def encode(self, state: Match | Hand, seat: int = 0) -> np.ndarray:
        """The state vector of ``state`` (a :class:`Match` fills in scores and progress) seen from ``seat``."""
        match = state if isinstance(state, Match) else None
        hand = match.hand if match is not None else state
        hidden = self.hidden(hand, seat)  # first: it checks the seat
        return np.concatenate([self.observation.encode(hand, seat, match), hidden])

    def hidden(self, hand: Hand, seat: int = 0) -> np.ndarray:
        """Only the blocks after the observation, for a caller that holds the observation already."""
        if not 0 <= seat < self.n:
            raise ValueError(f"seat must be in 0..{self.n - 1}, got {seat!r}")
        n, f = self.n, NUM_FACES
        out = np.zeros(self.hidden_size, np.float32)
        counts = np.frombuffer(b"".join(hand.counts[(seat + rel) % n] for rel in range(1, n)), np.uint8)
        out[:(n - 1) * f] = counts * self._hands_scale
        stock = (n - 1) * f
        if hand.stock:
            out[stock:stock + f] = np.bincount(hand.stock, minlength=f) * self._scale
            out[stock + f + hand.stock[-1]] = 1.0
        out[stock + 2 * f + int(hand.phase)] = 1.0
        return out

    def describe(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """The named blocks of a state vector (views): the observation's and the hidden ones."""
        return self.observation.describe(vector) | {name: vector[sl] for name, sl in self.slices.items()}


@lru_cache(maxsize=64)
def state_encoder_for(config: GameConfig) -> StateEncoder:
    """The (cached) state encoder of a configuration."""
    return StateEncoder(config)


__all__ = ["NUM_PHASES", "StateEncoder", "state_encoder_for", "state_layout", "state_size"]
