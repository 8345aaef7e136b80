"""The documentation runs as written: every fenced Python block and every shell command of README.md
and docs/*.md, the docstring examples of the engine modules, and the env's doc page.

Each document's blocks run in order in a fresh working directory (the shipped models are named as
``ppo:classic-4p-hands``, which resolves inside the installed package from any folder). A block that
trains, or that uses what training wrote (``runs/``), runs in the slow tier, after the document's
other such blocks; the rest run in the fast tier. Budgets are shrunk by rewriting the ``goboom``
command lines (:data:`BUDGETS`, :data:`TINY_FLAGS`), never by hooks in the product code.
"""

from __future__ import annotations

import doctest
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import ROOT

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"bash", "sh", "console"}
RUNNABLE = SHELL | {"python"}

EXCLUDED_COMMANDS = {
    # the README's set-up: `make test` runs this very suite, `make demo` is the slow tier's
    # `goboom demo` plus building .venv
    "make": "builds the virtual environment and runs the whole suite, this test included",
    # installing would change the environment the suite runs in
    "pip": "installs packages",
    ".venv/bin/pip": "installs packages",
    # `tensorboard --logdir ...` serves its web page until it is stopped
    "tensorboard": "starts a web server that runs until it is stopped",
}
"""Commands the test does not run (a line starting with one is skipped), and why."""

EXCLUDED_BLOCKS = {
    "goboom serve": "starts a web server that runs until it is stopped (tests/web/test_web_api.py starts and stops it)",
    "goboom benchmark": "the benchmark's budget is fixed by its protocol (360 matches against each opponent of each "
                        "task: minutes to half an hour); tests/cli/test_cli_benchmark.py runs the command end to end "
                        "on a tiny task list",
    "python -m build": "builds the wheel in the checkout (the slow tier's packaging test builds and installs it)",
    "python3 -m venv .venv": "creates a virtual environment and installs into it",
    "ray start --head": "a multi-node Ray cluster: needs several machines, and `ray start` leaves daemons running",
    "training/train_torchrl.py --timesteps": "tests/training/test_recipes.py runs this recipe on a tiny budget and "
                                             "plays its model with goboom evaluate (once, not twice in CI)",
    "training/train_tianshou.py --timesteps": "tests/training/test_recipes.py runs this recipe on a tiny budget and "
                                              "plays its model with goboom evaluate (once, not twice in CI)",
}
"""Shell blocks the test does not run (any block containing the key), and why."""

RECORDS = {
    "research-log.md": "a record of past experiments: its commands ran from the repository root at the budgets "
                       "they name; the pages that hold the current tables carry the commands this test runs",
    "model-zoo-log.md": "the record of how each shipped model was trained and accepted: its commands train for "
                        "hours, write into goboom_env/models/ and benchmarks/models/ and name a model as NAME",
}
"""Documents whose blocks the test does not run, and why."""

PRELUDES = {
    # the page shows the signature of goboom_env.env; called as written, with every default, it
    # checks that each documented name and default is still accepted
    "environment.md": "import goboom_env\n",
}
"""Code run before each Python block of a document, and why."""

BUDGETS = {
    "evaluate": {"--games": (500, 8, True)},
    "train": {"--timesteps": (10_000, 256, True)},
    "train-rllib": {"--timesteps": (1_000, 128, True), "--eval-games": (250, 4, False)},
    "train-fast": {"--timesteps": (10_000, 256, True), "--time-limit": (60, 5, False), "--bc-games": (100, 20, False)},
    "exploit": {"--timesteps": (10_000, 256, True)},
}
"""``goboom CMD`` budget flags: ``(divisor, floor, append_if_absent)``. Dividing (not replacing)
keeps a later ``--resume --timesteps`` above the first run's budget."""

SEARCH_BUDGET = (re.compile(r"\biters=(\d+)"), 20, 20)
"""Agent specs' search budgets (``ismcts:iters=400``): ``(pattern, divisor, floor)``, as :data:`BUDGETS`."""

TINY_FLAGS = {
    "train": ["--num-envs", "2", "--num-steps", "64", "--minibatch-size", "64", "--n-epochs", "1", "--net-arch", "16",
              "--bc-games", "20", "--eval-every", "0", "--eval-games", "8", "--checkpoint-every", "128",
              "--snapshot-every", "128", "--no-progress"],
    "train-rllib": ["--num-envs", "2", "--train-batch-size", "128", "--minibatch-size", "64",
                    "--n-epochs", "1", "--net-arch", "16", "--pool-size", "2", "--num-cpus", "2",
                    "--no-progress"],
    # 12 games: one per player count of a generalist trained at 2..12 players
    "train-fast": ["--num-envs", "12", "--num-steps", "8", "--minibatch-size", "32", "--n-epochs", "1",
                   "--net-arch", "16", "--threads", "1", "--eval-every", "0", "--eval-games", "8",
                   "--checkpoint-every", "64", "--snapshot-every", "64", "--no-progress"],
    "exploit": ["--num-envs", "8", "--num-steps", "8", "--minibatch-size", "32", "--n-epochs", "1",
                "--net-arch", "16", "--threads", "1", "--eval-every", "0", "--eval-games", "8",
                "--checkpoint-every", "64", "--no-progress"],
    "evaluate": ["--no-progress"],
}
"""Flags appended to ``goboom CMD`` lines: small networks and batches (the last flag wins)."""

SCRIPTS = {"training/train_sb3.py": "train", "training/train_fast.py": "train-fast",
           "training/train_rllib.py": "train-rllib", "evaluation/evaluate.py": "evaluate"}
"""The runnable scripts and the command whose options (and budgets) they take: ``python SCRIPT ...`` lines
are shrunk as that command's lines are, and run from the checkout."""

OUTPUT_FAULTS = {
    "your move> ?": "goboom play refused a piped move (the example's moves must be legal in its seeded game)",
    "[{'": "a list of dicts printed where the text meant a table",
    "Traceback (most recent call last)": "an error printed by a block that still exited 0",
}
"""What the output of a block that ran must not hold, and why: an example runs as written and prints what its
text says."""

SLOW_MARKERS = ("goboom train", "goboom demo", "goboom exploit", "runs/", ".learn(")
"""A block that contains one of these trains or uses a trained run: slow tier."""

LEARN_CALL = re.compile(r"\.learn\(\s*[\d_]+")
LEARN_STEPS = 2048
"""Python blocks: ``model.learn(N)`` runs with ``N`` = :data:`LEARN_STEPS` (the budget rewrite
for Python, as :data:`BUDGETS` is for commands)."""


@dataclass(frozen=True)
class Block:
    """One fenced code block of a document."""

    doc: str
    line: int
    lang: str
    code: str

    @property
    def slow(self) -> bool:
        return any(marker in self.code for marker in SLOW_MARKERS)

    @property
    def excluded(self) -> bool:
        return self.lang in SHELL and any(key in self.code for key in EXCLUDED_BLOCKS)


FENCE = re.compile(r"^```[ \t]*(\S*)[ \t]*\n(.*?)^```[ \t]*$", flags=re.S | re.M)


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, in order."""
    text = path.read_text()
    return [Block(path.name, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2))
            for m in FENCE.finditer(text)]


def shell_commands(block: Block) -> list[str]:
    """The command lines of a shell block (continuations joined; console: the ``$ `` lines)."""
    text = block.code.replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    if block.lang == "console":
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    return [line for line in lines if line and not line.startswith("#")]


def excluded_command(line: str) -> bool:
    return line.split()[0] in EXCLUDED_COMMANDS


OPERATORS = {"|", "||", "&&", ";", ">", ">>", "<", "2>&1"}
"""Shell operators that end a ``goboom`` command on its line (written with spaces around them)."""


def shrink(line: str) -> str:
    """A ``goboom`` command line (or a ``python SCRIPT`` line of :data:`SCRIPTS`) with its budget flags divided
    and :data:`TINY_FLAGS` appended."""
    words = shlex.split(line, comments=True) if line.startswith(("goboom ", "python ")) else []
    if not words or (words[0] == "python" and (len(words) < 2 or words[1] not in SCRIPTS)):
        return line
    cut = next((i for i, word in enumerate(words) if word in OPERATORS), len(words))
    words, rest = words[:cut], words[cut:]
    command = SCRIPTS[words[1]] if words[0] == "python" else words[1]
    if words[0] == "python":
        words[1] = str(ROOT / words[1])
    for flag, (divisor, floor, append) in BUDGETS.get(command, {}).items():
        if flag in words:
            at = words.index(flag) + 1
            words[at] = str(max(floor, int(words[at]) // divisor))
        elif append:
            words += [flag, str(floor)]
    pattern, search_divisor, search_floor = SEARCH_BUDGET
    words = [pattern.sub(lambda m: f"iters={max(search_floor, int(m[1]) // search_divisor)}", word) for word in words]
    tail = [word if word in OPERATORS else shlex.quote(word) for word in rest]
    return " ".join([shlex.join(words + TINY_FLAGS.get(command, [])), *tail])


def run_blocks(selected: list[Block], workdir: Path) -> None:
    """Run the blocks in order in ``workdir``; fail naming the document, line and output."""
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
                        "MPLBACKEND": "Agg"}
    for block in selected:
        if block.lang == "python":
            shown = LEARN_CALL.sub(f".learn({LEARN_STEPS}", block.code)
            argv = [sys.executable, "-c", PRELUDES.get(block.doc, "") + shown]
        else:
            lines = [shrink(line) for line in shell_commands(block) if not excluded_command(line)]
            shown = "\n".join(lines)
            argv = ["bash", "-c", "set -euo pipefail\n" + shown]
        # interactive commands (`goboom play` without piped moves) read "quit" and end
        done = subprocess.run(argv, cwd=workdir, env=env, input="quit\n", capture_output=True, text=True,
                              timeout=900)
        assert done.returncode == 0, (f"{block.doc}:{block.line} ({block.lang}) failed with exit code "
                                      f"{done.returncode}\n{shown}\n--- stdout\n{done.stdout[-3000:]}\n"
                                      f"--- stderr\n{done.stderr[-5000:]}")
        faults = [why for mark, why in OUTPUT_FAULTS.items() if mark in done.stdout + done.stderr]
        assert not faults, f"{block.doc}:{block.line} ({block.lang}): {faults}\n{shown}\n{done.stdout[-3000:]}"


def runnable(doc: Path, slow: bool) -> list[Block]:
    if doc.name in RECORDS:
        return []
    return [b for b in blocks(doc) if b.lang in RUNNABLE and not b.excluded and b.slow == slow]


FAST = [doc for doc in DOCUMENTS if runnable(doc, slow=False)]
SLOW = [doc for doc in DOCUMENTS if runnable(doc, slow=True)]


HEAVY = {"evaluation.md": "some thirty goboom commands (two minutes of CPU)", "interop.md": "half a minute of CPU"}
"""Documents whose examples take so long that the slow tier runs them (``make test`` stays a few minutes)."""


@pytest.mark.parametrize("doc", [pytest.param(d, marks=pytest.mark.slow) if d.name in HEAVY else d for d in FAST],
                         ids=[d.name for d in FAST])
def test_document_runs(doc: Path, tmp_path: Path) -> None:
    """The blocks that neither train nor use a trained run, in order, from a fresh directory."""
    run_blocks(runnable(doc, slow=False), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("doc", SLOW, ids=[d.name for d in SLOW])
def test_document_trains_and_uses_the_run(doc: Path, tmp_path: Path) -> None:
    """The blocks that train (on a shrunk budget) and use what they trained, in order."""
    run_blocks(runnable(doc, slow=True), tmp_path)


def test_every_block_is_run_or_excluded_for_a_stated_reason() -> None:
    """A block without a language could hide a command the test never runs; every exclusion must
    still match something (a stale one would hide nothing and mislead)."""
    all_blocks = [b for doc in DOCUMENTS for b in blocks(doc)]
    assert not [f"{b.doc}:{b.line}" for b in all_blocks if not b.lang], "fenced block without a language"
    assert {"README.md", "training.md", "evaluation.md", "rllib.md"} <= {b.doc for b in all_blocks}
    for key in EXCLUDED_BLOCKS:
        assert any(key in b.code for b in all_blocks if b.lang in SHELL), key
    commands = [line for b in all_blocks if b.lang in SHELL for line in shell_commands(b)]
    for name in EXCLUDED_COMMANDS:
        assert any(line.split()[0] == name for line in commands), name
    assert all(b.doc in {d.name for d in DOCUMENTS} for b in all_blocks)
    assert set(PRELUDES) <= {b.doc for b in all_blocks if b.lang == "python"}
    assert set(RECORDS) <= {b.doc for b in all_blocks}


@pytest.mark.parametrize(("lang", "code", "fault"), [
    ("bash", "printf '7H\\ndraw\\nquit\\n' | goboom play --seed 3\n", "refused a piped move"),
    ("python", "print([{'agent': 'heuristic', 'win_rate': 0.5}])\n", "a list of dicts printed"),
])
def test_an_example_that_prints_a_fault_fails(tmp_path: Path, lang: str, code: str, fault: str) -> None:
    with pytest.raises(AssertionError, match=fault):
        run_blocks([Block("example.md", 1, lang, code)], tmp_path)


def test_budget_rewriting() -> None:
    assert shrink("goboom evaluate --agents heuristic random --games 5000 --out results/  # note") == (
        "goboom evaluate --agents heuristic random --games 10 --out results/ --no-progress")
    assert shrink("goboom evaluate --agents heuristic random").endswith("--games 8 --no-progress")
    first, resumed = (shrink(f"goboom train --timesteps {n} --out runs/a") for n in (4_000_000, 6_000_000))
    assert "--timesteps 400 " in first and "--timesteps 600 " in resumed
    assert shrink("printf 'draw\\n' | goboom play --seed 3") == "printf 'draw\\n' | goboom play --seed 3"
    assert LEARN_CALL.sub(".learn(8", "model.learn(200_000)") == "model.learn(8)"
    assert shrink("goboom evaluate --games 5000 | head -2") == (
        "goboom evaluate --games 10 --no-progress | head -2")
    assert shrink("python training/train_sb3.py --timesteps 20000 --out runs/s").startswith(
        f"python {ROOT / 'training' / 'train_sb3.py'} --timesteps 256 --out runs/s --num-envs 2")
    assert shrink("python other.py --timesteps 20000") == "python other.py --timesteps 20000"
    searched = shrink("goboom evaluate --agents ismcts:iters=600 classic-tricks")
    assert "--agents ismcts:iters=30 classic-tricks " in searched


def test_every_python_training_example_sets_the_threads() -> None:
    """torch's default (one thread per core) made 2,048 MaskablePPO steps several times slower than one thread."""
    learning = [b for doc in DOCUMENTS if doc.name not in RECORDS for b in blocks(doc)
                if b.lang == "python" and LEARN_CALL.search(b.code)]
    assert learning, "no Python block trains: the check would check nothing"
    assert [f"{b.doc}:{b.line}" for b in learning if "set_threads(" not in b.code] == []


EXAMPLES = sorted(".".join(path.relative_to(ROOT).with_suffix("").parts)
                  for path in (ROOT / "goboom_env").rglob("*.py") if ">>> " in path.read_text())
"""The modules whose docstrings hold examples (``>>>``)."""


@pytest.mark.parametrize("name", EXAMPLES)
def test_docstring_examples_run(name: str) -> None:
    module = pytest.importorskip(name)  # goboom_env.vector needs numba (the vector extra)
    failures, tried = doctest.testmod(module, verbose=False)
    assert tried > 0 and failures == 0


def test_the_examples_of_the_core_modules_are_found() -> None:
    assert {"goboom_env.cards", "goboom_env.config", "goboom_env.engine", "goboom_env.vector"} <= set(EXAMPLES)
