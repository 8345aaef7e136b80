"""Play a tournament between agents and write a report: the script behind ``goboom evaluate``.

Copy it, edit the settings below, run it::

    python evaluation/evaluate.py --agents heuristic random --games 2000 --duplicate --out results/mine
    python evaluation/evaluate.py --agents ppo:runs/mine/model.zip heuristic --preset classic
    python evaluation/evaluate.py --help         # every option of goboom evaluate works here too

The report folder holds report.md, results.json, results.csv, win_rates.png and distributions.png (and
games.jsonl with --save-games N); with --episode both, report.md compares the match and hand runs and match/
and hand/ hold the report of each.
"""

from __future__ import annotations

import sys
from pathlib import Path

from goboom_env.cli.evaluate import EvaluateArgs
from goboom_env.cli.options import run_script

SETTINGS = EvaluateArgs(
    # -- the game: every GameConfig field (RULES.md) --------------------------------------------------------
    variant="classic",  # classic (R1) or jokers (R2)
    num_players=4,  # 2..12
    episode="auto",  # a game: the models' unit ("auto", else a match), a whole "match", one deal ("hand"), or "both"
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

    from goboom_env.evaluation.report import print_side_by_side, print_tables, write_report, write_side_by_side
    from goboom_env.evaluation.tournament import record_games, run_pairwise, run_tournament
    from goboom_env.outdir import StagedFolder, fresh_folder
    from goboom_env.records import write

    config = args.game_config()
    options = {"seed": args.seed, "duplicate": args.duplicate, "processes": args.processes, "progress": args.progress}
    runs = {}  # episode -> (tournament, pairwise runs)
    staged = StagedFolder(args.out or fresh_folder(Path("results"), "eval"), force=args.force, inputs=args.inputs())
    with staged as folder:  # the report appears in --out only once complete
        for episode in args.episodes():  # "both": the match run, then the hand run on the same seeds and deals
            if args.pairwise:  # every agent 1-vs-(n-1) against every other
                specs = list(dict.fromkeys(args.agents))
                runs[episode] = (None, run_pairwise(config, specs, args.games, episode=episode, **options))
            else:  # the last agent fills the remaining seats
                runs[episode] = (run_tournament(config, args.agents, args.games, episode=episode, **options), None)
        command = "python evaluation/evaluate.py " + " ".join(sys.argv[1:])
        if len(runs) == 1:
            report = write_report(folder, *runs[episode], command=command)
        else:  # match/ and hand/ hold each run's report, report.md both win tables side by side
            report = write_side_by_side(folder, runs, command)
        for episode, (result, pairwise) in runs.items():  # --save-games N: records for goboom replay
            tournaments = [result] if result is not None else list(pairwise.values())
            games = [record for t in tournaments for record in record_games(t, args.save_games)]
            if games:
                write(folder / ("" if len(runs) == 1 else episode) / "games.jsonl", games, append=False)
    if len(runs) == 1:
        print_tables(*runs[episode], console=Console())
    else:
        print_side_by_side(runs, Console())
    print(f"report written to {staged.out / report.name}")


if __name__ == "__main__":
    sys.exit(run_script(main, SETTINGS, __doc__))
