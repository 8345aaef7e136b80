"""The observation encoder: documented layout, value ranges, seat-relative rotation, and the
no-leak guarantee of RULES.md R4.1 (hidden cards and the stock order never change an observation)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import ROOT, deck_for, on_rule_configs, random_hand_steps, random_match_play, random_moves

import goboom_env
from goboom_env import GameConfig, Hand, Match
from goboom_env.cards import face_of
from goboom_env.history import make_encoder
from goboom_env.observation import ObservationEncoder, layout, observation_size

ENVIRONMENT_PAGE = (ROOT / "docs" / "environment.md").read_text()


def test_env_docstring_table_matches_layout() -> None:
    section = ENVIRONMENT_PAGE.split("### Observation Space")[1].split("### ")[0]
    rows = re.findall(r"^\| (\d+)(?:-(\d+))?\s*\| (\w+)\s*\|", section, re.MULTILINE)
    documented = {name: (int(lo), int(hi or lo) + 1) for lo, hi, name in rows}
    actual = {name: (sl.start, sl.stop) for name, sl in layout(4).items()}
    assert documented == actual
    assert "517 for 4 players" in ENVIRONMENT_PAGE and observation_size(4) == 517


# the size of each block for n players, in layout order (the Environment page tables them for n = 4)
OBSERVATION_BLOCKS = {"hand": 53, "seen": 53, "led": 53, "trick": "n x 53", "trick_passed": "n", "leader": "n",
                      "top": 53, "match": 53, "hand_sizes": "n", "drawn": "n", "stock": 1, "to_move": "n",
                      "dealer": "n", "scores": "n", "passes": 1, "progress": 1, "flags": 9}


def _size(size: int | str, n: int) -> int:
    """A block size for ``n`` players: ``53``, ``"n"`` or ``"n x 53"``."""
    return size if isinstance(size, int) else n * int(size[4:]) if size.startswith("n x ") else n


@pytest.mark.parametrize("n", [2, 3, 4, 7, 12])
def test_layout_has_the_blocks_in_order_at_every_table_size(n: int) -> None:
    assert {name: sl.stop - sl.start for name, sl in layout(n).items()} == {
        name: _size(size, n) for name, size in OBSERVATION_BLOCKS.items()}
    assert list(layout(n)) == list(OBSERVATION_BLOCKS)
    assert observation_size(n) == 5 * 53 + 60 * n + 12
    starts = [sl.start for sl in layout(n).values()]
    assert starts == sorted(starts) and starts[0] == 0  # contiguous, in documented order


@on_rule_configs
def test_observations_stay_in_the_observation_space(config: GameConfig) -> None:
    env, steps = random_match_play(config, seed=5, max_iter=600)
    space = env.observation_space(env.possible_agents[0])
    for i, step in enumerate(steps):
        if i % 3 == 0:
            for other in env.agents:
                assert space.contains(env.unwrapped.observe(other)), f"{other} at step {i}"
        obs = step.observation
        assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8


def test_blocks_are_relative_to_the_observer() -> None:
    cfg = GameConfig(variant="classic", num_players=4, hand_size=3)
    hands = [["5H", "2C", "3C"], ["9H", "4C", "5C"], ["2S", "3S", "4S"], ["KH", "6C", "7C"]]
    deck = deck_for(cfg, hands, ["8S", "QH"], dealer=1)
    match = Match(cfg, np.random.default_rng(0), deck=deck, dealer=1)
    hand = match.hand
    hand.apply(face_of("2S"))  # seat 2 leads
    hand.apply(53)  # seat 3 has no spade and no 2: draws 8S, which matches and is played (R1.6)
    match.scores = [10, 20, 30, 40]
    enc = ObservationEncoder(cfg)
    for seat in range(4):
        blocks = enc.describe(enc.encode(hand, seat, match))
        rel = [(seat + k) % 4 for k in range(4)]
        assert blocks["hand_sizes"].tolist() == pytest.approx([hand.sizes[s] / 52 for s in rel])
        assert blocks["drawn"].tolist() == pytest.approx([hand.drawn[s] / 52 for s in rel])
        assert np.flatnonzero(blocks["to_move"]).tolist() == [(0 - seat) % 4]  # seat 0 moves next
        assert np.flatnonzero(blocks["dealer"]).tolist() == [(1 - seat) % 4]
        assert np.flatnonzero(blocks["leader"]).tolist() == [(2 - seat) % 4]
        assert blocks["scores"].tolist() == pytest.approx([(10 * (s + 1)) / 200 for s in rel])
        trick = blocks["trick"].reshape(4, 53)
        assert np.flatnonzero(trick[(2 - seat) % 4]).tolist() == [face_of("2S")]
        assert np.flatnonzero(trick[(3 - seat) % 4]).tolist() == [face_of("8S")]
        assert trick.sum() == 2 and np.flatnonzero(blocks["led"]).tolist() == [face_of("2S")]
        own = [f for f in range(53) if blocks["hand"][f]]
        assert own == hand.hand_faces(seat)  # one deck: count / 1
        assert blocks["stock"][0] == pytest.approx(len(hand.stock) / 52)
        assert blocks["flags"].tolist() == pytest.approx([1, 0, 1, 0, 0, 0, 0, 0, 4 / 12])


def test_jokers_blocks_top_match_and_passes() -> None:
    cfg = GameConfig(variant="jokers", num_players=3, hand_size=2)
    deck = deck_for(cfg, [["JK", "9C"], ["2H", "3H"], ["4H", "5H"]], ["7D", "8D", "9D"], dealer=2)
    hand = Hand(cfg, [face_of(c) if c != "JK" else 52 for c in deck], 2)
    hand.apply(52)
    blocks = ObservationEncoder(cfg).describe(ObservationEncoder(cfg).encode(hand, 1))
    assert np.flatnonzero(blocks["top"]).tolist() == [52]
    assert np.flatnonzero(blocks["match"]).tolist() == [face_of("7D")]
    assert blocks["hand"][face_of("8D")] == 1.0 and blocks["seen"][52] == pytest.approx(0.5)  # 1 of 2 jokers
    assert blocks["drawn"].tolist() == pytest.approx([1 / 54, 1 / 54, 0.0])  # seat 1, seat 2, seat 0
    assert blocks["passes"][0] == 0.0 and blocks["led"].sum() == 0 and blocks["trick"].sum() == 0


def _hidden_variant(hand: Hand, seat: int, rng: np.random.Generator) -> Hand:
    """The same public state with the cards hidden from ``seat`` dealt differently: opponents' cards
    and the stock are pooled, shuffled and handed out again with every hand size kept (R4.1)."""
    data = hand.to_dict()
    others = [s for s in range(hand.n) if s != seat]
    pool = [c for s in others for c in data["hands"][s]] + data["stock"]
    pool = [pool[i] for i in rng.permutation(len(pool))]
    for s in others:
        size = len(data["hands"][s])
        data["hands"][s], pool = pool[:size], pool[size:]
    data["stock"] = pool
    return Hand.from_dict(data)


@pytest.mark.parametrize("observation", ["snapshot", "history"])
@on_rule_configs
def test_r4_1_hidden_cards_never_change_the_observation(config: GameConfig, observation: str) -> None:
    rng = np.random.default_rng(99)
    enc = make_encoder(config, observation)
    checked = changed = 0
    for _ in range(12):
        match = Match(config, rng)
        hand = match.hand
        for step, _ in enumerate(random_hand_steps(hand, rng)):
            if step % 4 or hand.over:
                continue
            for seat in range(config.num_players):
                other = _hidden_variant(hand, seat, rng)
                changed += other.to_dict()["hands"] != hand.to_dict()["hands"] or other.stock != hand.stock
                assert np.array_equal(enc.encode(other, seat, match), enc.encode(hand, seat, match))
                if seat == hand.current:
                    assert other.legal_actions() == hand.legal_actions()
                checked += 1
            reordered = hand.copy()  # the stock order alone, for every seat
            rng.shuffle(reordered.stock)
            for seat in range(config.num_players):
                assert np.array_equal(enc.encode(reordered, seat, match), enc.encode(hand, seat, match))
    assert checked > 200 and changed > 0.9 * checked


@pytest.mark.parametrize("observation", ["snapshot", "history"])
def test_r4_1_env_observation_ignores_hidden_cards(observation: str) -> None:
    env = goboom_env.raw_env(variant="jokers", num_players=4, observation=observation)
    rng = random_moves(env, seed=8, max_iter=20)
    before = {a: env.observe(a) for a in env.possible_agents}
    seat = 2
    env.match.hand = _hidden_variant(env.match.hand, seat, rng)
    after = env.observe("player_2")
    assert np.array_equal(after["observation"], before["player_2"]["observation"])
    assert np.array_equal(after["action_mask"], before["player_2"]["action_mask"])
    assert not np.array_equal(env.observe("player_0")["observation"], before["player_0"]["observation"])


@on_rule_configs
def test_counts_decodes_what_the_engine_holds(config: GameConfig) -> None:
    """``ObservationEncoder.counts`` turns every counting block back into the engine's integers."""
    rng = np.random.default_rng(41)
    enc = ObservationEncoder(config)
    n = config.num_players
    for _ in range(4):
        match = Match(config, rng)
        hand = match.hand
        for _ in random_hand_steps(hand, rng):
            for seat in range(n):
                got = enc.counts(enc.encode(hand, seat, match))
                rotate = [(seat + k) % n for k in range(n)]
                assert got["hand"].tolist() == list(hand.counts[seat]) and got["seen"].tolist() == list(hand.seen)
                assert got["hand_sizes"].tolist() == [hand.sizes[s] for s in rotate]
                assert got["drawn"].tolist() == [hand.drawn[s] for s in rotate]
                assert (got["stock"][0], got["passes"][0]) == (len(hand.stock), hand.passes)
                assert got["dealer"].tolist() == [int(s == hand.dealer) for s in rotate]
                assert got["to_move"].tolist() == [int(s == hand.current and not hand.over) for s in rotate]
                if not hand.classic:
                    assert (np.flatnonzero(got["top"]).tolist(), np.flatnonzero(got["match"]).tolist()) == (
                        [hand.top], [hand.match_face])
