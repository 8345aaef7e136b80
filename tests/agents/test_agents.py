"""Baseline agents: legality over many games in every config, determinism, the Policy protocol and the
agent registry (names, entry points), hand-built heuristic scenarios, the information each seat may use
(R4.1) and the search agent's blindness to hidden cards."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from helpers import (
    MATRIX,
    LowestLegal,
    config_id,
    make_hand,
    on_matrix,
    play,
    random_move,
    soak,
    soak_count,
    suited_hands,
)

import goboom_env
from goboom_env import GameConfig, Hand, Match
from goboom_env.agents import (
    AGENTS,
    BEST_HEURISTIC,
    HEURISTICS,
    Policy,
    RandomAgent,
    TableDecoder,
    make_agent,
    parse_spec,
    register_agent,
    registry,
    spec_bool,
    unregister_agent,
)
from goboom_env.agents.montecarlo import MonteCarloAgent
from goboom_env.cards import DRAW_OR_PASS, JOKER, code_of, deck_faces, face_of
from goboom_env.game_loop import Decision, play_hand
from goboom_env.player_view import PlayerView, observe


def play_checked(config: GameConfig, specs: list[str], games: int, seed: int) -> list[list[int]]:
    """Play ``games`` hands, seat s played by ``specs[s]``; assert every action is in the mask. Returns the
    action sequence of each game."""
    rng = np.random.default_rng(seed)
    agents = [make_agent(spec, config, seed + s) for s, spec in enumerate(specs)]
    sequences: list[list[int]] = []

    def check(decision: Decision) -> None:
        seat, action = decision.seat, decision.action
        assert type(action) is int
        assert decision.observation["action_mask"][action] == 1, (
            f"{specs[seat]} played illegal {action} in {config_id(config)}")
        sequences[-1].append(action)

    for _ in range(games):
        sequences.append([])
        play_hand(Match(config, rng), agents, check)
    return sequences


def _specs(config: GameConfig) -> list[str]:
    return [*registry.baselines(config), "heuristic"]


@on_matrix
def test_every_baseline_plays_only_legal_actions(config: GameConfig) -> None:
    """Fast tier: 100 hands per baseline in every config of the matrix (all seats the same agent),
    plus hands mixing every baseline and the search agent at the table."""
    for spec in _specs(config):
        play_checked(config, [spec] * config.num_players, 100, seed=1)
    mixed = [_specs(config)[s % 4] for s in range(config.num_players)]
    mixed[0] = "mc:budget=4"
    play_checked(config, mixed, 5, seed=2)


@soak
@on_matrix
def test_every_baseline_plays_only_legal_actions_soak(config: GameConfig) -> None:
    """1000 hands per baseline per config (4000 a config), 40 with the search agent in one seat (``make soak``;
    a fifth of that in CI)."""
    for spec in _specs(config):
        play_checked(config, [spec] * config.num_players, soak_count(1000, 200), seed=11)
    play_checked(config, ["mc:budget=8", *["heuristic"] * (config.num_players - 1)], soak_count(40, 8), seed=12)


@pytest.mark.parametrize("config", [MATRIX[4], MATRIX[-2]], ids=config_id)
@pytest.mark.parametrize("spec", ["random", "heuristic", "mc:budget=6"])
def test_agents_are_deterministic_for_a_fixed_seed(config: GameConfig, spec: str) -> None:
    specs = [spec] * config.num_players
    first = play_checked(config, specs, 8, seed=5)
    assert play_checked(config, specs, 8, seed=5) == first
    if spec != "heuristic":  # heuristics only use their generator to break exact ties
        assert play_checked(config, specs, 8, seed=6) != first


def test_reseed_restarts_the_agent() -> None:
    config = GameConfig(variant="jokers", num_players=3)
    for spec in ["random", "jokers-boom", "mc:budget=4"]:
        agent = make_agent(spec, config, 3)
        fresh = make_agent(spec, config, 99)
        fresh.reseed(3)
        assert fresh.rng.random() == agent.rng.random()


def test_registry_names_and_alias() -> None:
    for variant in ("classic", "jokers"):
        assert len(HEURISTICS[variant]) >= 2
        assert BEST_HEURISTIC[variant] in HEURISTICS[variant]
        config = GameConfig(variant=variant)
        assert make_agent("heuristic", config, 0).name == BEST_HEURISTIC[variant]
        for spec in registry.baselines(config):
            assert spec in AGENTS and make_agent(spec, config, 0).name == spec
    assert make_agent("mc:budget=7", GameConfig(), 0).budget == 7
    assert parse_spec("mc:budget=7,rollout=random") == ("mc", {"budget": 7, "rollout": "random"})


@pytest.mark.parametrize(
    ("spec", "config", "message"),
    [
        ("classic-tricks", GameConfig(variant="jokers"), "variant='classic'"),
        ("jokers-boom", GameConfig(variant="classic"), "variant='jokers'"),
        ("mc:budget=0", GameConfig(), "budget must be an integer"),
        ("mc:rollout=smart", GameConfig(), "rollout must be one of"),
        ("nosuch", GameConfig(), "unknown agent 'nosuch'"),
    ],
)
def test_bad_agent_specs_name_the_problem(spec: str, config: GameConfig, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_agent(spec, config, 0)


class FlagAgent(RandomAgent):
    """A test agent with a boolean option, as the ppo and rllib loaders have."""

    def __init__(self, config: GameConfig, seed: int | None = None, sample: bool = True,
                 path: str | None = None) -> None:
        super().__init__(config, seed)
        self.sample, self.path = sample, path


@pytest.mark.parametrize(
    ("text", "expected"),
    [("true", True), ("True", True), ("yes", True), ("1", True), ("false", False), ("no", False), ("NO", False),
     ("0", False)],
)
def test_boolean_options_take_true_false_yes_no_1_0(monkeypatch: pytest.MonkeyPatch, text: str,
                                                     expected: bool) -> None:
    monkeypatch.setitem(AGENTS, "flag", FlagAgent)
    assert make_agent(f"flag:sample={text}", GameConfig()).sample is expected
    assert spec_bool("sample", text) is expected


@pytest.mark.parametrize("text", ["off", "maybe", "2", "-1", "", "0.0", "y"])
def test_any_other_boolean_option_value_is_an_error_naming_the_option(monkeypatch: pytest.MonkeyPatch,
                                                                      text: str) -> None:
    monkeypatch.setitem(AGENTS, "flag", FlagAgent)
    with pytest.raises(ValueError, match=f"option 'sample' must be true/false, yes/no or 1/0, got '?{text}'?"):
        make_agent(f"flag:sample={text},path=x", GameConfig())


def test_a_path_with_an_equals_sign_is_written_as_path_option(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(AGENTS, "flag", FlagAgent)
    with pytest.raises(ValueError, match=r"'runs/a' .* is not an option name; .* written as flag:path=PATH"):
        make_agent("flag:runs/a=b/model.zip", GameConfig())
    agent = make_agent("flag:path=runs/a=b/model.zip,sample=no", GameConfig())
    assert (agent.path, agent.sample) == ("runs/a=b/model.zip", False)
    assert parse_spec("flag:path=10") == ("flag", {"path": "10"})  # a path stays text, even when it looks numeric


# -- the Policy protocol and the registry --------------------------------------------------------


@pytest.mark.parametrize("variant", ["classic", "jokers"])
def test_every_registered_agent_satisfies_the_policy_protocol(variant: str) -> None:
    config = GameConfig(variant=variant)
    made = []
    for name in sorted(AGENTS):
        try:
            agent = make_agent(name, config, 0)
        except ValueError as exc:  # a heuristic of the other variant
            assert "but the config has variant=" in str(exc)
            continue
        assert isinstance(agent, Policy), name
        assert isinstance(agent.needs_view, bool) and agent.name
        made.append(name)
    assert {*registry.baselines(config), "heuristic", "mc"} <= set(made)
    assert not make_agent("random", config).needs_view and make_agent("mc", config).needs_view


class Bare:
    """An agent that forgot ``reseed`` and ``needs_view``."""

    name = "bare"

    def act(self, observation: dict, view: object = None) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.fixture
def registered() -> Iterator[list[str]]:
    """Names registered by a test, unregistered after it."""
    names: list[str] = []
    yield names
    for name in names:
        unregister_agent(name)


def test_register_agent_adds_a_name_to_specs(registered: list[str]) -> None:
    register_agent("first-legal", LowestLegal)
    registered.append("first-legal")
    agent = make_agent("first-legal", GameConfig(), 0)
    assert isinstance(agent, Policy) and not agent.needs_view
    assert "first-legal" in registry.known_agents()
    with pytest.raises(ValueError, match="'first-legal' is already registered; pass replace=True"):
        register_agent("first-legal", RandomAgent)
    register_agent("first-legal", RandomAgent, replace=True)
    assert make_agent("first-legal", GameConfig(), 0).name == "random"


def test_unregister_agent_removes_the_name() -> None:
    register_agent("short-lived", LowestLegal)
    unregister_agent("short-lived")
    assert "short-lived" not in registry.known_agents()
    with pytest.raises(ValueError, match="no agent named 'short-lived' is registered"):
        unregister_agent("short-lived")


@pytest.mark.parametrize("name", ["", "a:b", "a,b", "a=b", "-a", "two words", 3])
def test_register_agent_refuses_a_name_a_spec_cannot_hold(name: object) -> None:
    with pytest.raises(ValueError, match="agent name must be"):
        register_agent(name, LowestLegal)  # type: ignore[arg-type]


def test_register_agent_refuses_a_factory_that_is_not_callable() -> None:
    with pytest.raises(TypeError, match="factory of agent 'x' must be callable"):
        register_agent("x", "goboom_env.somewhere:loader")  # type: ignore[arg-type]


def test_an_agent_without_the_whole_protocol_is_refused(registered: list[str]) -> None:
    register_agent("bare", lambda config, seed: Bare())
    registered.append("bare")
    with pytest.raises(TypeError, match=r"'bare' made a Bare without needs_view, reseed: an agent needs name, "
                                        r"needs_view, act, reseed .*subclass goboom_env.agents.Agent"):
        make_agent("bare", GameConfig())


def test_an_unknown_agent_lists_every_known_one_entry_points_included() -> None:
    with pytest.raises(ValueError, match=r"unknown agent 'ppp' in spec 'ppp:x.zip'; known agents: \[.*'mc'.*'ppo'.*"
                                         r"'random', 'rllib'\]"):
        make_agent("ppp:x.zip", GameConfig())


def _install_plugin(root: Path, entry_points: dict[str, str], module: str = "") -> None:
    """A distribution ``goboom-plugin`` on ``root`` (a sys.path folder) declaring ``entry_points`` in the
    ``goboom_env.agents`` group, with ``plugin_agents.py`` holding ``module``."""
    info = root / "goboom_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: goboom-plugin\nVersion: 1.0\n")
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[goboom_env.agents]\n{lines}")
    (root / "plugin_agents.py").write_text(textwrap.dedent(module))


def test_a_third_party_agent_is_found_through_its_entry_point(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _install_plugin(tmp_path, {"plugin-first": "plugin_agents:make", "plugin-moved": "plugin_gone:make",
                               "plugin-needs-more": "plugin_needy:make", "plugin-typo": "plugin_agents:mkae"},
                    """
                    from goboom_env.agents import Agent

                    class First(Agent):
                        name = "plugin-first"

                        def act(self, observation, view=None):
                            return int(observation["action_mask"].nonzero()[0][0])

                    def make(config, seed=None, greedy: bool = True):
                        agent = First(config, seed)
                        agent.greedy = greedy
                        return agent
                    """)
    (tmp_path / "plugin_needy.py").write_text("import not_installed_anywhere_xyz\nmake = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_LOADED", {})
    assert {"plugin-first", "plugin-moved"} <= set(registry.known_agents())
    agent = make_agent("plugin-first:greedy=no", GameConfig(), 0)
    assert (agent.name, agent.greedy) == ("plugin-first", False)  # bool options are parsed as for built-ins
    with pytest.raises(ImportError, match="entry point plugin-moved = 'plugin_gone:make' of goboom-plugin names "
                                          "a module that does not exist"):
        make_agent("plugin-moved", GameConfig())
    with pytest.raises(ImportError, match=r"plugin-typo = 'plugin_agents:mkae' .* names nothing importable"):
        make_agent("plugin-typo", GameConfig())
    with pytest.raises(ValueError, match="agent 'plugin-needs-more' needs an optional dependency that is "
                                         "missing: No module named 'not_installed_anywhere_xyz'"):
        make_agent("plugin-needs-more", GameConfig())


def test_the_agents_layer_loads_no_training_code_until_a_learned_agent_is_named() -> None:
    """``ppo`` and ``rllib`` are entry points: listing and making the baselines imports neither
    goboom_env.training nor torch nor ray."""
    code = textwrap.dedent("""
        import sys
        from goboom_env import GameConfig
        from goboom_env.agents import known_agents, make_agent
        assert {"ppo", "rllib"} <= set(known_agents())
        make_agent("heuristic", GameConfig(), 0)
        loaded = {m.split(".")[0] for m in sys.modules} | set(sys.modules)
        print(sorted(loaded & {"torch", "ray", "stable_baselines3", "goboom_env.training", "goboom_env.cli"}))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_search_agent_needs_its_view() -> None:
    config = GameConfig()
    agent = make_agent("mc:budget=4", config, 0)
    assert agent.needs_view
    (hand,) = _mid_game_states(config, 1, seed=3)  # two or more legal actions: the search must run
    obs = observe(hand, hand.current)
    with pytest.raises(ValueError, match="needs the seat's PlayerView"):
        agent.act(obs)
    assert obs["action_mask"][agent.act(obs, PlayerView.of(hand, hand.current))] == 1


@on_matrix
def test_heuristics_decode_the_observation_exactly(config: GameConfig) -> None:
    """The heuristics' decoded table equals the engine's facts (own cards, unseen cards, sizes, trick)."""
    decoder = TableDecoder(config)
    total = np.bincount(deck_faces(config.num_decks, config.num_jokers), minlength=53)
    for hand in _mid_game_states(config, 4, seed=13):
        seat = hand.current
        t = decoder.decode(observe(hand, seat))
        own = np.frombuffer(hand.counts[seat], np.uint8)
        assert t.hand.tolist() == own.tolist()
        assert t.unseen.tolist() == (total - own - np.frombuffer(hand.seen, np.uint8)).tolist()
        assert t.sizes.tolist() == [hand.sizes[(seat + k) % hand.n] for k in range(hand.n)]
        assert (t.stock, t.legal) == (len(hand.stock), hand.legal_actions())
        if config.is_classic:
            assert (t.led, t.best) == (hand.led, hand.best_face)


# -- hand-built scenarios ----------------------------------------------------------------------


def _act(spec: str, hand: Hand) -> str:
    agent = make_agent(spec, hand.config, 0)
    action = agent.act(observe(hand, hand.current), PlayerView.of(hand, hand.current))
    return "draw" if action == DRAW_OR_PASS else code_of(action)


CLASSIC4 = GameConfig(variant="classic", num_players=4)


def _follow(spec: str, hands: list[list[str]]) -> str:
    """What ``spec`` plays in seat 1 of a classic 4-player hand dealt by P3, after P0 leads its first card (R1.4)."""
    hand = make_hand(CLASSIC4, hands, dealer=3)
    play(hand, hands[0][0])
    return _act(spec, hand)


def test_classic_tricks_wins_the_trick_with_its_lowest_winning_card() -> None:
    # P0 leads 7H; P1 can follow with 9H, QH or 7S and wins with 9H (R1.7)
    hands = [["7H", "2C", "3C", "4C", "5C", "6C", "8C"],
             ["9H", "QH", "7S", "2D", "3D", "4D", "5D"],
             ["2S", "3S", "4S", "5S", "6S", "8S", "9S"],
             ["2H", "3H", "4H", "5H", "6H", "8H", "TH"]]
    assert _follow("classic-tricks", hands) == "9H"
    # cover ignores the trick: it keeps 7S (its only spade) and sheds QH (more points than 9H, same cover)
    assert _follow("classic-cover", hands) == "QH"


def test_classic_cover_keeps_a_flexible_hand() -> None:
    # led 5H: P1 may follow with 5C or 5D; 8C still covers clubs after 5C goes, nothing covers diamonds
    assert _follow("classic-cover", [["5H", "2S", "3S", "4S", "6S", "7S", "8S"],
                                     ["5C", "8C", "5D", "KS", "AS", "QS", "JS"],
                                     ["2C", "3C", "4C", "6C", "7C", "9C", "TC"],
                                     ["2H", "3H", "4H", "6H", "7H", "8H", "9H"]]) == "5C"


def test_classic_tricks_leads_the_card_others_can_hardly_follow() -> None:
    # 2p: P0 holds six clubs and AS; leading a club keeps AS (spades) covered and clubs are scarce unseen
    config = GameConfig(variant="classic", num_players=2)
    hand = make_hand(config, [["2C", "3C", "4C", "5C", "6C", "7C", "AS"],
                              ["2D", "3D", "4D", "5D", "6D", "7D", "8D"]], dealer=1)
    assert _act("classic-tricks", hand).endswith("C")


JOKERS3 = GameConfig(variant="jokers", num_players=3)


def _jokers_state(p0: list[str], p1_size: int, upcard: str = "7H") -> Hand:
    """Jokers 3p, dealer 2, P0 to move holding ``p0``; P1 is then cut down to ``p1_size`` cards (the rest
    go back under the stock), so the public sizes say P1 is about to go out."""
    others = [c for c in ("2C", "3C", "4C", "5C", "6C", "8C", "9C", "2D", "3D", "4D", "5D", "6D", "8D", "9D")
              if c not in p0]
    hand = make_hand(JOKERS3, [p0, others[:7], others[7:14]], stock=[upcard], dealer=2)
    state = hand.to_dict()
    moved = state["hands"][1][p1_size:]
    state["hands"][1] = state["hands"][1][:p1_size]
    state["stock"] = state["stock"] + moved
    return Hand.from_dict(state)


def test_jokers_shed_plays_points_and_keeps_the_joker() -> None:
    hand = _jokers_state(["2H", "KH", "JK", "2S", "3S", "4S", "5S"], p1_size=7)
    assert hand.top == face_of("7H")
    assert _act("jokers-shed", hand) == "KH"  # points + 3 per own follow-up: KH 10 + 3*1 = 13, 2H 2 + 3*2 = 8
    # jokers-boom also takes 2 per unseen card matching: KH 13 - 2*13 = -13, 2H 8 - 2*12 = -16
    assert _act("jokers-boom", hand) == "KH"


def test_jokers_boom_booms_when_an_opponent_is_about_to_go_out() -> None:
    hand = _jokers_state(["2H", "KH", "JK", "2S", "3S", "4S", "5S"], p1_size=1)
    assert _act("jokers-boom", hand) == "JK"
    assert _act("jokers-shed", hand) == "KH"


def test_jokers_heuristics_boom_instead_of_drawing() -> None:
    hand = _jokers_state(["2S", "3S", "4S", "5S", "6S", "JK", "TC"], p1_size=7, upcard="7D")
    legal = {code_of(a) if a != DRAW_OR_PASS else "draw" for a in hand.legal_actions()}
    assert legal == {"JK", "draw"}
    assert _act("jokers-shed", hand) == "JK"
    assert _act("jokers-boom", hand) == "JK"


# -- information (R4.1) ------------------------------------------------------------------------


def _mid_game_states(config: GameConfig, count: int, seed: int) -> list[Hand]:
    rng = np.random.default_rng(seed)
    states = []
    while len(states) < count:
        hand = Match(config, rng).hand
        for _ in range(int(rng.integers(3, 25))):
            if hand.over:
                break
            random_move(hand, rng)
        if not hand.over and len(hand.legal_actions()) > 1:
            states.append(hand)
    return states


def permute_hidden(hand: Hand, rng: np.random.Generator) -> Hand:
    """The same public state with the cards the player to move cannot see shuffled among the other hands
    and the stock (sizes kept; jokers buried at the turn-up stay at the stock's bottom, R2.3)."""
    state = hand.to_dict()
    seat = hand.current
    buried = min(sum(1 for e in hand.events if e[0] == "bury"), len(hand.stock))
    stock = state["stock"]
    keep_bottom = stock[len(stock) - buried:] if buried else []
    pool = [c for s, h in enumerate(state["hands"]) if s != seat for c in h] + stock[:len(stock) - buried]
    pool = [pool[i] for i in rng.permutation(len(pool))]
    start = 0
    for s in range(hand.n):
        if s != seat:
            size = len(state["hands"][s])
            state["hands"][s] = pool[start:start + size]
            start += size
    state["stock"] = pool[start:] + keep_bottom
    return Hand.from_dict(state)


@pytest.mark.parametrize("config", [MATRIX[0], MATRIX[4], MATRIX[8], MATRIX[12], MATRIX[16]], ids=config_id)
def test_view_and_search_choice_ignore_hidden_cards(config: GameConfig) -> None:
    rng = np.random.default_rng(7)
    changed = 0
    for hand in _mid_game_states(config, 6, seed=8):
        other = permute_hidden(hand, rng)
        seat = hand.current
        changed += other.to_dict()["hands"] != hand.to_dict()["hands"]
        assert PlayerView.of(other, seat) == PlayerView.of(hand, seat)
        for a, b in zip(observe(hand, seat).values(), observe(other, seat).values()):
            assert np.array_equal(a, b)
        choices = []
        for state in (hand, other):
            agent = MonteCarloAgent(config, seed=3, budget=24)
            choices.append(agent.act(observe(state, seat), PlayerView.of(state, seat)))
        assert choices[0] == choices[1]
    assert changed >= 5  # the permutation really moved hidden cards


def test_search_agent_depends_on_its_own_information() -> None:
    """Control for the test above: the same agent does react to what it may see (its seed's choices
    over many states are not constant), so equal choices there are not an accident."""
    config = MATRIX[4]
    picks = {MonteCarloAgent(config, seed=3, budget=24).act(observe(h, h.current), PlayerView.of(h, h.current))
             for h in _mid_game_states(config, 8, seed=9)}
    assert len(picks) > 1


@on_matrix
def test_sample_hand_is_consistent_with_the_view(config: GameConfig) -> None:
    rng = np.random.default_rng(4)
    for hand in _mid_game_states(config, 3, seed=10):
        seat = hand.current
        view = PlayerView.of(hand, seat)
        for _ in range(5):
            sample = view.sample_hand(rng)
            assert PlayerView.of(sample, seat) == view
            assert sample.hand_faces(seat) == hand.hand_faces(seat)
            everything = sorted(f for s in range(hand.n) for f in sample.hand_faces(s)) + sorted(sample.stock)
            truth = sorted(f for s in range(hand.n) for f in hand.hand_faces(s)) + sorted(hand.stock)
            assert sorted(everything) == sorted(truth)
            assert sample.legal_actions() == hand.legal_actions()
            while not sample.over:  # a determinization is a playable hand
                sample.apply(sample.legal_actions()[0])


def test_sample_hand_keeps_buried_jokers_at_the_bottom() -> None:
    config = GameConfig(variant="jokers", num_players=3)
    hand = make_hand(config, suited_hands("2345678", "CDH"), stock=["JK", "JK", "9S"], dealer=2)
    assert hand.top == face_of("9S") and hand.stock[:2] == [JOKER, JOKER]
    view = PlayerView.of(hand, 0)
    assert view.buried == 2
    for seed in range(5):
        assert view.sample_hand(np.random.default_rng(seed)).stock[:2] == [JOKER, JOKER]


def test_observe_matches_the_env() -> None:
    env = goboom_env.raw_env(variant="classic", num_players=3)
    env.reset(seed=3)
    steps = 0
    while not env.terminations[env.agent_selection] and steps < 40:
        for name in env.agents:
            mine = observe(env.match, env.agent_name_mapping[name])
            theirs = env.observe(name)
            assert np.array_equal(mine["observation"], theirs["observation"])
            assert np.array_equal(mine["action_mask"], theirs["action_mask"])
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[-1]))
        steps += 1
    assert steps > 5


def test_player_view_rejects_bad_input() -> None:
    hand = Match(GameConfig(), np.random.default_rng(0)).hand
    with pytest.raises(ValueError, match=r"seat must be in 0\.\.3"):
        PlayerView.of(hand, 4)
    with pytest.raises(ValueError, match="needs a Match or a Hand"):
        PlayerView.of("hand", 0)  # type: ignore[arg-type]
