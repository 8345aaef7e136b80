"""Agents from a Python file: ``path/to/file.py:Class[,key=value,...]`` wherever a spec is taken (make_agent,
tournaments and their worker processes, ``goboom evaluate``), each problem a ValueError that names it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from goboom_env import GameConfig
from goboom_env.agents import is_file_spec, make_agent, parse_spec
from goboom_env.evaluation.tournament import run_tournament

AGENT_FILE = '''
import numpy as np
from goboom_env.agents import Agent

class Lowest(Agent):
    """The lowest legal action, after skipping ``skip`` of them (when there are that many)."""

    name = "lowest"

    def __init__(self, config, seed=None, skip=0, loud: bool = False):
        super().__init__(config, seed)
        self.skip, self.loud = skip, loud

    def act(self, observation, view=None):
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[min(self.skip, len(legal) - 1)])

class Greedy(Lowest):
    name = "greedy"

def helper():
    return 1
'''


def written_in_workdir(monkeypatch: pytest.MonkeyPatch, path: Path, text: str) -> Path:
    """``path``, written with ``text``, its folder made the working directory."""
    monkeypatch.chdir(path.parent)
    path.write_text(text)
    return path


@pytest.fixture
def agent_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``my_agents.py`` in the working directory (a fresh temporary one)."""
    return written_in_workdir(monkeypatch, tmp_path / "my_agents.py", AGENT_FILE)


def test_a_file_spec_keeps_its_class_in_the_name() -> None:
    assert parse_spec("my_agents.py:Greedy,depth=2") == ("my_agents.py:Greedy", {"depth": 2})
    assert parse_spec("./a/b.py:Greedy") == ("./a/b.py:Greedy", {})
    assert parse_spec(r"C:\agents\b.py:G,x=1") == (r"C:\agents\b.py:G", {"x": 1})
    assert parse_spec("ppo:models/x.py") == ("ppo", {"path": "models/x.py"})  # a path option, not a file spec
    assert is_file_spec("a/b.py:G") and is_file_spec(" b.py ") and not is_file_spec("ppo:b.py")


def test_a_file_agent_is_built_like_a_registered_factory(agent_file: Path) -> None:
    config = GameConfig()
    agent = make_agent("my_agents.py:Lowest,skip=2,loud=yes", config, seed=3)
    assert type(agent).__name__ == "Lowest" and agent.name == "lowest"
    assert (agent.config, agent.skip, agent.loud) == (config, 2, True)  # bool options parsed as for factories
    again = make_agent(f"{agent_file}:Lowest", config, seed=3)  # an absolute path: the same module, run once
    assert type(again) is type(agent)
    assert make_agent("./my_agents.py:Greedy", config).name == "greedy"
    mask = np.zeros(54, np.int8)
    mask[[4, 9, 53]] = 1
    assert agent.act({"observation": np.zeros(1), "action_mask": mask}) == 53


@pytest.mark.parametrize(("spec", "message"), [
    ("missing.py:Lowest", r"agent file missing.py does not exist \(spec 'missing.py:Lowest'; looked for "),
    ("my_agents.py", r"names the file my_agents.py but no class in it: write my_agents.py:ClassName"),
    ("my_agents.py:skip=1", r"names the file my_agents.py but no class"),
    ("my_agents.py:Lowset", r"agent file my_agents.py has no class 'Lowset' \(spec 'my_agents.py:Lowset'\) "
                            r"\(did you mean 'Lowest'\?\); its classes: Greedy, Lowest"),
    ("my_agents.py:Lowest,skp=1", r"unknown option 'skp' for agent 'my_agents.py:Lowest' in spec "
                                  r"'my_agents.py:Lowest,skp=1' \(did you mean 'skip'\?\); its options: skip, loud"),
    ("my_agents.py:Lowest,loud=maybe", r"option 'loud' must be true/false"),
    ("my_agents.py:np", r"np in agent file my_agents.py is a module, not a class"),
    ("my_agents.txt:Lowest", r"unknown agent 'my_agents.txt'"),
    ("sub/agents.txt", r"an agent file must be a .py file, named as path/to/file.py:ClassName"),
    ("folder.py:Lowest", r"agent file folder.py is not a file"),
])
def test_a_bad_file_spec_names_the_problem(agent_file: Path, spec: str, message: str) -> None:
    (agent_file.parent / "folder.py").mkdir()
    with pytest.raises(ValueError, match=message):
        make_agent(spec, GameConfig())


def test_the_constructor_refusing_the_options_is_a_value_error(agent_file: Path) -> None:
    agent_file.with_name("strict.py").write_text(textwrap.dedent('''
        from goboom_env.agents import RandomAgent

        class Strict(RandomAgent):
            def __init__(self, config, seed=None, depth=1):
                if depth < 1:
                    raise ValueError(f"depth must be >= 1, got {depth}")
                super().__init__(config, seed)

        class Picky(RandomAgent):
            def __init__(self, config, seed=None, **options):
                if options:
                    raise TypeError(f"no options please: {sorted(options)}")
                super().__init__(config, seed)
        '''))
    with pytest.raises(ValueError, match="depth must be >= 1, got 0"):
        make_agent("strict.py:Strict,depth=0", GameConfig())
    with pytest.raises(ValueError, match=r"bad parameters for agent 'strict.py:Picky' .*no options please: \['x'\]"):
        make_agent("strict.py:Picky,x=1", GameConfig())


def test_a_file_that_fails_to_run_names_its_line(agent_file: Path) -> None:
    agent_file.with_name("broken.py").write_text("import numpy\n\nvalue = undefined_name\n")
    with pytest.raises(ValueError, match=r"agent file broken.py failed to load \(line 3\): NameError: .*undefined"):
        make_agent("broken.py:Anything", GameConfig())
    assert not [name for name in sys.modules if name.startswith("goboom_agent_file_broken")]


def test_an_edited_file_is_run_again(agent_file: Path) -> None:
    first = make_agent("my_agents.py:Lowest", GameConfig())
    agent_file.write_text(AGENT_FILE.replace('name = "lowest"', 'name = "lowest-2"'))
    stat = agent_file.stat()
    os.utime(agent_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert make_agent("my_agents.py:Lowest", GameConfig()).name == "lowest-2" != first.name


def test_tournament_workers_build_the_file_agent(agent_file: Path) -> None:
    result = run_tournament(GameConfig(num_players=2), ["my_agents.py:Lowest,skip=1", "random"], 8, processes=2,
                            progress=False)
    assert [row["agent"] for row in result.table()] == ["my_agents.py:Lowest,skip=1", "random"]
    assert len(result.games) == 8


def test_spawned_workers_load_the_file_by_its_path(agent_file: Path) -> None:
    """Where workers are spawned (macOS, Windows), each child runs the file again from the spec's path."""
    script = agent_file.with_name("spawned.py")
    script.write_text(textwrap.dedent('''
        import multiprocessing
        from goboom_env import GameConfig
        from goboom_env.evaluation.tournament import run_tournament

        if __name__ == "__main__":
            multiprocessing.set_start_method("spawn")
            result = run_tournament(GameConfig(num_players=2), ["my_agents.py:Greedy", "random"], 4, processes=2,
                                    progress=False)
            print("games", len(result.games))
        '''))
    done = subprocess.run([sys.executable, str(script)], cwd=agent_file.parent, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "games 4" in done.stdout


def test_goboom_evaluate_takes_a_file_spec(agent_file: Path) -> None:
    done = subprocess.run([Path(sys.executable).with_name("goboom"), "evaluate", "--agents", "my_agents.py:Lowest",
                           "random", "--num-players", "2", "--games", "4", "--no-progress", "--out", "results"],
                          cwd=agent_file.parent, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "my_agents.py:Lowest" in done.stdout
    bad = subprocess.run([Path(sys.executable).with_name("goboom"), "evaluate", "--agents", "my_agents.py:Lowst",
                          "random", "--games", "2", "--no-progress", "--out", "results-2"],
                         cwd=agent_file.parent, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2
    assert "has no class 'Lowst'" in bad.stderr and "did you mean 'Lowest'?" in bad.stderr


MARKING_FILE = '''
from pathlib import Path
Path("ran").write_text("the agent file ran")
from goboom_env.agents import RandomAgent as Agent
'''
"""An agent file that leaves the file ``ran`` in the working directory when it runs."""


@pytest.fixture
def marking_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return written_in_workdir(monkeypatch, tmp_path / "evil.py", MARKING_FILE)


@pytest.mark.parametrize(("argv", "settings"), [
    (["evaluate", "--games", "2"], {"agents": ["evil.py:Agent", "random"]}),
    (["play", "--seed", "1"], {"opponents": ["evil.py:Agent"]}),
    (["train", "--timesteps", "64"], {"opponents": ["evil.py:Agent=1"]}),
    (["train", "--timesteps", "64"], {"bc_teacher": "evil.py:Agent"}),
    (["train-fast", "--timesteps", "64"], {"eval_opponents": ["random", "evil.py:Agent"]}),
    (["exploit", "--timesteps", "64"], {"agent": "evil.py:Agent"}),
], ids=["evaluate-agents", "play-opponents", "train-opponents", "train-teacher", "fast-eval", "exploit-agent"])
def test_a_settings_file_never_runs_a_python_file(marking_file: Path, tmp_path: Path, argv: list[str],
                                                   settings: dict, capsys: pytest.CaptureFixture) -> None:
    """A spec naming a Python file is code: it runs when the command line names it, never when a settings file,
    which a user may have been handed, does."""
    from goboom_env.cli import main

    if argv[0] in ("train", "train-fast", "exploit"):
        pytest.importorskip("torch")
    key, value = next(iter(settings.items()))
    config = tmp_path / "settings.toml"
    config.write_text(f"{key} = {value!r}\n".replace("'", '"'))
    assert main([*argv, "--config", str(config)]) == 2
    err = capsys.readouterr().err
    spec = (value if isinstance(value, str) else next(v for v in value if "evil" in v)).removesuffix("=1")
    assert err == (f"goboom {argv[0]}: error: the agent spec {spec!r} from {key} in {config} names a Python file; a "
                   "Python file runs only when the command line (or the caller's own code) names it\n")
    assert not (tmp_path / "ran").exists()


def test_records_and_requests_never_run_a_python_file(marking_file: Path, tmp_path: Path) -> None:
    """The seats of a game record and the agents of a web session come from files and requests: a spec among them
    that names a Python file is refused; the caller's own code may still name one."""
    from goboom_env.agents import SpecSource
    from goboom_env.engine import Match
    from goboom_env.evaluation.luck import luck_adjust_records
    from goboom_env.records import read, record_episode, write

    config = GameConfig(variant="classic", num_players=3)
    _, record = record_episode(Match(config, np.random.default_rng(0)), [make_agent("random", config, s)
                                                                         for s in range(3)], "hand",
                               seats=["evil.py:Agent", "random", "random"])
    write(tmp_path / "games.jsonl", [record])
    records = read(tmp_path / "games.jsonl")
    with pytest.raises(ValueError, match=r"the agent spec 'evil\.py:Agent' from a seat of the records names a Python "
                                         "file"):
        luck_adjust_records(records, rollouts=1, progress=False)
    for source in (SpecSource.RECORD, SpecSource.WEB, SpecSource.SETTINGS_FILE):
        with pytest.raises(ValueError, match=f"from {source.value} names a Python file"):
            make_agent("evil.py:Agent", config, 0, source=source)
    assert not (tmp_path / "ran").exists()
    make_agent("evil.py:Agent", config, 0)  # the caller's own spec: the file runs
    assert (tmp_path / "ran").exists()
