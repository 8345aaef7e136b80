"""Card codes, faces, decks and point tables (RULES.md R0, R1.10, R2.11).

A card *face* is ``suit_index * 13 + rank_index`` with suits C, D, H, S and ranks 2..A as 0..12 (R0.3), so ``2C`` =
0, ``AS`` = 51; the joker is 52. Sets of faces are ``int`` bitmasks (bit ``f`` = face ``f``), which keeps the
engine's legality checks to a few integer operations.
"""

from __future__ import annotations

from collections.abc import Iterable

SUITS = "CDHS"
RANKS = "23456789TJQKA"
SUIT_SYMBOLS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}

NUM_FACES = 53
"""Faces 0..51 are the 52 standard cards, face 52 is the joker (R0.3)."""
JOKER = 52
DRAW_OR_PASS = 53
"""Action 53 of R3.1: draw (classic: until a match, R1.6; jokers: one card, R2.7) or pass."""
NUM_ACTIONS = 54
ACE_RANK = 12

SUIT_MASKS: tuple[int, ...] = tuple(((1 << 13) - 1) << (13 * s) for s in range(4))
RANK_MASKS: tuple[int, ...] = tuple(sum(1 << (13 * s + r) for s in range(4)) for r in range(13))
MATCH_MASKS: tuple[int, ...] = tuple(SUIT_MASKS[f // 13] | RANK_MASKS[f % 13] for f in range(52))
"""``MATCH_MASKS[f]``: the faces matching face ``f`` by suit or rank (R1.5, R2.5)."""
ACES_MASK = RANK_MASKS[ACE_RANK]
JOKER_BIT = 1 << JOKER


def boom_mask(aces_mode: bool) -> int:
    """The boom cards of Jokers Go Boom: the aces in aces mode (R2.8), else the joker (R2.6)."""
    return ACES_MASK if aces_mode else JOKER_BIT


CLASSIC_POINTS: tuple[int, ...] = tuple(
    [(1 if r == 12 else 10 if r >= 8 else r + 2) for _ in range(4) for r in range(13)] + [0]
)
"""R1.10: A = 1, T/J/Q/K = 10, 2..9 face value (no jokers in classic)."""
JOKERS_POINTS: tuple[int, ...] = tuple(
    [(15 if r == 12 else 10 if r >= 8 else r + 2) for _ in range(4) for r in range(13)] + [20]
)
"""R2.11: joker 20, ace 15, T/J/Q/K 10, 2..9 face value."""


def code_of(face: int) -> str:
    """Card code of a face: ``code_of(0) == "2C"``, ``code_of(52) == "JK"``."""
    if face == JOKER:
        return "JK"
    if not 0 <= face < JOKER:
        raise ValueError(f"face must be in 0..52, got {face!r}")
    return RANKS[face % 13] + SUITS[face // 13]


def face_of(code: str) -> int:
    """Face of a card code such as ``"7D"``, ``"TS"`` or ``"JK"`` (R0.1); raises ValueError.

    >>> face_of("2C"), face_of("AS"), face_of("JK")
    (0, 51, 52)
    """
    if not isinstance(code, str):
        raise ValueError(f"card code must be a string like '7D', got {type(code).__name__}")
    up = code.strip().upper()
    if up == "JK":
        return JOKER
    if len(up) == 3 and up.startswith("10"):
        up = "T" + up[2]
    if len(up) != 2 or up[0] not in RANKS or up[1] not in SUITS:
        raise ValueError(f"invalid card code {code[:8]!r}{'...' if len(code) > 8 else ''}: expected rank {RANKS} "
                         f"then suit {SUITS} (e.g. '7D'), or 'JK'")
    return SUITS.index(up[1]) * 13 + RANKS.index(up[0])


def code_or_none(face: int) -> str | None:
    """Card code of a face, or None for -1 (an empty slot in a saved state: no led card, no top card)."""
    return None if face < 0 else code_of(face)


def card_text(face: int) -> str:
    """Card code of a face, or the value's repr if it is no face (for error messages)."""
    return code_of(face) if 0 <= face <= JOKER else repr(face)


def pretty(face: int) -> str:
    """Human text for a face with a suit symbol: ``pretty(51) == "A\u2660"``."""
    if face == JOKER:
        return "JK"
    code = code_of(face)
    return ("10" if code[0] == "T" else code[0]) + SUIT_SYMBOLS[code[1]]


def deck_faces(num_decks: int, num_jokers: int) -> list[int]:
    """The multiset of faces in play, in face order: ``num_decks`` x 52 cards plus jokers."""
    return [f for f in range(52) for _ in range(num_decks)] + [JOKER] * num_jokers


def faces_of_codes(codes: Iterable[str]) -> list[int]:
    """Faces of a sequence of card codes (R0.5 deck orders)."""
    return [face_of(c) for c in codes]


def codes_of_faces(faces: Iterable[int]) -> list[str]:
    """Card codes of a sequence of faces."""
    return [code_of(f) for f in faces]


def faces_in(mask: int) -> list[int]:
    """Set bits of a bitmask, ascending: the faces (or actions) it holds."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out

