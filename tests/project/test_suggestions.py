"""Error messages say what was probably meant (goboom_env.hints.did_you_mean: unknown agents, spec options,
presets, command-line options) and, for a model asked to play another game, what differs in words."""

from __future__ import annotations

from typing import NoReturn

import pytest

from goboom_env import GameConfig
from goboom_env.agents import make_agent, register_agent, unregister_agent
from goboom_env.cli.options import UsageError, parse
from goboom_env.hints import close_matches, did_you_mean
from goboom_env.training.settings import GameArgs


def test_did_you_mean_names_the_closest_choices_or_nothing() -> None:
    assert did_you_mean("iter", ["iters", "ms", "c", "rollout", "infer"]) == " (did you mean 'iters'?)"
    assert did_you_mean("Heuristic", ["heuristic", "random"]) == " (did you mean 'heuristic'?)"  # case ignored
    assert did_you_mean("ab", ["abc", "abd"]) == " (did you mean 'abc' or 'abd'?)"  # equally close: both
    assert did_you_mean("--gams", ["--games", "--seed"], quote=False) == " (did you mean --games?)"
    assert did_you_mean("zzz", ["iters", "ms"]) == "" and did_you_mean(3, ["iters"]) == ""
    assert close_matches("iters", ["iters"]) == []  # the word itself is no suggestion


@pytest.mark.parametrize(("spec", "message"), [
    ("heuristc", r"unknown agent 'heuristc' in spec 'heuristc'; known agents: \[.*\] \(did you mean 'heuristic'\?\)"),
    ("ismcts:iter=5", r"unknown option 'iter' for agent 'ismcts' in spec 'ismcts:iter=5' \(did you mean 'iters'\?\); "
                      r"its options: iters, ms, c, rollout, infer"),
    ("mc:budgt=3", r"unknown option 'budgt' for agent 'mc' in spec 'mc:budgt=3' \(did you mean 'budget'\?\); its "
                   r"options: budget, rollout"),
    ("random:seed_=1", r"unknown option 'seed_' for agent 'random' in spec 'random:seed_=1'; its options: none"),
])
def test_unknown_agents_and_options_name_the_likely_one(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_agent(spec, GameConfig(), 0)


def test_an_agent_that_checks_its_own_options_gets_the_likely_one_added() -> None:
    def strict(config: GameConfig, seed: int | None = None, iters: int = 1, **options: object) -> NoReturn:
        raise ValueError(f"unknown strict option(s) {', '.join(options)}")

    register_agent("strict", strict)
    try:
        with pytest.raises(ValueError) as caught:
            make_agent("strict:iter=5", GameConfig(), 0)
    finally:
        unregister_agent("strict")
    assert str(caught.value) == "unknown strict option(s) iter (iter: did you mean 'iters'?)"


def test_unknown_presets_name_the_likely_one() -> None:
    with pytest.raises(ValueError, match=r"unknown preset 'jokers3p'; choose one of \[.*\] \(did you mean 'jokers-3p'"):
        GameConfig.preset("jokers3p")
    with pytest.raises(UsageError, match=r"unknown preset 'clasic'; .* \(did you mean 'classic'\?\)"):
        parse(GameArgs, ["--preset", "clasic"], "goboom test")


def test_unknown_command_line_options_name_the_likely_one() -> None:
    with pytest.raises(UsageError) as caught:
        parse(GameArgs, ["--num-player", "3", "--hand-sise=5", "--zzz"], "goboom test")
    assert str(caught.value) == ("Unrecognized options: --num-player, 3, --hand-sise=5, --zzz (--num-player: did you "
                                 "mean --num-players?) (--hand-sise: did you mean --hand-size?)")


def test_a_model_asked_to_play_another_game_says_in_words_what_differs() -> None:
    with pytest.raises(ValueError) as caught:
        make_agent("ppo:classic-4p-hands", GameConfig(variant="jokers"))
    assert str(caught.value).endswith(
        "classic-4p-hands.zip was trained for a different game configuration: classic Go Boom, 4 players, no jokers, "
        "standard scoring, target score 200; the requested game is jokers Go Boom, 4 players, 2 jokers, penalty "
        "scoring, 4 rounds (different: variant, jokers, scoring, target score, rounds)")
    with pytest.raises(ValueError, match=r"classic Go Boom, 4 players, 7 cards a hand; the requested game is classic "
                                         r"Go Boom, 4 players, 5 cards a hand \(different: cards a hand\)$"):
        make_agent("ppo:classic-4p-hands", GameConfig(hand_size=5))
