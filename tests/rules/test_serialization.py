"""Save/restore: ``Hand.to_dict``/``from_dict`` and ``Match.to_dict``/``from_dict`` through JSON
restore a state that continues identically; malformed data raises ValueError."""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import pytest
from helpers import new_hands, on_rule_configs, random_move, through_json

from goboom_env import GameConfig, Hand, Match
from goboom_env.engine import event_to_json


def advance(hand: Hand, steps: int, seed: int) -> None:
    """Apply ``steps`` seeded random legal actions."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        random_move(hand, rng)


def finish(hand: Hand, seed: int) -> list[tuple]:
    """Play ``hand`` to the end with seeded random actions; the trace of (seat, legal, action)."""
    rng = np.random.default_rng(seed)
    trace = []
    while not hand.over:
        legal = hand.legal_actions()
        action = legal[int(rng.integers(len(legal)))]
        trace.append((hand.current, legal, action))
        hand.apply(action)
    return trace


@on_rule_configs
def test_hand_round_trip_continues_identically(config: GameConfig) -> None:
    for game, hand in enumerate(new_hands(config, np.random.default_rng(17), 8)):
        total = len(finish(hand.copy(), game))
        for cut in sorted({0, total // 3, total // 2, max(total - 1, 0)}):
            original = hand.copy()
            advance(original, cut, game)
            data = through_json(original.to_dict())
            restored = Hand.from_dict(data)
            assert restored.to_dict() == data
            assert finish(restored, 1000 + cut) == finish(original, 1000 + cut)
            assert restored.events == original.events and restored.hand_points() == original.hand_points()


def rebuilt(hand: Hand) -> Hand:
    """``hand`` rebuilt through :meth:`Hand.from_state` from its public attributes and its cards."""
    return Hand.from_state(
        hand.config, dealer=hand.dealer, hands=[hand.hand_faces(s) for s in range(hand.n)],
        stock=hand.stock[::-1], seen=hand.seen, drawn=hand.drawn, events=hand.events, current=hand.current,
        phase=hand.phase, trick=hand.trick, leader=hand.leader, led=hand.led, best_face=hand.best_face,
        best_seat=hand.best_seat, turns=hand.turns, top=hand.top, match_face=hand.match_face,
        passes=hand.passes, winner=hand.winner, blocked=hand.blocked,
    )


@on_rule_configs
def test_from_state_builds_the_same_hand_as_dealing_and_playing(config: GameConfig) -> None:
    """The one constructor of a mid-game hand (used by from_dict and by PlayerView.sample_hand) gives a
    hand equal to the one the engine played to that point, and it plays on identically."""
    for game, hand in enumerate(new_hands(config, np.random.default_rng(29), 6)):
        advance(hand, game * 3, game)
        copy_ = rebuilt(hand)
        assert copy_.to_dict() == hand.to_dict() and copy_.sizes == hand.sizes and copy_.masks == hand.masks
        assert copy_.stock is not hand.stock and copy_.events is not hand.events  # nothing shared
        assert finish(copy_, game) == finish(hand, game)


@on_rule_configs
def test_match_round_trip_continues_identically(config: GameConfig) -> None:
    rng = np.random.default_rng(23)
    match = Match(config, rng)
    for _ in range(2):  # into the second hand, so results and scores are non-trivial
        finish(match.hand, 5)
        match.finish_hand()
        if match.over:
            break
    data = through_json(match.to_dict())
    restored = Match.from_dict(data)
    assert restored.to_dict() == data

    def rest(m: Match) -> list:
        out = []
        while not m.over:
            out.append(finish(m.hand, len(out)))
            out.append([event_to_json(e) for e in m.hand.events])
            out.append(m.finish_hand())
        return [*out, m.scores, m.winners]

    assert rest(restored) == rest(match)


def jokers_data() -> dict:
    """A saved jokers hand, 4 players, six moves in."""
    hand = Match(GameConfig(variant="jokers", num_players=4), np.random.default_rng(1)).hand
    advance(hand, 6, 0)
    return copy.deepcopy(hand.to_dict())


def classic_follow_data() -> dict:
    """A saved classic hand, 4 players, in the middle of a trick (phase FOLLOW, two seats acted)."""
    hand = Match(GameConfig(variant="classic", num_players=4), np.random.default_rng(3)).hand
    advance(hand, 2, 0)
    assert hand.phase.name == "FOLLOW" and hand.turns == 2
    return copy.deepcopy(hand.to_dict())


def _move_card(data: dict, source: str, target: str) -> None:
    """Move one card between the stock, the seen cards and seat 0's hand."""
    where = {"stock": data["stock"], "seen": data["seen"], "hand": data["hands"][0]}
    where[target].append(where[source].pop())


def _set_trick(data: dict, seat: int, value: object) -> None:
    data["trick"][seat] = value


HAND_CORRUPTIONS: list[tuple[str, Callable[[], dict], Callable[[dict], object], str]] = [
    ("empty-dict", jokers_data, lambda d: d.clear(), "config: missing"),
    ("missing-key", jokers_data, lambda d: d.pop("stock"), "stock: missing"),
    ("extra-key", jokers_data, lambda d: d.update(bogus=1), "bogus: unknown field"),
    ("bad-phase", jokers_data, lambda d: d.update(phase="NOPE"), r"phase: must be one of \['DISCARD', 'OVER'\]"),
    ("classic-phase-in-jokers", jokers_data, lambda d: d.update(phase="LEAD"),
     "phase: must be one of .* for variant 'jokers'"),
    ("over-without-winner", jokers_data, lambda d: d.update(phase="OVER"),
     "phase: OVER needs either a winner or a blocked"),
    ("winner-while-running", jokers_data, lambda d: d.update(winner=1), "winner, blocked: must be null and false"),
    ("winner-float", jokers_data, lambda d: d.update(winner=1.0),
     r"winner: must be null or a seat in 0\.\.3, got 1\.0"),
    ("winner-bool", jokers_data, lambda d: d.update(winner=True), "winner: must be null or a seat in 0..3, got True"),
    ("winner-out-of-range", jokers_data, lambda d: d.update(winner=4), "winner: must be null or a seat in 0..3, got 4"),
    ("blocked-string", jokers_data, lambda d: d.update(blocked="no"), "blocked: must be true or false, got 'no'"),
    ("current-string", jokers_data, lambda d: d.update(current="2"), "current: must be a seat in 0..3, got '2'"),
    ("current-float", jokers_data, lambda d: d.update(current=1.9), "current: must be a seat in 0..3, got 1.9"),
    ("current-out-of-range", jokers_data, lambda d: d.update(current=9), "current: must be a seat in 0..3, got 9"),
    ("dealer-out-of-range", jokers_data, lambda d: d.update(dealer=-1), "dealer: must be a seat in 0..3, got -1"),
    ("passes-too-many", jokers_data, lambda d: d.update(passes=99), r"passes: must be an integer in 0\.\.4, got 99"),
    ("passes-negative", jokers_data, lambda d: d.update(passes=-2), "passes: must be an integer in 0..4, got -2"),
    ("passes-with-stock", jokers_data, lambda d: d.update(passes=1), "passes: must be 0 while the stock holds cards"),
    ("blocked-not-over", jokers_data, lambda d: d.update(blocked=True), "winner, blocked: must be null and false"),
    ("drawn-negative", jokers_data, lambda d: d["drawn"].__setitem__(0, -5),
     r"drawn\[0\]: must be an integer in 0\.\.54"),
    ("drawn-huge", jokers_data, lambda d: d["drawn"].__setitem__(0, 300), r"drawn\[0\]: must be an integer .* got 300"),
    ("drawn-beyond-stock", jokers_data, lambda d: d["drawn"].__setitem__(0, 54),
     "drawn: counts cards drawn from the stock"),
    ("short-drawn", jokers_data, lambda d: d["drawn"].pop(), "drawn: must have 4 entries"),
    ("match-face-joker", jokers_data, lambda d: d.update(match_face="JK"), "match_face: cannot be a joker"),
    ("no-match-card", jokers_data, lambda d: d.update(match_face=None), "jokers needs a top and a match card"),
    ("top-not-match", jokers_data, lambda d: d.update(top=d["hands"][0][0]), "match_face: must be the top card"),
    ("turns-in-jokers", jokers_data, lambda d: d.update(turns=2), "turns: must be 0 in jokers Go Boom"),
    ("trick-in-jokers", jokers_data, lambda d: _set_trick(d, 0, -2),
     r"trick: must be -1 \(not played\) for every seat in jokers"),
    ("bad-card", jokers_data, lambda d: d["hands"][0].append("ZZ"),
     r"hands\[0\]\[\d+\]: is not a card: invalid card code 'ZZ'"),
    ("card-not-a-string", jokers_data, lambda d: d["stock"].append(3),
     r"stock\[\d+\]: must be a card code like '7D', got 3"),
    ("duplicate-card", jokers_data, lambda d: d["hands"][0].append(d["hands"][1][0]),
     "do not make up the deck.*unexpected"),
    ("lost-card", jokers_data, lambda d: d["stock"].pop(),
     "hands, stock, seen: do not make up the deck.*missing"),
    ("top-not-seen", jokers_data, lambda d: (d["seen"].remove(d["top"]), d["stock"].append(d["top"])),
     r"top: holds \['.*'\], which are not among the seen cards"),
    ("empty-hand", jokers_data, lambda d: [_move_card(d, "hand", "stock") for _ in range(len(d["hands"][0]))],
     r"hands\[0\]: is empty but the winner is None"),
    ("extra-seat", jokers_data, lambda d: d["hands"].append([]), "hands: must have 4 entries"),
    ("missing-seat", jokers_data, lambda d: d["hands"].pop(), "hands: must have 4 entries"),
    ("short-trick", jokers_data, lambda d: d.update(trick=[]), "trick: must have 4 entries"),
    ("event-unknown", jokers_data, lambda d: d["events"].append(["fly", 1]),
     r"events\[\d+\]: unknown event kind 'fly'"),
    ("event-classic-kind", jokers_data, lambda d: d["events"].append(["trick", 1]),
     "unknown event kind 'trick'; the kinds of jokers Go Boom"),
    ("event-short", jokers_data, lambda d: d["events"].append(["play", 0]),
     r"events\[\d+\]: a 'play' event has fields \['seat', 'face'\]"),
    ("event-bad-card", jokers_data, lambda d: d["events"].append(["play", 0, "ZZ"]), "invalid card code 'ZZ'"),
    ("event-bad-seat", jokers_data, lambda d: d["events"].append(["out", 7]), "must be a seat in 0..3, got 7"),
    ("event-draw-two", jokers_data, lambda d: d["events"].append(["draw", 0, 2]), r"must be an integer in 1\.\.1"),
    ("event-not-a-list", jokers_data, lambda d: d["events"].append(5), r"events\[\d+\]: an event must be a list"),
    ("config-not-dict", jokers_data, lambda d: d.update(config=5),
     "config: is not a valid GameConfig: a config must be a dict"),
    ("bad-config", jokers_data, lambda d: d["config"].update(num_players=13), "num_players must be an integer"),
    ("best-seat-out-of-range", classic_follow_data, lambda d: d.update(best_seat=9),
     "best_seat: must be -1 or a seat in 0..3, got 9"),
    ("best-seat-wrong", classic_follow_data, lambda d: d.update(best_seat=(d["leader"] + 3) % 4),
     "best_seat, best_face: must be the winning card"),
    ("trick-entry-999", classic_follow_data, lambda d: _set_trick(d, 0, 999),
     r"trick\[0\]: must be a card code, -1 .* or -2"),
    ("trick-gap", classic_follow_data, lambda d: _set_trick(d, (d["leader"] + 3) % 4, -2),
     "trick: must be filled in seat order"),
    ("trick-card-not-seen", classic_follow_data, lambda d: _set_trick(d, (d["leader"] + 1) % 4, d["hands"][0][0]),
     "does not follow the led|trick: holds .* not among the seen cards|best_seat"),
    ("turns-99", classic_follow_data, lambda d: d.update(turns=99), r"turns: must be an integer in 0\.\.3, got 99"),
    ("turns-wrong", classic_follow_data, lambda d: d.update(turns=1), "turns, current: must count the 2 seat"),
    ("follow-without-led", classic_follow_data, lambda d: d.update(led=None),
     "leader, led: must name the seat that led"),
    ("joker-led-in-classic", classic_follow_data, lambda d: (d.update(led="JK"), _set_trick(d, d["leader"], "JK")),
     r"trick: holds \['JK'\], which are not among the seen cards"),
    ("leader-out-of-range", classic_follow_data, lambda d: d.update(leader=9),
     "leader: must be -1 or a seat in 0..3, got 9"),
    ("top-in-classic", classic_follow_data, lambda d: d.update(top="7D"), "top: must be null in classic"),
    ("blocked-in-classic", classic_follow_data, lambda d: d.update(blocked=True), "blocked: must be false in classic"),
    ("lead-with-trick", classic_follow_data, lambda d: d.update(phase="LEAD"),
     r"trick: must be -1 \(not played\) for every seat when a trick is about to be led \(phase LEAD\)"),
]


def test_hand_state_that_is_not_a_dict() -> None:
    with pytest.raises(ValueError, match="malformed hand state: must be a JSON object, got list"):
        Hand.from_dict([1, 2])  # type: ignore[arg-type]


def match_data() -> dict:
    """A saved classic match, 4 players, after its first hand."""
    match = Match(GameConfig(), np.random.default_rng(2))
    finish(match.hand, 0)
    match.finish_hand()
    return copy.deepcopy(match.to_dict())


def _finish_saved_match() -> dict:
    """A saved jokers match, 2 players and 1 round, that is over."""
    match = Match(GameConfig(variant="jokers", num_players=2, rounds=1), np.random.default_rng(2))
    finish(match.hand, 0)
    match.finish_hand()
    assert match.over
    return copy.deepcopy(match.to_dict())


def _result(data: dict, **changes: object) -> None:
    data["results"][0].update(changes)


MATCH_CORRUPTIONS: list[tuple[str, Callable[[], dict], Callable[[dict], object], str]] = [
    ("no-rng", match_data, lambda d: d.pop("rng"), "rng: missing"),
    ("extra-key", match_data, lambda d: d.update(seed=1), "seed: unknown field"),
    ("bad-rng", match_data, lambda d: d.update(rng={"bit_generator": "MT"}), "rng: is not a PCG64 generator state"),
    ("rng-not-a-dict", match_data, lambda d: d.update(rng=7), "rng: is not a PCG64 generator state"),
    ("rng-float", match_data, lambda d: d["rng"]["state"].update(state=1.5),
     "rng: .* values must be integers in range"),
    ("short-scores", match_data, lambda d: d.update(scores=[1]), "scores: must have 4 entries"),
    ("negative-score", match_data, lambda d: d["scores"].__setitem__(0, -3),
     r"scores\[0\]: must be an integer in 0\.\."),
    ("scores-not-sums", match_data, lambda d: d["scores"].__setitem__(0, d["scores"][0] + 1),
     "scores: must be the sums"),
    ("over-while-running", match_data, lambda d: d.update(over=True), "winners, over: must be \\[\\] and False"),
    ("over-string", match_data, lambda d: d.update(over="yes"), "over: must be true or false"),
    ("winner-out-of-range", match_data, lambda d: d.update(winners=[9]),
     r"winners\[0\]: must be a seat in 0\.\.3, got 9"),
    ("winners-too-early", match_data, lambda d: d.update(winners=[0]), "winners, over: must be"),
    ("bad-result", match_data, lambda d: d.update(results=[{}]), r"results\[0\]\.winner: missing"),
    ("result-deltas", match_data, lambda d: _result(d, score_deltas=[1, 2, 3, 4]), "score_deltas: must be"),
    ("result-winners", match_data, lambda d: _result(d, winners=[0, 1]), "winners: must be"),
    ("result-blocked-classic", match_data, lambda d: _result(d, winner=None, blocked=True), "only in jokers"),
    ("result-points-negative", match_data, lambda d: _result(d, hand_points=[-1, 0, 0, 0]),
     r"hand_points\[0\]: must be"),
    ("hand-dealer", match_data, lambda d: d["hand"].update(dealer=(d["hand"]["dealer"] + 1) % 4),
     "hand.dealer: must be"),
    ("bad-hand", match_data, lambda d: d["hand"].update(hands=[]), "malformed hand state: hands: must have 4 entries"),
    ("hand-of-other-config", match_data, lambda d: d["hand"]["config"].update(target_score=300),
     "another configuration"),
    ("no-config", match_data, lambda d: d.update(config=None), "malformed match state: config: is not a valid"),
    ("over-with-new-hand", _finish_saved_match, lambda d: d["hand"].update(dealer=(d["hand"]["dealer"] + 1) % 2),
     "hand: must be the last finished hand"),
    ("not-over-after-last-round", _finish_saved_match, lambda d: d.update(over=False, winners=[]),
     "winners, over: must be"),
]


@pytest.mark.parametrize(("state", "make", "corrupt", "message"), [
    *(pytest.param(Hand, *case[1:], id=f"hand-{case[0]}") for case in HAND_CORRUPTIONS),
    *(pytest.param(Match, *case[1:], id=f"match-{case[0]}") for case in MATCH_CORRUPTIONS),
])
def test_malformed_saved_state_raises_value_error(
    state: type[Hand] | type[Match], make: Callable[[], dict], corrupt: Callable[[dict], object], message: str
) -> None:
    data = make()
    state.from_dict(copy.deepcopy(data))  # the uncorrupted state loads
    corrupt(data)
    with pytest.raises(ValueError, match=message) as caught:
        state.from_dict(data)
    kinds = ("hand",) if state is Hand else ("match", "hand")  # a match passes on its hand's own message
    assert str(caught.value).startswith(tuple(f"malformed {kind} state" for kind in kinds))


def test_copy_is_independent() -> None:
    hand = Match(GameConfig(variant="jokers", num_players=4), np.random.default_rng(4)).hand
    before = hand.to_dict()
    twin = hand.copy()
    finish(twin, 0)
    assert hand.to_dict() == before and not hand.over and twin.over
    assert finish(hand.copy(), 0) == finish(hand, 0)
