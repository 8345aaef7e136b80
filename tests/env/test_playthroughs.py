"""Golden playthroughs (tests/data/playthroughs/*.txt): each file's first line is the command that
wrote it; the test regenerates the trace and compares it exactly, and replays every hand of it
through the bare engine (deal, legal actions, events) as an independent check of the file.

After an intended change of the rules, the env's rewards or the seeding, regenerate a file with
the command in its first line, e.g. ``python tests/helpers/playthrough.py --config classic --seed 0 >
tests/data/playthroughs/classic_4p.txt``, and review the diff.
"""

from __future__ import annotations

import difflib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import DATA, ROOT, deck_for
from helpers.playthrough import action_text, arguments_of, event_text, playthrough

from goboom_env import GameConfig, Hand
from goboom_env.cards import face_of

PLAYTHROUGHS = DATA / "playthroughs"
FILES = sorted(PLAYTHROUGHS.glob("*.txt"))
DECISION = re.compile(r"^\d+ (P\d+) \[([^\]]*)\] -> (\S+) \| (.*)$")
"""A decision line: ``12 P0 [9D QD AD] -> QD | play P0 QD; trick P2``."""


def test_golden_files_cover_the_required_configs() -> None:
    seen = set()
    for path in FILES:
        first, second = path.read_text().splitlines()[:2]
        c = GameConfig.from_dict(json.loads(second.removeprefix("config: ")))
        seen.add((c.variant, c.num_players, c.scoring, c.num_jokers, c.after_joker, arguments_of(first)["episode"]))
    assert ("classic", 4, "standard", 0, "match", "hand") in seen
    assert ("classic", 7, "reverse", 0, "match", "match") in seen
    assert ("jokers", 4, "penalty", 2, "match", "hand") in seen
    assert ("jokers", 4, "penalty", 0, "match", "hand") in seen
    assert ("jokers", 4, "penalty", 2, "any", "hand") in seen
    text = "".join(p.read_text() for p in FILES)
    for feature in ("bury JK", "boom P", "; blocked", "pass P", "reward: points", "draw P1 3"):
        assert feature in text, f"no golden playthrough shows {feature!r}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_playthrough_matches_golden_file(path: Path) -> None:
    golden = path.read_text()
    fresh = playthrough(**arguments_of(golden.splitlines()[0]))
    if fresh != golden:
        diff = "".join(difflib.unified_diff(golden.splitlines(True), fresh.splitlines(True), "golden", "now", n=2))
        pytest.fail(f"{path.name} differs from a fresh playthrough (regenerate with its first line "
                    f"if the change is intended):\n{diff[:4000]}")


def _hands_of(text: str) -> list[list[str]]:
    """The trace's lines grouped per hand, from a ``== hand`` line up to its ``hand over``."""
    hands, current = [], None
    for line in text.splitlines():
        if line.startswith("== hand"):
            current = [line]
            hands.append(current)
        elif current is not None:
            current.append(line)
    return hands


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden_file_replays_through_the_engine(path: Path) -> None:
    text = path.read_text()
    config = GameConfig.from_dict(json.loads(text.splitlines()[1].removeprefix("config: ")))
    for block in _hands_of(text):
        dealer = int(block[0].rsplit("P", 1)[1])
        hands = [line.split(": ", 1)[1].split() for line in block[1:1 + config.num_players]]
        stock = block[1 + config.num_players].split(": ", 1)[1].split()
        hand_events = []
        if block[2 + config.num_players].startswith("events: "):
            hand_events = block[2 + config.num_players][8:].split("; ")
        buried = hand_events.count("bury JK")
        upcard = [e.split()[1] for e in hand_events if e.startswith("upcard")]
        stock = [*(["JK"] * buried), *upcard, *stock[:len(stock) - buried]]  # the pre-turn-up order
        hand = Hand(config, [face_of(c) for c in deck_for(config, hands, stock, dealer)], dealer)
        assert [event_text(e) for e in hand.events] == hand_events
        for line in block:
            step = DECISION.match(line)
            if not step:
                continue
            seat, legal, action, events = step.groups()
            assert (f"P{hand.current}", [action_text(a) for a in hand.legal_actions()]) == (seat, legal.split())
            read = len(hand.events)
            hand.apply(53 if action == "draw" else face_of(action))
            assert "; ".join(event_text(e) for e in hand.events[read:]) == events
        over = next(line for line in block if line.startswith("hand over"))
        assert hand.over and over.endswith(f"winners {hand.winners()}; hand points {hand.hand_points()}")


def test_cli_writes_the_golden_text() -> None:
    path = PLAYTHROUGHS / "jokers_aces.txt"
    args = arguments_of(path.read_text().splitlines()[0])
    cmd = [sys.executable, "tests/helpers/playthrough.py", "--config", args["config"], "--seed", str(args["seed"]),
           "--episode", args["episode"], "--reward", args["reward"]]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == path.read_text()


@pytest.mark.parametrize(
    ("config", "message"),
    [("nope", "unknown preset 'nope'"), ('{"num_players": 13}', "num_players must be an integer in 2..12"),
     ("{bad json", "--config: not JSON"), ("[1, 2]", "unknown preset")],
)
def test_cli_reports_a_bad_config(config: str, message: str) -> None:
    cmd = [sys.executable, "tests/helpers/playthrough.py", "--config", config]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and done.stdout == "" and message in done.stderr
