"""``goboom serve`` end to end in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright.

A scripted player clicks (or types) the lowest legal card, else Draw; at every turn the cards the page lets it
click must be exactly the engine's legal moves, and the final scores the page shows must equal those of the
same game played on the engine. A finished match is then replayed from the record the server saved and must
reach the same final table. The page ends the games it leaves and draws no frame older than the one it
shows. Screenshots go to ``test-artifacts/`` (``GOBOOM_ARTIFACTS`` to change it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")
from helpers import EVERY_EXTRA, ROOT  # noqa: E402
from helpers.web import long_match, served  # noqa: E402

from goboom_env import records  # noqa: E402
from goboom_env.agents import Agent, make_agent  # noqa: E402
from goboom_env.cards import DRAW_OR_PASS, code_of  # noqa: E402
from goboom_env.config import GameConfig  # noqa: E402
from goboom_env.engine import Match  # noqa: E402
from goboom_env.game_loop import play_episode  # noqa: E402
from goboom_env.web import ServerSettings, create_app, replay  # noqa: E402

ARTIFACTS = Path(os.environ.get("GOBOOM_ARTIFACTS", ROOT / "test-artifacts"))
SETTLED = "['your_turn', 'hand_over', 'over'].includes(document.querySelector('#status').className)"


def chromium_path() -> str:
    """Debian's chromium (browser downloads are not possible here); missing = skipped, or failed under make test."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if EVERY_EXTRA:
            pytest.fail("chromium is not installed: `make browser` installs it (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real server (uvicorn in a thread, on a port of 127.0.0.1) for the module's tests; yields its URL."""
    with served(create_app(ServerSettings(records=tmp_path_factory.mktemp("games")))) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def browser(server: str) -> Iterator[Any]:
    path = chromium_path()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any, server: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.goto(server)
    yield tab
    context.close()
    assert not errors, f"the page raised: {errors}"


def start(page: Any, preset: str, opponents: list[str], episode: str, seed: int, seat: int = 0) -> None:
    """Fill the new-game form and start."""
    page.select_option("#preset", preset)
    page.select_option("select[name=episode]", episode)
    page.select_option("#seat", str(seat))
    for i, spec in enumerate(opponents):
        page.select_option(f"#opponents select[data-index='{i}']", spec)
    page.fill("input[name=seed]", str(seed))
    page.fill("input[name=delay_ms]", "0")
    page.click("#start")
    page.wait_for_function(SETTLED)


def frames_drawn(page: Any) -> int:
    return int(page.evaluate("Number(document.body.dataset.frames || 0)"))


def wait_settled(page: Any, before: int) -> None:
    """Wait until the page has drawn a new frame and waits for the player again (or the game is over); an error
    shown on the page instead (a refused move) fails the test with its text."""
    page.wait_for_function(f"(n) => (Number(document.body.dataset.frames) > n && {SETTLED}) || "
                           "!document.querySelector('#error').hidden", arg=before, timeout=15000)
    if page.is_visible("#error"):
        pytest.fail(f"the page shows an error: {page.inner_text('#error')}")


def status(page: Any) -> str:
    return page.get_attribute("#status", "class")


def clickable(page: Any) -> tuple[list[str], bool]:
    """The cards the page lets you click, and whether Draw is enabled."""
    cards = page.eval_on_selector_all("#hand button.card",
                                      "els => els.filter(e => !e.disabled).map(e => e.dataset.code)")
    return cards, page.is_enabled("#draw")


def play_in_browser(page: Any, keyboard: bool = False, shot_at: int | None = None, shot: str = "") -> list[Any]:
    """Play to the end of the game as the scripted player; returns what was clickable at each turn."""
    turns = []
    while status(page) != "over":
        before = frames_drawn(page)
        if status(page) == "hand_over":
            page.click("#next") if not keyboard else page.keyboard.press("n")
            wait_settled(page, before)
            continue
        cards, draw = clickable(page)
        turns.append((cards, draw))
        if shot_at is not None and len(turns) == shot_at:
            page.wait_for_timeout(700)  # the marks of the last moves have faded in
            page.screenshot(path=str(ARTIFACTS / shot))
        hand = page.eval_on_selector_all("#hand button.card", "els => els.map(e => e.dataset.code)")
        if cards:
            number = hand.index(cards[0]) + 1
            if keyboard and number <= 9:
                page.keyboard.press(str(number))
            else:
                page.click("#hand button.card:not([disabled]) >> nth=0")
        elif keyboard:
            page.keyboard.press("d")
        else:
            page.click("#draw")
        wait_settled(page, before)
    return turns


class Lockstep(Agent):
    """The scripted player on the engine: checks the legal moves against what the page let it click, then
    plays the lowest legal action (the lowest legal card, else draw), as the browser player did."""

    name = "lockstep"

    def __init__(self, config: GameConfig, turns: list[Any]) -> None:
        super().__init__(config)
        self.turns = iter(turns)

    def act(self, observation: Any, view: Any = None) -> int:
        legal = [int(a) for a in np.flatnonzero(observation["action_mask"])]
        cards, draw = next(self.turns)
        assert sorted(cards) == sorted(code_of(a) for a in legal if a != DRAW_OR_PASS), "clickable cards != legal"
        assert draw == (DRAW_OR_PASS in legal), "Draw enabled != draw legal"
        return legal[0]


def engine_game(preset: str, opponents: list[str], episode: str, seed: int, turns: list[Any]) -> tuple[Any, Match]:
    """The same game on the engine (seat 0 is the human; seat s's agent is seeded seed + 1 + s)."""
    config = GameConfig.preset(preset)
    agents = [Lockstep(config, turns)] + [make_agent(spec, config, seed + 1 + s) for s, spec in enumerate(opponents, 1)]
    match = Match(config, np.random.default_rng(seed))
    return play_episode(match, agents, episode), match


def shown_totals(page: Any) -> list[int]:
    return [int(t) for t in page.eval_on_selector_all("#hand-end [data-role=scores] tr.total td",
                                                       "els => els.map(e => e.textContent)")]


def shown_hands(page: Any, seats: int) -> list[list[str]]:
    return [page.eval_on_selector_all(f"#hand-end .row[data-seat='{s}'] .card", "els => els.map(e => e.dataset.code)")
            for s in range(seats)]


def test_a_classic_hand_by_clicking_ends_as_on_the_engine(page: Any) -> None:
    opponents = ["classic-tricks", "classic-cover", "random"]
    start(page, "classic", opponents, "hand", seed=21)
    cards, _ = clickable(page)
    locked = page.eval_on_selector_all("#hand button.card:disabled", "els => els.map(e => e.dataset.code)")
    if locked:  # a dimmed card cannot be played: clicking it changes nothing
        before = frames_drawn(page)
        page.click(f"#hand button.card[data-code='{locked[0]}']", force=True, timeout=2000)
        page.wait_for_timeout(300)
        assert frames_drawn(page) == before and clickable(page)[0] == cards
    turns = play_in_browser(page, shot_at=3, shot="classic-table.png")
    result, match = engine_game("classic", opponents, "hand", 21, turns)
    assert shown_totals(page) == list(result.points)
    assert shown_hands(page, 4) == [[code_of(f) for f in match.hand.hand_faces(s)] for s in range(4)]
    assert ("You win!" if 0 in result.winners else "You lose.") in page.inner_text("[data-role=verdict]")
    page.screenshot(path=str(ARTIFACTS / "classic-end.png"), full_page=True)


@pytest.mark.parametrize("keyboard", [False, True], ids=["clicks", "keys"])
def test_a_jokers_match_ends_as_on_the_engine_and_replays_to_the_same_end(page: Any, keyboard: bool) -> None:
    opponents = ["jokers-shed", "jokers-boom"]
    start(page, "jokers-3p", opponents, "match", seed=8)
    turns = play_in_browser(page, keyboard=keyboard, shot_at=4, shot="jokers-table.png")
    result, match = engine_game("jokers-3p", opponents, "match", 8, turns)
    assert shown_totals(page) == list(result.points) == match.scores
    assert len(page.eval_on_selector_all("#hand-end [data-role=scores] tr", "e => e")) == match.hands_played + 2
    page.screenshot(path=str(ARTIFACTS / "jokers-match-end.png"), full_page=True)
    final_hands = shown_hands(page, 3)

    page.click("#show-replay")
    page.wait_for_function("document.querySelectorAll('#saved option').length > 0")
    page.click("#load-saved")
    page.wait_for_function("document.querySelector('#status').className === 'replay'")
    page.click("#rp-end")
    assert shown_totals(page) == list(result.points)
    assert shown_hands(page, 3) == final_hands
    assert page.eval_on_selector_all("#rp-hand option", "els => els.length") == match.hands_played
    page.select_option("#rp-view", "1")  # one seat's view: the others' cards face down until the hand ends
    page.click("#rp-start")
    assert page.eval_on_selector_all("#players .player[data-seat='0'] .card.back", "els => els.length") == 7
    assert page.eval_on_selector_all("#hand .card", "els => els.length") == 7
    page.screenshot(path=str(ARTIFACTS / "jokers-replay.png"), full_page=True)


def test_a_long_match_replays_across_its_pages(page: Any, tmp_path: Path) -> None:
    record = long_match()
    steps = replay.frames(record)
    assert steps.total > 2 * replay.MAX_PAGE_FRAMES  # the scenario: the page fetches pages as it goes
    file = tmp_path / "long.jsonl"
    records.write(file, [record], append=False)
    page.click("#show-replay")
    page.set_input_files("#record-file", str(file))
    at_step = "(text) => document.querySelector('#rp-pos').textContent === text"
    page.wait_for_function(at_step, arg=f"step 1 / {steps.total}")
    assert page.eval_on_selector_all("#rp-hand option", "els => els.length") == len(record.hands)
    page.click("#rp-end")  # the last page
    page.wait_for_function(at_step, arg=f"step {steps.total} / {steps.total}")
    assert shown_totals(page) == list(record.result.points)
    hand = next(h for h, first in enumerate(steps.hand_starts) if first > replay.MAX_PAGE_FRAMES)
    page.select_option("#rp-hand", str(hand + 1))  # a hand of the second page
    page.wait_for_function(at_step, arg=f"step {steps.hand_starts[hand] + 1} / {steps.total}")
    page.keyboard.press("ArrowRight")
    page.wait_for_function(at_step, arg=f"step {steps.hand_starts[hand] + 2} / {steps.total}")
    assert page.inner_text("#log li.head") == f"Hand {hand + 1} \u2013 dealer P{record.hands[hand].dealer}"
    page.keyboard.press("Home")  # the first page again
    page.wait_for_function(at_step, arg=f"step 1 / {steps.total}")
    assert not page.is_visible("#error")


def test_the_table_fits_a_phone_screen(browser: Any, server: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    phone = context.new_page()
    phone.goto(server)
    start(phone, "classic", ["heuristic"], "hand", seed=3)
    width = phone.evaluate("document.documentElement.scrollWidth")
    phone.screenshot(path=str(ARTIFACTS / "phone.png"), full_page=True)
    context.close()
    assert width <= 390, f"the page is {width} px wide on a 390 px screen"


def test_a_second_tab_on_the_same_game_is_refused_and_a_reload_picks_the_game_up_again(page: Any) -> None:
    start(page, "classic", ["heuristic"], "hand", seed=5)
    game = page.url.split("#game=")[1]
    token = page.evaluate(f"sessionStorage.getItem('goboom-token-{game}')")
    hand = page.eval_on_selector_all("#hand .card", "els => els.map(e => e.dataset.code)")
    second = page.context.new_page()  # a duplicated tab: the same address and the same stored token
    second.add_init_script(f"sessionStorage.setItem('goboom-token-{game}', '{token}')")
    second.goto(page.url)
    second.wait_for_selector("#error:not([hidden])")
    assert "already open in another tab" in second.inner_text("#error")
    second.close()
    page.reload()
    page.wait_for_function(SETTLED)
    assert page.eval_on_selector_all("#hand .card", "els => els.map(e => e.dataset.code)") == hand
    assert page.is_hidden("#error")


def game_exists(server: str, game: str, token: str) -> bool:
    """Whether the server still keeps ``game`` (asked the way a script asks: no Origin header)."""
    request = urllib.request.Request(f"{server}/api/games/{game}", headers={"X-Game-Token": token})
    try:
        with urllib.request.urlopen(request, timeout=5):
            return True
    except urllib.error.HTTPError as exc:
        assert exc.code == 404, exc.code
        return False


def current_game(page: Any) -> tuple[str, str]:
    game = page.url.split("#game=")[1]
    return game, page.evaluate(f"sessionStorage.getItem('goboom-token-{game}')")


def test_the_page_ends_the_games_it_leaves(page: Any, server: str) -> None:
    start(page, "classic", ["heuristic"], "hand", seed=5)
    first, first_token = current_game(page)
    page.click("#show-new")
    start(page, "classic", ["heuristic"], "hand", seed=6)  # a new game ends the one left unfinished
    page.wait_for_function("first => !location.hash.endsWith(first)", arg=first)  # the page shows the new game
    second, second_token = current_game(page)
    assert second != first
    wait_until_ended(server, first, first_token, "the game left for a new one")  # the page's DELETE is not awaited
    assert page.evaluate(f"sessionStorage.getItem('goboom-token-{first}')") is None
    play_in_browser(page)
    assert game_exists(server, second, second_token)  # over, and still shown
    page.goto("about:blank")  # leaving the page of a finished game ends it
    wait_until_ended(server, second, second_token, "the finished game, its page left")


def wait_until_ended(server: str, game: str, token: str, what: str, seconds: float = 30.0) -> None:
    """Until the server no longer keeps ``game``; fails after ``seconds`` (a hang guard: it takes milliseconds)."""
    deadline = time.monotonic() + seconds
    while game_exists(server, game, token):
        assert time.monotonic() < deadline, f"{what} was not ended"
        time.sleep(0.1)


def test_the_page_ignores_a_frame_older_than_the_one_it_shows(page: Any) -> None:
    routes: list[Any] = []
    received: list[str] = []

    def relay(route: Any) -> None:  # the page's websocket, passed through to the server and back
        server = route.connect_to_server()
        routes.append(route)
        server.on_message(lambda message: (received.append(message), route.send(message)))
        route.on_message(server.send)

    page.route_web_socket(re.compile(r"/api/games/[^/]+/play"), relay)
    start(page, "classic", ["heuristic"], "hand", seed=5)
    drawn, shown = frames_drawn(page), status(page)
    hand = page.eval_on_selector_all("#hand .card", "els => els.map(e => e.dataset.code)")
    first = json.loads(received[0])
    stale = first | {"frame": first["frame"] | {"status": "agents"}}
    routes[0].send(json.dumps(stale))  # a frame the page has already passed
    page.wait_for_timeout(400)
    assert frames_drawn(page) == drawn and status(page) == shown
    assert page.eval_on_selector_all("#hand .card", "els => els.map(e => e.dataset.code)") == hand
    latest = json.loads(received[-1])
    routes[0].send(json.dumps(latest | {"seq": latest["seq"] + 1}))  # a newer one is drawn
    page.wait_for_function("(n) => Number(document.body.dataset.frames) > n", arg=drawn, timeout=5000)
