"""Play a tournament between agents and write a report: the script behind ``goboom evaluate``.

Copy it, edit the settings below, run it::

    python evaluation/evaluate.py --agents heuristic random --games 2000 --duplicate --out results/mine
    python evaluation/evaluate.py --agents ppo:runs/mine/model.zip heuristic --preset classic
    python evaluation/evaluate.py --help         # every option of goboom evaluate works here too

The report folder holds report.md, results.json, results.csv and win_rates.png.
"""

from __future__ import annotations

import sys
from pathlib import Path

from goboom_env.cli.evaluate import EvaluateArgs
from goboom_env.cli.options import run_script, seat_agents

SETTINGS = EvaluateArgs(
    # -- the game: every GameConfig field (RULES.md) --------------------------------------------------------
    variant="classic",  # classic (R1) or jokers (R2)
    num_players=4,  # 2..12
    episode="hand",  # a game is one deal ("hand") or a whole match ("match")
    # -- the tournament ---------------------------------------------------------------------------------------
    agents=["heuristic", "random"],  # one spec per seat, the last one fills the others (ppo:PATH, rllib:PATH, ...)
    games=1000,
    duplicate=False,  # replay every deal with the agents rotated over the seats (less luck in the result)
    processes=1,  # worker processes (the results do not depend on it)
    seed=0,
    out=None,  # None: a new results/eval-<date>-<time>
)


def main(args: EvaluateArgs) -> None:
    """Play the tournament the settings read over :data:`SETTINGS` describe, save and print the report."""
    from rich.console import Console

    from goboom_env.evaluation.outdir import StagedFolder, fresh_folder
    from goboom_env.evaluation.report import print_tables, write_report
    from goboom_env.evaluation.tournament import run_pairwise, run_tournament

    config = args.game_config()
    options = {"seed": args.seed, "duplicate": args.duplicate, "processes": args.processes, "episode": args.episode,
               "progress": args.progress}
    result = pairwise = None
    staged = StagedFolder(args.out or fresh_folder(Path("results"), "eval"), force=args.force)
    with staged as folder:  # the report appears in --out only once complete
        if args.pairwise:  # every agent 1-vs-(n-1) against every other
            pairwise = run_pairwise(config, list(dict.fromkeys(args.agents)), args.games, **options)
        else:
            result = run_tournament(config, seat_agents(args.agents, config.num_players), args.games, **options)
        command = "python evaluation/evaluate.py " + " ".join(sys.argv[1:])
        report = write_report(folder, result, pairwise, command=command)
    print_tables(result, pairwise, Console())
    print(f"report written to {staged.out / report.name}")


if __name__ == "__main__":
    sys.exit(run_script(main, SETTINGS, __doc__))
