"""Batched Go Boom: ``B`` independent games stepped together in compiled code (numba).

:class:`VectorGame` plays every :class:`GameConfig` and gives, for each game, exactly what ``goboom_env.raw_env``
shows the seat to move: the same action ids (R3.1), the same ``float32`` observation bit for bit (either layout), the
same action mask and float64 rewards; ``tests/rules/test_vector.py`` proves it move by move against ``raw_env``.

    >>> import numpy as np
    >>> from goboom_env import GameConfig
    >>> from goboom_env.vector import VectorGame, random_legal_actions
    >>> vg = VectorGame(GameConfig(variant="classic", num_players=4), num_envs=8, seed=0)
    >>> obs, mask, seat = vg.reset()
    >>> obs.shape, obs.dtype, mask.shape, mask.dtype
    ((8, 517), dtype('float32'), (8, 54), dtype('int8'))
    >>> rng = np.random.default_rng(0)
    >>> obs, mask, seat, rewards, done = vg.step(random_legal_actions(mask, rng))
    >>> rewards.shape, rewards.dtype, done.dtype
    ((8, 4), dtype('float64'), dtype('bool'))

``reset`` and ``step`` return views of buffers that the next call overwrites: copy what you keep. Each game has its
own NumPy generator (:class:`Streams`) with the very draws of ``raw_env``'s, so after ``vg.streams.seed([s],
rows=[b])`` game ``b`` deals what ``raw_env.reset(seed=s)`` deals, hand after hand and game after game.
"""

from __future__ import annotations

from typing import Any, get_args

import numpy as np

from goboom_env import _pcg64
from goboom_env import _vector_kernels as _k  # without numba: the 'vector' extra's error (goboom_env.hints)
from goboom_env.cards import (
    DRAW_OR_PASS,
    MATCH_MASKS,
    NUM_ACTIONS,
    NUM_FACES,
    boom_mask,
    deck_faces,
)
from goboom_env.config import MAX_PLAYERS, GameConfig, Scoring
from goboom_env.episode import check_episode
from goboom_env.global_state import state_layout
from goboom_env.hand_state import card_points
from goboom_env.history import HISTORY_PADDED_SIZE, check_observation, history_padded_index, make_encoder, window_size
from goboom_env.observation import PADDED_SIZE, face_copies, padded_index

__all__ = ["MixedVectorGame", "Streams", "VectorGame", "compile_pending", "random_legal_actions"]

class VectorGame:
    """``num_envs`` Go Boom games of ``config``, stepped together; ``episode``, ``reward`` and ``observation`` are
    ``raw_env``'s, ``seed`` seeds each game's generator (:attr:`streams`).

    Args:
        autoreset: ``True``: a finished game is dealt anew in the same :meth:`step` (``done`` marks it; the
            observation, mask and seat returned are the new game's). ``False``: it stays finished, ignores its
            actions and reports ``done`` until :meth:`reset`.
        check: refuse illegal actions (``ValueError`` naming the game and the legal actions); ``False`` skips the
            test in trusted loops (an illegal action then corrupts that game); one outside 0..53 is always refused.
    """

    def __init__(self, config: GameConfig, num_envs: int, seed: int | None = 0, episode: str = "hand",
                 reward: str = "win", autoreset: bool = True, check: bool = True,
                 observation: str = "snapshot") -> None:
        _check_config_and_seed(config, seed)
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        check_episode(episode, reward)
        self.observation = check_observation(observation)
        history = observation == "history"
        for name, value in (("autoreset", autoreset), ("check", check)):
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {value!r}")
        self.config = config
        self.num_envs = batch = int(num_envs)
        self.episode = episode
        self.reward = reward
        self.autoreset = bool(autoreset)
        self.check = bool(check)
        n = self.num_players = config.num_players
        self.deck_size = size = config.deck_size
        encoder = make_encoder(config, observation)
        self.observation_size = encoder.size
        self._cfg = _config_array(config, episode, reward, self.autoreset)
        self._cfg[_k.C_HISTORY] = history
        self._base = np.array(deck_faces(config.num_decks, config.num_jokers), np.uint8)
        self._match_masks = np.array(MATCH_MASKS, np.uint64)
        self._boom = np.uint64(boom_mask(config.aces_mode))
        self._points = np.array(card_points(config), np.int32)
        self._off = np.array([sl.start for sl in encoder.slices.values()], np.int64)
        self._scale = encoder.entry_scale()
        self._copies_scale = (1.0 / face_copies(config)).astype(np.float32)
        self.streams = Streams(batch, seed)
        self._state = {
            "g": np.zeros((batch, _k.G_FIELDS), np.int32),
            "counts": np.zeros((batch, n, NUM_FACES), np.uint8),
            "hmask": np.zeros((batch, n), np.uint64),
            "sizes": np.zeros((batch, n), np.int32),
            "drawn": np.zeros((batch, n), np.int32),
            "trick": np.zeros((batch, n), np.int32),
            "scores": np.zeros((batch, n), np.int32),
            "seen": np.zeros((batch, NUM_FACES), np.uint8),
            "deck": np.zeros((batch, size), np.uint8),
            "stock": np.zeros((batch, size), np.uint8),
            "legal": np.zeros(batch, np.uint64),
            "rng": self.streams.state,
            # the facts of the history layout (goboom_env.history), with no seats in the snapshot layout
            "played": np.zeros((batch, n if history else 0, NUM_FACES), np.uint8),
            "void": np.zeros((batch, n if history else 0), np.uint64),
            "since": np.zeros((batch, n if history else 0), np.int32),
            "window": np.zeros((batch, window_size(n) if history else 0, 3), np.int32),
        }
        self._args = tuple(self._state[name] for name in _k.STATE)
        self._obs, self._mask, self._seat, self._rewards, self._done = _output_arrays(batch, self.observation_size, n)
        self._everyone = np.ones(batch, np.bool_)
        self._ready = False

    def __repr__(self) -> str:
        extra = f", observation={self.observation!r}" if self.observation != "snapshot" else ""
        return (f"VectorGame({self.config!r}, num_envs={self.num_envs}, episode={self.episode!r}, "
                f"reward={self.reward!r}, autoreset={self.autoreset}, check={self.check}{extra})")

    def reset(self, decks: np.ndarray | None = None, dealers: np.ndarray | None = None,
              games: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start a new game in every slot (after a first full reset, only in the ``games [B]`` marked); returns
        ``obs [B, D]`` float32, ``mask [B, 54]`` int8 and ``seat [B]`` int64 of the seat to move. ``decks [B,
        deck_size]`` (faces, top first) and ``dealers [B]`` fix the first deal as ``raw_env.reset(options=...)``."""
        moving = self._check_games(games)
        if games is not None and not self._ready:
            raise RuntimeError("call reset() without games first: every game needs a first deal")
        deck_arg = self._check_decks(decks)
        dealer_arg = self._check_dealers(dealers)
        _k.reset_games(moving, deck_arg, dealer_arg, self._cfg, self._base, self._match_masks, self._boom,
                       self._off, self._scale, *self._args, self._obs, self._mask, self._seat)
        self._rewards[moving] = 0.0
        self._done[moving] = False
        self._ready = True
        return self._obs, self._mask, self._seat

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play ``actions[b]`` (R3.1) in each game; returns ``obs``, ``mask``, ``seat`` (after the move),
        ``rewards [B, n]`` float64 (``raw_env``'s rewards of each seat) and ``done [B]`` (the episode ended)."""
        return self._step(actions, self._everyone)

    def step_some(self, actions: Any, games: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`step` in the games marked in ``games [B]``; the others are held whole (state, outputs, stream),
        with zero rewards and ``done`` False: for loops whose games wait for different seats."""
        return self._step(actions, self._check_games(games))

    def observe(self, seats: Any, games: Any = None) -> np.ndarray:
        """``[len(games), D]`` float32, new: game ``games[i]`` (all when None) seen from ``seats[i]``, whoever is to
        move, as ``raw_env.observe``."""
        if not self._ready:
            raise RuntimeError("call reset() before observe()")
        rows = np.arange(self.num_envs) if games is None else np.asarray(games, np.int64).reshape(-1)
        who = np.asarray(seats, np.int64).reshape(-1)
        if who.shape != rows.shape or ((rows < 0) | (rows >= self.num_envs)).any():
            raise ValueError(f"observe needs one seat per game and games in 0..{self.num_envs - 1}, got "
                             f"{len(who)} seat(s) for {len(rows)} game(s)")
        if ((who < 0) | (who >= self.num_players)).any():
            raise ValueError(f"seats must be in 0..{self.num_players - 1}, got {who.tolist()}")
        out = np.empty((len(rows), self.observation_size), np.float32)
        _k.observe_seats(rows, who, self._cfg, self._off, self._scale, *self._args, out)
        return out

    def _step(self, actions: Any, moving: np.ndarray) -> tuple[np.ndarray, ...]:
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        acts = self._check_actions(actions, moving=moving)
        _k.step_games(acts, moving, self._cfg, self._base, self._match_masks, self._boom, self._points, self._off,
                      self._scale, *self._args, self._obs, self._mask, self._seat, self._rewards, self._done)
        return self._obs, self._mask, self._seat, self._rewards, self._done

    @property
    def decks(self) -> np.ndarray:
        """``[B, deck_size]`` int64: the deck order (index 0 = top) each game's current hand was dealt from."""
        return self._state["deck"].astype(np.int64)

    @property
    def dealers(self) -> np.ndarray:
        """``[B]`` int64: the dealer of each game's current hand."""
        return self._state["g"][:, _k.G_DEALER].astype(np.int64)

    @property
    def scores(self) -> np.ndarray:
        """``[B, n]`` int64: each game's match totals (zero in hand episodes)."""
        return self._state["scores"].astype(np.int64)

    @property
    def hand_sizes(self) -> np.ndarray:
        """``[B, n]`` int64: the number of cards in each seat's hand (public: every player can count them)."""
        return self._state["sizes"].astype(np.int64)

    def hidden(self) -> np.ndarray:
        """``[B, H]`` float32, new: :meth:`goboom_env.global_state.StateEncoder.hidden` from each game's seat to
        move, so ``obs`` then ``hidden()`` is its global state (for a privileged critic; no player may see it)."""
        st, n, f, batch = self._state, self.num_players, NUM_FACES, self.num_envs
        blocks = state_layout(n)
        first = blocks["hands"].start
        rows = np.arange(batch)
        out = np.zeros((batch, blocks["phase"].stop - first), np.float32)
        others = (self._seat[:, None] + np.arange(1, n)) % n
        out[:, :(n - 1) * f] = (st["counts"][rows[:, None], others] * self._copies_scale).reshape(batch, -1)
        head, length = st["g"][:, _k.G_STOCK_HEAD], st["g"][:, _k.G_STOCK_LEN]
        ring = (head[:, None] + np.arange(self.deck_size)) % self.deck_size
        faces = st["stock"][rows[:, None], ring].astype(np.int64)  # top first; uint8 would wrap the indices below
        held = np.arange(self.deck_size) < length[:, None]
        stock = np.bincount((rows[:, None] * f + faces)[held], minlength=batch * f).reshape(batch, f)
        start = blocks["stock"].start - first
        out[:, start:start + f] = stock * self._copies_scale
        some = np.flatnonzero(length > 0)
        out[some, blocks["stock_top"].start - first + faces[some, 0]] = 1.0
        out[rows, blocks["phase"].start - first + st["g"][:, _k.G_PHASE]] = 1.0
        return out

    @property
    def winners(self) -> np.ndarray:
        """``[B, n]`` bool: the winners of each game's last finished episode (kept through an autoreset)."""
        bits = self._state["g"][:, _k.G_WINNERS]
        return ((bits[:, None] >> np.arange(self.num_players)) & 1).astype(bool)

    @property
    def finished(self) -> np.ndarray:
        """``[B]`` bool: games that are over and wait for :meth:`reset` (``autoreset=False`` only)."""
        return self._state["g"][:, _k.G_FINISHED] != 0

    def _check_games(self, games: Any) -> np.ndarray:
        if games is None:
            return self._everyone
        moving = np.asarray(games)
        if moving.dtype != np.bool_ or moving.shape != (self.num_envs,):
            raise ValueError(f"games must be a bool array of shape ({self.num_envs},), got {moving.dtype} "
                             f"{moving.shape}")
        return moving

    def _check_actions(self, actions: Any, first: int = 0, moving: np.ndarray | None = None) -> np.ndarray:
        """``actions`` as int64; ValueError naming the first bad moving game (numbered from ``first``)."""
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},) (one per game), got {acts.shape}")
        if acts.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers in 0..{DRAW_OR_PASS}, got dtype {acts.dtype}")
        acts = acts.astype(np.int64, copy=False)
        bad = _k.first_illegal(acts, self._everyone if moving is None else moving, self._state["g"],
                               self._state["legal"], self.check)
        if bad >= 0 and self.check:
            legal = np.flatnonzero(self._mask[bad]).tolist()
            raise ValueError(f"game {first + bad}: action {int(acts[bad])} is not legal for seat "
                             f"{int(self._seat[bad])}; legal actions: {legal} (R3.2)")
        if bad >= 0:  # out of range: rejected even with check=False, as it would index outside the state
            raise ValueError(f"game {first + bad}: action {int(acts[bad])} is out of range 0..{DRAW_OR_PASS}")
        return acts

    def _check_decks(self, decks: Any) -> np.ndarray:
        if decks is None:
            return np.zeros((0, 0), np.int64)
        arr = np.asarray(decks)
        shape = (self.num_envs, self.deck_size)
        if arr.shape != shape:
            raise ValueError(f"decks must have shape {shape} (num_envs x deck_size), got {arr.shape}")
        if arr.dtype.kind not in "iu":
            raise ValueError(f"decks must hold integer card faces 0..52, got dtype {arr.dtype}")
        wrong = np.flatnonzero((np.sort(arr, axis=1) != self._base).any(axis=1))
        if wrong.size:
            raise ValueError(
                f"decks[{wrong[0]}] is not the configured multiset of {self.deck_size} cards "
                f"({self.config.num_decks} deck(s), {self.config.num_jokers} joker(s)); "
                f"{wrong.size} bad deck(s) in all"
            )
        return arr.astype(np.int64)

    def _check_dealers(self, dealers: Any) -> np.ndarray:
        if dealers is None:
            return np.full(self.num_envs, -1, np.int64)
        arr = np.asarray(dealers)
        if arr.shape != (self.num_envs,) or arr.dtype.kind not in "iu":
            raise ValueError(f"dealers must be {self.num_envs} integer seats, got shape {arr.shape} "
                             f"dtype {arr.dtype}")
        n = self.num_players
        bad = np.flatnonzero((arr < 0) | (arr >= n))
        if bad.size:
            raise ValueError(f"dealers[{bad[0]}] = {arr[bad[0]]} is not a seat in 0..{n - 1}")
        return arr.astype(np.int64)


class MixedVectorGame:
    """Games at several table sizes (a generalist's): one :class:`VectorGame` of ``config.replace(num_players=k)``
    per count, in contiguous :attr:`rows`, stepped as one batch with every observation padded to the 12-seat layout
    and ``rewards [B, 12]``. The ``num_envs`` games are split over ``player_counts`` evenly or by ``weights``, at
    least one each; the other arguments are :class:`VectorGame`'s. An illegal action is refused before any game
    moves."""

    def __init__(self, config: GameConfig, player_counts: Any, num_envs: int, seed: int | None = 0,
                 episode: str = "hand", reward: str = "win", autoreset: bool = True, check: bool = True,
                 weights: Any = None, observation: str = "snapshot") -> None:
        _check_config_and_seed(config, seed)
        history = check_observation(observation) == "history"
        counts = check_player_counts(player_counts)
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < len(counts):
            raise ValueError(f"num_envs must be an integer >= the number of player counts ({len(counts)}), "
                             f"got {num_envs!r}")
        sizes = _split_games(int(num_envs), len(counts), weights)
        self.config = config
        self.player_counts = counts
        self.num_envs = int(num_envs)
        self.observation = observation
        self.observation_size = HISTORY_PADDED_SIZE if history else PADDED_SIZE
        self.seeds: list[int | None] = ([None] * len(counts) if seed is None else
                                        [int(x) for x in np.random.SeedSequence(seed).generate_state(len(counts))])
        self.games = [VectorGame(config.replace(num_players=k), num_envs=size, seed=s, episode=episode, reward=reward,
                                 autoreset=autoreset, check=check, observation=observation)
                      for k, size, s in zip(counts, sizes, self.seeds)]
        ends = np.cumsum(sizes)
        self.rows = [slice(int(end - size), int(end)) for end, size in zip(ends, sizes)]
        self.num_players = np.repeat(np.array(counts, np.int64), sizes)
        self._index = [history_padded_index(k) if history else padded_index(k) for k in counts]
        self._obs, self._mask, self._seat, self._rewards, self._done = _output_arrays(
            self.num_envs, self.observation_size, MAX_PLAYERS)

    def __repr__(self) -> str:
        return f"MixedVectorGame({self.config!r}, player_counts={self.player_counts}, num_envs={self.num_envs})"

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A new game in every slot; returns padded ``obs``, ``mask`` and ``seat`` (as :meth:`VectorGame.reset`)."""
        for game, rows, index in zip(self.games, self.rows, self._index):
            obs, mask, seat = game.reset()
            self._store(rows, index, obs, mask, seat)
        self._rewards[:] = 0.0
        self._done[:] = False
        return self._obs, self._mask, self._seat

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play ``actions[b]`` in each game (see :meth:`VectorGame.step`); ``rewards`` is ``[B, 12]``."""
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},) (one per game), got {acts.shape}")
        if not self.games[0]._ready:
            raise RuntimeError("call reset() before step()")
        for game, rows in zip(self.games, self.rows):  # every game's action is checked before any game moves
            game._check_actions(acts[rows], first=rows.start)
        for game, rows, index in zip(self.games, self.rows, self._index):
            obs, mask, seat, rewards, done = game.step(acts[rows])
            self._store(rows, index, obs, mask, seat)
            self._rewards[rows, :game.num_players] = rewards
            self._done[rows] = done
        return self._obs, self._mask, self._seat, self._rewards, self._done

    @property
    def hand_sizes(self) -> np.ndarray:
        """``[B, 12]`` int64: each seat's number of cards (zeros beyond a game's seats)."""
        out = np.zeros((self.num_envs, MAX_PLAYERS), np.int64)
        for game, rows in zip(self.games, self.rows):
            out[rows, :game.num_players] = game.hand_sizes
        return out

    def _store(self, rows: slice, index: np.ndarray, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> None:
        self._obs[rows][:, index] = obs  # the padding slots are never written: they stay zero
        self._mask[rows] = mask
        self._seat[rows] = seat


def _output_arrays(batch: int, width: int, players: int) -> tuple[np.ndarray, ...]:
    """The ``obs``, ``mask``, ``seat``, ``rewards`` and ``done`` buffers that reset and step write in place."""
    return (np.zeros((batch, width), np.float32), np.zeros((batch, NUM_ACTIONS), np.int8), np.zeros(batch, np.int64),
            np.zeros((batch, players), np.float64), np.zeros(batch, np.bool_))


def _check_config_and_seed(config: Any, seed: Any) -> None:
    """ValueError unless ``config`` is a GameConfig and ``seed`` None or an integer >= 0 (both engines' rule)."""
    if not isinstance(config, GameConfig):
        raise ValueError(f"config must be a goboom_env.GameConfig, got {type(config).__name__}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"seed must be None or an integer >= 0, got {seed!r}")


def check_player_counts(player_counts: Any, name: str = "player_counts") -> list[int]:
    """``player_counts`` as a list of distinct integers in 2..12; ValueError naming ``name`` and what is wrong."""
    try:
        counts = list(player_counts)
    except TypeError:
        raise ValueError(f"{name} must be a list of player counts, got {player_counts!r}") from None
    if not counts:
        raise ValueError(f"{name} must name at least one player count in 2..{MAX_PLAYERS}")
    for k in counts:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= k <= MAX_PLAYERS:
            raise ValueError(f"{name}: {k!r} is not a player count in 2..{MAX_PLAYERS}")
    if len(set(counts)) != len(counts):
        raise ValueError(f"{name} must not repeat a count, got {counts}")
    return [int(k) for k in counts]


def _split_games(num_envs: int, parts: int, weights: Any) -> list[int]:
    """Games per count: even (the first counts get the remainder) or by ``weights`` (largest remainders), each >= 1."""
    if weights is None:
        return [num_envs // parts + (i < num_envs % parts) for i in range(parts)]
    try:
        w = np.asarray(weights, np.float64)
    except (TypeError, ValueError):
        w = np.zeros(0)  # not numbers: refused below
    if w.shape != (parts,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"weights must be {parts} positive numbers (one per player count), got {weights!r}")
    spare = num_envs - parts  # one game per count first
    share = spare * w / w.sum()
    sizes = np.floor(share).astype(np.int64)
    sizes[np.argsort(-(share - sizes), kind="stable")[:spare - sizes.sum()]] += 1
    return [int(x) + 1 for x in sizes]


def compile_pending() -> bool:
    """Whether the first :class:`VectorGame` of this process will compile the engine (about 15 s) rather than load
    it from numba's cache (a fresh installation, an upgrade, a cleared cache); True when the cache cannot be read."""
    for kernel in (_k.reset_games, _k.step_games, _k.first_illegal, _pcg64.seed_rows):  # what every game calls
        if kernel.overloads:  # compiled or loaded in this process already
            continue
        try:
            cached = kernel._cache._cache_file._load_index()  # numba's private API: {} when missing or stale
        except Exception:  # any change of numba's internals: say the compile may come
            return True
        if not cached:
            return True
    return False


class Streams:
    """One NumPy generator per row, drawn in compiled code: row ``r`` draws, call for call, what a
    ``np.random.default_rng`` Generator in the same state draws. ``seed`` seeds the rows via ``SeedSequence``."""

    def __init__(self, rows: int, seed: int | None = None) -> None:
        self.state = np.zeros((rows, _pcg64.STREAM_WORDS), np.uint64)  # PCG64.state's fields (goboom_env._pcg64)
        words = np.random.SeedSequence(seed).generate_state(4 * rows, np.uint64).reshape(rows, 4)
        _pcg64.seed_rows(self.state, np.arange(rows), words)

    def __len__(self) -> int:
        return len(self.state)

    def seed(self, seeds: Any, rows: Any = None) -> None:
        """Restart row ``rows[i]`` (every row when None) as ``np.random.default_rng(seeds[i])``: an int, a sequence of
        ints (``default_rng([seed, 1])``) or None (fresh entropy)."""
        index = self._rows(rows)
        seeds = list(seeds)
        if len(seeds) != len(index):
            raise ValueError(f"seed needs one seed per row: {len(index)} row(s), got {len(seeds)} seed(s)")
        words = np.array([np.random.SeedSequence(s).generate_state(4, np.uint64) for s in seeds], np.uint64)
        _pcg64.seed_rows(self.state, index, words.reshape(-1, 4))

    def integers(self, highs: Any, rows: Any = None) -> np.ndarray:
        """``[len(rows)]`` int64: row ``rows[i]``'s ``integers(highs[i])`` (``1 <= highs[i] <= 2**32``)."""
        index = self._rows(rows)
        bounds = np.broadcast_to(np.asarray(highs, np.int64), index.shape)
        if ((bounds < 1) | (bounds > 2**32)).any():
            raise ValueError(f"integers needs highs in 1..2**32, got {bounds.min()}..{bounds.max()}")
        out = np.empty(len(index), np.int64)
        _pcg64.below_rows(self.state, index, bounds, out)
        return out

    def random(self, rows: Any = None) -> np.ndarray:
        """``[len(rows)]`` float64: row ``rows[i]``'s ``random()``."""
        index = self._rows(rows)
        out = np.empty(len(index), np.float64)
        _pcg64.uniform_rows(self.state, index, out)
        return out

    def best(self, candidates: np.ndarray, scores: np.ndarray, rows: Any = None) -> np.ndarray:
        """``[len(rows)]`` int64: per row, the column of a highest score among its ``candidates`` (bool), a tie
        drawn as a scalar agent draws it (``top[rng.integers(len(top))]``, no draw without one); -1 for none."""
        index = self._rows(rows)
        pool = np.ascontiguousarray(candidates, np.bool_)
        values = np.ascontiguousarray(np.broadcast_to(scores, pool.shape), np.float64)
        if pool.ndim != 2 or pool.shape[0] != len(index):
            raise ValueError(f"best needs candidates of shape ({len(index)}, K), got {pool.shape}")
        out = np.empty(len(index), np.int64)
        _pcg64.best_rows(self.state, index, pool, values, out)
        return out

    def generator(self, row: int) -> np.random.Generator:
        """A ``np.random.Generator`` in row ``row``'s state (a copy: drawing from it leaves the row as it is)."""
        w = [int(x) for x in self.state[row]]
        bit_generator = np.random.PCG64()
        bit_generator.state = {"bit_generator": "PCG64", "has_uint32": w[4], "uinteger": w[5],
                               "state": {"state": w[0] << 64 | w[1], "inc": w[2] << 64 | w[3]}}
        return np.random.Generator(bit_generator)

    def _rows(self, rows: Any) -> np.ndarray:
        if rows is None:
            return np.arange(len(self.state))
        index = np.asarray(rows, np.int64).reshape(-1)
        if ((index < 0) | (index >= len(self.state))).any():
            raise ValueError(f"rows must be in 0..{len(self.state) - 1}")
        return index


def random_legal_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask [B, 54]`` (int64 ``[B]``; -1 for an all-zero row)."""
    mask = np.asarray(mask)
    if mask.ndim != 2 or mask.shape[1] != NUM_ACTIONS:
        raise ValueError(f"mask must have shape (B, {NUM_ACTIONS}), got {mask.shape}")
    out = np.empty(mask.shape[0], np.int64)
    _k.sample_legal(mask, rng.random(mask.shape[0]), out)
    return out


def _config_array(config: GameConfig, episode: str, reward: str, autoreset: bool) -> np.ndarray:
    """The int64 configuration vector the kernels read (``_vector_kernels.C_*`` entries)."""
    cfg = np.zeros(_k.C_FIELDS, np.int64)
    cfg[_k.C_N] = config.num_players
    cfg[_k.C_HAND_SIZE] = config.hand_size
    cfg[_k.C_DECK_SIZE] = config.deck_size
    cfg[_k.C_CLASSIC] = config.is_classic
    cfg[_k.C_AFTER_ANY] = config.anything_after_joker
    cfg[_k.C_SCORING] = get_args(Scoring).index(config.scoring)  # the kernels' STANDARD, REVERSE or PENALTY
    cfg[_k.C_TARGET] = config.target_score or 0
    cfg[_k.C_ROUNDS] = config.rounds or 0
    cfg[_k.C_SCORE_SCALE] = config.target_score or 100
    cfg[_k.C_MATCH_EPISODE] = episode == "match"
    cfg[_k.C_POINTS_REWARD] = reward == "points"
    cfg[_k.C_AUTORESET] = autoreset
    return cfg
