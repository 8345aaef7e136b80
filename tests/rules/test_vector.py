"""VectorGame against the scalar env: a differential test over the configuration matrix, the golden
hands of tests/data/hands.json, autoreset semantics and argument errors.

The differential test drives ``VectorGame`` and one ``raw_env`` per game, each game's generator seeded as its env's
(``VectorGame.streams``), with the same random legal actions, and compares seat, action mask, observation bytes,
rewards, done and winners after every step: every deal (first hands, later hands of a match, autoreset games) comes
from the two generators, which must agree draw for draw.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import DATA, soak, soak_count

import goboom_env
from goboom_env import GameConfig
from goboom_env.cards import faces_of_codes
from goboom_env.engine import win_rewards
from goboom_env.observation import layout

vector = pytest.importorskip("goboom_env.vector", reason="numba is not installed (goboom-env[vector])")
VectorGame = vector.VectorGame
random_legal_actions = vector.random_legal_actions

CLASSIC = [GameConfig(variant="classic", num_players=n, scoring=s)
           for n in (2, 3, 4, 6, 7, 12) for s in ("standard", "reverse")]
JOKERS = [GameConfig(variant="jokers", num_players=n, num_jokers=j, after_joker=a)
          for n in (2, 3, 4) for j in (0, 2, 5) for a in ("match", "any")]
EXTRA = [
    GameConfig(variant="classic", num_players=3, hand_size=10),
    GameConfig(variant="classic", num_players=5, num_decks=3, hand_size=9, target_score=60),
    GameConfig(variant="classic", num_players=2, hand_size=1, scoring="reverse", target_score=7),
    GameConfig(variant="jokers", num_players=5, num_decks=2, num_jokers=20, hand_size=5, rounds=2),
    GameConfig(variant="jokers", num_players=3, num_decks=4, num_jokers=50, hand_size=3),  # 258 cards > 255
    GameConfig(variant="jokers", num_players=12, hand_size=4, after_joker="any"),
]
"""Other corners of GameConfig: hand sizes, extra decks, custom targets and rounds, a deck over 255 cards
(hand sizes and drawn counts no longer fit the encoder's byte levels). Long games: the fast tier plays
a quarter of the games of the main matrix here."""
MATRIX = CLASSIC + JOKERS + EXTRA
MODES = [("hand", "win"), ("hand", "points"), ("match", "win"), ("match", "points")]
FAST_GAMES = {"hand": 100, "match": 30}
"""Fast tier: episodes per configuration and mode (a match is several hands; the slow tier's soak plays 1,000 of
each)."""
HISTORY_GAMES = 20
"""Games per configuration and episode of the history layout's differential test."""
SOAK_GAMES = int(os.environ.get("GOBOOM_SOAK_GAMES", soak_count(10_000, 1000)))
"""Slow tier: hands (hand episodes) and matches (match episodes) per configuration, each played with both rewards."""
HIDDEN_EVERY = 16
"""Slow tier: compare ``VectorGame.hidden()`` with the env after every 16th step (the fast tier: after every step; a
full comparison made the soak of 12-player matches 80% slower)."""


def config_id(config: GameConfig) -> str:
    if config.is_classic:
        name = f"classic{config.num_players}-{config.scoring}"
    else:
        name = f"jokers{config.num_players}-{config.num_jokers}jk-after-{config.after_joker}"
    if config in EXTRA:
        name += f"-{config.num_decks}decks-hand{config.hand_size}"
    return name


def seeded_envs(config: GameConfig, episode: str, reward: str, observation: str, seeds: list[int]) -> list:
    """One ``raw_env`` per seed, reset with it."""
    envs = []
    for seed in seeds:
        env = goboom_env.raw_env(config=config, episode=episode, reward=reward, observation=observation)
        env.reset(seed=seed)
        envs.append(env)
    return envs


def kept_games_and_envs(config: GameConfig, batch: int, observation: str, **options: object) -> tuple[VectorGame, list]:
    """A ``VectorGame`` of ``batch`` hands kept once finished (``autoreset=False``) and one ``raw_env`` per game, each
    game's generator seeded as its env's (game ``b`` and its env with seed ``b``)."""
    vg = VectorGame(config, num_envs=batch, autoreset=False, observation=observation, **options)
    vg.streams.seed(range(batch))
    return vg, seeded_envs(config, "hand", "win", observation, list(range(batch)))


def assert_same_view(env: goboom_env.raw_env, b: int, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray,
                     where: str, hidden: np.ndarray | None = None, step: int | None = None) -> None:
    """Game ``b``'s seat, mask and observation are ``env``'s; with ``hidden`` (``VectorGame.hidden()``), so are
    the hidden blocks of the mover's global state. ``where`` (with ``step``) names the place in a failure message,
    which is built only on a failure (the soak calls this after every decision)."""

    def place() -> str:
        return where if step is None else f"{where} step {step} game {b}"

    def assert_same_bytes(what: str, got: np.ndarray, expected: np.ndarray) -> None:
        if got.tobytes() != expected.tobytes():
            diff = np.flatnonzero(got != expected)
            raise AssertionError(f"{place()}: {what} differs at {diff.tolist()[:10]}: "
                                 f"{got[diff][:10]} vs {expected[diff][:10]}")

    agent = env.agent_selection
    assert seat[b] == env.agent_name_mapping[agent], f"{place()}: seat"
    view = env.observe(agent)
    expected_mask = view["action_mask"]
    assert mask.dtype == expected_mask.dtype and mask[b].tobytes() == expected_mask.tobytes(), f"{place()}: mask"
    expected = view["observation"]
    assert obs.dtype == expected.dtype
    assert_same_bytes("observation", obs[b], expected)
    if hidden is not None:
        assert_same_bytes("hidden state", hidden[b], env.state_encoder.hidden(env.match.hand, int(seat[b])))


def run_differential(config: GameConfig, episode: str, rewards: tuple[str, ...], games: int, seed: int = 0,
                     batch: int = 16, hidden_every: int = 1, observation: str = "snapshot") -> int:
    """Play until ``games`` episodes have ended in every engine, comparing every step; returns the number of
    decisions compared per reward mode. ``batch`` games run side by side (building a ``raw_env`` costs about
    10 ms, mostly its Box spaces, so the fast tier keeps the batch small).

    With several reward modes (the slow tier: win and points) one ``VectorGame`` and one ``raw_env`` per game run
    for each mode, all fed the same decks, dealers and actions (the reward does not change the play). Every
    VectorGame's seat, mask, observation and done equal the first's, and the first's equal its raw_env's view; each
    mode's rewards and done equal its own raw_env's, whose seat to move equals the first env's. The first VectorGame's
    ``hidden()`` equals the mover's hidden state blocks in its raw_env (``StateEncoder.hidden``) after the deal and
    after every ``hidden_every``-th step (the soak samples it: the scalar encoder costs more than a step's other
    checks together)."""
    batch = min(batch, games)
    rng = np.random.default_rng(seed)
    seeds = [seed * 1000 + b for b in range(batch)]
    vgs = [VectorGame(config, num_envs=batch, seed=None, episode=episode, reward=r, observation=observation)
           for r in rewards]
    for vg in vgs:
        vg.streams.seed(seeds)
    views = [vg.reset() for vg in vgs]
    obs, mask, seat = views[0]
    envs = [seeded_envs(config, episode, r, observation, seeds) for r in rewards]
    for games_of_mode in envs:
        for b, env in enumerate(games_of_mode):
            assert_same_view(env, b, obs, mask, seat, f"game {b} after reset", vgs[0].hidden())
    agents = envs[0][0].possible_agents
    name = f"{config_id(config)} {episode}"
    ended = decisions = step = 0
    while ended < games:
        actions = random_legal_actions(mask, rng)
        outs = [vg.step(actions) for vg in vgs]
        obs, mask, seat, _, done = outs[0]
        step += 1
        hidden = vgs[0].hidden() if step % hidden_every == 0 else None
        for k in range(1, len(vgs)):
            assert all(np.array_equal(a, b) for a, b in zip(outs[0][:3], outs[k][:3], strict=True)), \
                f"{name}/{rewards[k]} step {step}: the VectorGames of the reward modes differ"
            assert np.array_equal(done, outs[k][4])
        # per mode, the games that paid a reward this step and the done flags, as Python lists (one numpy call each)
        paying = [out[3].any(axis=1).tolist() for out in outs]
        dones = [out[4].tolist() for out in outs]
        for b, action in enumerate(actions.tolist()):
            for k, games_of_mode in enumerate(envs):
                env = games_of_mode[b]
                env.step(action)
                over = all(env.terminations.values())
                # rewards are paid at episode ends only: the full comparison where one is due or any is paid
                # (otherwise both sides are all zeros)
                if dones[k][b] != over or over or paying[k][b] or any(env.rewards.values()):
                    paid = outs[k][3][b]
                    expected = np.array([env.rewards[a] for a in agents], np.float64)
                    if dones[k][b] != over or not np.array_equal(paid, expected):
                        raise AssertionError(f"{name}/{rewards[k]} step {step} game {b}: rewards {paid} vs "
                                             f"{expected}, done {dones[k][b]} vs {over}")
                if over:
                    winners = np.flatnonzero(vgs[k].winners[b]).tolist()
                    assert winners == env.infos[agents[0]]["winners"], f"{name} step {step} game {b}: winners"
                    env.reset()  # the next game from the env's generator: VectorGame's autoreset drew the same
                if k:
                    assert env.agent_selection == envs[0][b].agent_selection, f"step {step} game {b}: seat"
            decisions += 1
            ended += dones[0][b]
            assert_same_view(envs[0][b], b, obs, mask, seat, name, hidden, step)
    return decisions


@pytest.mark.parametrize(("episode", "reward"), MODES, ids=[f"{e}-{r}" for e, r in MODES])
@pytest.mark.parametrize("config", MATRIX, ids=config_id)
def test_vector_matches_raw_env(config: GameConfig, episode: str, reward: str) -> None:
    games = FAST_GAMES[episode] // 4 if config in EXTRA else FAST_GAMES[episode]  # the corners are long games
    assert run_differential(config, episode, (reward,), games) >= games


@pytest.mark.parametrize("episode", ["hand", "match"])
@pytest.mark.parametrize("config", MATRIX, ids=config_id)
def test_vector_history_matches_raw_env(config: GameConfig, episode: str) -> None:
    """The history layout (``observation="history"``) byte for byte, hands and matches (later hands start a new
    history), with both rewards side by side."""
    games = HISTORY_GAMES // 4 if config in EXTRA else HISTORY_GAMES
    assert run_differential(config, episode, ("win", "points"), games, seed=2, observation="history") >= games


@soak
@pytest.mark.parametrize("episode", ["hand", "match"])
@pytest.mark.parametrize("config", MATRIX, ids=config_id)
def test_vector_matches_raw_env_soak(config: GameConfig, episode: str) -> None:
    """10,000 hands and 10,000 matches per configuration (``make soak``; 1,000 in CI), each with the win and the
    points reward."""
    # 64 games side by side: each raw_env costs ~10 ms to build, and the games still running at the end are extra work
    assert run_differential(config, episode, ("win", "points"), SOAK_GAMES, seed=1, batch=64,
                            hidden_every=HIDDEN_EVERY) >= SOAK_GAMES


# -- golden hands ---------------------------------------------------------------------------------------

VECTORS = json.loads((DATA / "hands.json").read_text())["vectors"]


@pytest.mark.parametrize("index", range(len(VECTORS)))
def test_vector_replays_golden_hand(index: int) -> None:
    """Seat and legal actions move by move as recorded, the observation as raw_env's, the recorded rewards."""
    golden = VECTORS[index]
    config = GameConfig(**golden["config"])
    deck = faces_of_codes(golden["deck"])
    vg = VectorGame(config, num_envs=1, seed=0)
    obs, mask, seat = vg.reset(decks=np.array([deck]), dealers=np.array([golden["dealer"]]))
    env = goboom_env.raw_env(config=config)
    env.reset(options={"deck": deck, "dealer": golden["dealer"]})
    done = np.zeros(1, bool)
    for i, (expected_seat, legal, action) in enumerate(golden["steps"]):
        assert not done[0], f"step {i}: the hand ended early"
        assert (int(seat[0]), np.flatnonzero(mask[0]).tolist()) == (expected_seat, legal), f"step {i}"
        assert_same_view(env, 0, obs, mask, seat, f"step {i}")
        obs, mask, seat, rewards, done = vg.step(np.array([action]))
        env.step(action)
    assert done[0]
    result = golden["result"]
    winners = [result["winner"]] if result["winner"] is not None else _blocked_winners(result["hand_points"])
    assert np.array_equal(rewards[0], np.array(win_rewards(config.num_players, winners), np.float64))
    assert np.array_equal(rewards[0], np.array(result["win_rewards"], np.float64))


def _blocked_winners(points: list[int]) -> list[int]:
    return [s for s, p in enumerate(points) if p == min(points)]


# -- autoreset, validation, arguments ----------------------------------------------------------------------


@pytest.mark.parametrize("observation", ["snapshot", "history"])
def test_autoreset_false_keeps_finished_games_until_reset(observation: str) -> None:
    config = GameConfig(variant="jokers", num_players=3)
    batch = 16
    vg, envs = kept_games_and_envs(config, batch, observation, seed=3)
    obs, mask, seat = vg.reset()
    rng = np.random.default_rng(0)
    final: dict[int, tuple[bytes, int]] = {}
    while len(final) < batch:
        actions = random_legal_actions(mask, rng)
        actions[list(final)] = 12345  # finished games ignore their action, even an illegal one
        obs, mask, seat, rewards, done = vg.step(actions)
        for b, env in enumerate(envs):
            if b in final:
                assert done[b] and not rewards[b].any() and not mask[b].any()
                assert (obs[b].tobytes(), int(seat[b])) == final[b]
                continue
            env.step(int(actions[b]))
            assert np.array_equal(rewards[b], np.array(list(env.rewards.values()), np.float64))
            assert done[b] == all(env.terminations.values())
            assert_same_view(env, b, obs, mask, seat, f"game {b}")  # the final view: zero mask, no to_move
            if done[b]:
                final[b] = (obs[b].tobytes(), int(seat[b]))
    assert vg.finished.all()
    obs, mask, seat = vg.reset()
    assert not vg.finished.any() and mask.any(axis=1).all()


@pytest.mark.parametrize("observation", ["snapshot", "history"])
def test_observe_shows_any_seat_what_raw_env_shows_it(observation: str) -> None:
    """Every seat of every game, to move or not, playing or finished (``autoreset=False``), as ``raw_env.observe``."""
    config = GameConfig(variant="classic", num_players=3, hand_size=3)
    batch = 6
    vg, envs = kept_games_and_envs(config, batch, observation)
    _obs, mask, _seat = vg.reset()
    rng = np.random.default_rng(5)
    while not vg.finished.all():
        for s in range(config.num_players):
            seen = vg.observe(np.full(batch, s))
            for b, env in enumerate(envs):
                assert seen[b].tobytes() == env.observe(f"player_{s}")["observation"].tobytes(), (b, s)
        some = np.array([1, 4])
        np.testing.assert_array_equal(vg.observe([2, 0], games=some), vg.observe(np.array([0, 2, 0, 0, 0, 0]))[some])
        actions = random_legal_actions(mask, rng)
        actions[vg.finished] = 0
        _obs, mask, _seat, _rewards, _done = vg.step(actions)
        for b, env in enumerate(envs):
            if not all(env.terminations.values()):
                env.step(int(actions[b]))
    with pytest.raises(ValueError, match=r"seats must be in 0..2"):
        vg.observe(np.full(batch, 3))


def test_reset_of_some_games_deals_those_and_leaves_the_others() -> None:
    config = GameConfig(variant="jokers", num_players=4)
    vg = VectorGame(config, num_envs=5, seed=2)
    with pytest.raises(RuntimeError, match="without games first"):
        vg.reset(games=np.ones(5, bool))
    obs, mask, seat = (a.copy() for a in vg.reset())
    obs, mask, seat, *_ = (a.copy() for a in vg.step(random_legal_actions(mask, np.random.default_rng(0))))
    decks = vg.decks
    chosen = np.array([False, True, False, False, True])
    vg.streams.seed([40, 41], rows=[1, 4])
    after = [a.copy() for a in vg.reset(games=chosen)]
    for before, now in zip((obs, mask, seat), after):
        np.testing.assert_array_equal(now[~chosen], before[~chosen])
    np.testing.assert_array_equal(vg.decks[~chosen], decks[~chosen])
    for b, seed in ((1, 40), (4, 41)):
        env = goboom_env.raw_env(config=config)
        env.reset(seed=seed)
        assert_same_view(env, b, *after, f"game {b}")


def test_mixed_history_games_are_the_padded_history_of_each_count() -> None:
    from goboom_env.history import HISTORY_PADDED_SIZE, pad_history

    mixed = vector.MixedVectorGame(GameConfig(variant="jokers"), [2, 4], num_envs=6, seed=1, observation="history")
    obs, mask, _seat = mixed.reset()
    rng = np.random.default_rng(1)
    for _ in range(30):
        obs, mask, _seat, _rewards, _done = mixed.step(random_legal_actions(mask, rng))
    assert obs.shape == (6, HISTORY_PADDED_SIZE)
    for game, rows in zip(mixed.games, mixed.rows):
        assert np.array_equal(obs[rows], pad_history(game._obs, game.num_players))


def test_autoreset_deals_a_new_game_in_the_same_step() -> None:
    config = GameConfig(variant="classic", num_players=2, hand_size=1)  # the first card played ends the hand
    vg = VectorGame(config, num_envs=4, seed=0)
    _obs, mask, _seat = vg.reset(dealers=np.array([0, 1, 0, 1]))
    first = vg.decks
    obs, mask, _seat, rewards, done = vg.step(random_legal_actions(mask, np.random.default_rng(0)))
    assert done.all()
    assert np.array_equal(rewards.sum(axis=1), np.zeros(4))
    assert sorted(rewards[0].tolist()) == [-1.0, 1.0]
    assert (vg.decks != first).any(axis=1).all()  # fresh decks from each game's stream
    assert mask.any(axis=1).all() and (obs[:, :53].sum(axis=1) == 1).all()  # the new game's one-card hand


def test_seeded_streams_are_reproducible_and_differ_between_games() -> None:
    config = GameConfig(variant="jokers", num_players=4)
    a = VectorGame(config, num_envs=3, seed=7)
    b = VectorGame(config, num_envs=3, seed=7)
    a.reset()
    b.reset()
    assert np.array_equal(a.decks, b.decks)
    assert len({tuple(d) for d in a.decks}) == 3
    c = VectorGame(config, num_envs=3, seed=8)
    c.reset()
    assert not np.array_equal(a.decks, c.decks)


def test_illegal_action_names_game_action_and_legal_ones() -> None:
    vg = VectorGame(GameConfig(variant="classic", num_players=4), num_envs=3, seed=0)
    obs, mask, _seat = vg.reset()
    actions = random_legal_actions(mask, np.random.default_rng(0))
    illegal = int(np.flatnonzero(mask[2] == 0)[0])
    actions[2] = illegal
    legal = np.flatnonzero(mask[2]).tolist()
    with pytest.raises(ValueError, match=rf"game 2: action {illegal} is not legal .*{legal}".replace("[", r"\[")):
        vg.step(actions)
    actions[2] = 54
    with pytest.raises(ValueError, match="game 2: action 54"):
        vg.step(actions)
    before = vg.decks.copy(), obs.copy()
    actions[2] = legal[0]
    vg.step(actions)  # the rejected calls changed nothing
    assert np.array_equal(vg.decks, before[0])


def test_check_false_skips_the_legality_test_but_not_the_range() -> None:
    vg = VectorGame(GameConfig(variant="classic", num_players=4), num_envs=2, seed=0, check=False)
    _obs, mask, _seat = vg.reset()
    actions = random_legal_actions(mask, np.random.default_rng(0))
    actions[1] = 54
    with pytest.raises(ValueError, match=r"game 1: action 54 is out of range 0..53"):
        vg.step(actions)
    assert not mask[0, 53]
    actions[1] = 53  # illegal on the lead, but not checked: accepted
    vg.step(actions)
    checked = VectorGame(GameConfig(variant="classic", num_players=4), num_envs=2, seed=0)
    checked.reset()
    with pytest.raises(ValueError, match="game 1: action 53 is not legal"):
        checked.step(actions)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"num_envs": 0}, "num_envs must be an integer >= 1"),
    ({"num_envs": 2.5}, "num_envs must be an integer >= 1"),
    ({"episode": "game"}, "episode must be one of"),
    ({"reward": "score"}, "reward must be one of"),
    ({"seed": -1}, "seed must be None or an integer >= 0"),
    ({"autoreset": "yes"}, "autoreset must be True or False"),
    ({"check": 1}, "check must be True or False"),
])
def test_bad_constructor_arguments(kwargs: dict, message: str) -> None:
    args = {"config": GameConfig(), "num_envs": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        VectorGame(**args)


def test_config_must_be_a_game_config() -> None:
    with pytest.raises(ValueError, match=r"config must be a goboom_env\.GameConfig"):
        VectorGame({"variant": "classic"}, num_envs=2)


def test_bad_reset_and_step_arguments() -> None:
    vg = VectorGame(GameConfig(variant="classic", num_players=4), num_envs=2, seed=0)
    with pytest.raises(RuntimeError, match="call reset"):
        vg.step(np.zeros(2, np.int64))
    with pytest.raises(ValueError, match=r"decks must have shape \(2, 52\)"):
        vg.reset(decks=np.zeros((2, 51), np.int64))
    bad = np.tile(np.arange(52), (2, 1))
    bad[1, 0] = 1
    with pytest.raises(ValueError, match=r"decks\[1\] is not the configured multiset"):
        vg.reset(decks=bad)
    with pytest.raises(ValueError, match=r"dealers\[0\] = 4 is not a seat in 0..3"):
        vg.reset(dealers=np.array([4, 0]))
    vg.reset()
    with pytest.raises(ValueError, match=r"actions must have shape \(2,\)"):
        vg.step(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="actions must be integers"):
        vg.step(np.zeros(2, np.float32))
    with pytest.raises(ValueError, match=r"mask must have shape \(B, 54\)"):
        random_legal_actions(np.zeros(54, np.int8), np.random.default_rng(0))


@pytest.mark.parametrize("config", [GameConfig(), GameConfig(variant="jokers", num_players=3),
                                    GameConfig(num_players=8)], ids=config_id)
def test_hand_sizes_are_the_cards_each_seat_holds(config: GameConfig) -> None:
    """``hand_sizes`` (absolute seats) is the mover's observation block (relative seats) over many decisions, draws
    and new deals included."""
    game = VectorGame(config, num_envs=8, seed=3, episode="match")
    obs, mask, seat = game.reset()
    n, start = config.num_players, layout(config.num_players)["hand_sizes"].start
    rng = np.random.default_rng(0)
    changed = 0
    for _ in range(400):
        sizes = game.hand_sizes
        relative = sizes[np.arange(8)[:, None], (seat[:, None] + np.arange(n)) % n]
        np.testing.assert_allclose(relative / config.deck_size, obs[:, start:start + n], rtol=1e-6)
        obs, mask, seat, _, _ = game.step(random_legal_actions(mask, rng))
        changed += int((game.hand_sizes != sizes).any(axis=1).sum())
    assert changed > 400  # most steps change some hand


def test_random_legal_actions_are_legal_and_cover_the_mask() -> None:
    mask = np.zeros((3, 54), np.int8)
    mask[0, [3, 17, 53]] = 1
    mask[1, 52] = 1
    rng = np.random.default_rng(0)
    seen = {tuple(random_legal_actions(mask, rng)) for _ in range(200)}
    assert {a[0] for a in seen} == {3, 17, 53}
    assert {a[1] for a in seen} == {52}
    assert {a[2] for a in seen} == {-1}  # an all-zero row


def test_core_package_imports_without_numba() -> None:
    code = ("import sys; sys.modules['numba'] = None\n"
            "import goboom_env\n"
            "try:\n    import goboom_env.vector\nexcept ImportError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert 'pip install "goboom-env[vector]"' in out.stdout
