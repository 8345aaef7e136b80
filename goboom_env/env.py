"""
# Go Boom

| Import               | `import goboom_env; env = goboom_env.env()`            |
|----------------------|--------------------------------------------------------|
| Actions              | Discrete                                               |
| Parallel API         | No                                                     |
| Manual Control       | No                                                     |
| Agents               | `agents = ['player_0', ..., 'player_{n-1}']`           |
| Agents               | 2-12                                                   |
| Action Shape         | Discrete(54)                                           |
| Action Values        | Discrete(54)                                           |
| Observation Shape    | (5 * 53 + 60 * n + 12,): 517 for 4 players            |
| Observation Values   | [0, 1] (scores block: [0, max_score / scale])          |

Go Boom is a shedding card game for 2-12 players in two rule systems (see RULES.md):
*classic* Go Boom, a trick-taking race to empty your hand (R1), and *jokers* Go Boom, a
Crazy-Eights-style game with a discard pile and jokers that make everyone else draw (R2).
It has hidden information (the other hands and the stock) and luck, and rewards reading
what others could not follow.

### Arguments

``` python
goboom_env.env(variant="classic", num_players=4, hand_size=7, num_decks=None, num_jokers=None,
               scoring=None, target_score=None, rounds=None, after_joker="match",
               config=None, preset=None, episode="hand", reward="win", render_mode=None,
               render_seat=None, observation="snapshot")
```

`variant` ... `after_joker`: the fields of `goboom_env.GameConfig` (defaults resolved from
RULES.md: two decks for 7+ players in classic, two jokers, one round per player in jokers).

`config`: a ready `GameConfig` instead of the fields; `preset`: a name from `goboom_env.PRESETS`.
Fields given with `config` change it like `GameConfig.replace`: a default derived from other fields
(decks, scoring, target score, rounds) is derived again unless it was set explicitly, so
`env(config=GameConfig(num_players=7), num_players=4)` deals from one deck.

`episode`: `"hand"` (default) ends the episode when the hand ends; `"match"` plays the whole
game (R1.11, R1.12, R2.2), dealing the next hand with the dealer moving left.

`reward`: `"win"` (default) or `"points"`, see Rewards.

`render_mode`: `None`, `"ansi"` (`render()` returns the text), `"human"` (prints it after
every step) or `"rgb_array"` (`render()` returns a 360x640x3 `uint8` image of the table: the seats'
card counts, the trick or the discard pile, and one hand face up). `render_seat`: a seat whose
private hand the text view and the image show (for human play; the image shows the hand of the
player to move when it is None).

`observation`: `"snapshot"` (default, the table below) or `"history"` (the snapshot followed by
what the public events of the hand prove, see History observation).

### Observation Space

The observation is a dictionary with an `observation` vector and an `action_mask`. The vector
is seen from the observing seat: per-seat blocks are ordered by relative seat (`0` = you,
`1` = the player to your left, ...). It holds only what RULES.md R4.1 makes public plus your
own hand. `n` is `num_players`; classic and jokers share one layout.

| Indices (n = 4)  | Block          | Meaning                                                        |
|------------------|----------------|----------------------------------------------------------------|
| 0-52             | hand           | your cards per face (R0.3), count / copies of the face          |
| 53-105           | seen           | cards out of play per face (tricks, discard pile), same scale   |
| 106-158          | led            | classic: the card led to the current trick                      |
| 159-370          | trick          | classic: n x 53, the card each relative seat played to it       |
| 371-374          | trick_passed   | classic: relative seats that passed in this trick (R1.6)        |
| 375-378          | leader         | classic: relative seat that led this trick                      |
| 379-431          | top            | jokers: top of the discard pile (face 52 = a joker)             |
| 432-484          | match          | jokers: the match card, topmost non-joker (R2.5)                |
| 485-488          | hand_sizes     | cards in each relative seat's hand / deck size                  |
| 489-492          | drawn          | cards each relative seat drew this hand / deck size             |
| 493              | stock          | stock size / deck size                                          |
| 494-497          | to_move        | relative seat to move (zero when the hand is over)              |
| 498-501          | dealer         | relative seat of the dealer                                     |
| 502-505          | scores         | match totals / score scale (target score; 100 in jokers)        |
| 506              | passes         | jokers: consecutive passes on an empty stock / n (R2.10)        |
| 507              | progress       | hands finished / rounds (jokers)                                |
| 508-516          | flags          | classic, jokers, standard, reverse, penalty, aces mode,         |
|                  |                | after_joker any, two+ decks, num_players / 12                   |

For other player counts use `goboom_env.observation.layout(n)`, which returns these slices. The scores
block's upper bound is `goboom_env.observation.max_score(config)` / score scale: the highest total the
rules allow, so the space is bounded.

#### History observation

With `observation="history"` the vector is the snapshot above followed by four blocks, per relative
seat in the same order (`goboom_env.history`; `goboom_env.history.history_layout(n)` returns the
slices; `5 * 53 + 60 * n + 12 + 107 * n + 2 * n * (n + 55)` entries, 1417 for 4 players):

| Indices (n = 4)  | Block          | Meaning                                                        |
|------------------|----------------|----------------------------------------------------------------|
| 0-516            | (snapshot)     | the observation tabled above, unchanged                        |
| 517-728          | played         | n x 53, the cards each relative seat played this hand, per     |
|                  |                | face, count / copies of the face                               |
| 729-940          | void           | n x 53, the faces each relative seat is proved not to hold at  |
|                  |                | its latest proof (1): classic, a draw or pass proves no card   |
|                  |                | of the led suit or rank (R1.6); jokers, no matching non-boom   |
|                  |                | card (R2.7)                                                     |
| 941-944          | since          | cards each relative seat took since that proof / deck size     |
| 945-1416         | window         | the last 2n moves, most recent first, n + 55 each: mover       |
|                  |                | (relative seat, one-hot), card played (one-hot), drew, passed  |

A proof covers the cards held at that moment (in classic also the cards the draw kept); the cards
taken since (a jokers draw, a boom's draws) are unknown. Two proofs with no unknown card between
them add up; a play of a proved-void face was an unknown card (`since` drops); once every covered
card is gone both blocks are cleared. Everything in these blocks is public (RULES.md R4.1).

#### Action Mask

`observation["action_mask"]` (int8, 54) marks the legal actions of the observing agent when it
is its turn; it is all zeros for the others. The agent to move always has at least one legal
action (R3.2): when it can only draw or pass, the mask holds just action 53, and it still
chooses it. Every turn is a decision.

### State

`env.state()` (PettingZoo's optional global state, for centralised critics such as MAPPO's) is one
`float32` vector of everything, hidden cards included, in `env.state_space`: the observation of seat 0
(so every per-seat block is by absolute seat), then the blocks nobody else sees. The privileged critic
of `goboom train --privileged-critic` reads the same encoder, seen from the learner's seat.

| Indices (n = 4)  | Block          | Meaning                                                        |
|------------------|----------------|----------------------------------------------------------------|
| 0-516            | observation    | seat 0's observation, as tabled above                          |
| 517-675          | hands          | seats 1, 2, 3: cards per face, count / copies of the face      |
| 676-728          | stock          | the cards in the stock per face, same scale                    |
| 729-781          | stock_top      | the stock's top card, the next card drawn (one-hot)            |
| 782-785          | phase          | lead, follow, discard, over (one-hot)                          |

The stock is given by its contents and top card, not its whole order (one-hot positions would take
deck size x 53 entries); `env.state_dict()` holds the exact order. For other player counts use
`goboom_env.global_state.state_layout(n)`.

### Action Space

| Action ID | Action                                                                         |
|-----------|--------------------------------------------------------------------------------|
| 0-12      | play a club 2, 3, ..., T, J, Q, K, A (face = suit * 13 + rank, R0.3)            |
| 13-25     | play a diamond                                                                 |
| 26-38     | play a heart                                                                   |
| 39-51     | play a spade                                                                   |
| 52        | play a joker (jokers Go Boom)                                                  |
| 53        | DRAW_OR_PASS: classic R1.6 (draw until a match, play it; or pass);             |
|           | jokers R2.7 (draw one card and end the turn; or pass on an empty stock)        |

With two decks, playing a face plays one of the two identical cards.

`step` takes a Python `int`, any numpy integer or a 0-d integer array (what a policy's `predict`
returns); a bool or any other type raises `IllegalActionError`. Through `env()`, an integer outside
0-53 fails PettingZoo's `AssertOutOfBoundsWrapper` (`AssertionError`).

### Rewards

`reward="win"`: zero-sum, at the end of the episode. With `k` co-winners among `n` players a
winner gets `(n/k - 1)/(n - 1)` and every other player `-1/(n - 1)` (one winner: `+1` and
`-1/(n-1)`). With `episode="hand"` the winners are the player who went out or, after a blocked
round (R2.10), the players with the fewest hand points; with `episode="match"` they are the
match winners (R1.11, R1.12, R2.12) and the reward arrives when the match ends.

`reward="points"`: zero-sum points from the scoring rules, at the end of every hand (in both
episode modes): each seat's *gain* is the points it scored (standard scoring, R1.11) or minus
the points it added to its total (reverse and jokers penalty scoring, R1.12, R2.11); the reward
is the gain minus the mean gain over the seats, divided by 100.

Rewards sum to zero over every episode that is played by the rules, in both reward modes. The
one exception is an illegal move through `env()`: an action that the action mask forbids ends the
episode at once, PettingZoo's classic-env convention (TerminateIllegalWrapper). The offender gets
`-1`, every other agent `0`, and every agent is terminated and truncated, so the rewards of that
episode sum to `-1` (earlier hands of a `reward="points"` match paid rewards that sum to zero).
`raw_env` has no such exception: it raises `IllegalActionError` and leaves the game unchanged.

### Version History

* v0: initial release (goboom-env 0.1.0).
"""

from __future__ import annotations

import copy
import warnings
from functools import lru_cache
from typing import Any

import numpy as np
from gymnasium import logger, spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.wrappers import BaseWrapper

from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import GameConfig, as_int
from goboom_env.engine import Match, as_action, blamed_on
from goboom_env.episode import EPISODES, check_episode, end_hand
from goboom_env.global_state import StateEncoder, state_encoder_for
from goboom_env.hints import did_you_mean
from goboom_env.history import check_observation, history_encoder_for, make_encoder
from goboom_env.observation import encoder_for, observe
from goboom_env.render import render_rgb, render_text
from goboom_env.scoring import REWARDS, points_rewards, win_rewards

_OPTION_KEYS = {"deck", "dealer"}


def env(**kwargs: Any) -> AECEnv:
    """The Go Boom AEC environment in PettingZoo's classic-env wrappers (numpy actions work like ints)."""
    inner = raw_env(**kwargs)
    inner = wrappers.TerminateIllegalWrapper(inner, illegal_reward=-1)
    inner = wrappers.AssertOutOfBoundsWrapper(inner)
    inner = IntegerActionWrapper(inner)
    return wrappers.OrderEnforcingWrapper(inner)


# ``goboom_env.env`` is this function (PettingZoo's convention): ``help(goboom_env.env)`` shows the module's page.
env.__doc__ = f"{env.__doc__}\n{__doc__}"


def make_config(config: GameConfig | None = None, preset: str | None = None, **fields: Any) -> GameConfig:
    """One :class:`GameConfig` from a ready config, a preset name and/or loose fields."""
    if config is not None:
        if not isinstance(config, GameConfig):
            raise ValueError(f"config must be a goboom_env.GameConfig, got {type(config).__name__}")
        if preset is not None:
            raise ValueError("give either config or preset, not both")
        return config.replace(**fields) if fields else config
    if preset is not None:
        return GameConfig.preset(preset, **fields)
    return GameConfig.from_dict(fields)


@lru_cache(maxsize=64)
def space_prototypes(config: GameConfig, observation: str = "snapshot") -> tuple[spaces.Dict, spaces.Box]:
    """The observation and state spaces of ``config``'s env, built once (building a Box took most of an env's
    construction time); each env deep-copies them, since a space owns the generator ``sample`` draws from."""
    encoder = history_encoder_for(config) if observation == "history" else encoder_for(config)
    state_encoder = state_encoder_for(config)
    obs_space = spaces.Dict({
        "observation": short_box(encoder.low, encoder.high),
        "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
    })
    return obs_space, short_box(state_encoder.low, state_encoder.high)


def short_box(low: np.ndarray, high: np.ndarray) -> spaces.Box:
    """A float32 Box whose repr gives each bound's range (``Box(0.0, 1.0..2.695, (291,), float32)``), not every
    entry of it."""
    box = spaces.Box(low, high, dtype=np.float32)
    box.low_repr, box.high_repr = (f"{b.min():g}" + (f"..{b.max():g}" if b.max() > b.min() else "")
                                   for b in (low, high))
    return box


class IntegerActionWrapper(BaseWrapper):
    """Passes integer actions on as Python ``int`` and refuses the rest, bools included, with
    :class:`IllegalActionError` (PettingZoo's wrappers would index the action mask with them)."""

    def step(self, action: Any) -> None:
        if action is not None and type(action) is not int:
            with blamed_on(self.env.agent_selection):
                action = as_action(action)
        self.env.step(action)

    def __str__(self) -> str:
        return str(self.env)  # as PettingZoo's own wrappers: print(env) names the env, goboom_v0


class raw_env(AECEnv):  # noqa: N801 (PettingZoo's naming convention)
    """Go Boom as a PettingZoo AEC environment; the module docstring is its documentation."""

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "name": "goboom_v0", "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, config: GameConfig | None = None, *, preset: str | None = None, episode: str = "hand",
                 reward: str = "win", render_mode: str | None = None, render_seat: int | None = None,
                 observation: str = "snapshot", **fields: Any) -> None:
        super().__init__()
        self.config = make_config(config, preset, **fields)
        check_episode(episode, reward)
        self.observation = check_observation(observation)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        n = self.config.num_players
        seat = as_int(render_seat)
        if render_seat is not None and (seat is None or not 0 <= seat < n):
            raise ValueError(f"render_seat must be None or a seat in 0..{n - 1}, got {render_seat!r}")
        self.episode = episode
        self.reward_mode = reward
        self.render_mode = render_mode
        self.render_seat = seat
        self.encoder = make_encoder(self.config, observation)
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space, state_space = copy.deepcopy(space_prototypes(self.config, observation))
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self.state_encoder = StateEncoder(self.config)
        self.state_space = state_space
        self._rng = np.random.default_rng()
        self.match: Match | None = None
        self._rewards_set = False  # rewards holds a hand's non-zero rewards (cleared on the next step)

    def _require_reset(self, method: str) -> None:
        if self.match is None:
            raise RuntimeError(f"call reset() before {method}()")

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game (same seed, same game); ``options`` may fix the first hand:
        ``{"deck": [codes or faces, index 0 = top], "dealer": seat}``."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        options = dict(options or {})
        # other keys are ignored, as PettingZoo's api_test expects; one close to a known key is a typo, named
        for key in sorted(set(options) - _OPTION_KEYS, key=str):
            if hint := did_you_mean(key, _OPTION_KEYS):
                warnings.warn(f"ignoring unknown reset option {key!r}{hint}", stacklevel=2)
        self.match = Match(self.config, self._rng, options.get("deck"), options.get("dealer"))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._rewards_set = False
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.agents[self.match.hand.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The seat-relative observation of ``agent`` and its action mask (:func:`goboom_env.observation.observe`)."""
        self._require_reset("observe")
        finished = self.terminations.get(agent, True)
        return observe(self.match, self.agent_name_mapping[agent], self.encoder, finished=finished)

    def last(self, observe: bool = True) -> tuple:
        self._require_reset("last")
        return super().last(observe)

    def agent_iter(self, max_iter: int = 2**63) -> Any:
        self._require_reset("agent_iter")
        return super().agent_iter(max_iter)

    def step(self, action: int) -> None:
        """Apply ``action`` for the agent to move; :class:`IllegalActionError` for one that is not legal."""
        try:
            agent = self.agent_selection
        except AttributeError:  # reset() creates it
            raise RuntimeError("call reset() before step()") from None
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        hand = self.match.hand
        with blamed_on(agent):
            hand.apply(action)
        self._cumulative_rewards[agent] = 0.0
        # rewards are non-zero only after a hand ends: clearing and accumulating are skipped otherwise (hot path)
        if self._rewards_set:
            self._clear_rewards()
            self._rewards_set = False
        if hand.over:
            self._end_hand()
        if not self.terminations[agent]:
            self.agent_selection = self.agents[self.match.hand.current]
        if self._rewards_set:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _end_hand(self) -> None:
        """Hand rewards, then the episode's end (decided by :func:`goboom_env.episode.end_hand`)."""
        hand = self.match.hand
        if self.reward_mode == "points":
            self._set_rewards(points_rewards(self.config, hand.winner, hand.hand_points()))
        result = end_hand(self.match, self.episode)
        if result is None:
            return
        if self.reward_mode == "win":
            self._set_rewards(win_rewards(self.config.num_players, result.winners))
        for a in self.agents:
            self.terminations[a] = True
            self.infos[a] = result.info()

    def _set_rewards(self, values: list[float]) -> None:
        for a, v in zip(self.agents, values):
            self.rewards[a] = float(v)
        self._rewards_set = True

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            logger.warn("render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'.")
            return None
        self._require_reset("render")
        if self.render_mode == "rgb_array":
            return render_rgb(self.match.hand, self.match, self.render_seat)
        text = render_text(self.match.hand, self.match, self.render_seat)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def state(self) -> np.ndarray:
        """The global state, hidden cards included, by absolute seat (see State above): for centralised critics."""
        self._require_reset("state")
        return self.state_encoder.encode(self.match, 0)

    def state_dict(self) -> dict[str, Any]:
        """The full engine state (hidden cards included) as JSON-friendly data."""
        self._require_reset("state_dict")
        return self.match.to_dict()


__all__ = ["EPISODES", "REWARDS", "IntegerActionWrapper", "env", "make_config", "points_rewards", "raw_env"]
