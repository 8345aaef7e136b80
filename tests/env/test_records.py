"""Game records: recorded while agents play, written and read back as JSON Lines, replayed on the engine.

Round trips for every rule system (classic standard and reverse scoring, jokers, aces mode) in hand and
match episodes; corrupt lines rejected by name, JSON that is not plain finite data (NaN, huge integers, deep
nesting) refused in one clear error; tampered records caught by the replay."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from goboom_env.agents import make_agent
from goboom_env.cards import code_of
from goboom_env.config import GameConfig
from goboom_env.engine import Hand, Match
from goboom_env.game_loop import play_episode
from goboom_env.records import (
    GameRecord,
    deck_of,
    dumps_record,
    from_dict,
    loads_record,
    read,
    record_episode,
    replay,
    verify,
    write,
)
from goboom_env.untrusted import parse_json

RULE_SYSTEMS = {
    "classic-standard": GameConfig(variant="classic", num_players=4, target_score=40),
    "classic-reverse": GameConfig(variant="classic", num_players=3, scoring="reverse", target_score=30),
    "classic-two-decks": GameConfig(variant="classic", num_players=7, target_score=30),  # twin cards
    "jokers": GameConfig(variant="jokers", num_players=3),
    "jokers-aces": GameConfig(variant="jokers", num_players=4, num_jokers=0, rounds=2),
    "jokers-any": GameConfig(variant="jokers", num_players=4, after_joker="any", rounds=2),
}


def _record(config: GameConfig, episode: str, seed: int = 0) -> tuple[object, GameRecord]:
    specs = ["heuristic"] + ["random"] * (config.num_players - 1)
    agents = [make_agent(spec, config, seed + s) for s, spec in enumerate(specs)]
    match = Match(config, np.random.default_rng(seed))
    return record_episode(match, agents, episode, seats=specs, meta={"seed": seed})


@pytest.mark.parametrize("episode", ["hand", "match"])
@pytest.mark.parametrize("name", list(RULE_SYSTEMS))
def test_a_record_round_trips_through_a_file_and_replays_to_its_result(name: str, episode: str,
                                                                       tmp_path: Path) -> None:
    config = RULE_SYSTEMS[name]
    result, record = _record(config, episode, seed=3)
    path = tmp_path / "games.jsonl"
    assert write(path, [record]) == 1
    (back,) = read(path)
    assert back == record and back.meta == {"seed": 3}
    assert verify(back) == result
    assert len(back.hands) == result.hands
    if episode == "match":
        assert back.hands[-1].scores == result.points


def test_replay_steps_deal_and_moves_in_order_with_the_final_state() -> None:
    config = RULE_SYSTEMS["jokers"]
    _, record = _record(config, "match", seed=5)
    steps = list(replay(record))
    deals = [s for s in steps if s.move is None]
    assert [s.hand_index for s in deals] == list(range(len(record.hands)))
    assert len(steps) == len(record.hands) + sum(len(h.moves) for h in record.hands)
    last = steps[-1]
    assert last.hand.over and tuple(last.hand.winners()) == record.hands[-1].winners
    # every step holds its own copy of the hand: the deal step still shows the dealt hand
    assert deals[0].hand.to_dict() == record.hands[0].deal(config).to_dict()


def test_the_recorded_game_is_the_game_the_loop_plays() -> None:
    """Recording changes nothing: the same agents and deal give the same result without the recorder."""
    config = RULE_SYSTEMS["classic-standard"]
    result, record = _record(config, "match", seed=11)
    specs = list(record.seats)
    agents = [make_agent(spec, config, 11 + s) for s, spec in enumerate(specs)]
    assert play_episode(Match(config, np.random.default_rng(11)), agents, "match") == result


def test_deck_of_deals_the_same_hand_again() -> None:
    for config in RULE_SYSTEMS.values():
        for seed in range(5):
            hand = Match(config, np.random.default_rng(seed)).hand
            assert Hand(config, deck_of(hand), hand.dealer).to_dict() == hand.to_dict()


def test_deck_of_refuses_a_hand_already_played_on() -> None:
    hand = Match(RULE_SYSTEMS["classic-standard"], np.random.default_rng(0)).hand
    hand.apply(hand.legal_actions()[0])
    with pytest.raises(ValueError, match="before its first move"):
        deck_of(hand)


def test_appending_keeps_earlier_records_and_refuses_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    records = [_record(RULE_SYSTEMS["jokers"], "hand", seed=s)[1] for s in range(3)]
    write(path, records[:2])
    write(path, records[2:])
    assert read(path) == records
    write(path, records[:1], append=False)
    assert read(path) == records[:1]
    path.write_text(path.read_text()[:-10])  # a crash in the middle of a write
    with pytest.raises(ValueError, match="does not end with a newline"):
        write(path, records[:1])


def _line(seed: int = 0) -> dict:
    return json.loads(dumps_record(_record(RULE_SYSTEMS["jokers"], "hand", seed)[1]))


def _set(data: dict, path: str, value: object) -> dict:
    keys = [int(k) if k.isdigit() else k for k in path.split(".")]
    target = data
    for key in keys[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value
    return data


_DELETE = object()


@pytest.mark.parametrize(("path", "value", "message"), [
    ("format", "other", r"format: must be 'goboom-record'"),
    ("version", 99, r"version: this reader knows version 1"),
    ("config.num_players", 1, r"config: num_players must be"),
    ("episode", "set", r"episode: must be one of"),
    ("seats", ["random"], r"seats: must have 3 entries"),
    ("hands.0.dealer", 7, r"hands\[0\]\.dealer: must be an integer in 0\.\.2"),
    ("hands.0.deck.0", "ZZ", r"hands\[0\]\.deck\[0\]: invalid card code 'ZZ'"),
    ("hands.0.deck", ["7S"] * 54, r"hands\[0\]\.deck: deck is not the configured multiset"),
    ("hands.0.moves.0.seat", -1, r"hands\[0\]\.moves\[0\]\.seat: must be an integer in 0\.\.2"),
    ("hands.0.moves.0.action", 54, r"hands\[0\]\.moves\[0\]\.action: must be an integer in 0\.\.53"),
    ("hands.0.moves.0.card", "2C", r"hands\[0\]\.moves\[0\]\.card: action"),
    ("hands.0.moves.0.events.0", ["explode", 0], r"hands\[0\]\.moves\[0\]\.events\[0\]: unknown event kind"),
    ("hands.0.moves.0.events.0", ["draw", 0], r"hands\[0\]\.moves\[0\]\.events\[0\]: a 'draw' event has fields"),
    ("hands.0.moves.0.extra", 1, r"hands\[0\]\.moves\[0\]\.extra: unknown field"),
    ("hands.0.winners", _DELETE, r"hands\[0\]\.winners: missing"),
    ("hands.0.hand_points", [1, 2], r"hands\[0\]\.hand_points: must have 3 entries"),
    ("result.winners", [5], r"result\.winners\[0\]: must be a seat in 0\.\.2"),
    ("result.rewards", [0, 0, 0], r"result\.rewards: must be the win rewards"),
    ("meta", [], r"meta: must be a JSON object"),
])
def test_read_names_the_line_and_the_field_of_a_corrupt_record(tmp_path: Path, path: str, value: object,
                                                               message: str) -> None:
    good = dumps_record(from_dict(_line(1)))
    bad = json.dumps(_set(_line(0), path, value))
    file = tmp_path / "games.jsonl"
    file.write_text(good + "\n\n" + bad + "\n")
    with pytest.raises(ValueError, match=rf"games\.jsonl line 3: {message}"):
        read(file)


def test_read_names_a_line_that_is_not_json(tmp_path: Path) -> None:
    file = tmp_path / "games.jsonl"
    file.write_text(dumps_record(from_dict(_line())) + "\n{\"format\": \n")
    with pytest.raises(ValueError, match=r"games\.jsonl line 2: not JSON"):
        read(file)


def _write_bad(tmp_path: Path, bad: str) -> Path:
    """A record file whose line 3 is ``bad`` (line 1 a good record, line 2 blank)."""
    file = tmp_path / "games.jsonl"
    file.write_text(dumps_record(from_dict(_line(1))) + "\n\n" + bad + "\n")
    return file


def _winner_reward_true() -> str:
    data = _line(0)
    data["result"]["rewards"][data["result"]["winners"][0]] = True  # True == 1.0, the winner's reward
    return json.dumps(data)


@pytest.mark.parametrize(("bad", "message"), [
    (lambda: json.dumps(_set(_line(0), "result.rewards.0", float("nan"))),
     r"result\.rewards\[0\]: NaN is not a JSON number \(JSON has no NaN or Infinity\)"),
    (_winner_reward_true, r"result\.rewards\[\d\]: must be a finite number, got True"),
    (lambda: json.dumps(_set(_line(0), "config.hand_size", float("inf"))), r"config\.hand_size: Infinity is not"),
    (lambda: json.dumps(_set(_line(0), "version", float("-inf"))), r"version: -Infinity is not a JSON number"),
    (lambda: json.dumps(_line(0)).replace('"version": 1', '"version": 1e999'), r"version: 1e999 is not a finite"),
    (lambda: json.dumps(_line(0)).replace('"version": 1', '"version": true'), r"version: this reader knows"),
], ids=["nan-reward", "true-reward", "infinity-in-config", "minus-infinity-version", "overflowing-float",
        "true-version"])
def test_read_refuses_numbers_that_are_not_finite_json_numbers(tmp_path: Path, bad: Callable[[], str],
                                                               message: str) -> None:
    with pytest.raises(ValueError, match=rf"games\.jsonl line 3: {message}"):
        read(_write_bad(tmp_path, bad()))


@pytest.mark.parametrize(("bad", "message"), [
    ("[" * 100_000 + "]" * 100_000, r"not JSON we read: nested more than 32 levels deep"),
    (json.dumps(_set(_line(0), "meta", {"a": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]})),
     r"not JSON we read: nested more than 32 levels deep$"),
    (json.dumps(_set(_line(0), "meta", {"seed": 10**40})),
     r"meta\.seed: an integer of 41 digits \(at most 20\)"),
    ('{"version": ' + "9" * 5000 + "}", r"version: an integer of 5000 digits \(at most 20\)"),
    (json.dumps(_line(0)).replace('{"format"', '{"episode": "hand", "format"', 1), r"the key 'episode' appears twice"),
], ids=["deep-array", "deep-meta", "long-int-in-meta", "5000-digit-int", "repeated-key"])
def test_read_refuses_json_it_would_choke_on_in_one_clear_error(tmp_path: Path, bad: str, message: str) -> None:
    with pytest.raises(ValueError, match=rf"games\.jsonl line 3: {message}") as caught:
        read(_write_bad(tmp_path, bad))
    assert type(caught.value) is ValueError and caught.value.__cause__ is None


def test_parse_json_reads_plain_json_and_names_where_a_refused_value_sits() -> None:
    assert parse_json('{"a": [1, -2.5, "x", null, true], "b": {}}') == {"a": [1, -2.5, "x", None, True], "b": {}}
    assert parse_json(b'[12345678901234567890]') == [12345678901234567890]
    with pytest.raises(ValueError, match=r"^hands\[1\]\.score: NaN is not a JSON number"):
        parse_json('{"hands": [{}, {"score": NaN}]}')
    with pytest.raises(ValueError, match=r"^'a b': Infinity"):
        parse_json('{"a b": Infinity}')
    with pytest.raises(ValueError, match=r"^not JSON: "):
        parse_json("{")


def _tampered(change: str) -> GameRecord:
    data = _line(2)
    moves = data["hands"][0]["moves"]
    if change == "illegal":
        hand = from_dict(data).hands[0].deal(GameConfig.from_dict(data["config"]))
        illegal = next(a for a in range(53) if a not in hand.legal_actions())
        moves[0]["action"] = illegal
        moves[0]["card"] = code_of(illegal)
    elif change == "seat":
        moves[0]["seat"] = (moves[0]["seat"] + 1) % 3
    elif change == "events":
        moves[-1]["events"] = moves[-1]["events"][:-1]
    elif change == "truncated":
        del moves[-1]
    elif change == "result":
        data["result"]["points"] = [p + 1 for p in data["result"]["points"]]
    elif change == "hand_points":
        data["hands"][0]["hand_points"] = [p + 1 for p in data["hands"][0]["hand_points"]]
    return loads_record(json.dumps(data))


@pytest.mark.parametrize(("change", "message"), [
    ("illegal", r"hands\[0\]\.moves\[0\]\.action: .* is not legal"),
    ("seat", r"hands\[0\]\.moves\[0\]\.seat: P\d is to move"),
    ("events", r"hands\[0\]\.moves\[\d+\]\.events: the engine gives"),
    ("truncated", r"hands\[0\]\.moves: the hand is not over"),
    ("result", r"result: the replay gives"),
    ("hand_points", r"hands\[0\]\.hand_points: the replay gives"),
])
def test_replay_rejects_a_record_that_is_not_the_game_it_claims(change: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        verify(_tampered(change))


def test_a_match_is_recorded_from_its_first_hand() -> None:
    config = RULE_SYSTEMS["jokers"]
    match = Match(config, np.random.default_rng(0))
    agents = [make_agent("random", config, s) for s in range(3)]
    play_episode(match, agents, "hand")
    match.finish_hand()
    with pytest.raises(ValueError, match="from the match's first hand"):
        record_episode(match, agents, "match")
