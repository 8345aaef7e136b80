"""The rule-based agents: each decodes the observation vector into a :class:`Table` and applies its rule.

They read only the observation (decoded by the observation encoder itself,
:meth:`goboom_env.observation.ObservationEncoder.counts`), so they also work as opponents inside the
PettingZoo env. Their rules are those of :mod:`goboom_env.agents.batched`, applied to a batch of one;
ties are broken with the agent's seeded generator.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field

import numpy as np

from goboom_env.agents import batched
from goboom_env.agents.batched import FOLLOW_WEIGHT, SCARCITY_WEIGHT, Choice, Tables, TablesDecoder
from goboom_env.agents.policy import Agent, Observation, Policy
from goboom_env.cards import DRAW_OR_PASS, NUM_ACTIONS, boom_mask
from goboom_env.config import GameConfig
from goboom_env.player_view import PlayerView

# -- the observation decoded for rule-based agents ------------------------------------------


@dataclass(frozen=True)
class Table:
    """An observation decoded into card counts and public facts, seen from the observer (R4.1)."""

    hand: np.ndarray
    """Own cards per face (53 ints)."""
    unseen: np.ndarray
    """Per face: copies in other hands or the stock (not own, not out of play)."""
    legal: list[int]
    sizes: np.ndarray
    """Cards in each relative seat's hand (0 = the observer, 1 = its left, ...)."""
    stock: int
    led: int
    """Classic: the face led to the current trick, -1 when the observer leads."""
    best: int
    """Classic: the winning face of the current trick so far (-1 before the lead)."""
    decoded: Tables | None = field(default=None, compare=False, repr=False)
    """The same facts as a batch of one, when the table was decoded (:meth:`rows` builds it otherwise)."""

    def rows(self) -> Tables:
        """This table as a batch of one: what the rules of :mod:`goboom_env.agents.batched` read."""
        if self.decoded is not None:
            return self.decoded
        legal = np.zeros((1, NUM_ACTIONS), bool)
        legal[0, self.legal] = True
        return Tables(
            hand=np.asarray(self.hand)[None],
            unseen=np.asarray(self.unseen)[None],
            legal=legal,
            sizes=np.asarray(self.sizes)[None],
            stock=np.array([self.stock]),
            led=np.array([self.led]),
            best=np.array([self.best]),
        )


class TableDecoder:
    """Turns observation vectors of one configuration into :class:`Table` objects, through the
    encoder's own decoding (:meth:`~goboom_env.observation.ObservationEncoder.counts`)."""

    def __init__(self, config: GameConfig) -> None:
        self.decoder = TablesDecoder(config)

    def decode(self, observation: Observation) -> Table:
        """Decode one observation dict (as returned by ``raw_env.observe``)."""
        mask = np.asarray(observation["action_mask"])
        t = self.decoder.decode(np.asarray(observation["observation"])[None], mask[None])
        return Table(
            hand=t.hand[0],
            unseen=t.unseen[0],
            legal=np.flatnonzero(mask).tolist(),
            sizes=t.sizes[0],
            stock=int(t.stock[0]),
            led=int(t.led[0]),
            best=int(t.best[0]),
            decoded=t,
        )


class HeuristicAgent(Agent):
    """Base of the rule-based agents: decodes the observation, plays forced moves, breaks ties at random."""

    name = "heuristic"
    variant = ""
    _ties: list[int] | None = None
    """While :meth:`action_distribution` runs: the tied best cards found so far."""

    def __init__(self, config: GameConfig, seed: int | None = None) -> None:
        if config.variant != self.variant:
            raise ValueError(
                f"agent {self.name!r} plays variant={self.variant!r} but the config has "
                f"variant={config.variant!r}; use 'heuristic' for the best agent of any variant"
            )
        super().__init__(config, seed)
        self.config: GameConfig = config
        self.decoder = TableDecoder(config)

    def act(self, observation: Observation, view: PlayerView | None = None) -> int:
        """The heuristic's legal action for this observation."""
        table = self.decoder.decode(observation)
        if not table.legal:
            raise ValueError(f"{self.name}: the action_mask has no legal action (is this seat to move?)")
        if len(table.legal) == 1:
            return table.legal[0]
        return int(self.choose(table))

    def action_distribution(self, observation: Observation) -> dict[int, float]:
        """What :meth:`act` may play here, with its probability: the tied best-scored cards, equally likely
        (what luck-adjusted evaluation needs of a known policy). The agent's generator is left untouched."""
        table = self.decoder.decode(observation)
        if len(table.legal) <= 1:
            return {a: 1.0 for a in table.legal}
        self._ties = []
        try:
            best = int(self.choose(table))
            ties = self._ties or [best]
        finally:
            self._ties = None
        return {a: 1.0 / len(ties) for a in ties}

    @abc.abstractmethod
    def choice(self, t: Tables) -> Choice:
        """The heuristic's rule on decoded rows: per row the cards it chooses among and their scores. On a batch of
        one it is this agent's move (:meth:`choose`); on many rows, what the batched single-agent env plays."""

    def choose(self, table: Table) -> int:
        """Pick among two or more legal actions: a best-scored card of the rule's :meth:`choice`, ties at random."""
        return self.pick(self.choice(table.rows()))

    def pick(self, choice: Choice) -> int:
        """The best-scored card of a one-row :class:`~goboom_env.agents.batched.Choice`, DRAW_OR_PASS when its
        pool is empty."""
        cards = np.flatnonzero(choice.pool[0]).tolist()
        return self._argmax(cards, choice.score[0, cards]) if cards else DRAW_OR_PASS

    def _argmax(self, cards: list[int], scores: np.ndarray) -> int:
        """The card with the highest score, ties broken with the agent's generator."""
        scores = np.asarray(scores, np.float64)
        top = np.flatnonzero(scores == scores.max())
        if self._ties is not None:  # action_distribution asks for every tied card, without drawing
            self._ties += [cards[int(i)] for i in top]
            return cards[int(top[0])]
        pick = top[0] if len(top) == 1 else top[self.rng.integers(len(top))]
        return cards[int(pick)]


class ClassicCoverAgent(HeuristicAgent):
    """Classic: keep a flexible hand, because a player who cannot follow must draw (R1.6).

    Plays (leading or following) the card whose loss keeps the most unseen cards followable: after
    the play, count the unseen cards matching at least one card left in hand (the leads we could
    still follow). Among equal cards, shed the higher in points (they cost most when someone goes
    out, R1.11, R1.12), then the more followable one on the lead.
    """

    name = "classic-cover"
    variant = "classic"
    rule = staticmethod(batched.classic_cover)
    """The rule of :mod:`goboom_env.agents.batched` that the agent applies."""

    def choice(self, t: Tables) -> Choice:
        return self.rule(t)


class ClassicTricksAgent(ClassicCoverAgent):
    """Classic: keep the lead (R1.7, R1.8) and a flexible hand; the leader always sheds a card.

    * Follow: win the trick whenever a card of the led suit beats the best one so far, with the
      lowest such card (keeps the high ones for later tricks); if we cannot win, shed as
      ``classic-cover`` does.
    * Lead: the card that keeps our hand flexible (``classic-cover``'s count) minus the number of
      unseen cards that could follow it: scarce suits and ranks send the others drawing (R1.6).
    """

    name = "classic-tricks"
    rule = staticmethod(batched.classic_tricks)


class JokersShedAgent(HeuristicAgent):
    """Jokers: shed high-point cards early (R2.11) while keeping the next turn playable (R2.5).

    Among matching non-boom cards, plays the one with the most points plus three per other card in
    hand that would match it next turn. Never draws while holding a boom card: booming sheds a card
    and makes the others draw instead (R2.6, R2.7); but it keeps boom cards while it has other plays,
    since a boom card can always be played.
    """

    name = "jokers-shed"
    variant = "jokers"
    scarcity = 0.0
    """Weight of the unseen cards that could match the card we play (the next players' options)."""
    follow = FOLLOW_WEIGHT
    """Weight of the other plain cards in hand that would match the card we play (our next turn's options)."""
    boom_first = False
    """Boom at once when an opponent holds one card and the stock can make them draw."""

    def __init__(self, config: GameConfig, seed: int | None = None) -> None:
        super().__init__(config, seed)
        self.boom_mask = boom_mask(config.aces_mode)
        self.boom = batched.boom_faces(config)

    def split(self, t: Table) -> tuple[list[int], list[int]]:
        """(matching non-boom plays, boom plays) among the legal actions."""
        plays = [a for a in t.legal if a != DRAW_OR_PASS and not (self.boom_mask >> a) & 1]
        booms = [a for a in t.legal if a != DRAW_OR_PASS and (self.boom_mask >> a) & 1]
        return plays, booms

    def shed(self, t: Table, cards: list[int]) -> int:
        """The candidate card with the best :meth:`card_scores`."""
        return self._argmax(cards, self.card_scores(t, cards))

    def card_scores(self, t: Table, cards: list[int]) -> np.ndarray:
        """Per candidate card: its points, plus ``follow`` per remaining plain card matching it, minus ``scarcity``
        per unseen card matching it (:func:`~goboom_env.agents.batched.jokers_scores`)."""
        return batched.jokers_scores(t.rows(), self.boom, self.follow, self.scarcity)[0, cards]

    def choice(self, t: Tables) -> Choice:
        """The matching plain cards (else the boom cards, :func:`~goboom_env.agents.batched.jokers_pool`) scored by
        :func:`~goboom_env.agents.batched.jokers_scores` with this agent's weights."""
        return Choice(pool=batched.jokers_pool(t, self.boom, self.boom_first),
                      score=batched.jokers_scores(t, self.boom, self.follow, self.scarcity))


class JokersBoomAgent(JokersShedAgent):
    """Jokers: time the boom cards and play cards the others can hardly match (R2.5-R2.9).

    * BOOM at once when an opponent is down to one card and the stock can make them draw.
    * Otherwise keep boom cards as the answer to a missing match (never draw while holding one).
    * Among matching cards, prefer those few unseen cards match (two points off per unseen matching
      card: the next players are more likely to draw), then high points and own follow-ups as in
      ``jokers-shed``.
    """

    name = "jokers-boom"
    variant = "jokers"
    scarcity = SCARCITY_WEIGHT
    boom_first = True


HEURISTIC_AGENTS: dict[str, type[HeuristicAgent]] = {
    agent.name: agent for agent in (ClassicTricksAgent, ClassicCoverAgent, JokersShedAgent, JokersBoomAgent)
}
"""The rule-based agents by name."""
BEST_HEURISTIC: dict[str, str] = {"classic": "classic-tricks", "jokers": "jokers-boom"}
"""The ``heuristic`` alias per variant: the heuristic that scored best in docs/evaluation.md."""
HEURISTICS: dict[str, tuple[str, ...]] = {
    "classic": ("classic-tricks", "classic-cover"),
    "jokers": ("jokers-shed", "jokers-boom"),
}
"""The rule-based agents of each variant."""


def make_heuristic(config: GameConfig, seed: int | None = None) -> Policy:
    """The ``heuristic`` alias: the best rule-based agent for ``config.variant``."""
    return HEURISTIC_AGENTS[BEST_HEURISTIC[config.variant]](config, seed)
