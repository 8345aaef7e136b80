"""Time per move of a search agent: one seat played by the agent, the others by the variant's heuristic.

Plays ``--hands`` hands (one deal each, dealer rotating) and times every call of the agent's ``act``.
Reports milliseconds per *searched* move (two or more legal actions; a forced move returns at once)
and per move overall, on two clocks: the process's CPU time (what the search costs, whatever else
runs on the machine) and the wall clock (what a player waits). Example::

    .venv/bin/python benchmarks/search_time.py --agent ismcts:iters=200 --variant classic --hands 50
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from goboom_env import GameConfig, Match
from goboom_env.agents import make_agent
from goboom_env.game_loop import play_hand
from goboom_env.player_view import PlayerView


def measure(spec: str, config: GameConfig, hands: int, seed: int) -> dict[str, float]:
    """Per-move times (ms) of agent ``spec`` in seat 0 of ``hands`` hands against the heuristic."""
    agent = make_agent(spec, config, seed)
    others = [make_agent("heuristic", config, seed + s) for s in range(1, config.num_players)]
    searched_cpu: list[float] = []
    searched_wall: list[float] = []
    forced = 0

    class Timed:
        name, needs_view = agent.name, agent.needs_view

        def act(self, observation: dict[str, np.ndarray], view: PlayerView | None = None) -> int:
            nonlocal forced
            cpu, wall = time.process_time(), time.perf_counter()
            action = agent.act(observation, view)
            if int(observation["action_mask"].sum()) > 1:
                searched_cpu.append(time.process_time() - cpu)
                searched_wall.append(time.perf_counter() - wall)
            else:
                forced += 1
            return action

        def reseed(self, seed: int | None) -> None:
            agent.reseed(seed)

    rng = np.random.default_rng(seed)
    for i in range(hands):
        play_hand(Match(config, rng, dealer=i % config.num_players), [Timed(), *others])
    moves = len(searched_cpu) + forced
    return {
        "searched_moves": len(searched_cpu), "moves": moves,
        "cpu_ms_searched": 1000 * statistics.fmean(searched_cpu),
        "wall_ms_searched": 1000 * statistics.fmean(searched_wall),
        "wall_ms_searched_max": 1000 * max(searched_wall),
        "cpu_ms_per_move": 1000 * sum(searched_cpu) / moves,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="ismcts:iters=200", help="agent spec to time (default: %(default)s)")
    parser.add_argument("--variant", default="classic", choices=["classic", "jokers"])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--hands", type=int, default=50, help="hands to play (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.hands < 1:
        parser.error(f"--hands must be at least 1, got {args.hands}")
    config = GameConfig(variant=args.variant, num_players=args.players)
    result = measure(args.agent, config, args.hands, args.seed)
    print(f"{args.agent} {args.variant} {args.players}p, {args.hands} hands: "
          f"{result['searched_moves']} searched moves of {result['moves']}; per searched move "
          f"{result['cpu_ms_searched']:.1f} ms CPU, {result['wall_ms_searched']:.1f} ms wall "
          f"(max {result['wall_ms_searched_max']:.1f}); per move overall {result['cpu_ms_per_move']:.1f} ms CPU")


if __name__ == "__main__":
    main()
