"""Headless Chromium for the animation tests: Debian's ``chromium`` driven by Playwright's Python package, with
every network request refused (the pages must work offline)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

FLAGS = ["--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader", "--use-angle=swiftshader",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps"]


def chromium_path() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium: apt-get install chromium (scripts/test.sh installs it on Debian)")


def wait_until(page, expression: str, timeout: float = 60.0) -> None:
    """Poll ``expression`` in the page until it is true (the pages' Content-Security-Policy forbids the string
    evaluation Playwright's ``wait_for_function`` uses)."""
    import time

    end = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > end:
            raise AssertionError(f"the page never made {expression!r} true within {timeout:g} s")
        page.wait_for_timeout(50)


@contextmanager
def open_page(path: Path, width: int = 960, height: int = 600) -> Iterator[tuple[object, list[str]]]:
    """``(page, requests)``: ``path`` opened in headless Chromium; ``requests`` lists every URL the page asked
    for that is not the file itself or inline data (each refused)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra has it)")
    executable = chromium_path()
    refused: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, headless=True, args=FLAGS)
        try:
            context = browser.new_context(viewport={"width": width, "height": height}, offline=True)

            def route(r):
                url = r.request.url
                if url.startswith(("file:", "data:")):
                    r.continue_()
                else:
                    refused.append(url)
                    r.abort()

            context.route("**/*", route)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.resolve().as_uri())
            wait_until(page, "Boolean(window.nhbridge && window.nhbridge.ready)")
            assert not errors, errors
            yield page, refused
        finally:
            browser.close()
