"""``render_mode="rgb_array"``: an RGB image of the table (numpy only), checked for its form, PettingZoo's render
test, and what it shows: the chosen seat's cards, the card counts, the trick and the discard pile."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import aec_steps, deck_for, random_legal
from pettingzoo.test import render_test

import goboom_env
from goboom_env import GameConfig
from goboom_env.cards import face_of
from goboom_env.render import IMAGE_SIZE, render_rgb

SHAPE = (*IMAGE_SIZE, 3)
HAND_ROWS = slice(252, 314)
"""The rows of the image where the shown hand's cards are drawn."""
CLASSIC2 = GameConfig(variant="classic", num_players=2)
BLACK_HAND = ["2C", "5C", "9S", "JS", "QC", "KS", "AS"]
RED_HAND = ["3H", "6D", "8H", "TD", "QH", "KD", "AH"]


def red_pixels(image: np.ndarray) -> int:
    """Pixels of the red of hearts and diamonds."""
    r, g, b = (image[..., i].astype(int) for i in range(3))
    return int(((r > 150) & (g < 60) & (b < 60)).sum())


def dealt(hands: list[list[str]], render_seat: int | None = 0, config: GameConfig = CLASSIC2) -> goboom_env.raw_env:
    env = goboom_env.raw_env(config=config, render_mode="rgb_array", render_seat=render_seat)
    env.reset(options={"deck": deck_for(config, hands, dealer=1), "dealer": 1})
    return env


def test_rgb_array_is_a_listed_mode_and_gives_an_rgb_image() -> None:
    assert "rgb_array" in goboom_env.raw_env.metadata["render_modes"]
    env = goboom_env.env(render_mode="rgb_array")
    env.reset(seed=0)
    image = env.render()
    assert isinstance(image, np.ndarray) and image.shape == SHAPE and image.dtype == np.uint8
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 4  # a drawing, not a blank canvas


@pytest.mark.parametrize("fields", [{"variant": "classic", "num_players": 4}, {"variant": "jokers", "num_players": 3}])
def test_pettingzoo_render_test_passes_with_rgb_array(fields: dict, capsys: pytest.CaptureFixture[str]) -> None:
    render_test(lambda render_mode=None: goboom_env.env(render_mode=render_mode, **fields),
                custom_tests={"rgb_array": lambda image: image.shape == SHAPE})
    capsys.readouterr()  # human mode printed the table


def test_the_image_changes_when_a_card_is_played() -> None:
    env = dealt([BLACK_HAND, RED_HAND], render_seat=None)  # the dealer is P1: P0 leads
    before = env.render()
    env.step(face_of("AS"))
    after = env.render()
    assert not np.array_equal(before, after)
    assert not np.array_equal(before[120:216], after[120:216])  # the trick now holds the ace
    assert red_pixels(after[HAND_ROWS]) > 0 and red_pixels(before[HAND_ROWS]) == 0  # P1's red hand is shown now


def test_different_hands_draw_differently_and_only_where_the_hand_is() -> None:
    black, red = dealt([BLACK_HAND, RED_HAND]).render(), dealt([RED_HAND, BLACK_HAND]).render()
    assert red_pixels(black[HAND_ROWS]) == 0 and red_pixels(red[HAND_ROWS]) > 500
    changed = np.flatnonzero((black != red).any(axis=(1, 2)))
    assert changed.min() >= HAND_ROWS.start and changed.max() < HAND_ROWS.stop
    swapped = dealt([[*BLACK_HAND[:-1], "AH"], [*RED_HAND[:-1], "AS"]]).render()  # one card differs
    assert not np.array_equal(black, swapped)


def test_the_image_shows_the_render_seat_or_else_the_player_to_move() -> None:
    env = dealt([BLACK_HAND, RED_HAND], render_seat=1)
    assert red_pixels(env.render()[HAND_ROWS]) > 0  # seat 1's hand although seat 0 is to move
    assert np.array_equal(env.render(), render_rgb(env.match.hand, env.match, 1))
    mover = dealt([BLACK_HAND, RED_HAND], render_seat=None)
    assert np.array_equal(mover.render(), render_rgb(mover.match.hand, mover.match, 0))


def test_the_image_is_the_state_drawn_again() -> None:
    """Two envs in one state draw one image; the same env drawn twice draws it again."""
    first, second = (goboom_env.raw_env(variant="jokers", num_players=4, render_mode="rgb_array") for _ in range(2))
    first.reset(seed=3)
    second.reset(seed=3)
    assert np.array_equal(first.render(), second.render()) and np.array_equal(first.render(), first.render())


@pytest.mark.parametrize("fields", [
    {"variant": "classic", "num_players": 12},
    {"variant": "jokers", "num_players": 12, "hand_size": 4, "episode": "match"},
    {"variant": "jokers", "num_players": 2, "hand_size": 20},
])
def test_every_state_of_a_game_draws_an_image_of_one_size(fields: dict) -> None:
    """The largest tables, a whole match, long hands: the drawing stays inside the image."""
    env = goboom_env.env(render_mode="rgb_array", **fields)
    env.reset(seed=1)
    images = []
    for step in aec_steps(env, random_legal(np.random.default_rng(1)), max_iter=600):
        if step.agent == env.possible_agents[0] or step.done:
            images.append(env.render())
    assert len(images) > 5
    assert all(image.shape == SHAPE and image.dtype == np.uint8 for image in images)
    assert len({image.tobytes() for image in images}) > 1


def test_the_other_modes_are_unchanged() -> None:
    env = goboom_env.env(render_mode="ansi")
    env.reset(seed=0)
    assert env.render().startswith("Go Boom (classic, 4 players)")
