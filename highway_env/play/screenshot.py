"""Drive the page in headless Chromium: the browser tests' helpers and the README's screenshot.

    python -m highway_env.play.screenshot docs/play.png

plays a few moves against the greedy agent with hints on, picks a number so that the cells show
the solver's verdict for it, and saves the window as a PNG. Needs ``selenium`` (the ``test``
extra) and Chromium with its driver (Debian: ``apt-get install chromium chromium-driver``); the
driver is never downloaded.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from highway_env.atomic_files import atomic_write_bytes, check_writable
from highway_env.cli_args import OneLineErrorParser, non_negative_int

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--disable-background-networking", "--window-size=1100,900")
#: Selenium's ``By.CSS_SELECTOR`` (the WebDriver locator strategy's name).
CSS = "css selector"


def missing_browser_parts() -> list[str]:
    """What is missing to drive Chromium (empty when everything is there)."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(path)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package")
    return missing


def make_driver():
    """Headless Chromium through the system's chromedriver (Selenium Manager is skipped because
    both paths are given)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


class PlayPage:
    """The page as a user sees it: clicks, and what it shows, read from the DOM."""

    def __init__(self, driver, url: str, timeout: float = 30.0):
        self.driver = driver
        self.url = url
        self.timeout = timeout

    def _wait(self, condition, what: str, timeout: float | None = None):
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, timeout or self.timeout, poll_frequency=0.05).until(
            lambda d: condition(), message=f"waiting for {what}")

    def _by_css(self, selector):
        return self.driver.find_element(CSS, selector)

    def _all_css(self, selector):
        return self.driver.find_elements(CSS, selector)

    # -- reading
    def body_state(self) -> str:
        return self._by_css("body").get_attribute("data-state")

    def ply(self) -> int:
        return int(self._by_css("#board").get_attribute("data-ply"))

    def cells(self) -> list[int]:
        return [int(e.get_attribute("data-number") or 0) for e in self._all_css("#board .cell")]

    def cells_with(self, cls: str) -> list[int]:
        return [int(e.get_attribute("data-cell")) for e in self._all_css(f"#board .cell.{cls}")]

    def used_numbers(self) -> list[int]:
        return [int(e.get_attribute("data-number")) for e in self._all_css("#palette .num-btn.used")]

    def text(self, selector: str) -> str:
        return self._by_css(selector).text

    def attr(self, selector: str, name: str):
        return self._by_css(selector).get_attribute(name)

    def visible(self, selector: str) -> bool:
        return self._by_css(selector).is_displayed()

    # -- acting
    def open(self) -> None:
        self.driver.get(self.url)
        self.wait_settled()

    def wait_settled(self, ply: int | None = None, timeout: float | None = None) -> None:
        """Until no request is in flight and the opponent is not thinking (and the board shows
        ``ply`` numbers, if given)."""
        self._wait(lambda: self.body_state() in ("idle", "over") and (ply is None or self.ply() == ply),
                   f"the page to settle at ply {ply}", timeout)

    def wait_hint(self, statuses=("ok",), timeout: float | None = None) -> None:
        self._wait(lambda: self._by_css("body").get_attribute("data-hint") in statuses,
                   f"a hint ({'/'.join(statuses)})", timeout)

    def click_number(self, number: int) -> None:
        self._by_css(f'#palette .num-btn[data-number="{number}"]').click()

    def select_number(self, number: int) -> None:
        """Pick ``number`` in the palette (a second click on the picked number would unpick it)."""
        button = self._by_css(f'#palette .num-btn[data-number="{number}"]')
        if "selected" not in button.get_attribute("class").split():
            button.click()

    def click_cell(self, cell: int) -> None:
        self._by_css(f'#board .cell[data-cell="{cell}"]').click()

    def new_game(self, side: str = "A", opponent: str = "greedy", seed: int | None = None) -> None:
        from selenium.webdriver.support.ui import Select

        self._by_css(f"#side-{side}").click()
        Select(self._by_css("#opponent")).select_by_value(opponent)
        seed_box = self._by_css("#seed")
        seed_box.clear()
        if seed is not None:
            seed_box.send_keys(str(seed))
        self._by_css("#new-game").click()
        self._wait(lambda: self.ply() == 0 or self.body_state() != "busy", "the new game")
        self.wait_settled()

    def play(self, number: int, cell: int) -> None:
        """Place ``number`` at ``cell`` and wait until the opponent has answered."""
        before = self.ply()
        self.select_number(number)
        self.click_cell(cell)
        self._wait(lambda: self.ply() > before, "the move to show")
        self.wait_settled()

    def toggle_hints(self) -> None:
        self._by_css("#hint-toggle").click()


def take_screenshot(path: str, seed: int = 7) -> str:
    """The screenshot of the module docstring, saved to ``path``; the moves are 16 at cell 3 and 1 at
    cell 0 (or the first legal move where greedy took the cell)."""
    from highway_env.play.server import start_server

    server, _ = start_server()
    driver = make_driver()
    try:
        page = PlayPage(driver, server.url, timeout=120)
        page.open()
        page.new_game("A", "greedy", seed=seed)
        page.toggle_hints()
        for number, cell in ((16, 3), (1, 0)):
            if page.cells()[cell] or number in page.used_numbers():
                cell = page.cells().index(0)
                number = min(set(range(1, 17)) - set(page.used_numbers()))
            page.play(number, cell)
        page.wait_hint(("ok",), timeout=120)
        page.select_number(min(set(range(1, 17)) - set(page.used_numbers())))
        # the whole page, not just the window: a viewport as tall as the document
        height = driver.execute_script("return document.documentElement.scrollHeight")
        width = driver.execute_script("return window.innerWidth")
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        time.sleep(0.3)  # let the new frame paint
        atomic_write_bytes(path, driver.get_screenshot_as_png())  # never half a PNG over the old one
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()
    return path


def main(argv=None) -> int:
    parser = OneLineErrorParser(prog="python -m highway_env.play.screenshot", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", default="docs/play.png", help="PNG to write (default: %(default)s)")
    parser.add_argument("--seed", type=non_negative_int, default=7, help="the greedy opponent's seed (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        check_writable(args.out, "out")  # before starting a browser and a server
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    missing = missing_browser_parts()
    if missing:
        print(f"error: cannot drive Chromium, missing: {', '.join(missing)}", file=sys.stderr)
        return 2
    print(take_screenshot(args.out, seed=args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
