"""The ISMCTS baseline: legality over many games, seeded reproducibility, determinizations that respect
every public inference (R1.6, R2.7, R4.1), rollout policies equal to the heuristics they copy, and its
spec options' errors."""

from __future__ import annotations

import itertools
import random
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import MATRIX, config_id, hidden_twins, make_hand, play, random_move, suited_hands

from goboom_env import GameConfig, Hand, Match
from goboom_env.agents import ClassicTricksAgent, JokersBoomAgent, Table, make_agent
from goboom_env.agents import ismcts as ismcts_module
from goboom_env.agents.determinize import Determinizer, hidden_constraints
from goboom_env.agents.ismcts import ACTION_BITS, MOVER_SHIFT, ISMCTSAgent
from goboom_env.agents.rollout import HEURISTIC_MOVES, play_out, seen_mask
from goboom_env.cards import ACES_MASK, JOKER, JOKER_BIT, MATCH_MASKS, code_of, face_of
from goboom_env.game_loop import Decision, play_hand
from goboom_env.hand_state import PASSED
from goboom_env.player_view import PlayerView, observe

SMALL = "ismcts:iters=8"


def random_states(config: GameConfig, games: int, seed: int) -> list[Hand]:
    """Copies of every decision state of ``games`` hands of random play."""
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(games):
        hand = Match(config, rng).hand
        while not hand.over:
            states.append(hand.copy())
            random_move(hand, rng)
    return states


def fits(cards: list[int], masks: list[int]) -> bool:
    """Whether the cards can be given one to each slot that does not forbid it (Hall's condition; exact
    because one seat's masks are nested, which is asserted)."""
    ordered = sorted(masks, key=lambda m: -m.bit_count())
    for older, newer in itertools.pairwise(ordered):
        assert older & newer == newer, "one seat's constraints must be nested"
    return len(cards) == len(masks) and all(
        sum(1 for f in cards if not (m >> f) & 1) >= sum(1 for other in masks if other & m == m) for m in masks)


# -- legality and reproducibility ----------------------------------------------------------------


@pytest.mark.parametrize("config", [c for c in MATRIX if c.num_players in (2, 3, 4, 7)], ids=config_id)
def test_ismcts_plays_only_legal_actions(config: GameConfig) -> None:
    rng = np.random.default_rng(5)
    agents = [make_agent(SMALL, config, seed=s) for s in range(config.num_players)]
    decisions = 0

    def check(decision: Decision) -> None:
        nonlocal decisions
        assert type(decision.action) is int and decision.observation["action_mask"][decision.action] == 1
        decisions += 1

    for _ in range(3):
        play_hand(Match(config, rng), agents, check)
    assert decisions > 20


def _actions(config: GameConfig, spec: str, seed: int, deal: int) -> list[int]:
    agents = [make_agent(spec, config, seed=seed), *(make_agent("heuristic", config, seed=s) for s in (1, 2, 3))]
    actions: list[int] = []
    play_hand(Match(config, np.random.default_rng(deal)), agents, lambda d: actions.append(d.action))
    return actions


@pytest.mark.parametrize("variant", ["classic", "jokers"])
def test_ismcts_is_reproducible_for_a_seed(variant: str) -> None:
    config = GameConfig(variant=variant, num_players=4)
    runs = {tuple(_actions(config, "ismcts:iters=30", seed, deal=11)) for seed in (4, 4, 5, 6, 7)}
    assert len(runs) > 1  # control: the seed does matter, so the equal runs below are no accident
    assert _actions(config, "ismcts:iters=30", 4, deal=11) == _actions(config, "ismcts:iters=30", 4, deal=11)


def test_reseed_restarts_the_search() -> None:
    config = GameConfig(variant="jokers", num_players=4)
    states = [h for h in random_states(config, 3, seed=2) if len(h.legal_actions()) > 1][:12]
    agent = ISMCTSAgent(config, seed=9, iters=20)
    first = [agent.act(observe(h, h.current), PlayerView.of(h, h.current)) for h in states]
    agent.reseed(9)
    assert [agent.act(observe(h, h.current), PlayerView.of(h, h.current)) for h in states] == first


def test_ismcts_choice_ignores_hidden_cards() -> None:
    """Two states that differ only in cards the seat cannot see give the same view, hence the same move."""
    config = GameConfig(variant="classic", num_players=4)
    hand, other = hidden_twins(config)
    view = PlayerView.of(hand, 0)
    assert view == PlayerView.of(other, 0)
    picks = [ISMCTSAgent(config, seed=1, iters=60).act(observe(h, 0), PlayerView.of(h, 0)) for h in (hand, other)]
    assert picks[0] == picks[1]


# -- determinizations ----------------------------------------------------------------------------


@pytest.mark.parametrize("config", [c for c in MATRIX if c.num_players in (2, 3, 4, 7)], ids=config_id)
def test_determinizations_match_the_view_and_the_truth_fits_the_constraints(config: GameConfig) -> None:
    """Every sample: the seat's own hand exact, every public size and fact kept, the hidden cards the same
    multiset, each opponent's cards allowed by its constraints; and the real deal always fits them
    (the inferences never exclude what really happened)."""
    rng = random.Random(3)
    for hand in random_states(config, 2, seed=21)[::3]:
        seat = hand.current
        view = PlayerView.of(hand, seat)
        constraints = hidden_constraints(view)
        for s in range(hand.n):
            if s != seat:
                assert fits(hand.hand_faces(s), constraints[s]), f"the real hand of seat {s} breaks a constraint"
        determinizer = Determinizer(view)
        truth = sorted(f for s in range(hand.n) if s != seat for f in hand.hand_faces(s)) + hand.stock
        for _ in range(4):
            sample = determinizer.sample(rng)
            assert sample.hand_faces(seat) == hand.hand_faces(seat)
            assert sample.sizes == hand.sizes and len(sample.stock) == len(hand.stock)
            assert sample.legal_actions() == hand.legal_actions()
            hidden = [f for s in range(hand.n) if s != seat for f in sample.hand_faces(s)] + sample.stock
            assert sorted(hidden) == sorted(truth)
            assert sample.stock[:view.buried] == hand.stock[:view.buried] or not view.buried
            for s in range(hand.n):
                if s != seat:
                    assert fits(sample.hand_faces(s), constraints[s])
            view_of_sample = PlayerView.of(sample, seat)
            assert (view_of_sample.seen, view_of_sample.sizes, view_of_sample.trick) == (view.seen, view.sizes,
                                                                                        view.trick)


def _plain_matching(config: GameConfig, view: PlayerView) -> int:
    """The non-boom faces that a seat which drew or passed on this view's pile cannot hold (R2.7)."""
    boom = ACES_MASK if config.aces_mode else JOKER_BIT
    plain = ((1 << 52) - 1) & ~boom
    if config.after_joker == "any" and not config.aces_mode and view.top == JOKER:
        return plain
    return MATCH_MASKS[view.match_face] & plain


def _public_voids(config: GameConfig, view: PlayerView) -> dict[int, tuple[int, int]]:
    """Per seat, (faces it cannot hold, except at most ``k`` of them, k) read off the public table alone:
    classic, a seat marked PASSED in the current trick drew without matching and kept what it drew
    (R1.6); jokers, the seats that passed since the last play (R2.7), and the seat just before the one
    to move when it drew right after a plain card was played: it may hold one such card, the one drawn."""
    seat, n = view.seat, view.n
    if config.is_classic:
        return {s: (MATCH_MASKS[view.led], 0) for s in range(n) if view.trick[s] == PASSED and s != seat}
    void = _plain_matching(config, view)
    voids = {(seat - k) % n: (void, 0) for k in range(1, view.passes + 1)}
    boom = ACES_MASK if config.aces_mode else JOKER_BIT
    before, last = (view.events[-2:] if len(view.events) > 1 else [("upcard", 0)] * 2)
    if (last[0] == "draw" and last[1] == (seat - 1) % n and before[0] == "play"
            and before[1] == (seat - 2) % n and not (boom >> before[2]) & 1):
        voids[last[1]] = (void, 1)
    voids.pop(seat, None)
    return voids


def _voids_broken(config: GameConfig, infer: bool) -> tuple[int, int]:
    """(samples checked, samples that give a seat more cards than :func:`_public_voids` allows)."""
    rng = random.Random(4)
    checked = broken = 0
    for hand in random_states(config, 12, seed=31):
        view = PlayerView.of(hand, hand.current)
        voids = _public_voids(config, view)
        if not voids:
            continue
        determinizer = Determinizer(view, use_inference=infer)
        for _ in range(6):
            sample = determinizer.sample(rng)
            broken += any((sample.masks[s] & void).bit_count() > k for s, (void, k) in voids.items())
            checked += 1
    return checked, broken


@pytest.mark.parametrize("config", [c for c in MATRIX if c.num_players in (3, 4)], ids=config_id)
def test_no_sample_gives_a_card_that_the_public_table_rules_out(config: GameConfig) -> None:
    """An oracle from the public table alone (:func:`_public_voids`): no sample breaks it."""
    checked, broken = _voids_broken(config, infer=True)
    assert checked > 20 and broken == 0


@pytest.mark.parametrize("variant", ["classic", "jokers"])
def test_uniform_sampling_breaks_the_public_void_oracle(variant: str) -> None:
    """Control for the test above: dealing the hidden cards uniformly (``infer=False``) does give seats
    cards their passes rule out, so the oracle has teeth."""
    checked, broken = _voids_broken(GameConfig(variant=variant, num_players=4), infer=False)
    assert checked > 20 and broken > 0


def test_a_classic_draw_proves_a_void_in_the_led_suit_and_rank() -> None:
    """Seat 1 cannot follow 7H and draws two cards (the second, 9H, is played): every card it holds then
    is neither a heart nor a seven, in every determinization seat 0 samples."""
    config = GameConfig(variant="classic", num_players=3)
    hand = make_hand(config, [["7H", "2C", "3C", "4C", "5C", "6C", "8C"],
                              ["2S", "3S", "4S", "5S", "6S", "8S", "9S"],
                              ["2H", "3H", "4H", "5H", "6H", "8H", "7C"]], stock=["TC", "9H", "JD", "QD"], dealer=2)
    play(hand, "7H", "draw", "2H")  # seat 1 draws TC (kept) and 9H (played); seat 2 follows
    assert hand.sizes[1] == 8
    view = PlayerView.of(hand, 0)
    assert hidden_constraints(view)[1] == [MATCH_MASKS[face_of("7H")]] * 8
    rng = random.Random(0)
    for _ in range(50):
        sample = Determinizer(view).sample(rng)
        assert not sample.masks[1] & MATCH_MASKS[face_of("7H")]


def test_a_jokers_draw_leaves_only_the_drawn_card_unconstrained() -> None:
    """Seat 1 draws on 5D: the cards it held are no diamond and no five; the one it drew may be anything."""
    config = GameConfig(variant="jokers", num_players=3)
    hand = make_hand(config, suited_hands("2346789", "CSH"), stock=["5D", "6D", "KD"], dealer=2)
    assert hand.match_face == face_of("5D") and hand.current == 0
    play(hand, "draw", "draw")  # seat 0 and seat 1 draw (no diamond, no five)
    view = PlayerView.of(hand, 2)
    void = MATCH_MASKS[face_of("5D")] & ~JOKER_BIT
    assert sorted(hidden_constraints(view)[1]) == [0] + [void] * 7
    assert sorted(hidden_constraints(view)[0]) == [0] + [void] * 7


def test_cards_a_boom_makes_a_seat_draw_are_unconstrained() -> None:
    config = GameConfig(variant="jokers", num_players=3)
    hands = [["JK", "3C", "4C", "6C", "7C", "8C", "9C"], *suited_hands("2346789", "SH")]
    hand = make_hand(config, hands, stock=["5D", "2C", "TH", "QS"], dealer=2)
    play(hand, "JK", "draw")  # seat 0 booms (seats 1, 2 draw 2C, TH), then seat 1 draws QS on 5D
    view = PlayerView.of(hand, 0)
    void = MATCH_MASKS[face_of("5D")] & ~JOKER_BIT
    assert sorted(hidden_constraints(view)[1]) == [0] + [void] * 8  # the boom card is covered by the void too
    assert hidden_constraints(view)[2] == [0] * 8


# -- rollouts ------------------------------------------------------------------------------------


class _Ties:
    """Mixin for a heuristic agent: records the best-scoring cards instead of drawing among them."""

    tied: list[int]

    def _argmax(self, cards: list[int], scores: np.ndarray) -> int:
        scores = np.asarray(scores, np.float64)
        self.tied = [c for c, s in zip(cards, scores) if s == scores.max()]
        return self.tied[0]

    def choose(self, table: Table) -> int:
        self.tied = []
        pick = super().choose(table)  # type: ignore[misc]
        return pick


class _TricksTies(_Ties, ClassicTricksAgent):
    pass


class _BoomTies(_Ties, JokersBoomAgent):
    pass


@pytest.mark.parametrize("config", [GameConfig(variant="classic", num_players=n) for n in (3, 4)]
                         + [GameConfig(variant="jokers", num_players=4, **x)
                            for x in ({}, {"num_jokers": 0}, {"after_joker": "any"})], ids=config_id)
def test_rollout_policy_plays_like_the_heuristic_it_copies(config: GameConfig) -> None:
    """On single-deck games the bitmask rollout picks one of the heuristic agent's best-scoring moves."""
    agent = (_TricksTies if config.is_classic else _BoomTies)(config, seed=0)
    move = HEURISTIC_MOVES[config.variant]
    rng = random.Random(0)
    compared = 0
    for hand in random_states(config, 6, seed=41):
        legal = hand.legal_actions()
        if len(legal) < 2:
            continue
        expected = agent.act(observe(hand, hand.current))
        allowed = agent.tied or [expected]
        assert move(hand, seen_mask(hand), rng) in allowed
        compared += 1
    assert compared > 50


@pytest.mark.parametrize("config", [MATRIX[0], MATRIX[9], MATRIX[12], MATRIX[14], MATRIX[15]], ids=config_id)
def test_rollouts_finish_every_hand(config: GameConfig) -> None:
    rng = random.Random(1)
    for hand in random_states(config, 2, seed=51)[::5]:
        copy = hand.copy()
        play_out(copy, HEURISTIC_MOVES[config.variant], rng)
        assert copy.over and copy.winners()


# -- options -------------------------------------------------------------------------------------


def test_spec_options_and_name() -> None:
    config = GameConfig(variant="jokers", num_players=4)
    agent = make_agent("ismcts:iters=50,c=0.5,infer=no,rollout=random", config, 0)
    assert isinstance(agent, ISMCTSAgent) and agent.needs_view
    assert (agent.iters, agent.c, agent.infer, agent.ms) == (50, 0.5, False, None)
    assert agent.name == "ismcts:iters=50,c=0.5,rollout=random,infer=no"
    assert make_agent("ismcts", config, 0).name == "ismcts:iters=200"
    timed = make_agent("ismcts:ms=20", config, 0)
    assert timed.name == "ismcts:ms=20" and timed.ms == 20.0


def test_time_budget_stops_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a scripted clock that moves 10 ms per reading (the first one sets the deadline 30 ms on): the first
    iteration runs unchecked, the readings at 10 and 20 ms let one more run each, the one at 30 ms stops the search,
    whatever the machine's speed."""
    config = GameConfig(variant="classic", num_players=4)
    (hand,) = [h for h in random_states(config, 1, seed=61) if len(h.legal_actions()) > 1][:1]
    agent = make_agent("ismcts:ms=30", config, 0)
    readings = itertools.count(0.0, 0.010)
    monkeypatch.setattr(ismcts_module, "time", SimpleNamespace(perf_counter=lambda: next(readings)))
    root = agent.search(PlayerView.of(hand, hand.current))
    assert sum(child.visits for child in root.children.values()) == 3


@pytest.mark.parametrize(("spec", "message"), [
    ("ismcts:iters=0", "iters must be an integer in 1.."),
    ("ismcts:iters=-3", "iters must be an integer in 1.."),
    ("ismcts:iters=2.5", "iters must be an integer in 1.."),
    ("ismcts:iters=many", "iters must be an integer in 1.."),
    ("ismcts:ms=0", "ms must be a positive number"),
    ("ismcts:ms=-10", "ms must be a positive number"),
    ("ismcts:ms=fast", "ms must be a number"),
    ("ismcts:c=-1", "c must be a non-negative number"),
    ("ismcts:rollout=smart", "rollout must be one of"),
    ("ismcts:infer=maybe", "option 'infer' must be true/false"),
    ("ismcts:budget=100", "unknown option 'budget' for agent 'ismcts' in spec 'ismcts:budget=100'; its options: "
                          "iters, ms, c, rollout, infer"),
])
def test_bad_ismcts_specs_name_the_problem(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_agent(spec, GameConfig(), 0)


def test_ismcts_needs_its_view() -> None:
    config = GameConfig(variant="classic", num_players=4)
    hand = next(h for h in random_states(config, 1, seed=71) if len(h.legal_actions()) > 1)
    with pytest.raises(ValueError, match="needs the seat's PlayerView"):
        make_agent(SMALL, config, 0).act(observe(hand, hand.current))


def test_search_time_benchmark_runs_end_to_end() -> None:
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "search_time.py"
    out = subprocess.run([sys.executable, str(script), "--agent", "ismcts:iters=4", "--variant", "jokers",
                          "--hands", "2"], capture_output=True, text=True, timeout=120, check=True).stdout
    assert "ismcts:iters=4 jokers 4p, 2 hands:" in out and "ms CPU" in out


def test_each_seat_to_move_has_its_own_children() -> None:
    """In classic the same public moves can leave different seats to move (after a lead, a draw's card
    decides the trick and so the next leader): the tree keeps their moves apart, so one seat's results
    never back up into another's."""
    config = GameConfig(variant="classic", num_players=3)
    hands = [["2C", "9C"], ["3H", "4H"], ["3S", "4S"]]
    stock = ["KC", "5H", "QC", "5S"]
    in_play = {c for h in hands for c in h} | set(stock)
    hand = Hand.from_dict({
        "config": config.to_dict(), "dealer": 2, "hands": hands, "stock": stock,
        "seen": [code_of(f) for f in range(52) if code_of(f) not in in_play], "drawn": [0, 0, 0], "events": [],
        "current": 0, "phase": "LEAD", "trick": [-1, -1, -1], "leader": -1, "led": None, "best_face": None,
        "best_seat": -1, "turns": 0, "top": None, "match_face": None, "passes": 0, "winner": None, "blocked": False,
    })  # after 2C, when both must draw, whoever draws KC wins the trick and leads: seat 1 or seat 2
    root = ISMCTSAgent(config, seed=0, iters=400).search(PlayerView.of(hand, 0))
    movers_by_action: dict[tuple[int, int], set[int]] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for key, child in node.children.items():
            assert child.seat == key >> MOVER_SHIFT
            movers_by_action.setdefault((id(node), key & ACTION_BITS), set()).add(child.seat)
            stack.append(child)
    assert any(len(movers) > 1 for movers in movers_by_action.values())
