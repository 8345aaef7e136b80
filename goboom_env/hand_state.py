"""The vocabulary of a hand's state, below both the engine and the saved-state reader: the :class:`Phase` of a
hand, the trick markers, and the deck check (RULES.md R0.5, R1, R2)."""

from __future__ import annotations

import enum
import functools
from collections import Counter
from collections.abc import Sequence

from goboom_env.cards import CLASSIC_POINTS, JOKERS_POINTS, NUM_FACES, card_text, deck_faces
from goboom_env.config import GameConfig


class Phase(enum.IntEnum):
    """Where a hand stands: who does what next."""

    LEAD = 0
    """Classic: the player to move leads a new trick with any card (R1.4, R1.8)."""
    FOLLOW = 1
    """Classic: the player to move follows the led card or draws (R1.5, R1.6)."""
    DISCARD = 2
    """Jokers: the player to move matches the match card, booms, draws or passes (R2.5-R2.7)."""
    OVER = 3
    """Somebody went out (R1.9, R2.9) or the round is blocked (R2.10)."""


NOT_PLAYED = -1
"""``Hand.trick`` entry of a seat that has not had its turn in the current trick yet."""
PASSED = -2
"""``Hand.trick`` entry of a seat that drew without matching and passed (R1.6)."""


@functools.lru_cache(maxsize=64)
def deck_multiset(num_decks: int, num_jokers: int) -> tuple[int, ...]:
    """:func:`~goboom_env.cards.deck_faces` (sorted) as a cached tuple: every deal shuffles and checks it."""
    return tuple(deck_faces(num_decks, num_jokers))


def deck_counts(config: GameConfig) -> list[int]:
    """Per face, its copies in the configuration's deck."""
    faces = deck_multiset(config.num_decks, config.num_jokers)
    return [faces.count(face) for face in range(NUM_FACES)]


def card_points(config: GameConfig) -> tuple[int, ...]:
    """Per face, its points when left in a hand (R1.10 classic, R2.11 jokers)."""
    return CLASSIC_POINTS if config.is_classic else JOKERS_POINTS


def check_deck(config: GameConfig, deck: Sequence[int]) -> None:
    """Raise ValueError unless ``deck`` holds exactly the configuration's cards (as faces)."""
    expected = list(deck_multiset(config.num_decks, config.num_jokers))
    try:
        got = sorted(map(int, deck))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"deck must be a list of card faces or codes: {exc}") from exc
    if got != expected:
        missing = sorted((Counter(expected) - Counter(got)).elements())
        extra = sorted((Counter(got) - Counter(expected)).elements())
        raise ValueError(f"deck is not the configured multiset of {len(expected)} cards ({config.num_decks} "
                         f"deck(s), {config.num_jokers} joker(s)): got {len(got)} cards; missing "
                         f"{[card_text(f) for f in missing][:10]}, unexpected {[card_text(f) for f in extra][:10]}")
