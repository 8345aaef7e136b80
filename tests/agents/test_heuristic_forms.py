"""One rule, three forms: the heuristic agents, the batched rules they and the
fast trainer's opponents apply (goboom_env.agents.batched) and the search rollouts on the engine's bitmasks
(goboom_env.agents.rollout) choose among the same best-scored cards, state for state, over random states of every
configuration family.

Ties are compared as sets: every card that a form's tie-break can pick. With two decks the rollouts count faces, not
copies (as their module says): there they are compared with the batched rule reading the table that way."""

from __future__ import annotations

import dataclasses
import functools
import random

import numpy as np
import pytest
from helpers import config_id

from goboom_env import GameConfig, Hand, Match
from goboom_env.agents import batched, make_agent
from goboom_env.agents.batched import Tables
from goboom_env.agents.heuristics import HeuristicAgent
from goboom_env.agents.rollout import AGENT_MOVES, HEURISTIC_MOVES, Move, play_out, seen_mask
from goboom_env.cards import DRAW_OR_PASS, code_of, codes_of_faces
from goboom_env.player_view import observe

CONFIGS = [
    GameConfig(num_players=2),
    GameConfig(num_players=4),
    GameConfig(num_players=7),  # two decks (R1.1)
    GameConfig(num_players=12),
    GameConfig(num_players=4, scoring="reverse"),
    GameConfig(num_players=4, num_decks=2),
    GameConfig(variant="jokers", num_players=3),
    GameConfig(variant="jokers", num_players=4),
    GameConfig(variant="jokers", num_players=4, num_jokers=0),  # aces mode (R2.8)
    GameConfig(variant="jokers", num_players=4, after_joker="any"),
    GameConfig(variant="jokers", num_players=4, num_decks=2, num_jokers=3),
]
STATES = 1500
"""Decision states with a choice (two or more legal actions) per configuration."""


def _id(config: GameConfig) -> str:
    return config_id(config) + ("-2decks" if config.num_decks == 2 and config.num_players < 7 else "")


def choice_states(config: GameConfig, count: int, seed: int) -> list[Hand]:
    """Copies of the first ``count`` states with two or more legal actions met in hands of random play."""
    rng = np.random.default_rng(seed)
    states: list[Hand] = []
    while len(states) < count:
        hand = Match(config, rng).hand
        while not hand.over and len(states) < count:
            legal = hand.legal_actions()
            if len(legal) > 1:
                states.append(hand.copy())
            hand.apply(legal[int(rng.integers(len(legal)))])
    return states


def best_cards(choice: batched.Choice) -> list[set[int]]:
    """Per row: the best-scored cards of the pool ({DRAW_OR_PASS} where the pool is empty)."""
    score = np.where(choice.pool, choice.score, -np.inf)
    best = choice.pool & (score == score.max(1, keepdims=True))
    return [set(np.flatnonzero(row).tolist()) or {DRAW_OR_PASS} for row in best]


def by_face(t: Tables, classic: bool) -> Tables:
    """The tables as the rollouts count with two decks: a face is unseen while no copy is in hand and some copy is
    unseen; ``jokers-boom`` counts its own plain cards one per face."""
    unseen = ((t.unseen > 0) & (t.hand == 0)).astype(np.int64)
    return dataclasses.replace(t, unseen=unseen, hand=t.hand if classic else np.minimum(t.hand, 1))


class _Index:
    """A stand-in for the agent's generator: ``integers(k)`` returns the index it is set to (and records k)."""

    def __init__(self) -> None:
        self.index, self.sizes = 0, []

    def integers(self, k: int) -> int:
        self.sizes.append(k)
        return self.index


def agent_cards(agent: HeuristicAgent, obs: dict[str, np.ndarray]) -> set[int]:
    """Every action the scalar agent plays for ``obs``, whichever way its generator breaks the tie."""
    rng = _Index()
    agent.rng = rng  # type: ignore[assignment]
    picks = {agent.act(obs)}
    for index in range(1, max(rng.sizes, default=1)):
        rng.index = index
        picks.add(agent.act(obs))
    return picks


class _Uniform(random.Random):
    """A stand-in for the rollout's generator: ``random()`` returns the value it is set to (and counts calls)."""

    value, calls = 0.0, 0

    def random(self) -> float:
        self.calls += 1
        return self.value


def rollout_cards(move: Move, hand: Hand) -> set[int]:
    """Every action the rollout policy plays in ``hand``, whichever way its generator breaks the tie: the values
    (i + 0.5) / 53 pick every index of up to 53 tied cards."""
    rng = _Uniform()
    picks = {move(hand, seen_mask(hand), rng)}
    if rng.calls:
        for i in range(53):
            rng.value = (i + 0.5) / 53
            picks.add(move(hand, seen_mask(hand), rng))
    return picks


def describe(config: GameConfig, index: int, hand: Hand) -> str:
    """The state, for a failure message."""
    seat = hand.current
    facts = [
        f"{_id(config)} state {index}: seat {seat} holds {codes_of_faces(hand.hand_faces(seat))}",
        f"legal {[code_of(a) if a < DRAW_OR_PASS else 'draw' for a in hand.legal_actions()]}",
        f"sizes {hand.sizes}, stock {len(hand.stock)}, seen {codes_of_faces(np.flatnonzero(hand.seen).tolist())}",
    ]
    if config.is_classic:
        facts.append(
            f"led {code_of(hand.led) if hand.led >= 0 else '-'}, best "
            f"{code_of(hand.best_face) if hand.best_face >= 0 else '-'}"
        )
    else:
        facts.append(f"match card {code_of(hand.match_face)}, top {code_of(hand.top)}")
    return "; ".join(facts)


def _jokers(rule):
    """A jokers rule of the tables alone, for a configuration's boom faces."""
    return lambda config: functools.partial(lambda t, boom: rule(t, boom), boom=batched.boom_faces(config))


RULES = {
    "classic-tricks": lambda config: batched.classic_tricks,
    "classic-cover": lambda config: batched.classic_cover,
    "jokers-boom": _jokers(batched.jokers_boom),
    "jokers-shed": _jokers(batched.jokers_shed),
}
"""Each heuristic's batched rule for a configuration."""
CASES = [(config, name) for config in CONFIGS for name in RULES if name.startswith(config.variant)]


@pytest.mark.parametrize(("config", "name"), CASES, ids=[f"{_id(c)}-{n}" for c, n in CASES])
def test_agent_batched_rule_and_rollout_choose_the_same_cards(config: GameConfig, name: str) -> None:
    """Every heuristic: the scalar agent's tie set equals the batched rule's best cards, the rollout move's
    (:data:`AGENT_MOVES`) tie set equals them too (with two decks: the rule counting faces), and for the best
    heuristics the batched opponent plays one of them."""
    states = choice_states(config, STATES, seed=config.num_players * 7 + config.num_decks)
    observations = [observe(hand, hand.current) for hand in states]
    obs = np.stack([o["observation"] for o in observations])
    mask = np.stack([o["action_mask"] for o in observations])
    decoder = batched.TablesDecoder(config)
    tables = decoder.decode(obs, mask)
    rule = RULES[name](config)
    best = best_cards(rule(tables))
    faces_best = best_cards(rule(by_face(tables, config.is_classic)))
    best_heuristic = name in ("classic-tricks", "jokers-boom")
    opponent = batched.batched_heuristic(config).act(obs, mask, np.random.default_rng(0)) if best_heuristic else None
    agent = make_agent(name, config, 0)
    move = AGENT_MOVES[name]
    assert (move is HEURISTIC_MOVES[config.variant]) == best_heuristic
    ties = 0
    for i, hand in enumerate(states):
        scalar = agent_cards(agent, observations[i])
        rollout = rollout_cards(move, hand)
        expected_rollout = best[i] if config.num_decks == 1 else faces_best[i]
        where = describe(config, i, hand)
        assert scalar == best[i], f"{where}: agent {scalar} != batched {best[i]}"
        if opponent is not None:
            assert opponent[i] in best[i], f"{where}: batched opponent {opponent[i]} not in {best[i]}"
        assert rollout == expected_rollout, f"{where}: rollout {rollout} != batched {expected_rollout}"
        ties += len(best[i]) > 1
    assert ties > STATES // 20  # the tie sets were compared too, not only single picks


@pytest.mark.parametrize("config", [CONFIGS[1], CONFIGS[2], CONFIGS[7], CONFIGS[8]], ids=_id)
def test_rollouts_keep_the_out_of_play_faces_as_they_play(config: GameConfig) -> None:
    """The faces out of play that :func:`play_out` tracks move by move are :func:`seen_mask` of the hand (the joker's
    bit aside: no rule reads it)."""
    deck = (1 << 52) - 1
    checked = 0

    def checking(hand: Hand, seen: int, rng: random.Random) -> int:
        nonlocal checked
        assert seen & deck == seen_mask(hand) & deck
        checked += 1
        return HEURISTIC_MOVES[config.variant](hand, seen, rng)

    rng = random.Random(3)
    for hand in choice_states(config, 40, seed=5):
        play_out(hand, checking, rng)
    assert checked > 200
