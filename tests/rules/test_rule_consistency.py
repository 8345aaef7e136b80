"""Rule by rule, the engine (:class:`goboom_env.engine.Match`) and the compiled kernels of
:class:`goboom_env.vector.VectorGame` hold the same state after every move.

Both are driven from the same deal (deck order and dealer) with the same random legal actions. After each
move every rule-level field is compared (the legal actions, the seat to move, the trick, the top and match
card, the hands, the stock, the end of the hand, the scores), and a difference fails naming the rule of
RULES.md that the field stands for, the configuration, the move number and both values: where the
observation differential test (test_vector.py) says *that* the two differ, this one says *which rule*.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import config_id, on_matrix

from goboom_env import GameConfig
from goboom_env.cards import NUM_FACES
from goboom_env.engine import Hand, Match
from goboom_env.hand_state import Phase

vector = pytest.importorskip("goboom_env.vector", reason="numba is not installed (goboom-env[vector])")
_k = pytest.importorskip("goboom_env._vector_kernels")

Field = Callable[[Match, dict[str, np.ndarray], np.ndarray], tuple[Any, Any]]
"""(engine value, kernel value) of one rule-level field, from the match, the kernel state of game 0 and its
action mask."""


def _g(state: dict[str, np.ndarray], *columns: int) -> tuple[int, ...]:
    return tuple(int(state["g"][0, c]) for c in columns)


def _stock(match: Match, state: dict[str, np.ndarray]) -> tuple[list[int], list[int]]:
    """The stock from its top down: the engine keeps its top last, the kernel reads from a head index."""
    head, length = _g(state, _k.G_STOCK_HEAD, _k.G_STOCK_LEN)
    return list(reversed(match.hand.stock)), state["stock"][0, head:head + length].tolist()


FIELDS: dict[str, tuple[str, Field]] = {
    "legal actions": ("R1.4-R1.6 (classic), R2.5-R2.8 (jokers), R3", lambda m, s, mask: (
        m.hand.legal_actions() if m.hand.phase != Phase.OVER else [], np.flatnonzero(mask).tolist())),
    "seat to move": ("R1.4, R1.8 (the trick winner leads), R2.4", lambda m, s, _: (
        m.hand.current, *_g(s, _k.G_CURRENT))),
    "phase": ("R1.4-R1.9, R2.4-R2.10", lambda m, s, _: (int(m.hand.phase), *_g(s, _k.G_PHASE))),
    "trick: leader, led card, best card and its seat": ("R1.5, R1.7 (the first of twins wins)", lambda m, s, _: (
        (m.hand.leader, m.hand.led, m.hand.best_face, m.hand.best_seat),
        _g(s, _k.G_LEADER, _k.G_LED, _k.G_BEST_FACE, _k.G_BEST_SEAT))),
    "cards of the trick": ("R1.5-R1.7", lambda m, s, _: (list(m.hand.trick), s["trick"][0].tolist())),
    "turns and passes": ("R1.7, R2.7, R2.10", lambda m, s, _: (
        (m.hand.turns, m.hand.passes), _g(s, _k.G_TURNS, _k.G_PASSES))),
    "top card and match card": ("R2.5, R2.6 (a joker on top keeps the match card)", lambda m, s, _: (
        (m.hand.top, m.hand.match_face), _g(s, _k.G_TOP, _k.G_MATCH))),
    "hands": ("R1.3, R1.6, R2.3, R2.7 (deals and draws)", lambda m, s, _: (
        [list(c) for c in m.hand.counts], s["counts"][0].tolist())),
    "hand sizes": ("R1.6, R2.7", lambda m, s, _: (list(m.hand.sizes), s["sizes"][0].tolist())),
    "cards drawn per seat": ("R1.6, R2.7", lambda m, s, _: (list(m.hand.drawn), s["drawn"][0].tolist())),
    "stock": ("R0.5 (drawn from the top), R1.6, R2.7", lambda m, s, _: _stock(m, s)),
    "cards seen face up": ("R4", lambda m, s, _: (list(m.hand.seen), s["seen"][0, :NUM_FACES].tolist())),
    "end of the hand: winner, blocked": ("R1.9, R2.9, R2.10", lambda m, s, _: (
        (-1 if m.hand.winner is None else m.hand.winner, int(m.hand.blocked)), _g(s, _k.G_WINNER, _k.G_BLOCKED))),
    "match scores": ("R1.10-R1.12, R2.11", lambda m, s, _: (list(m.scores), s["scores"][0].tolist())),
}


def differences(match: Match, state: dict[str, np.ndarray], mask: np.ndarray) -> list[str]:
    """Each field on which the engine and the kernels differ, as ``"<field> (<rule>): engine X, kernels Y"``."""
    found = []
    for name, (rule, field) in FIELDS.items():
        engine, kernels = field(match, state, mask)
        if engine != kernels:
            found.append(f"{name} ({rule}): engine {engine}, kernels {kernels}")
    return found


def check_game(config: GameConfig, seed: int, episode: str) -> int:
    """One hand or one match, engine and kernels side by side from the kernel's own deals; returns the moves
    compared. In a match the kernels deal the next hand as the last card of a hand is played: the engine then
    scores its hand and takes the same deal."""
    game = vector.VectorGame(config, num_envs=1, seed=seed, episode=episode, autoreset=False)
    _, mask, _ = game.reset()
    match = Match(config, np.random.default_rng(0), deck=game.decks[0].tolist(), dealer=int(game.dealers[0]))
    rng = np.random.default_rng(seed)
    state = game._state
    for move in range(100_000):
        if match.hand.over and episode == "match" and not match.over:
            match.finish_hand()
            if not match.over:
                match.hand = Hand(config, game.decks[0].tolist(), match.hand.dealer)
        problems = differences(match, state, mask)
        assert not problems, (f"{config_id(config)} {episode} seed {seed}, after {move} moves:\n  "
                              + "\n  ".join(problems))
        if match.hand.over and (episode == "hand" or match.over):
            return move
        action = int(rng.choice(np.flatnonzero(mask)))
        match.hand.apply(action)
        _, mask, _, _, _ = game.step(np.array([action]))
        mask = mask.copy()
    raise AssertionError(f"{config_id(config)} {episode} seed {seed}: the game did not end in 100,000 moves")


@on_matrix
def test_engine_and_kernels_agree_rule_by_rule(config: GameConfig) -> None:
    """Four hands and two whole matches (their scores and the deals of later hands) per configuration."""
    moves = [check_game(config, seed, "hand") for seed in range(4)]
    moves += [check_game(config, seed, "match") for seed in (4, 5)]
    assert min(moves) > 0


def test_a_difference_names_its_rule() -> None:
    """The check can fail: a kernel state with one field changed is reported under that field's rule."""
    config = GameConfig(variant="jokers", num_players=3)
    game = vector.VectorGame(config, num_envs=1, seed=3, episode="hand", autoreset=False)
    _, mask, _ = game.reset()
    match = Match(config, np.random.default_rng(0), deck=game.decks[0].tolist(), dealer=int(game.dealers[0]))
    assert differences(match, game._state, mask) == []
    game._state["g"][0, _k.G_MATCH] = (match.hand.match_face + 1) % NUM_FACES
    assert [p.split(" (")[0] for p in differences(match, game._state, mask)] == ["top card and match card"]
    assert "R2.5, R2.6" in differences(match, game._state, mask)[0]
