"""Fixtures of the web tests (``goboom serve``, goboom_env.web): the app behind Starlette's test client.

Every module here needs the web extra and starts with ``pytest.importorskip`` for the packages it uses (starlette;
httpx2 for the test client; uvicorn, websockets or playwright for a real server), so a missing one skips it, or
fails it under ``make test``; a fixture imports the extra when it runs, for the same reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from starlette.testclient import TestClient


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    """The app of ``goboom serve`` behind Starlette's test client, saving its records in ``tmp_path/games``."""
    testclient = pytest.importorskip("starlette.testclient")
    from goboom_env.web import ServerSettings, create_app

    with testclient.TestClient(create_app(ServerSettings(records=tmp_path / "games"))) as test_client:
        yield test_client
