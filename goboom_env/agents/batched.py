"""The rule-based heuristics on a batch of observations: the one implementation of each heuristic's rule.

A rule (named after the agent it drives) reads observation rows decoded into :class:`Tables` and gives per row the
cards it chooses among and their scores (a :class:`Choice`), for the scalar agents
(:mod:`goboom_env.agents.heuristics`) and the batched opponents (:func:`batched_heuristic`) alike.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from goboom_env.cards import CLASSIC_POINTS, DRAW_OR_PASS, JOKER, JOKERS_POINTS, MATCH_MASKS, NUM_FACES, boom_mask
from goboom_env.config import MAX_PLAYERS, GameConfig
from goboom_env.observation import encoder_for, layout, unpad_observations

_FACES = np.arange(NUM_FACES)
_SUITS = _FACES // 13  # 4 for the joker, which has none
MATCH = ((np.array([*MATCH_MASKS, 0])[:, None] >> _FACES) & 1).astype(np.float64)
"""``MATCH[c, x] = 1`` when face ``x`` matches card ``c`` (R1.5, R2.5; the joker matches nothing, R2.6): symmetric, so
``counts @ MATCH`` is, per card, how many counted cards match it."""

FOLLOW_WEIGHT = 3.0
"""Jokers: score per other plain card in hand that matches the card played (our next turn's plays)."""
SCARCITY_WEIGHT = 2.0
"""``jokers-boom``: score off per unseen card that matches the card played (the next players' plays)."""
_CLASSIC_POINTS = np.array(CLASSIC_POINTS, np.float64)
_JOKERS_POINTS = np.array(JOKERS_POINTS, np.float64)


@dataclass(frozen=True)
class Tables:
    """Observations decoded into card counts and public facts, one row each, seen from its observer (R4.1)."""

    hand: np.ndarray
    """Own cards per face (int64)."""
    unseen: np.ndarray
    """Per face: copies in other hands or the stock (not own, not out of play)."""
    legal: np.ndarray
    """The 54 actions' legality (bool)."""
    sizes: np.ndarray
    """Cards in each relative seat's hand (column 0 = the observer)."""
    stock: np.ndarray
    led: np.ndarray
    """Classic: the face led to the current trick, -1 when the observer leads."""
    best: np.ndarray
    """Classic: the winning face of the current trick so far (-1 before the lead)."""

    @property
    def cards(self) -> np.ndarray:
        """The legal card plays (bool, 53 columns)."""
        return self.legal[:, :NUM_FACES]


class TablesDecoder:
    """Turns observation rows of one configuration into :class:`Tables` (the encoder's own decoding)."""

    def __init__(self, config: GameConfig) -> None:
        self.n = config.num_players
        self.classic = config.is_classic
        self.encoder = encoder_for(config)
        self.total = np.full(NUM_FACES, config.num_decks, np.int64)
        self.total[JOKER] = config.num_jokers

    def decode(self, obs: np.ndarray, mask: np.ndarray) -> Tables:
        """Decode observations ``[B, size]`` (a history layout's by its snapshot part) and masks ``[B, 54]``."""
        counts = self.encoder.counts(obs[:, :self.encoder.size])
        hand = counts["hand"]
        if self.classic:
            led = _one_hot(counts["led"])
            played = _one_hot(counts["trick"].reshape(len(hand), self.n, NUM_FACES))
            same_suit = (played >= 0) & (played // 13 == led[:, None] // 13)  # R1.7: only the led suit wins
            best = np.maximum(np.where(same_suit, played, -1).max(1), led)
        else:
            led = best = np.full(len(hand), -1)
        return Tables(hand=hand, unseen=self.total - hand - counts["seen"], legal=np.asarray(mask).astype(bool),
                      sizes=counts["hand_sizes"], stock=counts["stock"][:, 0], led=led, best=best)


def _one_hot(block: np.ndarray) -> np.ndarray:
    """The face of a one-hot block along its last axis, -1 where it is empty."""
    return block @ (_FACES + 1) - 1


@dataclass(frozen=True)
class Choice:
    """Per row, the candidate cards (``pool``, bool) and their scores (meaningful on the pool; equal ones tie)."""

    pool: np.ndarray
    score: np.ndarray


def kept(t: Tables) -> np.ndarray:
    """Per card in hand: the unseen cards still matched by a card left after playing it (followable leads, R1.6)."""
    cover = t.hand @ MATCH  # per face: own cards that match it
    return (t.unseen * (cover > 0)).sum(1, keepdims=True) - (t.unseen * (cover == 1)) @ MATCH


def followers(t: Tables) -> np.ndarray:
    """Per card: the unseen cards that match it (the cards the next players could answer it with)."""
    return t.unseen @ MATCH


def trick_pool(t: Tables) -> np.ndarray:
    """Classic, per row: the lowest legal card that takes the trick (R1.7) if one does, else every legal card."""
    wins = t.cards & (t.led[:, None] // 13 == _SUITS) & (t.best[:, None] < _FACES)  # no card has the suit -1 // 13
    lowest = wins.argmax(1)[:, None] == _FACES
    return np.where(wins.any(1)[:, None], lowest, t.cards)


def jokers_scores(t: Tables, boom: np.ndarray, follow: float = FOLLOW_WEIGHT, scarcity: float = 0.0) -> np.ndarray:
    """Jokers, per card: its points (R2.11), plus ``follow`` per other plain card in hand that matches it, minus
    ``scarcity`` per unseen card that matches it (``boom``: :func:`boom_faces`)."""
    plain = t.hand * ~boom
    score = _JOKERS_POINTS + follow * (plain @ MATCH - plain)
    if scarcity:
        score = score - scarcity * followers(t)
    return score


def jokers_pool(t: Tables, boom: np.ndarray, boom_first: bool) -> np.ndarray:
    """Jokers, per row: the matching plain cards, else the boom cards (R2.7); with ``boom_first`` the boom cards
    whenever an opponent holds one card and the stock can make them draw."""
    plays, booms = t.cards & ~boom, t.cards & boom
    use_booms = ~plays.any(1)
    if boom_first:
        use_booms |= booms.any(1) & (t.stock > 0) & (t.sizes[:, 1:].min(1) <= 1)
    return np.where(use_booms[:, None], booms, plays)


def boom_faces(config: GameConfig) -> np.ndarray:
    """The boom cards per face (bool, 53): the aces in aces mode (R2.8), else the joker (R2.6)."""
    return ((boom_mask(config.aces_mode) >> _FACES) & 1).astype(bool)


def classic_cover(t: Tables) -> Choice:
    """``classic-cover``: the card whose loss keeps the most unseen cards followable (:func:`kept`); among
    equals the one worth more points (R1.10), then on the lead the one fewer unseen cards follow."""
    leading = (t.led < 0)[:, None]
    tiebreak = _CLASSIC_POINTS / 100.0 - np.where(leading, followers(t) / 10_000.0, 0.0)
    return Choice(pool=t.cards, score=kept(t) + tiebreak)


def classic_tricks(t: Tables) -> Choice:
    """``classic-tricks``: follow with the lowest card that takes the trick; otherwise the card that keeps the
    most unseen cards followable (:func:`kept`), on the lead less the unseen cards that could follow it (they
    send the others drawing, R1.6); among equals the one worth more points."""
    leading = (t.led < 0)[:, None]
    held = kept(t)
    score = np.where(leading, held - followers(t), held) + _CLASSIC_POINTS / 100.0
    return Choice(pool=trick_pool(t), score=score)


def jokers_shed(t: Tables, boom: np.ndarray) -> Choice:
    """``jokers-shed``: the matching plain card worth most points plus :data:`FOLLOW_WEIGHT` per own follow-up;
    boom cards only instead of drawing (:func:`jokers_pool`)."""
    return Choice(pool=jokers_pool(t, boom, boom_first=False), score=jokers_scores(t, boom))


def jokers_boom(t: Tables, boom: np.ndarray) -> Choice:
    """``jokers-boom``: as :func:`jokers_shed` less :data:`SCARCITY_WEIGHT` per unseen card matching the card,
    and a boom card at once when an opponent holds one card and the stock can make them draw."""
    return Choice(pool=jokers_pool(t, boom, boom_first=True), score=jokers_scores(t, boom, scarcity=SCARCITY_WEIGHT))


class BatchOpponent(Protocol):
    """Plays the seats to move of a batch of games: ``actions[i]`` for ``obs[i]``, legal under ``mask[i]``."""

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...


class HeuristicOpponent(abc.ABC):
    """A rule of this module on a batch of observations: per row a best-scored card of its pool, ties at random
    (a millionth of noise), DRAW_OR_PASS where the pool is empty."""

    variant = ""

    def __init__(self, config: GameConfig) -> None:
        if config.variant != self.variant:
            raise ValueError(f"{type(self).__name__} plays the {self.variant} variant; batched_heuristic(config) "
                             "gives the heuristic opponent of either variant")
        self.decoder = TablesDecoder(config)

    @abc.abstractmethod
    def choice(self, t: Tables) -> Choice:
        """The rule's pool and scores for the decoded rows."""

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        choice = self.choice(self.decoder.decode(obs, mask))
        noisy = np.where(choice.pool, choice.score + rng.random(choice.score.shape) * 1e-6, -np.inf)
        return np.where(choice.pool.any(1), noisy.argmax(1), DRAW_OR_PASS)


class ClassicTricksOpponent(HeuristicOpponent):
    """``classic-tricks`` (:func:`classic_tricks`) on a batch, its scores in float32 over the 52 cards (the fast
    trainer's fixed-seed runs depend on this rounding)."""

    variant = "classic"
    points = np.array(CLASSIC_POINTS[:52], np.float32) / 100.0

    def choice(self, t: Tables) -> Choice:
        leading = (t.led < 0)[:, None]
        score = kept(t)[:, :52].astype(np.float32) + self.points
        score = score - np.where(leading, followers(t)[:, :52].astype(np.float32), 0.0)
        return Choice(pool=trick_pool(t)[:, :52], score=score)


class JokersBoomOpponent(HeuristicOpponent):
    """``jokers-boom`` (:func:`jokers_boom`) on a batch."""

    variant = "jokers"

    def __init__(self, config: GameConfig) -> None:
        super().__init__(config)
        self.boom = boom_faces(config)

    def choice(self, t: Tables) -> Choice:
        return jokers_boom(t, self.boom)


class PaddedOpponent:
    """A batched opponent per player count on padded observations (a generalist's games): each row's count is read
    from its ``flags`` block, its rows un-padded for that count's opponent."""

    def __init__(self, opponents: dict[int, BatchOpponent]) -> None:
        self.opponents = opponents
        self.count_entry = layout(MAX_PLAYERS)["flags"].stop - 1  # the padded observation's num_players / 12

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        counts = np.rint(np.asarray(obs[:, self.count_entry], np.float64) * MAX_PLAYERS).astype(np.int64)
        out = np.empty(len(obs), np.int64)
        for k in np.unique(counts):
            if int(k) not in self.opponents:
                raise ValueError(f"no batched opponent for {int(k)} players (has {sorted(self.opponents)})")
            rows = np.flatnonzero(counts == k)
            out[rows] = self.opponents[int(k)].act(unpad_observations(obs[rows], int(k)), mask[rows], rng)
        return out


def batched_heuristic(config: GameConfig, player_counts: Sequence[int] = ()) -> BatchOpponent:
    """The ``heuristic`` alias on a batch (``classic-tricks`` or ``jokers-boom``); with ``player_counts``, on padded
    observations of those counts."""
    if player_counts:
        return PaddedOpponent({int(k): batched_heuristic(config.replace(num_players=int(k))) for k in player_counts})
    return ClassicTricksOpponent(config) if config.is_classic else JokersBoomOpponent(config)
