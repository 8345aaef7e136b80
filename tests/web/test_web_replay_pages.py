"""Replays in pages: the work and the answer of one replay request stay bounded however long the match.

One long match of 12 seats (a frame shows every hand, so its frames are large) is played on the engine and
recorded; the server must send it a page of at most ``MAX_PAGE_FRAMES`` frames at a time, the pages must add up
to the whole replay, a page past the cap or the end is a 400 naming the problem, and a replay being built must
not hold up the server's other requests.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx2")
import helpers.web as web_helpers
from helpers.web import JSON_LINES, record_line
from starlette.testclient import TestClient

from goboom_env import records
from goboom_env.records import GameRecord
from goboom_env.web import ServerSettings, create_app, replay
from goboom_env.web.replay import MAX_PAGE_FRAMES

HANG_GUARD = 120.0
"""Seconds a test waits for the other side before it fails (only a guard against a hang)."""


@pytest.fixture(scope="module")
def long_match() -> GameRecord:
    """A long match of 12 seats, over three pages of frames (:func:`helpers.web.long_match`)."""
    return web_helpers.long_match()


def pages(client: TestClient, fetch: Any) -> list[dict[str, Any]]:
    """Every page of game 0, fetched by ``fetch(query)`` from ``start=0`` on, each checked to be at most a page."""
    out = []
    start = 0
    while True:
        response = fetch(f"game=0&start={start}")
        assert response.status_code == 200, response.text[:1000]
        page = response.json()
        assert page["start"] == start and page["page_size"] == MAX_PAGE_FRAMES
        assert 1 <= len(page["frames"]) <= MAX_PAGE_FRAMES
        out.append(page)
        start += len(page["frames"])
        if start >= page["total"]:
            return out


def test_a_long_match_is_answered_a_page_at_a_time(client: TestClient, long_match: GameRecord) -> None:
    text = records.dumps_record(long_match) + "\n"
    first = client.post("/api/replay", content=text, headers=JSON_LINES)  # no start or count: the first page
    assert first.status_code == 200, first.text[:1000]
    page = first.json()
    assert page["total"] > 2 * MAX_PAGE_FRAMES  # the scenario: three pages or more
    assert len(page["frames"]) == page["page_size"] == MAX_PAGE_FRAMES and page["start"] == 0
    assert len(page["hand_starts"]) == len(long_match.hands) == page["games"][0]["hands"]
    frame_bytes = max(len(json.dumps(frame)) for frame in page["frames"])
    assert len(first.content) < (MAX_PAGE_FRAMES + 1) * frame_bytes  # the page, the list of games and little else
    last = client.post(f"/api/replay?start={page['total'] - 1}", content=text, headers=JSON_LINES).json()
    assert len(last["frames"]) == 1 and last["frames"][0]["winners"] == list(long_match.result.winners)


@pytest.mark.slow
def test_the_pages_of_a_long_match_add_up_to_the_whole_replay(tmp_path: Path, long_match: GameRecord) -> None:
    whole = json.loads(json.dumps(replay.frames(long_match).frames))
    (tmp_path / "games").mkdir()
    records.write(tmp_path / "games" / "long.jsonl", [long_match], append=False)
    text = records.dumps_record(long_match) + "\n"
    with TestClient(create_app(ServerSettings(records=tmp_path / "games"))) as client:
        posted = pages(client, lambda query: client.post(f"/api/replay?{query}", content=text, headers=JSON_LINES))
        saved = client.get(f"/api/records/long.jsonl?game=0&start={MAX_PAGE_FRAMES}")  # the same pages
        assert saved.status_code == 200 and saved.json() == posted[1]
    assert len(posted) == -(-len(whole) // MAX_PAGE_FRAMES)
    assert [frame for page in posted for frame in page["frames"]] == whole
    assert all(page["total"] == len(whole) for page in posted)
    assert posted[0]["hand_starts"] == [i for i, frame in enumerate(whole) if frame["move_number"] == 0]


@pytest.mark.parametrize("query, words", [
    (f"count={MAX_PAGE_FRAMES + 1}", f"count must be in 1..{MAX_PAGE_FRAMES} frames (a page), got 501"),
    ("count=0", f"count must be in 1..{MAX_PAGE_FRAMES} frames"),
    ("count=999999", f"count must be in 1..{MAX_PAGE_FRAMES} frames"),
    ("start=TOTAL", "start must be in 0..LAST (game 0 has TOTAL frames), got TOTAL"),
    ("start=-1", "start must be a frame number 0, 1, ..., got '-1'"),
    ("start=1e3", "start must be a frame number"),
    ("count=%C2%B2", "count must be a number of frames 0, 1, ..., got '²'"),
    ("game=1", "game must be in 0..0, got 1"),
])
def test_a_page_past_the_cap_or_the_end_is_a_400_naming_it(client: TestClient, query: str, words: str) -> None:
    text = record_line()
    total = replay.frames(records.loads_record(text)).total
    query, words = (s.replace("TOTAL", str(total)).replace("LAST", str(total - 1)) for s in (query, words))
    response = client.post(f"/api/replay?{query}", content=text, headers=JSON_LINES)
    assert response.status_code == 400 and words in response.json()["error"], response.text[:1000]


def test_a_replay_being_built_holds_up_no_other_request(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    building, answered = threading.Event(), threading.Event()
    build = replay.replay_page

    def slow(*args: Any) -> dict[str, Any]:  # stands for a long record: it ends once another request is answered
        building.set()
        assert answered.wait(HANG_GUARD), "no other request was answered while a replay was being built"
        return build(*args)

    monkeypatch.setattr(replay, "replay_page", slow)
    replies: list[Any] = []
    thread = threading.Thread(target=lambda: replies.append(client.post("/api/replay", content=record_line(),
                                                                         headers=JSON_LINES)))
    thread.start()
    try:
        assert building.wait(HANG_GUARD)
        assert client.get("/api/options").status_code == 200
    finally:
        answered.set()
        thread.join(HANG_GUARD)
    assert replies[0].status_code == 200 and replies[0].json()["total"] > 0
