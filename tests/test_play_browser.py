"""The page end to end in headless Chromium: a whole game by clicks, undo, an illegal click, hints.

Skipped when Chromium, chromedriver or selenium are missing, except under CI=true, where that is a
failure (CI must really run these)."""

from __future__ import annotations

import pytest

from highway_env.core import Board
from highway_env.play.screenshot import PlayPage, make_driver, missing_browser_parts
from highway_env.play.server import start_server
from highway_env.play.view import result_text
from optional_parts import skip_or_fail

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def page():
    missing = missing_browser_parts()
    if missing:
        skip_or_fail("browser", "A headless browser", "missing " + ", ".join(missing),
                     "apt-get install chromium chromium-driver; pip install selenium")
    server, thread = start_server()
    driver = make_driver()
    try:
        p = PlayPage(driver, server.url, timeout=20)
        p.open()
        yield p
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()
        thread.join(5)


def free_move(page):
    """(smallest unused number, first empty cell), read from the page."""
    number = min(set(range(1, 17)) - set(page.used_numbers()))
    return number, page.cells().index(0)


def test_whole_game_by_clicks_matches_core_outcome(page, tmp_path):
    page.new_game("A", "random", seed=11)
    assert page.ply() == 0 and "Your move (A)" in page.text("#status")
    while page.body_state() != "over":
        page.play(*free_move(page))
    cells = page.cells()
    out = Board(tuple(cells)).outcome()
    assert page.ply() == 16 and sorted(cells) == list(range(1, 17))
    # the result, both path values and the drawn paths are highway_env.core's
    assert page.attr("#result", "data-min-a") == str(out.min_a)
    assert page.attr("#result", "data-min-b") == str(out.min_b)
    assert page.attr("#result", "data-winner") == (out.winner or "draw")
    assert result_text(out.min_a, out.min_b) in page.text("#result")
    assert result_text(out.min_a, out.min_b) in page.text("#status")
    assert sorted(page.cells_with("on-a")) == sorted(out.a_paths[0])
    assert sorted(page.cells_with("on-b")) == sorted(out.b_paths[0])
    assert page.text("#path-a") == f"A's cheapest path: {out.min_a}"
    assert page.text("#path-b") == f"B's cheapest path: {out.min_b}"
    assert len(page._all_css("#history li")) == 16
    shot = tmp_path / "finished.png"
    assert page.driver.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == PNG_SIGNATURE and shot.stat().st_size > 10_000


def test_undo_and_illegal_clicks(page, tmp_path):
    page.new_game("A", "greedy", seed=3)
    page.play(16, 3)
    assert page.ply() == 2 and page.cells()[3] == 16 and 16 in page.used_numbers()
    before = page.cells()

    # an occupied cell: the server's error is shown and the board stays as it was
    number, _ = free_move(page)
    page.click_number(number)
    page.click_cell(3)
    page.wait_settled()
    assert page.visible("#error") and "cell 3 (row 1, column 4) already holds 16" in page.text("#error")
    assert page.cells() == before
    # a number that is already on the board
    page.click_number(16)
    assert "16 is already on the board" in page.text("#error")
    # the next legal move clears the error
    page.play(*free_move(page))
    assert page.ply() == 4 and not page.visible("#error")

    page._by_css("#undo").click()
    page.wait_settled(ply=2)
    assert page.cells() == before
    page._by_css("#undo").click()
    page.wait_settled(ply=0)
    assert page.cells() == [0] * 16 and page.attr("#undo", "disabled") == "true"
    shot = tmp_path / "after-undo.png"
    assert page.driver.save_screenshot(str(shot)) and shot.read_bytes()[:8] == PNG_SIGNATURE


def test_playing_b_and_hints_from_the_book(page):
    page.new_game("B", "random", seed=5)
    assert page.ply() == 1 and "Your move (B)" in page.text("#status")
    page.new_game("A", "random", seed=5)
    page.toggle_hints()
    page.wait_hint(("ok",))
    assert "A wins" in page.text("#hint-verdict")  # the empty board, from the opening book
    page.click_number(16)
    # 16 wins only in B's corners (cells 3 and 12); everywhere else it gives the win away
    assert sorted(page.cells_with("hint-keep")) == [3, 12]
    assert len(page.cells_with("hint-lose")) == 14
    page.toggle_hints()
    assert not page.visible("#hint-card")
