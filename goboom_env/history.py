"""The public-history observation: the snapshot of :mod:`goboom_env.observation` followed by what the
public events of the hand prove (RULES.md R4.1).

The snapshot cannot tell that the player to your left drew on a heart two turns ago and so held no heart then.
This layout (``observation="history"``) adds, per relative seat, the cards it played this hand, what it is
proved not to hold, and a window of the table's last moves.

The blocks and what the proofs mean are on the Environment page (docs/environment.md, "History observation");
the proofs are read from ``Hand.events`` by :class:`~goboom_env.events.VoidProofs`, so a hand restored without its
log has an empty history.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from goboom_env.cards import NUM_FACES, faces_in
from goboom_env.config import MAX_PLAYERS, GameConfig
from goboom_env.engine import Hand, Match
from goboom_env.events import DREW, MOVE_WIDTH, PASSED_MOVE, EventKind, VoidProofs, mark_move
from goboom_env.observation import (
    OBSERVATION_LAYOUTS,
    ObservationEncoder,
    block_slices,
    face_copies,
    layout,
    observation_size,
    pad_by_index,
    padded_index,
)

_PLAY, _DRAW, _PASS, _TRICK, _OUT, _UPCARD, _BURY, _BOOM, _BLOCKED = EventKind


def window_size(num_players: int) -> int:
    """The moves the window holds: two rounds of the table."""
    return 2 * num_players


def history_layout(num_players: int) -> dict[str, slice]:
    """The named slices of the history observation: the snapshot's blocks, then the history's."""
    n = num_players
    sizes = [("played", n * NUM_FACES), ("void", n * NUM_FACES), ("since", n),
             ("window", window_size(n) * (n + MOVE_WIDTH))]
    return layout(n) | block_slices(sizes, observation_size(n))


def history_size(num_players: int) -> int:
    """Length of the history observation: ``5 * 53 + 60n + 12 + 107n + 2n (n + 55)``."""
    return history_layout(num_players)["window"].stop


HISTORY_PADDED_SIZE = history_size(MAX_PLAYERS)
"""Length of a padded history observation (the layout of :data:`MAX_PLAYERS` seats)."""


@lru_cache(maxsize=MAX_PLAYERS)
def history_padded_index(num_players: int) -> np.ndarray:
    """:func:`goboom_env.observation.padded_index` of the history layout: per-seat rows and window rows (and
    each row's mover entries) fill the first of their 12 (24) slots."""
    n = int(num_players)
    base = padded_index(n)
    small, wide = history_layout(n), history_layout(MAX_PLAYERS)
    index = np.empty(history_size(n), np.int64)
    index[:len(base)] = base
    for name in ("played", "void", "since"):
        sl = small[name]
        index[sl] = np.arange(wide[name].start, wide[name].start + (sl.stop - sl.start))
    row, wide_row = n + MOVE_WIDTH, MAX_PLAYERS + MOVE_WIDTH
    local = np.concatenate([np.arange(n), MAX_PLAYERS + np.arange(MOVE_WIDTH)])
    for j in range(window_size(n)):
        start = small["window"].start + j * row
        index[start:start + row] = wide["window"].start + j * wide_row + local
    index.flags.writeable = False
    return index


def pad_history(obs: np.ndarray, num_players: int) -> np.ndarray:
    """:func:`goboom_env.observation.pad_observations` for history observations."""
    return pad_by_index(obs, history_padded_index(num_players), HISTORY_PADDED_SIZE,
                        f"history observations of {num_players} players")


class PublicHistory(VoidProofs):
    """The facts of one hand's public events, per absolute seat, brought up to date event by event."""

    __slots__ = ("_done", "moves", "played", "since", "sizes", "void", "window")

    def __init__(self, config: GameConfig) -> None:
        super().__init__(config)
        n = config.num_players
        self.window = window_size(n)
        self.played = [bytearray(NUM_FACES) for _ in range(n)]
        self.void = [0] * n  # per seat, the faces (bitmask) its latest proof says it does not hold
        self.since = [0] * n  # per seat, cards taken since that proof
        self.sizes = [config.hand_size] * n  # per seat, the hand size the events account for
        self.moves: list[tuple[int, int, int]] = []  # the last moves, oldest first: (seat, face or -1, kind bits)
        self._done = 0

    def update(self, events: list) -> None:
        """Read the events not read yet (the engine only appends to the log)."""
        start, self._done = self._done, len(events)
        for event in events[start:]:
            self.read(event)

    def on_proof(self, seat: int, void: int) -> None:
        """``seat`` holds none of ``void`` now (nor of the older proof when no unknown card came since)."""
        self.void[seat] = void | (self.void[seat] if not self.since[seat] else 0)
        self.since[seat] = 0

    def on_take(self, seat: int, count: int, void: int) -> None:
        """``seat`` took ``count`` cards, none of ``void`` when given (its whole proof then), else unknown ones."""
        self.sizes[seat] += count
        if void:
            if count:
                self.void[seat] = void
        elif self.void[seat]:
            self.since[seat] += count

    def on_play(self, seat: int, face: int, from_hand: bool) -> None:
        """``seat`` played ``face``; from its hand, a face it was void of was an unknown card."""
        self.played[seat][face] += 1
        if not from_hand:
            return
        self.sizes[seat] -= 1
        void = self.void[seat]
        if not void:
            return
        if (void >> face) & 1 and self.since[seat]:
            self.since[seat] -= 1
        if self.sizes[seat] <= self.since[seat]:  # no card of the proof is left
            self.void[seat] = self.since[seat] = 0

    def on_move(self, seat: int, face: int, drew: bool, passed: bool) -> None:
        moves = self.moves
        moves.append((seat, face, (DREW if drew else 0) | (PASSED_MOVE if passed else 0)))
        if len(moves) > self.window:
            del moves[0]


class HistoryEncoder(ObservationEncoder):
    """Builds history observations for one configuration. The facts of a few recent hands (a tournament
    interleaves tables) are kept and brought up to date from the new events only."""

    CACHE_HANDS = 16

    def __init__(self, config: GameConfig) -> None:
        super().__init__(config)
        n = self.n
        self.snapshot_size = self.size
        self.slices = history_layout(n)
        self.size = history_size(n)
        tail = self._tail = self.size - self.snapshot_size
        h = self._hoff = {k: self.slices[k].start - self.snapshot_size for k in ("played", "void", "since", "window")}
        copies = (1.0 / face_copies(config)).astype(np.float32)
        scale = np.ones(tail, np.float32)
        scale[h["played"]:h["void"]] = np.tile(copies, n)
        scale[h["since"]:h["since"] + n] = np.float32(1.0 / config.deck_size)
        self._hscale = scale
        self._hands: dict[int, tuple[object, PublicHistory]] = {}
        self._units |= {"played": face_copies(config), "void": 1.0, "since": config.deck_size, "window": 1.0}
        self._unit_scale = self._unit_layout()
        self.low = np.zeros(self.size, np.float32)
        self.high = np.concatenate([self.high, np.ones(tail, np.float32)])

    def entry_scale(self) -> np.ndarray:
        return np.concatenate([self._scale, self._hscale])

    def _facts(self, anchor: object, events: Sequence[tuple]) -> PublicHistory:
        """The kept facts of the hand ``anchor`` stands for (the Hand, or the first event of a view's log, since a
        view is a new object each move), brought up to date with ``events``."""
        entry = self._hands.get(id(anchor))
        if entry is None or entry[0] is not anchor or entry[1]._done > len(events):
            if len(self._hands) >= self.CACHE_HANDS:
                del self._hands[next(iter(self._hands))]
            entry = self._hands[id(anchor)] = (anchor, PublicHistory(self.config))
        entry[1].update(events)
        return entry[1]

    def encode(self, hand: Hand, seat: int, match: Match | None = None) -> np.ndarray:
        """A fresh history observation of ``hand`` seen from ``seat`` (scores from ``match``)."""
        return self._with_history(super().encode(hand, seat, match), self._facts(hand, hand.events), hand.sizes, seat)

    def extend(self, snapshot: np.ndarray, events: Sequence[tuple], sizes: Sequence[int], seat: int) -> np.ndarray:
        """The history observation of ``seat`` from its snapshot, the public ``events`` and hand ``sizes`` of its
        :class:`~goboom_env.player_view.PlayerView`: how an agent of this layout plays where it gets a snapshot."""
        facts = self._facts(events[0] if events else None, events)
        return self._with_history(np.asarray(snapshot, np.float32), facts, sizes, seat)

    def _with_history(self, snapshot: np.ndarray, facts: PublicHistory, sizes: Sequence[int],
                      seat: int) -> np.ndarray:
        """``snapshot`` followed by the history blocks of ``facts`` seen from ``seat`` (``sizes``: absolute seats)."""
        n, h, f = self.n, self._hoff, NUM_FACES
        levels = np.zeros(self._tail, np.int32)
        for rel, other in enumerate(self._rot[seat]):
            start = h["played"] + rel * f
            levels[start:start + f] = np.frombuffer(facts.played[other], np.uint8)
            if facts.sizes[other] != sizes[other]:
                continue  # the log does not account for this hand: no proof
            void = facts.void[other]
            if void:
                levels[[h["void"] + rel * f + face for face in faces_in(void)]] = 1
                levels[h["since"] + rel] = facts.since[other]
        for j, (mover, face, kind) in enumerate(reversed(facts.moves)):
            mark_move(levels, h["window"] + j * (n + MOVE_WIDTH), n, (mover - seat) % n, face, kind)
        return np.concatenate([snapshot, levels.astype(np.float32) * self._hscale])


@lru_cache(maxsize=64)
def history_encoder_for(config: GameConfig) -> HistoryEncoder:
    """The (cached) history encoder of a configuration."""
    return HistoryEncoder(config)


def make_encoder(config: GameConfig, observation: str = "snapshot") -> ObservationEncoder:
    """A new encoder of ``observation`` (``"snapshot"`` or ``"history"``) for ``config``."""
    check_observation(observation)
    return HistoryEncoder(config) if observation == "history" else ObservationEncoder(config)


def check_observation(observation: object) -> str:
    """``observation`` when it names a layout (:data:`goboom_env.observation.OBSERVATION_LAYOUTS`), else ValueError."""
    if not isinstance(observation, str) or observation not in OBSERVATION_LAYOUTS:
        raise ValueError(f"observation must be one of {sorted(OBSERVATION_LAYOUTS)}, got {observation!r}")
    return observation
