"""``goboom play`` as a new user meets it: what the terminal shows, what it accepts, what it saves, and the game
it picks for a trained model. Most games run in-process (:class:`TerminalGame` on string streams); the
command line itself runs in a subprocess."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import goboom

from goboom_env.cards import face_of
from goboom_env.cli.play import TerminalGame, legal_text, parse_move
from goboom_env.config import GameConfig
from goboom_env.engine import Hand
from goboom_env.events import make_event
from goboom_env.records import read, verify
from goboom_env.render import count_text, move_text, render_text

CLASSIC3 = GameConfig(variant="classic", num_players=3)
JOKERS3 = GameConfig(variant="jokers", num_players=3)
EVERY_MOVE = "\n".join(([r + s for s in "CDHS" for r in "23456789TJQKA"] + ["JK", "draw"]) * 80) + "\n"
"""Every card code and draw, over and over: whatever the state, one of them is legal."""


def play(config: GameConfig, seed: int, moves: str = EVERY_MOVE, episode: str = "hand",
         auto_forced: bool = True, opponents: tuple[str, ...] = ("random", "random")) -> tuple[int, str, TerminalGame]:
    game = TerminalGame(config, 0, list(opponents), seed, episode, auto_forced)
    out = io.StringIO()
    code = game.play(io.StringIO(moves), out)
    return code, out.getvalue(), game


def shown(text: str) -> str:
    """The output without the refusals of the moves that were not legal."""
    return "\n".join(line for line in text.splitlines() if "is not legal now" not in line)


# -- the end of a game ------------------------------------------------------------------------------


def test_a_one_hand_game_shows_who_won_and_the_points_not_zero_scores() -> None:
    code, out, game = play(JOKERS3, seed=5)
    assert code == 0
    assert "scores:" not in out  # a one-hand game is not scored: no table of zeros
    points = game.match.hand.hand_points()
    assert f"points {points}" in out and "the hand is won by P" in out
    assert any(p > 0 for p in points)


def test_a_match_shows_each_hand_s_scores_and_the_totals() -> None:
    code, out, game = play(JOKERS3, seed=5, episode="match")
    assert code == 0
    totals = "  ".join(f"P{s}={v}" for s, v in enumerate(game.match.scores))
    assert out.count("hand scores: ") == game.match.hands_played and f"totals: {totals}" in out
    assert "the match is won by" in out


@pytest.mark.parametrize("config", [CLASSIC3, JOKERS3], ids=["classic", "jokers"])
def test_every_hand_is_revealed_at_the_end(config: GameConfig) -> None:
    _, out, game = play(config, seed=2)
    end = out[out.rindex("hand over:") - 400:]
    hand = game.match.hand
    for seat in range(3):
        cards = " ".join(move_text(f) for f in hand.hand_faces(seat))
        assert f"P{seat}: {count_text(hand.sizes[seat], 'card')}  [{cards}]" in end


# -- what happens at the table ----------------------------------------------------------------------


def test_draws_say_a_card_and_show_you_your_own_drawn_cards() -> None:
    _, out, _ = play(JOKERS3, seed=5)
    out = shown(out)
    assert "draws a card" in out and not re.search(r"draws 1\b", out)
    seen = re.findall(r"\(you drew ([^)]*)\)", out)
    assert seen
    after = out[out.index("(you drew " + seen[0]):]
    assert seen[0].split()[0] in after.split("\n", 1)[1]  # later in your hand, played, or revealed


def test_a_classic_card_drawn_and_played_at_once_is_not_counted_as_kept() -> None:
    """R1.6: a classic draw ends by playing the matching card; with two decks that card may equal one in hand."""
    game = TerminalGame(CLASSIC3, 0, ["random", "random"], 1)
    faces = game.match.hand.hand_faces(0)
    game._mine = Counter(faces[1:])  # faces[0] reached the hand since the last look
    events = [make_event("draw", 0, 2), make_event("play", 0, faces[1])]
    hand = SimpleNamespace(events=events, hand_faces=lambda seat: faces, classic=True)  # what _show_events reads
    out = io.StringIO()
    game._show_events(hand, out)  # type: ignore[arg-type]
    assert re.findall(r"\(you drew ([^)]*)\)", out.getvalue()) == [move_text(faces[0])]


def test_your_hand_is_shown_once_per_prompt() -> None:
    _, out, _ = play(CLASSIC3, seed=4, moves="quit\n")
    prompt = out[:out.index("your move>")]
    assert prompt.count("your hand:") == 1
    assert not re.search(r"P0: \d+ cards?  \[", prompt)  # not a second time in the table


@pytest.mark.parametrize(("typed", "code"), [
    ("K♣", "KC"), ("k♣", "KC"), ("KC", "KC"), ("kc", "KC"), ("10♣", "TC"), ("10c", "TC"), ("TC", "TC"),
    ("A♠", "AS"), ("Q♡", "QH"), ("JK", "JK"),
])
def test_cards_are_accepted_as_shown_and_as_codes(typed: str, code: str) -> None:
    assert parse_move(typed) == face_of(code)


def test_moves_are_shown_as_the_cards_are() -> None:
    assert legal_text([face_of("TC"), face_of("KS"), 53]) == "10♣ K♠ draw"
    _, out, _ = play(CLASSIC3, seed=4, moves="quit\n")
    legal = next(line for line in out.splitlines() if line.startswith("legal: "))
    assert re.fullmatch(r"legal: ((10|[2-9JQKA])[♣♦♥♠] ?)+", legal), legal


def test_a_bad_move_says_how_to_type_one() -> None:
    _, out, _ = play(CLASSIC3, seed=4, moves="zz\nquit\n")
    assert "? not a move: 'zz'; type a card as shown (10♣, K♠) or as a code" in out


def test_forced_moves_are_played_for_you_unless_asked_not_to() -> None:
    _, auto, _ = play(JOKERS3, seed=5)
    _, asked, _ = play(JOKERS3, seed=5, auto_forced=False)
    forced = auto.count("your only move: ")
    assert forced > 0 and "your only move" not in asked
    assert asked.count("your move> ") > auto.count("your move> ")
    assert shown(auto).count("your move> ") + forced == shown(asked).count("your move> ")


def test_help_gives_the_rules_of_the_variant_and_the_legal_moves() -> None:
    for config, words in [(CLASSIC3, "Classic Go Boom: the leader plays any card"),
                          (JOKERS3, "Jokers Go Boom: play a card of the suit or the rank of the match card"),
                          (GameConfig(variant="jokers", num_players=3, num_jokers=0), "An ace (aces mode")]:
        _, out, _ = play(config, seed=4, moves="help\nquit\n")
        assert words in out.replace("\n", " ") and "legal now: " in out


def test_counts_of_one_are_singular() -> None:
    assert count_text(1, "card") == "1 card" and count_text(3, "card") == "3 cards"
    config = GameConfig(variant="classic", num_players=2, hand_size=1)
    hand = Hand(config, list(range(52)), 0)
    assert "P0: 1 card\n" in render_text(hand) + "\n" and "1 cards" not in render_text(hand)


# -- the command line -------------------------------------------------------------------------------


def test_an_unseeded_game_prints_its_seed_and_the_seed_deals_it_again() -> None:
    first = goboom("play", "--preset", "classic", stdin="quit\n")
    assert first.returncode == 0, first.stderr
    seed = re.search(r"seed (\d+) \(--seed \1 deals this game again\)", first.stdout)
    assert seed
    again = goboom("play", "--preset", "classic", "--seed", seed.group(1), stdin="quit\n")
    assert again.stdout == first.stdout


def test_play_saves_the_record_of_the_game(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    for _ in range(2):
        done = goboom("play", "--preset", "jokers-3p", "--seed", "5", "--opponents", "random", "--save", str(path),
                      stdin=EVERY_MOVE)
        assert done.returncode == 0, done.stderr
        assert f"game record appended to {path}" in done.stdout
    first, second = read(path)
    assert first == second and first.seats == ("you", "random", "random") and first.meta["seed"] == 5
    assert list(verify(first).winners) == [int(w) for w in re.search(r"won by ([P\d, ]+)\.", done.stdout)
                                           .group(1).replace("P", "").split(", ")]
    quit_early = goboom("play", "--preset", "jokers-3p", "--seed", "5", "--save", str(path), stdin="quit\n")
    assert quit_early.returncode == 0 and "not saved" in quit_early.stdout and len(read(path)) == 2


@pytest.mark.parametrize(("where", "message"), [("", "is a folder; give a file"),
                                                ("no/such/x.jsonl", "does not exist")])
def test_a_save_file_that_cannot_be_written_is_refused_before_the_game(tmp_path: Path, where: str,
                                                                      message: str) -> None:
    done = goboom("play", "--seed", "1", "--save", str(tmp_path / where), stdin=EVERY_MOVE)
    assert done.returncode == 2 and done.stderr.startswith("goboom play: error: --save ") and message in done.stderr
    assert "You are P0" not in done.stdout  # not a whole game played, then lost


@pytest.mark.parametrize("spec", ["ppo:jokers-4p-hands", "ppo:goboom_env/models/jokers-4p-hands.zip"],
                         ids=["name", "path"])
def test_a_model_opponent_brings_its_own_game(spec: str) -> None:
    done = goboom("play", "--opponents", spec, "--seed", "1", stdin="quit\n")
    assert done.returncode == 0, done.stderr
    assert "Go Boom (jokers, 4 players)" in done.stdout


def test_game_options_that_disagree_with_the_model_are_an_error_naming_both() -> None:
    done = goboom("play", "--opponents", "ppo:jokers-4p-hands", "--preset", "classic", stdin="quit\n")
    assert done.returncode == 2
    assert done.stderr.startswith("goboom play: error: ppo:jokers-4p-hands was trained for another game than the game "
                                  "options (--preset classic) choose: variant: model 'jokers', options 'classic'")
    agree = goboom("play", "--opponents", "ppo:jokers-4p-hands", "--variant", "jokers", "--seed", "1", stdin="quit\n")
    assert agree.returncode == 0, agree.stderr


def test_evaluate_reads_the_game_from_the_model_too(tmp_path: Path) -> None:
    out = tmp_path / "res"
    done = goboom("evaluate", "--agents", "ppo:jokers-4p-hands", "heuristic", "--games", "2", "--episode", "hand",
                  "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    config = json.loads((out / "results.json").read_text())["summary"]["config"]
    assert (config["variant"], config["num_players"]) == ("jokers", 4)
    bad = goboom("evaluate", "--agents", "ppo:jokers-4p-hands", "heuristic", "--players", "3", "--games", "2",
                 "--out", str(tmp_path / "bad"), "--no-progress")
    assert bad.returncode == 2 and "num_players: model 4, options 3" in bad.stderr
    assert "ppo:jokers-4p-hands was trained for another game than the game options (--players)" in bad.stderr
    assert not (tmp_path / "bad").exists()
    two = goboom("evaluate", "--agents", "ppo:jokers-4p-hands", "ppo:classic-4p-hands", "--games", "2",
                 "--out", str(tmp_path / "two"))
    assert two.returncode == 2 and "ppo:jokers-4p-hands and ppo:classic-4p-hands were trained for different games " \
        "(variant: ppo:jokers-4p-hands 'jokers', ppo:classic-4p-hands 'classic'" in two.stderr


def test_seeded_games_are_reproducible_in_process() -> None:
    assert play(JOKERS3, seed=9)[1] == play(JOKERS3, seed=9)[1]
    assert np.array_equal(play(JOKERS3, seed=9)[2].match.hand.hand_points(),
                          play(JOKERS3, seed=9)[2].match.hand.hand_points())
