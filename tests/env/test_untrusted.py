"""The one reader of data from outside (goboom_env.untrusted) and the text it shows (goboom_env.hints): bounded
work for any input, one error shape naming the file and the field, no control character reaching a terminal."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import numpy as np
import pytest

from goboom_env.config import GameConfig
from goboom_env.engine import Match
from goboom_env.hints import one_line, safe_text, shown
from goboom_env.records import from_dict, loads_record
from goboom_env.untrusted import Fields, parse_json, read_json


def test_read_json_reads_at_most_its_limit(tmp_path: Path) -> None:
    small = tmp_path / "a.json"
    small.write_text('{"a": [1, 2]}')
    assert read_json(small) == {"a": [1, 2]}
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"pad": "x" * 5000}))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(big))} is larger than 4,096 bytes, more than any file "):
        read_json(big, max_bytes=4096)
    with pytest.raises(ValueError, match=r"^/dev/zero is larger than 4,096 bytes"):  # a device that never ends
        read_json("/dev/zero", max_bytes=4096)
    with pytest.raises(ValueError, match=rf"^cannot read {re.escape(str(tmp_path / 'none.json'))}: No such file"):
        read_json(tmp_path / "none.json")
    for depth in (40, 50_000):  # past our limit, and past the parser's recursion
        (tmp_path / "deep.json").write_text("{\"a\": " * depth + "1" + "}" * depth)
        with pytest.raises(ValueError, match=rf"^{re.escape(str(tmp_path))}/deep\.json: not JSON we read: nested more "
                                             r"than 32 levels deep$"):
            read_json(tmp_path / "deep.json")


def test_fields_name_the_document_and_the_path_of_the_field() -> None:
    data = {"seat": 7, "hands": [{"winner": "x"}], "flag": 1}
    r = Fields(data, ("seat", "hands", "flag"), prefix="games.jsonl line 3")
    with pytest.raises(ValueError, match=r"^games\.jsonl line 3: seat: must be an integer in 0\.\.3, got 7$"):
        r.integer("seat", 0, 3)
    with pytest.raises(ValueError, match=r"^games\.jsonl line 3: hands\[0\]\.winner: must be a seat in 0\.\.3, "
                                         r"got 'x'$"):
        r.child("hands[0]", ("winner",), raw=data["hands"][0]).seat("winner", 4)
    with pytest.raises(ValueError, match=r"^games\.jsonl line 3: flag: must be true or false, got 1$"):
        r.flag("flag")
    with pytest.raises(ValueError, match=r"^doc: dealer: missing$"):
        Fields({}, ("dealer",), prefix="doc")
    with pytest.raises(ValueError, match=r"^doc: 'a b': unknown field \(known: dealer\)$"):
        Fields({"dealer": 1, "a b": 2}, ("dealer",), prefix="doc")
    with pytest.raises(ValueError, match=r"^doc: must be a JSON object, got list$"):
        Fields([], ("dealer",), prefix="doc")


def test_a_saved_state_and_a_record_say_a_bad_event_the_same_way() -> None:
    """One event reader for both formats: the same problem, the same words, each naming its field's path."""
    match = Match(GameConfig(variant="classic", num_players=3), np.random.default_rng(0))
    state = copy.deepcopy(match.hand.to_dict())
    state["events"].append(["fly", 1])
    with pytest.raises(ValueError) as saved:
        type(match.hand).from_dict(state)
    assert str(saved.value) == ("malformed hand state: events[0]: unknown event kind 'fly'; the kinds of classic Go "
                                "Boom: ['draw', 'out', 'pass', 'play', 'trick']")
    from goboom_env.agents import RandomAgent
    from goboom_env.records import record_episode

    config = match.config
    _, record = record_episode(Match(config, np.random.default_rng(1)), [RandomAgent(config, s) for s in range(3)])
    line = record.to_dict()
    line["hands"][0]["moves"][0]["events"][0] = ["fly", 1]
    with pytest.raises(ValueError) as recorded:
        from_dict(line)
    assert str(recorded.value) == ("hands[0].moves[0].events[0]: unknown event kind 'fly'; the kinds of classic Go "
                                   "Boom: ['draw', 'out', 'pass', 'play', 'trick']")
    assert loads_record(json.dumps(record.to_dict())) == record


def test_a_value_echoed_in_an_error_is_short_whatever_its_size() -> None:
    assert shown("abc") == "'abc'" and shown([1, 2]) == "[1, 2]" and shown(None) == "None"
    assert len(shown("x" * 10_000_000)) <= 60 and shown("x" * 10_000_000).startswith("'xxx")
    assert shown(10 ** 5000) == "<an integer of about 5000 digits>"  # Python refuses to write it out
    assert len(shown([[list(range(10_000))]] * 10_000)) <= 60
    assert shown("a\x1b[2Jb") == "'a\\x1b[2Jb'"


def test_safe_text_escapes_every_character_a_terminal_acts_on() -> None:
    hostile = "t\x1b]0;title\x07c\x1b[2Jl\x1b]52;c;cHduZWQ=\x07\r\n\x9b\x7f\u202e\u2028ok é ♠"
    safe = safe_text(hostile)
    assert safe == "t\\x1b]0;title\\x07c\\x1b[2Jl\\x1b]52;c;cHduZWQ=\\x07\\r\\n\\x9b\\x7f\\u202e\\u2028ok é ♠"
    assert not re.search(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2028]", safe)
    message = one_line("start " + "x" * 1_000_000 + " end\x1b")
    assert len(message) < 2100 and message.startswith("start xxx") and message.endswith(" end\\x1b")
    assert "characters left out" in message
    assert parse_json('["\\u001b[2J"]') == ["\x1b[2J"]  # the reader keeps the data; showing it escapes it
