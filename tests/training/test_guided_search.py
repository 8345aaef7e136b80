"""The ``ppo-ismcts:`` agent: ISMCTS guided by a model's policy (a prior at the root).

The models here are built by hand (random weights of the right shapes), so each test controls what the guide says.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from helpers import hidden_twins

from goboom_env import GameConfig, Match
from goboom_env.agents import make_agent
from goboom_env.agents.ppo import FrozenMlp, save_snapshot
from goboom_env.cards import NUM_ACTIONS
from goboom_env.game_loop import Decision, play_hand
from goboom_env.history import HistoryEncoder
from goboom_env.player_view import PlayerView, observe
from goboom_env.training.artifacts.model_files import model_metadata, write_play_only

HIDDEN = 16


def write_model(path: Path, config: GameConfig, seed: int = 0) -> Path:
    """A play-only model of the history layout with random weights."""
    rng = np.random.default_rng(seed)
    size = HistoryEncoder(config).size
    actor = FrozenMlp([(rng.normal(0, 0.3, (HIDDEN, size)), np.zeros(HIDDEN)),
                       (rng.normal(0, 0.3, (NUM_ACTIONS, HIDDEN)), np.zeros(NUM_ACTIONS))])
    buf = io.BytesIO()
    save_snapshot(buf, actor.state())
    meta = model_metadata(config, observation="history") | {"deterministic": True}
    return write_play_only(path, meta, buf.getvalue())


def spec(path: Path, options: str = "iters=12") -> str:
    return f"ppo-ismcts:path={path},{options}"


@pytest.mark.parametrize("variant", ["classic", "jokers"])
def test_guided_search_plays_legal_moves_through_whole_hands(tmp_path: Path, variant: str) -> None:
    config = GameConfig(variant=variant, num_players=4)
    model = write_model(tmp_path / "m.zip", config)
    agent = make_agent(spec(model), config, seed=1)
    assert agent.name == f"ppo-ismcts:{model},iters=12" and agent.needs_view
    decisions = 0

    def check(decision: Decision) -> None:
        nonlocal decisions
        if decision.seat == 0:
            assert decision.observation["action_mask"][decision.action] == 1
            decisions += 1

    rng = np.random.default_rng(3)
    for _ in range(2):
        play_hand(Match(config, rng), [agent, *(make_agent("heuristic", config, s) for s in (1, 2, 3))], check)
    assert decisions > 5


def test_guided_choice_ignores_hidden_cards(tmp_path: Path) -> None:
    """Two states that differ only in cards the seat cannot see give the same view and the same guidance, hence
    the same move: the policy reads no hidden card."""
    config = GameConfig(variant="classic", num_players=4)
    hand, other = hidden_twins(config)
    assert PlayerView.of(hand, 0) == PlayerView.of(other, 0)
    model = write_model(tmp_path / "m.zip", config)
    picks = []
    for h in (hand, other):
        agent = make_agent(spec(model, "iters=40"), config, seed=1)
        picks.append(agent.act(observe(h, 0), PlayerView.of(h, 0)))
    assert picks[0] == picks[1]
    guides = [make_agent(spec(model), config, 1).guide(observe(h, 0), PlayerView.of(h, 0)) for h in (hand, other)]
    np.testing.assert_array_equal(guides[0], guides[1])


def test_a_strong_prior_plays_the_policys_move(tmp_path: Path) -> None:
    """With an overwhelming prior weight the root's scores are the prior's: the search plays the policy's greedy move
    (the control, prior=0, plays another move somewhere: the prior is what decided)."""
    config = GameConfig(variant="jokers", num_players=4)
    model = write_model(tmp_path / "m.zip", config)
    rng = np.random.default_rng(8)
    policy = make_agent(f"ppo:{model}", config, 0)
    strong = make_agent(spec(model, "iters=30,prior=1000000"), config, 0)
    plain = make_agent(spec(model, "iters=30,prior=0"), config, 0)
    differs = 0
    for _ in range(2):
        hand = Match(config, rng).hand
        while not hand.over:
            obs, view = observe(hand, hand.current), PlayerView.of(hand, hand.current)
            if obs["action_mask"].sum() > 1:
                greedy = policy.act(obs, view)
                assert strong.act(obs, view) == greedy
                differs += plain.act(obs, view) != greedy
            hand.apply(int(np.flatnonzero(obs["action_mask"])[0]))
    assert differs > 0


def test_the_prior_is_the_policys_distribution_over_the_legal_moves(tmp_path: Path) -> None:
    config = GameConfig(variant="jokers", num_players=4)
    agent = make_agent(spec(write_model(tmp_path / "m.zip", config)), config, 0)
    hand = Match(config, np.random.default_rng(1)).hand
    prior = agent.guide(observe(hand, hand.current), PlayerView.of(hand, hand.current))
    assert prior.shape == (NUM_ACTIONS,) and prior.sum() == pytest.approx(1.0)
    assert (prior[observe(hand, hand.current)["action_mask"] == 0] == 0).all()


def test_bad_guided_specs_name_the_problem(tmp_path: Path) -> None:
    config = GameConfig(variant="jokers", num_players=4)
    with pytest.raises(ValueError, match="ppo-ismcts agent needs a model"):
        make_agent("ppo-ismcts", config)
    model = write_model(tmp_path / "m.zip", config)
    with pytest.raises(ValueError, match=r"unknown ppo-ismcts option.*budget.*prior"):
        make_agent(spec(model, "budget=3"), config)
    with pytest.raises(ValueError, match="samples"):
        make_agent(spec(model, "samples=8"), config)
    with pytest.raises(ValueError, match="classic"):  # the model's game is checked as ppo: checks it
        make_agent(spec(model), GameConfig(variant="classic", num_players=4))
