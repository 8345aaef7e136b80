"""CITATION.cff: valid Citation File Format 1.2.0 metadata whose version and license are the package's."""

from __future__ import annotations

import re
import tomllib
from typing import Any

from helpers import ROOT

import goboom_env

CITATION = ROOT / "CITATION.cff"
REQUIRED = ("cff-version", "message", "title", "authors")
"""The keys CFF 1.2.0 requires."""


def load_citation() -> dict[str, Any]:
    """CITATION.cff read by PyYAML where it is installed, else by a reader of its top-level ``key: value`` lines
    and of the ``- name:`` entries of ``authors`` (enough for the fields checked here)."""
    text = CITATION.read_text(encoding="utf-8")
    try:
        import yaml
    except ImportError:
        return _minimal_yaml(text)
    data = yaml.safe_load(text)
    assert isinstance(data, dict), "CITATION.cff must be a YAML mapping"
    return data


def _minimal_yaml(text: str) -> dict[str, Any]:
    data: dict[str, Any] = {}
    key = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if top := re.fullmatch(r"([A-Za-z][\w-]*):\s*(.*)", line):
            key, value = top[1], top[2].strip()
            data[key] = value.strip('"') if value and value not in (">-", "|") else []
        elif key == "authors" and (entry := re.fullmatch(r"\s*-\s*name:\s*(.+)", line)):
            data[key].append({"name": entry[1].strip().strip('"')})
    return data


def test_citation_has_the_required_keys_and_the_package_version() -> None:
    citation = load_citation()
    missing = [key for key in REQUIRED if key not in citation]
    assert not missing, f"CITATION.cff lacks the required keys {missing}"
    assert str(citation["cff-version"]) == "1.2.0"
    assert isinstance(citation["message"], str) and citation["message"].strip()
    assert isinstance(citation["title"], str) and citation["title"].strip()
    authors = citation["authors"]
    assert isinstance(authors, list) and authors, "authors must be a non-empty list"
    for author in authors:  # an entity has a name; a person has family or given names
        assert isinstance(author, dict) and ({"name", "family-names", "given-names"} & set(author)), author
    assert {"name": "goboom-env developers"} in authors
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert citation["version"] == project["version"] == goboom_env.__version__  # a string, not a YAML number
    assert citation["license"] == project["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def test_minimal_reader_agrees_with_yaml() -> None:
    """The fallback reader (used where PyYAML is missing) reads the checked fields as PyYAML does."""
    citation = load_citation()
    minimal = _minimal_yaml(CITATION.read_text(encoding="utf-8"))
    for key in ("cff-version", "title", "version", "license", "message"):
        assert minimal[key] == str(citation[key]), key
    assert minimal["authors"] == citation["authors"]
