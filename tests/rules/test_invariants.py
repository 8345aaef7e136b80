"""Invariants over many random games for the whole configuration matrix.

Each step of every game is checked against an independent reading of the rules: card
conservation (hands + stock + seen == the deck multiset), the legal actions recomputed from the
public event log (R1.5, R1.6, R2.5-R2.8, R3.2), trick winners (R1.7), termination, match scores
recomputed from hand points (R1.11, R1.12, R2.11, R2.12), and, through the PettingZoo env, the
action mask, zero-sum rewards in every reward/episode mode. The fast tier plays a few dozen
games per configuration; the ``slow`` soak plays thousands.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from helpers import new_hands, on_matrix, play_aec, random_legal, soak, soak_count
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import goboom_env
from goboom_env import GameConfig, Hand, Match
from goboom_env.cards import CLASSIC_POINTS, DRAW_OR_PASS, JOKER, JOKERS_POINTS, deck_faces
from goboom_env.engine import win_rewards

MAX_STEPS = 20_000
"""No hand of any tested configuration comes near this many decisions; reaching it = a stall."""


class PublicTracker:
    """Follows one hand through its event log alone and recomputes the legal actions of the
    player to move from the rules text, independently of the engine's own bookkeeping."""

    def __init__(self, hand: Hand) -> None:
        self.hand = hand
        self.config = hand.config
        self.read = 0
        self.led = self.match = self.top = -1
        self.trick: list[tuple[int, int]] = []
        self.leader = -1

    def update(self) -> None:
        """Consume the events appended since the last call, checking trick winners (R1.7)."""
        events = self.hand.events
        for event in events[self.read:]:
            kind = event[0]
            if kind == "upcard":
                self.top = self.match = event[1]
            elif kind == "play" and self.config.is_classic:
                if self.led < 0:
                    self.led, self.leader = event[2], event[1]
                self.trick.append((event[1], event[2]))
            elif kind == "play":
                self.top = event[2]
                if event[2] != JOKER:
                    self.match = event[2]
            elif kind == "trick":
                assert event[1] == self._trick_winner(), f"wrong trick winner in {self.trick} (R1.7)"
                self.led, self.trick = -1, []
        self.read = len(events)

    def _trick_winner(self) -> int:
        led_suit = self.led // 13
        best_seat, best = self.leader, self.led
        for seat, face in self.trick[1:]:
            if face // 13 == led_suit and face % 13 > best % 13:  # strictly higher: first of twins wins
                best_seat, best = seat, face
        return best_seat

    def legal(self) -> set[int]:
        """The legal actions of the player to move, from the rules (R3.2)."""
        hand = self.hand
        held = {f for f in hand.hand_faces(hand.current)}
        if self.config.is_classic:
            if self.led < 0:
                return held  # R1.4, R1.8: lead anything
            follow = {f for f in held if f // 13 == self.led // 13 or f % 13 == self.led % 13}
            return follow or {DRAW_OR_PASS}  # R1.5, R1.6
        aces = self.config.aces_mode
        boom = {f for f in held if f != JOKER and f % 13 == 12} if aces else held & {JOKER}
        anything = self.config.after_joker == "any" and not aces and self.top == JOKER
        matching = {f for f in held - boom
                    if anything or f // 13 == self.match // 13 or f % 13 == self.match % 13}
        return matching | boom if matching else boom | {DRAW_OR_PASS}  # R2.5-R2.8


def check_conservation(hand: Hand, deck: Counter) -> None:
    """Hands + stock + cards out of play == the deck multiset; sizes agree with the hands."""
    held = Counter(f for s in range(hand.n) for f in hand.hand_faces(s))
    seen = Counter({f: c for f, c in enumerate(hand.seen) if c})
    assert held + Counter(hand.stock) + seen == deck
    assert hand.sizes == [len(hand.hand_faces(s)) for s in range(hand.n)]


def play_checked_hand(hand: Hand, rng: np.random.Generator) -> int:
    """Play ``hand`` to the end with random legal actions, checking every step; returns the steps."""
    deck = Counter(deck_faces(hand.config.num_decks, hand.config.num_jokers))
    tracker = PublicTracker(hand)
    steps = 0
    while not hand.over:
        tracker.update()
        check_conservation(hand, deck)
        legal = hand.legal_actions()
        assert legal, "the player to move has no legal action (R3.2)"
        assert set(legal) == tracker.legal(), f"legal actions disagree with the rules at step {steps}"
        hand.apply(legal[int(rng.integers(len(legal)))])
        steps += 1
        assert steps < MAX_STEPS, "the hand does not terminate"
    tracker.update()
    check_conservation(hand, deck)
    check_hand_result(hand)
    return steps


def check_hand_result(hand: Hand) -> None:
    """The finished hand has one out-player with no cards, or is blocked on an empty stock (R2.10)."""
    table = CLASSIC_POINTS if hand.config.is_classic else JOKERS_POINTS
    points = [sum(table[f] for f in hand.hand_faces(s)) for s in range(hand.n)]
    assert hand.hand_points() == points
    if hand.blocked:
        assert not hand.config.is_classic and not hand.stock and hand.winner is None
        assert [e[0] for e in hand.events[-hand.n - 1:]] == ["pass"] * hand.n + ["blocked"]
        assert hand.winners() == [s for s in range(hand.n) if points[s] == min(points)]
    else:
        assert hand.sizes[hand.winner] == 0 and hand.winners() == [hand.winner]
        assert hand.events[-1] == ("out", hand.winner)


def expected_deltas(config: GameConfig, winner: int | None, points: list[int]) -> list[int]:
    """R1.11: the winner takes everybody's points; R1.12, R2.11: everyone adds their own."""
    if config.scoring == "standard":
        return [sum(points) if s == winner else 0 for s in range(len(points))]
    return list(points)


def play_checked_match(config: GameConfig, rng: np.random.Generator) -> Match:
    """A whole match of random play, each hand checked, scores recomputed from hand points."""
    match = Match(config, rng)
    totals = [0] * config.num_players
    dealer = match.hand.dealer
    while not match.over:
        assert match.hand.dealer == dealer % config.num_players  # R1.2, R2.2
        play_checked_hand(match.hand, rng)
        points = match.hand.hand_points()
        result = match.finish_hand()
        assert list(result.hand_points) == points
        totals = [t + d for t, d in zip(totals, expected_deltas(config, result.winner, points))]
        assert match.scores == totals
        dealer += 1
        if not match.over:
            assert not _match_ended(config, totals, match.hands_played)
    assert _match_ended(config, totals, match.hands_played)
    if config.scoring == "standard":
        assert match.winners == [s for s, t in enumerate(totals) if t >= config.target_score]
        assert len(match.winners) == 1
    else:
        assert match.winners == [s for s, t in enumerate(totals) if t == min(totals)]
    return match


def play_checked_games(config: GameConfig, seed: int, hands: int = 0, matches: int = 0) -> None:
    """Play ``hands`` checked hands, then ``matches`` checked matches, from one generator seeded by ``seed`` plus
    the player count (each table size its own games)."""
    rng = np.random.default_rng(seed + config.num_players)
    for hand in new_hands(config, rng, hands):
        play_checked_hand(hand, rng)
    for _ in range(matches):
        play_checked_match(config, rng)


def _match_ended(config: GameConfig, totals: list[int], hands: int) -> bool:
    if config.variant == "jokers":
        return hands == config.rounds
    return max(totals) >= config.target_score


@on_matrix
def test_random_hands_follow_the_rules(config: GameConfig) -> None:
    play_checked_games(config, seed=1000, hands=40)


@on_matrix
def test_random_matches_score_consistently(config: GameConfig) -> None:
    play_checked_games(config, seed=2000, matches=4)


def random_config(variant: str, num_players: int, hand_size: int, option: str) -> GameConfig:
    """A valid config from hypothesis' draws (the hand size is capped to what the decks allow)."""
    options = {
        "classic": {"reverse": {"scoring": "reverse"}, "two-decks": {"num_decks": 2}},
        "jokers": {"aces": {"num_jokers": 0}, "any": {"after_joker": "any"}, "many-jokers": {"num_jokers": 7},
                   "two-decks": {"num_decks": 2}},
    }
    fields = {"variant": variant, "num_players": num_players, **options[variant].get(option, {})}
    decks = fields.get("num_decks", 2 if variant == "classic" and num_players >= 7 else 1)
    limit = (52 * decks - (variant == "jokers")) // num_players
    return GameConfig(hand_size=min(hand_size, limit), **fields)


CASES = {
    "variant": st.sampled_from(["classic", "jokers"]),
    "num_players": st.integers(2, 12),
    "hand_size": st.integers(1, 10),
    "option": st.sampled_from(["default", "reverse", "aces", "any", "many-jokers", "two-decks"]),
    "seed": st.integers(0, 2**32 - 1),
}


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(**CASES)
def test_random_configs_follow_the_rules(variant: str, num_players: int, hand_size: int, option: str,
                                         seed: int) -> None:
    rng = np.random.default_rng(seed)
    play_checked_hand(Match(random_config(variant, num_players, hand_size, option), rng).hand, rng)


@soak
@settings(max_examples=soak_count(1000, 200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**CASES)
def test_soak_random_configs(variant: str, num_players: int, hand_size: int, option: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    play_checked_match(random_config(variant, num_players, hand_size, option), rng)


# -- through the PettingZoo env --------------------------------------------------------------------

ENV_MODES = [("win", "hand"), ("win", "match"), ("points", "hand"), ("points", "match")]


def play_env_game(config: GameConfig, reward: str, episode: str, seed: int) -> tuple[list[float], Match]:
    """One env episode with random legal actions, checking the action masks at every step;
    returns each seat's total reward and the engine's final match state."""
    env = goboom_env.env(config=config, reward=reward, episode=episode)
    env.reset(seed=seed)
    raw = env.unwrapped
    rng = np.random.default_rng(seed)

    def checked_random(observation: dict[str, np.ndarray]) -> int:
        """A random legal action, after checking the mask against the engine's legal actions."""
        hand = raw.match.hand
        mask = observation["action_mask"]
        assert env.agent_selection == f"player_{hand.current}"
        assert np.flatnonzero(mask).tolist() == hand.legal_actions() and mask.any()
        other = env.possible_agents[(hand.current + 1) % config.num_players]
        assert not raw.observe(other)["action_mask"].any()
        return random_legal(rng)(observation)

    totals = play_aec(env, checked_random, max_iter=MAX_STEPS * 5)
    assert all(raw.terminations.values()) and not env.agents
    return [totals[a] for a in env.possible_agents], raw.match


def expected_rewards(config: GameConfig, reward: str, episode: str, match: Match) -> list[float]:
    """The documented rewards (env.py, Rewards) recomputed from the engine's results."""
    n = config.num_players
    hand = match.hand
    if reward == "win":
        return win_rewards(n, hand.winners() if episode == "hand" else match.winners)
    if episode == "hand":
        outcomes = [(hand.winner, hand.hand_points())]
    else:
        outcomes = [(r.winner, list(r.hand_points)) for r in match.results]
    total = [0.0] * n
    for winner, points in outcomes:
        deltas = expected_deltas(config, winner, points)
        gains = deltas if config.scoring == "standard" else [-d for d in deltas]
        total = [t + (g - sum(gains) / n) / 100.0 for t, g in zip(total, gains)]
    return total


@on_matrix
@pytest.mark.parametrize(("reward", "episode"), ENV_MODES, ids=[f"{r}-{e}" for r, e in ENV_MODES])
def test_env_masks_and_zero_sum_rewards(config: GameConfig, reward: str, episode: str) -> None:
    for seed in range(2 if episode == "match" else 4):
        totals, match = play_env_game(config, reward, episode, seed)
        assert sum(totals) == pytest.approx(0.0, abs=1e-9)
        assert totals == pytest.approx(expected_rewards(config, reward, episode, match), abs=1e-9)
        assert match.over == (episode == "match")


# -- soak --------------------------------------------------------------------------------------------


@soak
@on_matrix
def test_soak_thousands_of_hands(config: GameConfig) -> None:
    """1,500 hands and 60 matches per configuration (``make soak``; a fifth of that in CI)."""
    play_checked_games(config, seed=31337, hands=soak_count(1500, 300), matches=soak_count(60, 12))


@soak
@on_matrix
def test_soak_env_games(config: GameConfig) -> None:
    """100 env episodes per configuration (``make soak``; 20 in CI), every reward and episode mode alike."""
    for seed in range(soak_count(100, 20)):
        reward, episode = ENV_MODES[seed % 4]
        play_env_game(config, reward, episode, 10_000 + seed)
