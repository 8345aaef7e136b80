"""Full text trace of one seeded game, for golden-file tests and for reading a game move by move.

A playthrough plays random legal actions through :class:`goboom_env.env.raw_env` and writes the
config, each deal (hands and stock), every decision (seat, legal actions, action, the public
events it caused), each hand's result and the episode's rewards. The same arguments always give
the same text, so a change in the rules, the env's rewards or the seeding shows up as a diff.
Regenerate a golden file with the command written in its first line::

    python tests/helpers/playthrough.py --config classic --seed 1 > tests/data/playthroughs/classic_4p.txt
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from goboom_env.cards import DRAW_OR_PASS, code_of
from goboom_env.config import PRESETS, GameConfig
from goboom_env.engine import Hand
from goboom_env.env import EPISODES, REWARDS, raw_env
from goboom_env.events import event_text
from goboom_env.hints import shown
from goboom_env.untrusted import parse_json


def parse_config(text: str) -> GameConfig:
    """A config from a preset name (``"jokers-aces"``) or a JSON object of GameConfig fields."""
    text = text.strip()
    if text.startswith("{"):
        fields = parse_json(text, "--config")
        if not isinstance(fields, dict):
            raise ValueError(f"--config JSON must be an object of GameConfig fields, got {shown(text)}")
        return GameConfig.from_dict(fields)
    return GameConfig.preset(text)


def action_text(action: int) -> str:
    """An action as a card code, or ``draw`` for DRAW_OR_PASS (R3.1)."""
    return "draw" if action == DRAW_OR_PASS else code_of(action)


def _deal_lines(hand: Hand, number: int) -> list[str]:
    lines = [f"== hand {number}: dealer P{hand.dealer}"]
    lines += [f"deal P{s}: {' '.join(code_of(f) for f in hand.hand_faces(s))}" for s in range(hand.n)]
    lines.append(f"stock (top first): {' '.join(code_of(f) for f in reversed(hand.stock))}")
    if hand.events:
        lines.append(f"events: {'; '.join(event_text(e) for e in hand.events)}")
    return lines


def _hand_over_lines(hand: Hand) -> list[str]:
    how = "blocked" if hand.blocked else f"P{hand.winner} went out"
    return [f"hand over: {how}; winners {hand.winners()}; hand points {hand.hand_points()}"]


def command_line(config: str, seed: int, episode: str, reward: str) -> str:
    """The shell command that regenerates a playthrough (written as its first line)."""
    return shlex.join(["python", "tests/helpers/playthrough.py", "--config", config, "--seed", str(seed),
                       "--episode", episode, "--reward", reward])


def playthrough(config: str, seed: int = 0, episode: str = "hand", reward: str = "win") -> str:
    """The full text trace of the game that ``seed`` deals and random play (seeded too) plays.

    ``config`` is a preset name or a JSON object (see :func:`parse_config`); ``episode`` and
    ``reward`` are the env's arguments of the same names.
    """
    cfg = parse_config(config)
    env = raw_env(config=cfg, episode=episode, reward=reward)
    env.reset(seed=seed)
    rng = np.random.default_rng([seed, 1])  # the players' randomness, apart from the deals
    lines = [f"# {command_line(config, seed, episode, reward)}",
             f"config: {json.dumps(cfg.to_dict())}", f"episode: {episode}; reward: {reward}; seed: {seed}"]
    totals = dict.fromkeys(env.possible_agents, 0.0)
    hand, number, step = None, 0, 0
    while not all(env.terminations.values()):
        if env.match.hand is not hand:
            hand, number = env.match.hand, number + 1
            lines += _deal_lines(hand, number)
        seat, read = hand.current, len(hand.events)
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist()
        action = legal[int(rng.integers(len(legal)))]
        env.step(action)
        step += 1
        events = "; ".join(event_text(e) for e in hand.events[read:])
        lines.append(f"{step} P{seat} [{' '.join(map(action_text, legal))}] -> {action_text(action)} | {events}")
        for agent, value in env.rewards.items():
            totals[agent] += value
        if hand.over:
            lines += _hand_over_lines(hand)
            if episode == "match":
                lines.append(f"scores: {env.match.scores}")
    info = env.infos[env.possible_agents[0]]
    lines.append(f"result: {json.dumps(info, sort_keys=True)}")
    lines.append("rewards: " + " ".join(f"{a}={v:+.6f}" for a, v in totals.items()))
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    """The command-line arguments of ``python tests/helpers/playthrough.py``."""
    parser = argparse.ArgumentParser(prog="python tests/helpers/playthrough.py", description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="classic",
                        help=f"preset ({', '.join(sorted(PRESETS))}) or a JSON object of GameConfig fields")
    parser.add_argument("--seed", type=int, default=0, help="seeds the deals and the random players")
    parser.add_argument("--episode", choices=EPISODES, default="hand", help="one hand or the whole match")
    parser.add_argument("--reward", choices=REWARDS, default="win", help="the env's reward mode")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Print a playthrough to stdout; a bad config is reported on stderr with exit status 2."""
    args = build_parser().parse_args(argv)
    try:
        text = playthrough(args.config, args.seed, args.episode, args.reward)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


def arguments_of(first_line: str) -> dict[str, Any]:
    """The keyword arguments of :func:`playthrough` written in a trace's first line."""
    words = shlex.split(first_line.removeprefix("#").strip())
    if words[:2] != ["python", "tests/helpers/playthrough.py"]:
        raise ValueError(f"not a playthrough command line: {first_line!r}")
    args = build_parser().parse_args(words[2:])
    return {"config": args.config, "seed": args.seed, "episode": args.episode, "reward": args.reward}


if __name__ == "__main__":
    raise SystemExit(main())
