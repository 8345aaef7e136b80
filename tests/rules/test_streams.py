"""``goboom_env.vector.Streams`` against NumPy's own Generator: each row must draw, call for call, what
``np.random.default_rng`` draws from the same seed (the batched env's games follow scalar envs on it)."""

from __future__ import annotations

import numpy as np
import pytest

vector = pytest.importorskip("goboom_env.vector", reason="numba is not installed (goboom-env[vector])")
Streams = vector.Streams

SEEDS = [0, 1, 7, 2**40 + 3, [5, 1], [5, 2]]
"""Ints (small and wide) and the sequences ``SelfPlayEnv`` seeds its pool with."""


def scalar_best(scores: np.ndarray, rng: np.random.Generator) -> int:
    """The tie-break of the scalar heuristics (``HeuristicAgent._argmax``) over candidate scores."""
    top = np.flatnonzero(scores == scores.max())
    return int(top[0] if len(top) == 1 else top[rng.integers(len(top))])


def test_rows_draw_what_default_rng_draws_call_for_call() -> None:
    """A random script of draws on every row, interleaved across rows, against one Generator per row: integers
    (bounds 1 to 2**32, scalar and array bounds), random(), choice() over legal actions and a heuristic's tie-break
    over scores with ties."""
    streams = Streams(len(SEEDS))
    streams.seed(SEEDS)
    generators = [np.random.default_rng(s) for s in SEEDS]
    script = np.random.default_rng(99)
    for step in range(4000):
        row = int(script.integers(len(SEEDS)))
        rng = generators[row]
        kind = step % 5
        if kind == 0:
            high = int(script.choice([1, 2, 3, 4, 12, 52, 54, 1000, 2**31 + 7, 2**32]))
            assert streams.integers([high], [row])[0] == rng.integers(high)
        elif kind == 1:
            high = int(script.integers(1, 13))
            assert streams.integers([high], [row])[0] == rng.integers(np.array([high]))[0]  # LearnerSeats.redraw
        elif kind == 2:
            assert streams.random([row])[0] == rng.random()
        elif kind == 3:
            legal = np.flatnonzero(script.random(54) < 0.2)
            if len(legal):
                pick = streams.best(np.isin(np.arange(54), legal)[None], np.zeros((1, 54)), [row])[0]
                assert pick == rng.choice(legal)  # RandomAgent's draw
        else:
            pool = script.random(53) < 0.3
            scores = script.integers(0, 3, 53).astype(np.float64)  # many ties
            cards = np.flatnonzero(pool)
            got = streams.best(pool[None], scores[None], [row])[0]
            assert got == (cards[scalar_best(scores[cards], rng)] if len(cards) else -1)
    for row, rng in enumerate(generators):  # and the states agree at the end
        assert streams.generator(row).bit_generator.state == rng.bit_generator.state


def test_a_deal_is_the_permutation_match_draws() -> None:
    """A game's deck is shuffled as ``rng.permutation`` orders the sorted multiset (what ``Match`` deals)."""
    from goboom_env import GameConfig
    from goboom_env.cards import deck_faces

    config = GameConfig(variant="jokers", num_players=3, num_decks=2, num_jokers=5)
    vg = vector.VectorGame(config, num_envs=3)
    vg.streams.seed([11, 12, 13])
    vg.reset(dealers=np.zeros(3, np.int64))  # a fixed dealer: the shuffle is the first draw
    faces = np.array(deck_faces(config.num_decks, config.num_jokers))
    for b, seed in enumerate([11, 12, 13]):
        assert vg.decks[b].tolist() == faces[np.random.default_rng(seed).permutation(len(faces))].tolist()


def test_rows_are_independent_and_seeding_chosen_rows_leaves_the_others() -> None:
    streams = Streams(4, seed=3)
    again = Streams(4, seed=3)
    np.testing.assert_array_equal(streams.state, again.state)  # the constructor's seed reproduces
    assert len({tuple(row) for row in streams.state.tolist()}) == 4
    before = streams.state.copy()
    streams.seed([21], rows=[2])
    np.testing.assert_array_equal(streams.state[[0, 1, 3]], before[[0, 1, 3]])
    first = streams.random([2, 2, 0])
    assert first[0] != first[1]
    assert first[0] == np.random.default_rng(21).random()
    assert first[2] == again.random([0])[0]


@pytest.mark.parametrize(("call", "message"), [
    (lambda s: s.seed([1, 2]), r"one seed per row: 3 row\(s\), got 2"),
    (lambda s: s.integers([0, 1, 1]), r"highs in 1..2\*\*32"),
    (lambda s: s.random([3]), r"rows must be in 0..2"),
    (lambda s: s.best(np.ones((2, 5), bool), np.zeros(5)), r"candidates of shape \(3, K\)"),
])
def test_bad_arguments_name_the_problem(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(Streams(3))
