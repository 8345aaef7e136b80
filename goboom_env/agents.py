"""The Policy protocol and the baseline agents, selectable by name (``make_agent``).

An agent maps what one player may know to a legal action (R3.2, R4.1): the observation dict of
the environment (``"observation"`` vector and ``"action_mask"``) and, for agents that need it,
a :class:`~goboom_env.info.PlayerView` of that seat. Randomness comes from a seeded generator.

Agent specs (CLI and Python): ``random``, ``name:key=value,key=value`` for parametrised agents,
``ppo:path/to/model.zip`` and ``rllib:path/to/checkpoint`` for learned policies (loaded lazily
by the training packages, so this module never imports them). A path that contains ``=`` is written
``ppo:path=PATH``; boolean options take true/false, yes/no or 1/0 (:func:`spec_bool`), nothing else.

=================  =========  ==========================================================================
spec               variant    idea (details in each class docstring)
=================  =========  ==========================================================================
``random``         both       uniform over the legal actions
``classic-tricks`` classic    keep the lead: win tricks cheaply, lead cards the others can hardly follow
``classic-cover``  classic    keep a flexible hand: shed the card whose loss leaves the most cards followable
``jokers-shed``    jokers     shed high-point cards, keep the next play open, boom instead of drawing
``jokers-boom``    jokers     times booms (hit a player about to go out), plays cards the others can hardly match
``heuristic``      both       alias of the strongest heuristic of the config's variant (:data:`BEST_HEURISTIC`)
``mc:budget=N``    both       determinized Monte-Carlo search (:mod:`goboom_env.search`), N rollouts a move
``ppo:PATH``       both       a MaskablePPO model (``goboom_env.training.sb3``)
``rllib:PATH``     both       an RLlib checkpoint (``goboom_env.training.rllib_policy``)
=================  =========  ==========================================================================

Heuristics read only the observation vector (decoded with :func:`goboom_env.observation.layout`),
so they work as opponents inside the PettingZoo env too. Agents may define ``reseed(seed)``: runners
call it before each game so that results do not depend on which process played which game.
"""

from __future__ import annotations

import abc
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from goboom_env.cards import (
    ACES_MASK,
    CLASSIC_POINTS,
    DRAW_OR_PASS,
    JOKER,
    JOKERS_POINTS,
    MATCH_MASKS,
    NUM_FACES,
    faces_in,
)
from goboom_env.config import GameConfig
from goboom_env.observation import layout
from goboom_env.search import MonteCarloAgent


@runtime_checkable
class Policy(Protocol):
    """Anything that picks a legal action for one seat."""

    name: str

    def act(self, observation: dict[str, np.ndarray], view: Any | None = None) -> int:
        """A legal action for the observation (``observation["action_mask"]`` marks them)."""
        ...


class RandomAgent:
    """Uniform over the legal actions: the floor every other agent must beat."""

    needs_view = False

    def __init__(self, config: GameConfig | None = None, seed: int | None = None) -> None:
        self.name = "random"
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray], view: Any | None = None) -> int:
        return int(self.rng.choice(np.flatnonzero(observation["action_mask"])))

    def reseed(self, seed: int | None) -> None:
        """Restart the generator (runners call this before each game)."""
        self.rng = np.random.default_rng(seed)


# -- the observation decoded for rule-based agents ------------------------------------------

_MATCH = np.zeros((52, NUM_FACES), np.int64)
"""``_MATCH[c, x] = 1`` when face ``x`` matches card ``c`` by suit or rank (R1.5, R2.5)."""
for _c in range(52):
    _MATCH[_c, faces_in(MATCH_MASKS[_c])] = 1


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


class TableDecoder:
    """Turns observation vectors of one configuration into :class:`Table` objects."""

    def __init__(self, config: GameConfig) -> None:
        self.n = config.num_players
        self.slices = layout(self.n)
        self.copies = np.full(NUM_FACES, float(config.num_decks))
        self.copies[JOKER] = float(max(config.num_jokers, 1))
        self.total = np.full(NUM_FACES, config.num_decks, np.int64)
        self.total[JOKER] = config.num_jokers
        self.deck_size = config.deck_size

    def decode(self, observation: dict[str, np.ndarray]) -> Table:
        """Decode one observation dict (as returned by ``raw_env.observe``)."""
        vec = np.asarray(observation["observation"], np.float64)
        sl = self.slices
        hand = np.rint(vec[sl["hand"]] * self.copies).astype(np.int64)
        seen = np.rint(vec[sl["seen"]] * self.copies).astype(np.int64)
        led = _one_hot(vec[sl["led"]])
        best = led
        if led >= 0:
            for row in vec[sl["trick"]].reshape(self.n, NUM_FACES):
                face = _one_hot(row)
                if face // 13 == led // 13 and face > best:  # R1.7: only the led suit wins
                    best = face
        return Table(
            hand=hand, unseen=self.total - hand - seen,
            legal=np.flatnonzero(observation["action_mask"]).tolist(),
            sizes=np.rint(vec[sl["hand_sizes"]] * self.deck_size).astype(np.int64),
            stock=round(float(vec[sl["stock"]][0]) * self.deck_size),
            led=led, best=best,
        )


def _one_hot(block: np.ndarray) -> int:
    hot = np.flatnonzero(block)
    return int(hot[0]) if len(hot) else -1


class HeuristicAgent(abc.ABC):
    """Base of the rule-based agents: decodes the observation, plays forced moves, breaks ties at random."""

    name = "heuristic"
    variant = ""
    needs_view = False

    def __init__(self, config: GameConfig, seed: int | None = None) -> None:
        if config.variant != self.variant:
            raise ValueError(
                f"agent {self.name!r} plays variant={self.variant!r} but the config has "
                f"variant={config.variant!r}; use 'heuristic' for the best agent of any variant"
            )
        self.config = config
        self.decoder = TableDecoder(config)
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int | None) -> None:
        """Restart the tie-breaking generator (runners call this before each game)."""
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray], view: Any | None = None) -> int:
        """The heuristic's legal action for this observation."""
        table = self.decoder.decode(observation)
        if not table.legal:
            raise ValueError(f"{self.name}: the action_mask has no legal action (is this seat to move?)")
        if len(table.legal) == 1:
            return table.legal[0]
        return int(self.choose(table))

    @abc.abstractmethod
    def choose(self, table: Table) -> int:
        """Pick among two or more legal actions (each heuristic's own rule)."""

    def _argmax(self, cards: list[int], scores: np.ndarray) -> int:
        """The card with the highest score, ties broken with the agent's generator."""
        scores = np.asarray(scores, np.float64)
        top = np.flatnonzero(scores == scores.max())
        pick = top[0] if len(top) == 1 else top[self.rng.integers(len(top))]
        return cards[int(pick)]


_CLASSIC_PTS = np.array(CLASSIC_POINTS[:52], np.float64)
_MATCH_J = np.vstack([_MATCH, np.zeros((1, NUM_FACES), np.int64)])
"""``_MATCH`` with a zero row for the joker (it matches nothing, R2.6)."""
_JOKERS_PTS = np.array(JOKERS_POINTS, np.float64)


class ClassicCoverAgent(HeuristicAgent):
    """Classic: keep a flexible hand, because a player who cannot follow must draw (R1.6).

    Plays (leading or following) the card whose loss keeps the most unseen cards followable: after
    the play, count the unseen cards matching at least one card left in hand (the leads we could
    still follow). Among equal cards, shed the higher in points (they cost most when someone goes
    out, R1.11, R1.12), then the more followable one on the lead.
    """

    name = "classic-cover"
    variant = "classic"

    def choose(self, t: Table) -> int:
        cards = [a for a in t.legal if a != DRAW_OR_PASS]
        follow = _MATCH[cards] @ t.unseen
        tiebreak = _CLASSIC_PTS[cards] / 100.0 - (follow / 10_000.0 if t.led < 0 else 0.0)
        return self._argmax(cards, self.kept(t, cards) + tiebreak)

    @staticmethod
    def kept(t: Table, cards: list[int]) -> np.ndarray:
        """Per candidate card: unseen cards still matched by some card left in hand after playing it."""
        cover = t.hand[:52] @ _MATCH
        after = cover[None, :] - _MATCH[cards]
        return (after > 0) @ t.unseen


class ClassicTricksAgent(ClassicCoverAgent):
    """Classic: keep the lead (R1.7, R1.8) and a flexible hand; the leader always sheds a card.

    * Follow: win the trick whenever a card of the led suit beats the best one so far, with the
      lowest such card (keeps the high ones for later tricks); if we cannot win, shed as
      ``classic-cover`` does.
    * Lead: the card that keeps our hand flexible (``classic-cover``'s count) minus the number of
      unseen cards that could follow it: scarce suits and ranks send the others drawing (R1.6).
    """

    name = "classic-tricks"
    variant = "classic"

    def choose(self, t: Table) -> int:
        cards = [a for a in t.legal if a != DRAW_OR_PASS]
        if t.led >= 0:
            winners = [c for c in cards if c // 13 == t.led // 13 and c > t.best]
            if winners:
                return min(winners)
            return super().choose(t)
        follow = _MATCH[cards] @ t.unseen
        return self._argmax(cards, self.kept(t, cards) - follow + _CLASSIC_PTS[cards] / 100.0)


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

    def __init__(self, config: GameConfig, seed: int | None = None) -> None:
        super().__init__(config, seed)
        self.boom_mask = ACES_MASK if config.aces_mode else 1 << JOKER
        self.boom_faces = faces_in(self.boom_mask)
        self.plain = np.ones(NUM_FACES, np.int64)
        self.plain[self.boom_faces] = 0

    def split(self, t: Table) -> tuple[list[int], list[int]]:
        """(matching non-boom plays, boom plays) among the legal actions."""
        plays = [a for a in t.legal if a != DRAW_OR_PASS and not (self.boom_mask >> a) & 1]
        booms = [a for a in t.legal if a != DRAW_OR_PASS and (self.boom_mask >> a) & 1]
        return plays, booms

    def shed(self, t: Table, cards: list[int]) -> int:
        """The card worth most points plus 3 per remaining card matching it, minus the scarcity term."""
        hand = t.hand * self.plain
        rows = _MATCH_J[cards]
        followups = rows @ hand - hand[cards]
        score = _JOKERS_PTS[cards] + 3.0 * followups
        if self.scarcity:
            score = score - self.scarcity * (rows @ t.unseen)
        return self._argmax(cards, score)

    def choose(self, t: Table) -> int:
        plays, booms = self.split(t)
        if plays:
            return self.shed(t, plays)
        if booms:
            return self.shed(t, booms)
        return DRAW_OR_PASS


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
    scarcity = 2.0

    def choose(self, t: Table) -> int:
        booms = self.split(t)[1]
        if booms and t.stock > 0 and t.sizes[1:].min() <= 1:
            return self.shed(t, booms)
        return super().choose(t)


BEST_HEURISTIC: dict[str, str] = {"classic": "classic-tricks", "jokers": "jokers-boom"}
"""The ``heuristic`` alias per variant: the heuristic that scored best in docs/evaluation.md."""
HEURISTICS: dict[str, tuple[str, ...]] = {
    "classic": ("classic-tricks", "classic-cover"),
    "jokers": ("jokers-shed", "jokers-boom"),
}
"""The rule-based agents of each variant."""


def make_heuristic(config: GameConfig, seed: int | None = None) -> Policy:
    """The ``heuristic`` alias: the best rule-based agent for ``config.variant``."""
    return make_agent(BEST_HEURISTIC[config.variant], config, seed)


def baselines(config: GameConfig) -> list[str]:
    """Specs of the built-in baselines for a config: random, then the variant's heuristics."""
    return ["random", *HEURISTICS[config.variant]]


AgentFactory = Callable[..., Policy]
"""``factory(config, seed, **params) -> Policy``; for path loaders ``params`` holds ``path``."""

AGENTS: dict[str, AgentFactory | str] = {
    "random": RandomAgent,
    "classic-tricks": ClassicTricksAgent,
    "classic-cover": ClassicCoverAgent,
    "jokers-shed": JokersShedAgent,
    "jokers-boom": JokersBoomAgent,
    "heuristic": make_heuristic,
    "mc": MonteCarloAgent,
    "ppo": "goboom_env.training.sb3:load_ppo_agent",
    "rllib": "goboom_env.training.rllib_policy:load_rllib_agent",
}
"""Agent names -> factory, or a lazy ``"module:function"`` string (learned-policy loaders)."""


def register_agent(name: str, factory: AgentFactory | str) -> None:
    """Add an agent (or a lazy ``"module:function"`` loader) under ``name``."""
    AGENTS[name] = factory


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split an agent spec: ``"mc:budget=200"`` -> ``("mc", {"budget": 200})``;
    ``"ppo:runs/x/model.zip"`` -> ``("ppo", {"path": "runs/x/model.zip"})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    params: dict[str, Any] = {}
    if rest:
        if "=" not in rest:
            params["path"] = rest
        else:
            for item in rest.split(","):
                key, sep, value = item.partition("=")
                key = key.strip()
                if not sep or not key:
                    raise ValueError(f"bad parameter {item!r} in agent spec {spec!r}: expected key=value")
                if not key.isidentifier():
                    raise ValueError(f"{key!r} in agent spec {spec!r} is not an option name; a path that contains "
                                     f"'=' must be written as {name}:path=PATH (paths may not contain ',')")
                params[key] = value.strip() if key == "path" else _parse_value(value.strip())
    return name, params


def make_agent(spec: str, config: GameConfig, seed: int | None = None) -> Policy:
    """Create an agent from a spec string (see the module docstring)."""
    name, params = parse_spec(spec)
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; known agents: {sorted(AGENTS)}")
    factory = AGENTS[name]
    if isinstance(factory, str):
        module, _, attr = factory.partition(":")
        try:
            factory = getattr(importlib.import_module(module), attr)
        except ImportError as exc:
            raise ValueError(f"agent {name!r} needs an optional dependency that is missing: {exc}") from exc
    params = _booleans_checked(factory, params, spec)
    try:
        return factory(config, seed, **params)
    except TypeError as exc:
        raise ValueError(f"bad parameters for agent {name!r} in spec {spec!r}: {exc}") from exc


TRUE_WORDS = ("true", "yes", "1")
FALSE_WORDS = ("false", "no", "0")


def spec_bool(option: str, value: Any) -> bool:
    """A boolean agent option (``deterministic=no``): True/False, 1/0 or the words true/false, yes/no, 1/0 in any
    case; anything else (``off``, ``maybe``, 2) is a ValueError naming the option, never read as true."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip().lower() if isinstance(value, (str, int, np.integer)) else None
    if text in TRUE_WORDS or text in FALSE_WORDS:
        return text in TRUE_WORDS
    raise ValueError(f"option {option!r} must be true/false, yes/no or 1/0, got {value!r}")


def _booleans_checked(factory: Callable[..., Any], params: dict[str, Any], spec: str) -> dict[str, Any]:
    """``params`` with every option that the factory annotates as ``bool`` parsed by :func:`spec_bool`."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return params
    out = dict(params)
    for key, value in params.items():
        parameter = signature.parameters.get(key)
        annotation = getattr(parameter, "annotation", None)
        if annotation is bool or (isinstance(annotation, str) and annotation.replace(" ", "") in ("bool",
                                                                                                  "bool|None")):
            try:
                out[key] = spec_bool(key, value)
            except ValueError as exc:
                raise ValueError(f"{exc} in agent spec {spec!r}") from None
    return out


def _parse_value(text: str) -> Any:
    """An option value as written in a spec: an int, a float, a boolean word, or the text itself."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false", "yes", "no"):
        return text.lower() in TRUE_WORDS
    return text
