"""Go Boom as an OpenSpiel game, registered from Python as ``python_goboom`` (the ``openspiel`` extra)::

    import pyspiel
    import goboom_env.openspiel  # registers python_goboom

    game = pyspiel.load_game("python_goboom", {"players": 4, "variant": "jokers"})

The rules are the engine's; this module adds what OpenSpiel asks for (parameters, chance nodes that deal card by
card, serialization as the checked action history, never unpickled). The Interop guide's "OpenSpiel" has the details.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from goboom_env.cards import CLASSIC_POINTS, DRAW_OR_PASS, JOKERS_POINTS, NUM_ACTIONS, NUM_FACES, code_of, deck_faces
from goboom_env.config import MAX_PLAYERS, GameConfig, check_int, errors_prefixed
from goboom_env.engine import Hand, Match
from goboom_env.episode import check_episode, end_hand
from goboom_env.events import event_text
from goboom_env.hand_state import deck_counts, deck_multiset
from goboom_env.hints import needs_extra
from goboom_env.observation import encoder_for
from goboom_env.player_view import PlayerView
from goboom_env.render import render_text
from goboom_env.scoring import points_rewards, win_rewards

with needs_extra("the python_goboom OpenSpiel game (goboom_env.openspiel)"):
    import pyspiel

SHORT_NAME = "python_goboom"

DEFAULT_PARAMS: dict[str, Any] = {
    "players": 4, "variant": "classic", "hand_size": 7, "num_decks": 0, "num_jokers": -1, "scoring": "",
    "target_score": 0, "rounds": 0, "after_joker": "match", "episode": "hand", "reward": "win",
}
"""The game's parameters and defaults (OpenSpiel has no None): ``0``, ``-1`` and ``""`` ask for the field derived
from the rules (R1.1, R2.1, R2.2)."""

_DERIVE = {"num_decks": 0, "num_jokers": -1, "scoring": "", "target_score": 0, "rounds": 0}

GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME, long_name="Python Go Boom", dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION, utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL, max_num_players=MAX_PLAYERS, min_num_players=2,
    provides_information_state_string=True, provides_information_state_tensor=True,
    provides_observation_string=True, provides_observation_tensor=True, parameter_specification=DEFAULT_PARAMS,
)


def read_params(params: dict[str, Any]) -> tuple[GameConfig, str, str]:
    """The configuration, episode and reward of a parameter dict (missing keys take :data:`DEFAULT_PARAMS`)."""
    if unknown := sorted(set(params) - set(DEFAULT_PARAMS)):
        raise ValueError(f"{SHORT_NAME}: unknown parameters {unknown}; known: {sorted(DEFAULT_PARAMS)}")
    merged = {**DEFAULT_PARAMS, **params}
    episode, reward = merged.pop("episode"), merged.pop("reward")
    with errors_prefixed(SHORT_NAME):
        check_episode(episode, reward)
        fields = {"num_players": check_int("players", merged.pop("players"), 2, MAX_PLAYERS)} | {
            name: None if name in _DERIVE and value == _DERIVE[name] else value for name, value in merged.items()}
        return GameConfig(**fields), episode, reward


def params_of(config: GameConfig, episode: str = "hand", reward: str = "win") -> dict[str, Any]:
    """The parameters that load ``config`` (derived fields left to derive): the inverse of :func:`read_params`."""
    explicit = config.explicit_fields()
    return {"players": config.num_players, "episode": episode, "reward": reward} | {
        name: explicit[name] for name in DEFAULT_PARAMS if name in explicit}


def game_info(config: GameConfig, episode: str, reward: str) -> pyspiel.GameInfo:
    """Sizes and bounds of the game: per hand at most ``deck size + 1`` chance nodes and ``(n + 2) x (deck size +
    1)`` turns (each card is played or drawn once; at most ``n`` turns between two plays)."""
    n, deck = config.num_players, config.deck_size
    if episode == "hand":
        hands = 1
    else:  # at most: a classic hand adds a point or more to the totals (R1.10-R1.12), a jokers match has ``rounds``
        hands = n * (config.target_score - 1) + 1 if config.is_classic else config.rounds
    if reward == "win":
        low, high = -1.0 / (n - 1), 1.0
    else:  # each hand's reward is a gain minus the mean gain, / 100; a gain is at most every card's points
        points = CLASSIC_POINTS if config.is_classic else JOKERS_POINTS
        bound = hands * sum(points[f] for f in deck_faces(config.num_decks, config.num_jokers)) / 100.0
        low, high = -bound, bound
    return pyspiel.GameInfo(num_distinct_actions=NUM_ACTIONS, max_chance_outcomes=NUM_FACES, num_players=n,
                            min_utility=low, max_utility=high, utility_sum=0.0,
                            max_game_length=hands * ((n + 3) * (deck + 1)))


class GoBoomGame(pyspiel.Game):
    """The ``python_goboom`` game: one hand or one match of Go Boom (see the module docstring)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        self.config, self.episode, self.reward = read_params(params)
        super().__init__(GAME_TYPE, game_info(self.config, self.episode, self.reward), {**DEFAULT_PARAMS, **params})

    def new_initial_state(self) -> GoBoomState:
        """The state before the deal (a chance node)."""
        return GoBoomState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: dict | None = None) -> GoBoomObserver:
        """The observer of one player (tensor, named views and strings)."""
        return GoBoomObserver(self.config, iig_obs_type, params)

    def deserialize_state(self, text: str) -> GoBoomState:
        """The state of ``text`` (one action a line, or the state part of ``pyspiel.serialize_game_and_state``),
        replayed from :meth:`new_initial_state` with every action checked; the pickle in pyspiel's form is never
        unpickled, only compared. ValueError naming the problem."""
        if not isinstance(text, str):
            raise TypeError(f"{SHORT_NAME}: a serialized state is a str, got {type(text).__name__}")
        if text.startswith(_HISTORY_TAG):
            return _load_pyspiel_text(self, text)
        return _replay(self, ((action, None) for action in _action_lines(text)))


class GoBoomState(pyspiel.State):
    """A game in progress: the deal being drawn by chance, or a :class:`Match` being played."""

    def __init__(self, game: GoBoomGame) -> None:
        super().__init__(game)
        self.episode, self.reward = game.episode, game.reward
        self.n = game.config.num_players
        self.match: Match | None = None
        self.dealer: int | None = None  # of the hand being dealt (the first one is drawn by chance)
        self.deck: list[int] | None = []  # the cards dealt so far (index 0 = top), or None while a hand is played
        self._left = deck_counts(game.config)
        self._points = [0.0] * self.n
        self._returns: list[float] | None = None
        self._replayable = True  # the action history gives this state (not so when resampled or from a view)

    @property
    def config(self) -> GameConfig:
        """The game's configuration (read from the game so that ``clone()`` does not copy it)."""
        return self.get_game().config

    # -- OpenSpiel API ------------------------------------------------------------------------------

    def current_player(self) -> int:
        """The seat to move, CHANCE while dealing, TERMINAL at the end."""
        if self._returns is not None:
            return pyspiel.PlayerId.TERMINAL
        if self.deck is not None:
            return pyspiel.PlayerId.CHANCE
        return self.match.hand.current

    def _legal_actions(self, player: int) -> list[int]:
        if self.deck is not None or self._returns is not None or player != self.match.hand.current:
            return []
        return self.match.hand.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The dealer (uniform), then the next card from the top: each face by its copies left."""
        if self.dealer is None:
            return [(seat, 1.0 / self.n) for seat in range(self.n)]
        total = sum(self._left)
        return [(face, count / total) for face, count in enumerate(self._left) if count]

    def _apply_action(self, action: int) -> None:
        """Apply a player's action (checked by :meth:`Hand.apply`) or a chance outcome (checked here)."""
        if self._returns is not None:
            raise ValueError(f"{SHORT_NAME}: the game is over; no action is legal (got {action})")
        if self.deck is not None:
            if problem := self._chance_problem(action):
                raise ValueError(f"{SHORT_NAME}: chance action {action} is not a legal outcome: {problem}")
            self._deal(action)
            return
        hand = self.match.hand
        hand.apply(action)
        if hand.over:
            self._end_hand()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"dealer P{action}" if self.dealer is None else f"deal {code_of(action)}"
        return "draw/pass" if action == DRAW_OR_PASS else f"play {code_of(action)}"

    def is_terminal(self) -> bool:
        return self._returns is not None

    def returns(self) -> list[float]:
        """Each player's return: zero until the game is over (terminal rewards)."""
        return list(self._returns) if self._returns is not None else [0.0] * self.n

    def serialize(self) -> str:
        """The action history, one action a line (OpenSpiel's format for its C++ games); ValueError for a state
        that its history does not give (resampled, or from :func:`state_from_view`)."""
        if not self._replayable:
            raise ValueError(f"{SHORT_NAME}: this state was resampled or built from a view, so its action history "
                             "does not give it; serialize the state it was resampled from")
        return "".join(f"{action}\n" for action in self.history())

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> GoBoomState:
        """A state the player cannot tell from this one: hidden cards dealt at random, seeded by the sampler."""
        clone = self.clone()
        if self.deck is None and self._returns is None:
            rng = np.random.default_rng(int(probability_sampler() * 2**63))
            clone.match.hand = PlayerView.of(self.match, player_id).sample_hand(rng)
            clone._replayable = False
        return clone

    def __str__(self) -> str:
        if self.deck is None:
            return render_text(self.match.hand, self.match, reveal=True)
        if self.dealer is None:
            return "dealing: the dealer is drawn"
        return f"dealing: dealer P{self.dealer}, {len(self.deck)} cards drawn"

    # -- dealing and the end of a hand -----------------------------------------------------------

    def _chance_problem(self, action: int) -> str:
        """Why ``action`` is not a legal chance outcome here ("" when it is one)."""
        if self.dealer is None:
            return "" if 0 <= action < self.n else f"the first chance node draws the dealer, a seat in 0..{self.n - 1}"
        if not 0 <= action < NUM_FACES:
            return f"a dealt card is a face in 0..{NUM_FACES - 1}"
        if self._left[action]:
            return ""
        copies = deck_counts(self.config)[action]
        if not copies:
            return f"this deck holds no {code_of(action)}"
        return f"every {code_of(action)} of the deck ({copies}) is dealt already"

    def _deal(self, action: int) -> None:
        if self.dealer is None:
            self.dealer = action
            return
        self.deck.append(action)
        self._left[action] -= 1
        if len(self.deck) < self.config.deck_size:
            return
        deck, self.deck = self.deck, None
        if self.match is None:
            self.match = _ClonableMatch(self.config, np.random.default_rng(0), deck, self.dealer)
        else:  # a later hand of a match: Match.finish_hand dealt it from its own generator; deal ours
            self.match.hand = Hand(self.config, deck, self.dealer)

    def _end_hand(self) -> None:
        hand = self.match.hand
        if self.reward == "points":
            self._points = [p + r for p, r in zip(self._points, points_rewards(self.config, hand.winner,
                                                                              hand.hand_points()))]
        result = end_hand(self.match, self.episode)
        if result is not None:
            self._returns = list(self._points) if self.reward == "points" else win_rewards(self.n, list(result.winners))
            return
        self.dealer = self.match.hand.dealer  # the next dealer, to the left (R1.2, R2.2)
        self.deck = []
        self._left = deck_counts(self.config)


class _ClonableMatch(Match):
    """A :class:`Match` that ``copy.deepcopy`` (OpenSpiel's clone) copies with :meth:`Hand.copy`, sharing what is
    immutable: ten times faster, and search bots clone states all the time."""

    def __deepcopy__(self, memo: dict) -> _ClonableMatch:
        new = copy.copy(self)
        new.hand = self.hand.copy()
        new.scores, new.results, new.winners = list(self.scores), list(self.results), list(self.winners)
        new.rng = copy.deepcopy(self.rng, memo)
        return new


def state_from_view(game: GoBoomGame, view: PlayerView, rng: np.random.Generator) -> GoBoomState:
    """A state of ``game`` that ``view``'s player cannot tell from the real one (hidden cards dealt at random, no
    action history): how an agent that sees only its view hands a position to an OpenSpiel bot."""
    if view.config != game.config:
        raise ValueError(f"the view's configuration {view.config} is not the game's {game.config}")
    state = game.new_initial_state()
    match = _ClonableMatch(game.config, np.random.default_rng(0), list(deck_multiset(view.config.num_decks,
                                                                           view.config.num_jokers)), view.dealer)
    match.hand = view.sample_hand(rng)
    match.scores = list(view.scores)
    state.match, state.dealer, state.deck = match, view.dealer, None
    state._replayable = False
    return state


# -- loading serialized states: replayed, never unpickled -------------------------------------------

_HISTORY_TAG, _MOVE_NUMBER_TAG, _DICT_TAG = "history=", "move_number=", "__dict__="  # pyspiel's three lines
_ACTION = re.compile(r"\d{1,9}", re.ASCII)
_PLAYER_ACTION = re.compile(r"(-?\d{1,9}):(\d{1,9})", re.ASCII)


def _action_lines(text: str) -> Iterator[int]:
    """The actions of a one-action-a-line history (blank lines skipped); ValueError at a line that is not one."""
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        if not _ACTION.fullmatch(line.strip()):
            raise ValueError(f"{SHORT_NAME}: cannot load the state: line {number} is not an action id "
                             f"(a non-negative integer), got {_shown(line)}")
        yield int(line)


def _replay(game: GoBoomGame, steps: Iterable[tuple[int, int | None]]) -> GoBoomState:
    """The state reached by the ``(action, player)`` steps from the initial state, each checked legal and, where
    ``player`` is given, made by that player (``-1``: chance)."""
    state = game.new_initial_state()
    for index, (action, player) in enumerate(steps):
        mover = state.current_player()
        try:
            if player is not None and player != mover:
                raise ValueError(f"the history says player {player} moved; player {mover} is to move "
                                 "(-1 = chance, -4 = the game is over)")
            state.apply_action(action)
        except (ValueError, pyspiel.SpielError) as exc:
            problem = str(exc).removeprefix(f"{SHORT_NAME}: ")
            raise ValueError(f"{SHORT_NAME}: cannot load the state: history entry {index} (action {action}): "
                             f"{problem}") from None
    return state


def _load_pyspiel_text(game: GoBoomGame, text: str) -> GoBoomState:
    """A state from pyspiel's serialization: the ``history=`` replayed, then the text compared with what pyspiel
    writes for that state, so that a tampered ``move_number=`` or ``__dict__=`` is refused without unpickling."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) != 3 or not lines[1].startswith(_MOVE_NUMBER_TAG) or not lines[2].startswith(_DICT_TAG):
        raise ValueError(f"{SHORT_NAME}: cannot load the state: pyspiel's form is three lines, "
                         f"{_HISTORY_TAG}..., {_MOVE_NUMBER_TAG}..., {_DICT_TAG}...")
    entries = lines[0][len(_HISTORY_TAG):].split(",") if lines[0] != _HISTORY_TAG else []
    pairs = [_PLAYER_ACTION.fullmatch(entry) for entry in entries]
    bad = next((i for i, pair in enumerate(pairs) if pair is None), None)
    if bad is not None:
        raise ValueError(f"{SHORT_NAME}: cannot load the state: history entry {bad} is not player:action, "
                         f"got {_shown(entries[bad])}")
    state = _replay(game, ((int(pair[2]), int(pair[1])) for pair in pairs))
    if lines != pyspiel.State.serialize(state).split("\n"):
        state.legal_actions()  # cached now, as the original's pickle may hold them
        if lines != pyspiel.State.serialize(state).split("\n"):
            raise ValueError(f"{SHORT_NAME}: cannot load the state: its {_MOVE_NUMBER_TAG} or {_DICT_TAG} field "
                             f"is not what its {_HISTORY_TAG} gives ({SHORT_NAME} replays the history and never "
                             "unpickles)")
    return state


def _shown(text: str, limit: int = 40) -> str:
    """``repr(text)`` cut to ``limit`` characters, for one-line error messages."""
    shown = repr(text)
    return shown if len(shown) <= limit else f"{shown[:limit - 3]}..."


def deserialize_game_and_state(text: str) -> tuple[GoBoomGame, GoBoomState]:
    """The game and state of a ``pyspiel.serialize_game_and_state`` text, the state replayed: use it, not
    ``pyspiel.deserialize_game_and_state`` (which unpickles), for text you did not write. ValueError for bad text."""
    if not isinstance(text, str):
        raise TypeError(f"a serialized game and state is a str, got {type(text).__name__}")
    head, found, state_text = text.partition("\n[State]\n")
    game_text = head.partition("[Game]\n")[2].strip()
    if not found or not re.fullmatch(rf"{SHORT_NAME}(\(.*\))?", game_text):
        raise ValueError(f"not a serialized {SHORT_NAME} game and state: need a [Game] line {SHORT_NAME}(...) "
                         "and a [State] section")
    try:
        game = pyspiel.load_game(game_text)
    except pyspiel.SpielError as exc:
        problem = str(exc).rsplit("OpenSpiel exception: ", 1)[-1]
        raise ValueError(f"{SHORT_NAME}: cannot load the game {_shown(game_text, 80)}: {problem}") from None
    return game, game.deserialize_state(state_text)


class GoBoomObserver:
    """One player's view, OpenSpiel's PyObserver: ``tensor`` (the env's observation vector, not a perfect-recall
    history) and ``dict`` (its named blocks, views of ``tensor``)."""

    def __init__(self, config: GameConfig, iig_obs_type: Any = None, params: dict | None = None) -> None:
        if params:
            raise ValueError(f"{SHORT_NAME}: observer parameters are not supported, got {params}")
        if iig_obs_type is None:
            iig_obs_type = pyspiel.IIGObservationType(perfect_recall=False)
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(f"{SHORT_NAME}: only a player's own observer (public information and its private "
                             f"cards) is supported, got {iig_obs_type}")
        self.perfect_recall = iig_obs_type.perfect_recall
        self.encoder = encoder_for(config)
        self.tensor = np.zeros(self.encoder.size, np.float32)
        self.dict = {name: self.tensor[sl] for name, sl in self.encoder.slices.items()}

    def set_from(self, state: GoBoomState, player: int) -> None:
        """Fill :attr:`tensor` with ``player``'s observation of ``state`` (zeros while dealing)."""
        if state.deck is not None:
            self.tensor.fill(0.0)
            return
        self.tensor[:] = self.encoder.encode(state.match.hand, player, state.match)

    def string_from(self, state: GoBoomState, player: int) -> str:
        """The table as text or, with perfect recall, the information-state string: the player's hand, the scores
        and every public event of the hand (R4.1)."""
        if state.deck is not None:
            dealt = [] if state.dealer is None else [
                f for i, f in enumerate(state.deck[:state.config.hand_size * state.n])
                if (state.dealer + 1 + i) % state.n == player]
            return f"P{player} dealing; own cards so far: {' '.join(code_of(f) for f in sorted(dealt))}"
        match = state.match
        if not self.perfect_recall:
            return render_text(match.hand, match, player)
        hand = match.hand
        events = ", ".join(event_text(e) for e in hand.events)
        return (f"P{player} hand {' '.join(code_of(f) for f in hand.hand_faces(player))} | scores "
                f"{' '.join(map(str, match.scores))} after {match.hands_played} hands | dealer P{hand.dealer} | "
                f"{events}")


pyspiel.register_game(GAME_TYPE, GoBoomGame)

__all__ = ["DEFAULT_PARAMS", "GAME_TYPE", "SHORT_NAME", "GoBoomGame", "GoBoomObserver", "GoBoomState",
           "deserialize_game_and_state", "game_info", "params_of", "read_params", "state_from_view"]
