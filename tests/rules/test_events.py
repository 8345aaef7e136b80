"""Typed engine events: every kind has one row in the formatter table, and the three renderings
(saved-state JSON, playthrough text, English phrase) agree with the event's typed fields."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import MATRIX, config_id, new_hands, random_hand_steps

from goboom_env import GameConfig, Hand
from goboom_env.cards import face_of
from goboom_env.events import (
    EVENT_FORMATS,
    EventKind,
    describe_event,
    drawn_cards,
    event_text,
    event_to_json,
    fields_of,
    make_event,
)

AS, JK = face_of("AS"), face_of("JK")

# (event, JSON, playthrough text, phrase): one row per kind
RENDERINGS = [
    (make_event("play", 0, AS), ["play", 0, "AS"], "play P0 AS", "P0 plays A\u2660"),
    (make_event("draw", 1, 3), ["draw", 1, 3], "draw P1 3", "P1 draws 3 cards"),
    (make_event("pass", 2), ["pass", 2], "pass P2", "P2 passes"),
    (make_event("trick", 3), ["trick", 3], "trick P3", "P3 wins the trick"),
    (make_event("out", 1), ["out", 1], "out P1", "P1 goes out: Boom!"),
    (make_event("upcard", face_of("7D")), ["upcard", "7D"], "upcard 7D", "up-card 7\u2666"),
    (make_event("bury", JK), ["bury", "JK"], "bury JK", "joker turned up and buried"),
    (make_event("boom", 0), ["boom", 0], "boom P0", "P0: BOOM!"),
    (make_event("blocked"), ["blocked"], "blocked", "round blocked"),
]


def test_every_kind_has_one_rendering_row() -> None:
    assert set(EVENT_FORMATS) == set(EventKind)
    assert sorted(event[0] for event, *_ in RENDERINGS) == sorted(EventKind)


@pytest.mark.parametrize("event, as_json, text, phrase", RENDERINGS, ids=lambda v: str(v))
def test_renderings(event: tuple, as_json: list, text: str, phrase: str) -> None:
    assert event_to_json(event) == as_json and type(event_to_json(event)[0]) is str
    assert event_text(event) == text
    assert describe_event(event) == phrase


def test_a_single_draw_reads_as_a_card_not_a_rank() -> None:
    assert describe_event(make_event("draw", 2, 1)) == "P2 draws a card"  # not "P2 draws 1"


def test_events_are_typed_tuples() -> None:
    play = make_event(EventKind.PLAY, 2, AS)
    assert (play.kind, play.seat, play.face) == (EventKind.PLAY, 2, AS)
    assert play == ("play", 2, AS) and fields_of(EventKind.DRAW) == ("seat", "count")
    with pytest.raises(ValueError, match="'fly' is not a valid EventKind"):
        make_event("fly", 1)


@pytest.mark.parametrize("config", MATRIX[::3], ids=config_id)
def test_engine_events_have_their_kinds_type_and_survive_a_save(config: GameConfig) -> None:
    rng = np.random.default_rng(5)
    for hand in new_hands(config, rng, 5):
        for _ in random_hand_steps(hand, rng):
            pass
        for event in hand.events:
            assert type(event) is EVENT_FORMATS[event.kind].type
        restored = Hand.from_dict(hand.to_dict())
        assert [type(e) for e in restored.events] == [type(e) for e in hand.events]
        assert restored.events == hand.events


KH, QS, TD = face_of("KH"), face_of("QS"), face_of("TD")


@pytest.mark.parametrize(("before", "after", "events", "classic", "drawn"), [
    # classic (R1.6): draw until a card matches, which is played from the stock: the hand keeps the others
    ([KH], [KH, QS], [make_event("draw", 0, 2), make_event("play", 0, TD)], True, [QS]),
    # with two decks the played stock card may equal one already held: that one is still held
    ([KH, TD], [KH, TD, QS], [make_event("draw", 0, 2), make_event("play", 0, TD)], True, [QS]),
    # a card played from the hand is not drawn; another seat's events change nothing
    ([KH, TD], [KH], [make_event("play", 0, TD), make_event("draw", 1, 1)], True, []),
    # jokers: a draw ends the turn, a later play comes from the hand
    ([KH], [QS], [make_event("draw", 0, 1), make_event("play", 0, KH)], False, [QS]),
])
def test_drawn_cards_are_the_cards_that_reached_the_hand_from_the_stock(before: list[int], after: list[int],
                                                                        events: list, classic: bool,
                                                                        drawn: list[int]) -> None:
    assert sorted(drawn_cards(before, after, events, 0, classic).elements()) == drawn
