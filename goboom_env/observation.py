"""Seat-relative observation encoder: one flat ``float32`` vector with named slices (R4.1).

Per-seat blocks are ordered by relative seat (``0`` = the observer, ``1`` = its left, R0.4). Only public
information and the observer's own hand are encoded. The layout depends only on ``n`` (``num_players``):
classic and jokers share it, unused blocks stay zero.

The blocks, their order and their scales are tabled on the Environment page (docs/environment.md,
"Observation Space"); :func:`layout` returns their slices for any ``n``.

A *generalist* network reads every table size in the 12-seat layout (:func:`pad_observations`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from goboom_env.cards import CLASSIC_POINTS, JOKER, JOKERS_POINTS, NUM_ACTIONS, NUM_FACES, deck_faces, faces_in
from goboom_env.config import MAX_PLAYERS, GameConfig, check_int
from goboom_env.engine import PASSED, Hand, Match

OBSERVATION_VERSION = 1
"""The version of this (the *snapshot*) layout, bumped whenever it changes; saved models record it."""
OBSERVATION_LAYOUTS = {"snapshot": OBSERVATION_VERSION, "history": 2}
"""The layouts by name and their versions (``"history"``: :mod:`goboom_env.history`)."""


def layout(num_players: int) -> dict[str, slice]:
    """The named slices of the observation vector for ``num_players`` seats."""
    n, f = num_players, NUM_FACES
    sizes = [
        ("hand", f), ("seen", f), ("led", f), ("trick", n * f), ("trick_passed", n), ("leader", n),
        ("top", f), ("match", f), ("hand_sizes", n), ("drawn", n), ("stock", 1), ("to_move", n),
        ("dealer", n), ("scores", n), ("passes", 1), ("progress", 1), ("flags", 9),
    ]
    return block_slices(sizes)


def block_slices(sizes: list[tuple[str, int]], start: int = 0) -> dict[str, slice]:
    """Consecutive named blocks of the given sizes as slices, the first one beginning at ``start``."""
    out = {}
    for name, size in sizes:
        out[name] = slice(start, start + size)
        start += size
    return out


def observation_size(num_players: int) -> int:
    """Length of the observation vector: ``5 * 53 + 60 * n + 12``."""
    return layout(num_players)["flags"].stop


PADDED_SIZE = 5 * NUM_FACES + 60 * MAX_PLAYERS + 12
"""Length of the padded observation: the layout of :data:`MAX_PLAYERS` seats."""


@lru_cache(maxsize=MAX_PLAYERS)
def padded_index(num_players: int) -> np.ndarray:
    """For each entry of a ``num_players``-seat observation, its index in the 12-seat layout (int64): a per-seat
    block fills the first ``n`` slots of its 12 (the trick block: rows), the shared blocks keep their size."""
    n = check_int("num_players", num_players, 2, MAX_PLAYERS)
    small, wide = layout(n), layout(MAX_PLAYERS)
    index = np.empty(observation_size(n), np.int64)
    for name, sl in small.items():
        index[sl] = np.arange(wide[name].start, wide[name].start + (sl.stop - sl.start))
    index.flags.writeable = False
    return index


def pad_observations(obs: np.ndarray, num_players: int) -> np.ndarray:
    """``[B, D_n]`` (or ``[D_n]``) observations of ``num_players`` seats in the 12-seat layout ``[B, PADDED_SIZE]``
    (same dtype; zeros in the slots of absent seats)."""
    return pad_by_index(obs, padded_index(num_players), PADDED_SIZE, f"observations of {num_players} players")


def pad_by_index(obs: np.ndarray, index: np.ndarray, size: int, what: str) -> np.ndarray:
    """``obs`` spread over ``size`` entries by ``index`` (zeros elsewhere); ValueError naming ``what`` if mis-shaped."""
    obs = np.asarray(obs)
    if obs.shape[-1] != len(index):
        raise ValueError(f"{what} have {len(index)} entries, got shape {obs.shape}")
    out = np.zeros((*obs.shape[:-1], size), obs.dtype)
    out[..., index] = obs
    return out


def unpad_observations(obs: np.ndarray, num_players: int) -> np.ndarray:
    """The inverse of :func:`pad_observations`: the ``num_players``-seat entries of padded observations."""
    index = padded_index(num_players)
    obs = np.asarray(obs)
    if obs.shape[-1:] != (PADDED_SIZE,):
        raise ValueError(f"padded observations have {PADDED_SIZE} entries, got shape {obs.shape}")
    return obs[..., index]


class ObservationEncoder:
    """Builds observations for one configuration. For speed, most entries are an integer *level* (a count, a
    one-hot 1) times a fixed per-index *scale*: :meth:`encode` writes the levels into a ``bytearray``, makes the
    float vector with one multiply, then sets the remaining scalars (stock, passes, scores, progress)."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        n = self.n = config.num_players
        self.slices = layout(n)
        self.size = observation_size(n)
        s = self._off = {k: v.start for k, v in self.slices.items()}
        copies = (1.0 / face_copies(config)).astype(np.float32)
        self._score_scale = float(config.target_score or 100)
        inv_deck = self._inv_deck = 1.0 / config.deck_size
        self._rot = [[(seat + k) % n for k in range(n)] for seat in range(n)]
        # hand sizes and drawn counts never exceed the deck size: byte levels when that fits a byte
        self._byte_counts = config.deck_size <= 255
        scale = np.ones(self.size, np.float32)
        scale[self.slices["hand"]] = copies
        scale[self.slices["seen"]] = copies
        scale[s["hand_sizes"]:s["drawn"] + n] = inv_deck
        scale[self.slices["flags"]] = self.flags(config)
        self._scale = scale
        self._template = bytearray(self.size)
        self._template[self.slices["flags"]] = b"\x01" * 9  # level 1 x the flag's value as scale
        # the start of each relative seat's row in the trick block, per observing seat
        self._trick_rows = [[(rel, other, s["trick"] + rel * NUM_FACES) for rel, other in enumerate(rot)]
                            for rot in self._rot]
        self._units = {name: 1.0 for name in ("led", "trick", "trick_passed", "leader", "top", "match",
                                               "to_move", "dealer")}
        self._units |= {"hand": face_copies(config), "seen": face_copies(config), "hand_sizes": config.deck_size,
                        "drawn": config.deck_size, "stock": config.deck_size, "passes": n}
        self._unit_scale = self._unit_layout()
        self.low = np.zeros(self.size, np.float32)
        self.high = np.ones(self.size, np.float32)
        self.high[self.slices["scores"]] = max_score(config) / self._score_scale

    def entry_scale(self) -> np.ndarray:
        """Per entry, the float32 factor its integer level is multiplied by (the batched engine scales alike)."""
        return self._scale

    def _unit_layout(self) -> np.ndarray:
        """Per entry, the factor that turns a counting block's value back into its level (0 elsewhere)."""
        out = np.zeros(self.size)
        for name, unit in self._units.items():
            sl = self.slices[name]
            out[sl] = np.tile(unit, (sl.stop - sl.start) // np.size(unit)) if np.ndim(unit) else unit
        return out

    @staticmethod
    def flags(config: GameConfig) -> list[float]:
        """The configuration flags block (see the table in the module docstring)."""
        return [
            float(config.is_classic), float(not config.is_classic),
            float(config.scoring == "standard"), float(config.scoring == "reverse"),
            float(config.scoring == "penalty"), float(config.aces_mode),
            float(config.anything_after_joker),
            float(config.num_decks >= 2), config.num_players / MAX_PLAYERS,
        ]

    def encode(self, hand: Hand, seat: int, match: Match | None = None) -> np.ndarray:
        """A fresh observation vector of ``hand`` seen from ``seat`` (scores from ``match``)."""
        off, blocks = self._off, self.slices
        n = self.n
        levels = self._template.copy()
        levels[blocks["hand"]] = hand.counts[seat]
        levels[blocks["seen"]] = hand.seen
        levels[off["dealer"] + (hand.dealer - seat) % n] = 1
        if not hand.over:
            levels[off["to_move"] + (hand.current - seat) % n] = 1
        if hand.classic:
            if hand.led >= 0:
                levels[off["led"] + hand.led] = 1
                levels[off["leader"] + (hand.leader - seat) % n] = 1
                trick = hand.trick
                passed_off = off["trick_passed"]
                for rel, other, row in self._trick_rows[seat]:
                    played = trick[other]
                    if played >= 0:
                        levels[row + played] = 1
                    elif played == PASSED:
                        levels[passed_off + rel] = 1
        else:
            levels[off["top"] + hand.top] = 1
            levels[off["match"] + hand.match_face] = 1
        sizes, drawn = hand.sizes, hand.drawn
        if self._byte_counts:
            levels[blocks["hand_sizes"]] = sizes[seat:] + sizes[:seat]  # rotated to relative seats
            levels[blocks["drawn"]] = drawn[seat:] + drawn[:seat]
        out = np.frombuffer(levels, np.uint8) * self._scale  # fresh float32, aliases nothing
        if not self._byte_counts:
            start = off["hand_sizes"]
            out[start:start + 2 * n] = sizes[seat:] + sizes[:seat] + drawn[seat:] + drawn[:seat]
            out[start:start + 2 * n] *= self._inv_deck
        out[off["stock"]] = len(hand.stock) * self._inv_deck
        if hand.passes:
            out[off["passes"]] = hand.passes / n
        if match is not None:
            if any(match.scores):
                scores = match.scores
                out[off["scores"]:off["scores"] + n] = [scores[s] / self._score_scale for s in self._rot[seat]]
            if self.config.rounds:
                out[off["progress"]] = match.hands_played / self.config.rounds
        return out

    def describe(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """The named blocks of an observation vector (views), for debugging and tests."""
        return {name: vector[sl] for name, sl in self.slices.items()}

    def counts(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """The blocks that count something (all but scores, progress and flags) decoded back to integers (int64):
        the inverse of :meth:`encode`, so that no decoder repeats the scales. A batch ``[B, size]`` works too."""
        ints = np.rint(np.asarray(vector, np.float64) * self._unit_scale).astype(np.int64)
        return {name: ints[..., self.slices[name]] for name in self._units}


def max_score(config: GameConfig) -> int:
    """The highest match total a seat can reach (the ``scores`` block's bound): classic, the target - 1 plus one
    hand's points (R1.11, R1.12); jokers, one hand's points per round (R2.12); a hand's at most the deck's."""
    points = CLASSIC_POINTS if config.is_classic else JOKERS_POINTS
    deck = sum(points[f] for f in deck_faces(config.num_decks, config.num_jokers))
    return config.target_score - 1 + deck if config.is_classic else config.rounds * deck


def face_copies(config: GameConfig) -> np.ndarray:
    """Per face, the copies in the deck (float64), what ``hand`` and ``seen`` are divided by; the joker counts at
    least once, so that aces mode (no jokers, R2.8) never divides by 0."""
    copies = np.full(NUM_FACES, float(config.num_decks))
    copies[JOKER] = float(max(config.num_jokers, 1))
    return copies


@lru_cache(maxsize=64)
def encoder_for(config: GameConfig) -> ObservationEncoder:
    """The (cached) observation encoder of a configuration."""
    return ObservationEncoder(config)


def action_mask(hand: Hand, seat: int, finished: bool = False) -> np.ndarray:
    """The ``action_mask`` of ``seat`` (int8, 54): its legal actions when it is to move (and not ``finished``)."""
    mask = bytearray(NUM_ACTIONS)  # set bit by bit, then wrapped as int8 without a copy
    if seat == hand.current and not finished:
        for action in faces_in(hand.legal_mask()):  # none once the hand is over
            mask[action] = 1
    return np.frombuffer(mask, np.int8)


def observe(state: Match | Hand, seat: int, encoder: ObservationEncoder | None = None,
            finished: bool = False) -> dict[str, np.ndarray]:
    """What ``raw_env.observe`` returns for ``seat`` (the one observe + mask function every caller uses);
    ``state`` is a :class:`Match` (scores and progress filled in) or a bare :class:`Hand`."""
    match = state if isinstance(state, Match) else None
    hand = match.hand if match is not None else state
    encoder = encoder or encoder_for(hand.config)
    return {"observation": encoder.encode(hand, seat, match), "action_mask": action_mask(hand, seat, finished)}
