"""The documentation site (mkdocs.yml, ``make docs``): it builds with ``mkdocs build --strict``, its API reference
holds the docstrings of the public modules, and the strict build fails on a broken link, anchor or reference.

Needs the ``docs`` extra (mkdocs-material, mkdocstrings[python]): skipped without it, a failure under ``make test``
(:data:`helpers.EVERY_EXTRA`), which installs it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

pytest.importorskip("mkdocs")
pytest.importorskip("material")  # mkdocs-material's theme
pytest.importorskip("mkdocstrings_handlers.python")  # mkdocstrings[python]

API_PAGES = {
    "goboom_env": ["goboom_env.env.env", "goboom_env.env.raw_env"],
    "config": ["goboom_env.config.GameConfig", "goboom_env.config.GameConfig.replace"],
    "engine": ["goboom_env.engine.Hand", "goboom_env.engine.Match"],
    "agents": ["goboom_env.agents.make_agent", "goboom_env.agents.register_agent"],
    "tournament": ["goboom_env.evaluation.tournament.run_tournament",
                   "goboom_env.evaluation.tournament.TournamentResult"],
    "vector": ["goboom_env.vector.VectorGame", "goboom_env.vector.MixedVectorGame", "goboom_env.vector.Streams"],
    "training-vector-env": ["goboom_env.training.vector_env.SelfPlayVectorEnv",
                            "goboom_env.training.vector_env.single_agent_vector_env"],
    "training-settings": ["goboom_env.training.settings.TrainArgs", "goboom_env.training.settings.GameArgs"],
    "records": ["goboom_env.records.GameRecord", "goboom_env.records.replay"],
}
"""The API page of each public module (docs/api/PAGE.md) and objects it must document (their anchors)."""


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of ``config`` into ``site`` (mkdocs' own command line, as ``make docs`` runs it)."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # material's banner about its successor
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's site, built strictly into a temporary folder."""
    out = tmp_path_factory.mktemp("docs") / "site"
    built = mkdocs_build(ROOT / "mkdocs.yml", out)
    assert built.returncode == 0, built.stdout + built.stderr
    return out


def text_of(page: Path) -> str:
    """The visible text of an HTML page, whitespace collapsed (a sentence is found across tags and lines)."""
    return " ".join(re.sub(r"<[^>]+>", " ", page.read_text()).split())


def test_every_page_of_docs_is_built(site: Path) -> None:
    for doc in sorted((ROOT / "docs").glob("*.md")):
        page = site / ("index.html" if doc.stem == "index" else f"{doc.stem}/index.html")
        assert page.is_file(), f"{doc.name} is not in the site (mkdocs.yml's nav)"
    assert (site / "search" / "search_index.json").is_file(), "search is not enabled"


def test_api_reference_holds_the_docstrings(site: Path) -> None:
    for name, objects in API_PAGES.items():
        html = (site / "api" / name / "index.html").read_text()
        for obj in objects:
            assert f'id="{obj}"' in html, f"api/{name}.md does not document {obj}"
    assert "Rules configuration of one Go Boom game (a match of one or more hands)." in text_of(
        site / "api" / "config" / "index.html")
    assert "Go Boom as a PettingZoo AEC environment" in text_of(site / "api" / "goboom_env" / "index.html")


def test_api_reference_shows_the_docstrings_rest_markup_as_markdown(site: Path) -> None:
    """Sphinx roles, double-backquote literals and simple tables in the docstrings render as code and tables
    (docs/_ext/rest_markup.py), not as the markup itself."""
    for name in API_PAGES:
        text = text_of(site / "api" / name / "index.html")
        assert not re.search(r":(class|func|meth|mod|attr|data|exc):", text), f"api/{name}: a reST role shows"
        assert "``" not in text and "=====" not in text, f"api/{name}: a reST literal or table rule shows"
    html = (site / "api" / "agents" / "index.html").read_text()
    assert re.search(r"<td><code>classic-tricks</code></td>\s*<td>classic</td>", html)  # the spec table


def test_environment_page_tables_render(site: Path) -> None:
    """docs/environment.md is mostly tables: each becomes an HTML table."""
    source = (ROOT / "docs" / "environment.md").read_text()
    tables = len(re.findall(r"^\|[-:| ]+\|$", source, flags=re.MULTILINE))  # one separator row per table
    assert tables >= 5
    html = (site / "environment" / "index.html").read_text()
    assert html.count("<table") == tables
    assert "<td>hand_sizes</td>" in html


BROKEN = {
    "a missing page": ("[broken link](no-such-page.md)", "contains a link 'no-such-page.md'"),
    "a missing anchor": ("[broken anchor](index.md#no-such-heading)", "does not contain an anchor '#no-such-heading'"),
    "an unresolvable reference": ("[unresolvable][goboom_env.no_such_module]", "goboom_env.no_such_module"),
}
"""Broken links of an extra page, and what the strict build's warning about each says."""


def build_extra_page(tmp_path: Path, body: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The project's configuration (inherited: its theme, plugins and link validation) on a docs folder of two
    pages, the second holding ``body`` and an API block. The command runs in the checkout, so mkdocstrings
    finds the package there as in the project's build."""
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copytree(ROOT / "docs" / "_ext", docs / "_ext")  # the griffe extension the configuration names
    (docs / "index.md").write_text("# The home page\n\nSee [the other page](other.md).\n")
    (docs / "other.md").write_text(f"# Other\n\n{body}\n\n::: goboom_env.config.GameConfig\n")
    config = tmp_path / "mkdocs.yml"
    # paths in the configuration are relative to the file that names them: the folder to watch is the checkout's
    config.write_text(f"INHERIT: {ROOT / 'mkdocs.yml'}\ndocs_dir: docs\nnav: [index.md, other.md]\nwatch: []\n")
    return mkdocs_build(config, tmp_path / "site"), tmp_path / "site"


def test_extra_page_with_good_links_builds(tmp_path: Path) -> None:
    """The control of the next test: the copied configuration builds strictly with good links, so a failure
    there is the broken links' doing."""
    built, site = build_extra_page(tmp_path, "A [good link](index.md#the-home-page), "
                                             "[an API reference][goboom_env.config.GameConfig].")
    assert built.returncode == 0, built.stdout + built.stderr
    assert "Rules configuration of one Go Boom game" in text_of(site / "other" / "index.html")


def test_strict_build_fails_on_broken_links(tmp_path: Path) -> None:
    built, _ = build_extra_page(tmp_path, " ".join(link for link, _ in BROKEN.values()))
    log = built.stdout + built.stderr
    assert built.returncode != 0, f"the strict build passed with broken links:\n{log}"
    assert f"Aborted with {len(BROKEN)} warnings in strict mode" in log, log
    for case, (_, warning) in BROKEN.items():
        assert warning in log, f"no warning about {case}:\n{log}"


def test_the_navigation_follows_a_new_users_path() -> None:
    import yaml  # mkdocs' own dependency

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    assert [next(iter(item)) for item in nav] == ["Home", "Install", "Quick start", "Environment", "Training",
                                                  "Evaluation", "Interop", "Browser", "API", "Research notes"]
