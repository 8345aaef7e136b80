"""``goboom serve`` never loads an agent file (``agents.py:Class``, which would run the file's code): not when a
new-game request names one, and not when a choice of the catalog holds one (the catalog bypassed)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx2")
from helpers.web import CLASSIC
from starlette.testclient import TestClient

from goboom_env.web import ServerSettings, create_app
from goboom_env.web.catalog import Catalog, Choice

EVIL_FILE = '''
from pathlib import Path
Path(__file__).with_name("ran.txt").write_text("the server ran this file")
from goboom_env.agents import RandomAgent

class Evil(RandomAgent):
    name = "evil"
'''


@pytest.fixture
def evil(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``evil.py`` in the server's working directory; it leaves ``ran.txt`` beside it when it is run."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evil.py").write_text(EVIL_FILE)
    return tmp_path / "evil.py"


@pytest.mark.parametrize("opponent", ["evil.py:Evil", "./evil.py:Evil", "EVIL_ABSOLUTE:Evil", "evil.py"])
def test_a_file_spec_in_a_new_game_request_is_refused(evil: Path, opponent: str) -> None:
    opponent = opponent.replace("EVIL_ABSOLUTE", str(evil))
    with TestClient(create_app(ServerSettings())) as client:
        response = client.post("/api/games", json=CLASSIC | {"opponents": [opponent]})
    assert response.status_code == 400 and "unknown opponent" in response.json()["error"]
    assert not evil.with_name("ran.txt").exists()


@pytest.mark.parametrize(("choice_id", "spec"), [("evil", "evil.py:Evil"), ("evil.py:Evil", "evil.py:Evil"),
                                                 ("evil-abs", "EVIL_ABSOLUTE:Evil")])
def test_a_file_spec_is_refused_even_from_a_choice_of_the_catalog(evil: Path, choice_id: str, spec: str) -> None:
    catalog = Catalog()
    catalog.choices[choice_id] = Choice(choice_id, spec.replace("EVIL_ABSOLUTE", str(evil)), "runs a file")
    with TestClient(create_app(ServerSettings(catalog=catalog))) as client:
        response = client.post("/api/games", json=CLASSIC | {"opponents": [choice_id]})
        assert client.post("/api/games", json=CLASSIC).status_code == 201  # the other choices still play
    assert response.status_code == 400
    assert "names a Python file: the server does not load agent files" in response.json()["error"]
    assert str(evil.parent) not in response.text  # the reply names no path of the server
    assert not evil.with_name("ran.txt").exists()
