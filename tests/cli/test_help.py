"""Every ``goboom CMD --help`` is plain text: no reST or Markdown markup, no ``{None}`` artefacts, the choices of
each option of a few words listed, examples whose options parse; and it imports no heavy library (the command's
modules are imported once the options are read)."""

from __future__ import annotations

import itertools
import json
import re
import shlex
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from helpers import ROOT, needs_extra_of

from goboom_env.cli import SUBCOMMANDS
from goboom_env.cli.options import parse, plain_text

HEAVY = ("torch", "ray", "stable_baselines3", "sb3_contrib", "matplotlib", "scipy", "numba", "tensorboard")
"""Libraries a --help must not import: each takes a large share of a second or more to import."""
MARKUP = re.compile(r"``|:[a-z]+:`|`|\{None|None\}|::$", re.M)
"""reST roles and literals, Markdown code spans, tyro's optional-type braces, a reST literal-block marker."""
JOINED = re.compile(r"[^\s│] {3,}--")
"""An example line whose continuation was joined into it (a docstring's unescaped backslash-newline)."""
SHOW_HELP = """
import json, sys
from goboom_env.cli import main
try:
    main([sys.argv[1], "--help"])
finally:
    print(json.dumps([m for m in sys.argv[2:] if m in sys.modules]), file=sys.stderr)
"""


def settings_class(command: str) -> type:
    """The options dataclass of ``goboom COMMAND``."""
    from goboom_env.cli import benchmark, demo, evaluate, exploit, export, leaderboard, play, replay, serve
    from goboom_env.training.settings import RLlibArgs, TrainArgs, VectorArgs

    return {"play": play.PlayArgs, "evaluate": evaluate.EvaluateArgs, "replay": replay.ReplayArgs,
            "leaderboard": leaderboard.LeaderboardArgs, "train": TrainArgs, "train-rllib": RLlibArgs,
            "train-fast": VectorArgs, "exploit": exploit.ExploitOptions, "demo": demo.DemoArgs,
            "export": export.ExportOptions, "serve": serve.ServeArgs, "benchmark": benchmark.BenchmarkArgs}[command]


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_help_is_plain_text_with_the_choices_and_imports_no_heavy_library(command: str) -> None:
    needs_extra_of(command)
    done = subprocess.run([sys.executable, "-c", SHOW_HELP, command, *HEAVY], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stderr.splitlines()[-1]) == []
    text = done.stdout
    assert not MARKUP.findall(text), MARKUP.findall(text)
    assert not JOINED.findall(text), JOINED.findall(text)
    cls = settings_class(command)
    for name, kind in typing.get_type_hints(cls).items():
        choices = [a for a in typing.get_args(kind) if a is not type(None)]
        if choices and typing.get_origin(choices[0]) is typing.Literal:
            assert f"--{name.replace('_', '-')} {{{','.join(typing.get_args(choices[0]))}}}" in text, name


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_the_examples_of_a_help_page_parse(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    needs_extra_of(command)
    monkeypatch.chdir(tmp_path)
    doc = importlib.import_module(SUBCOMMANDS[command][0]).__doc__ or ""
    lines = re.findall(rf"^ {{4}}goboom {command} (.*)$", re.sub(r"\\\n\s*", "", doc), flags=re.M)
    for line in lines:
        argv = shlex.split(line, comments=True)
        for flag, value in itertools.pairwise(argv):
            if flag == "--config":
                Path(value).write_text("")  # an empty settings file: the example's own file is not at hand
        parse(settings_class(command), argv, f"goboom {command}")  # no UsageError


def test_plain_text_unquotes_markup_and_keeps_examples_line_for_line() -> None:
    doc = ("Every :class:`~goboom_env.config.GameConfig` field (see :mod:`goboom_env.config`) has an ``--option``\n"
           "of the same `name`.\n\nExamples::\n\n    goboom play --seed 3\n    goboom play --players 3\n")
    assert plain_text(doc) == ("Every GameConfig field (see goboom_env.config) has an --option of the same name."
                               "\n\nExamples:\n    goboom play --seed 3\n    goboom play --players 3")


def test_a_bad_choice_is_one_whole_line(capsys: pytest.CaptureFixture[str]) -> None:
    from goboom_env.cli import main

    assert main(["evaluate", "--episode", "matches", "--out", "unused"]) == 2
    assert capsys.readouterr().err == ("goboom evaluate: error: invalid choice 'matches' for argument '--episode'. "
                                       "Expected one of ('auto', 'match', 'hand', 'both').\n")
