"""Fixtures shared across test folders: the one headless Chromium of the browser tests.

Set up with ``scripts/setup_browser.sh``. Without Chromium or playwright the browser tests FAIL,
with a message saying so: they are part of the suite, not optional.
"""

from __future__ import annotations

import os

import pytest

CHROMIUM = os.environ.get("BARBU_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
SETUP = "run scripts/setup_browser.sh (apt-get install chromium; pip install playwright==1.65.2 into .venv)"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One persistent Chromium context (fresh profile) for the module."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(f"the replay browser tests need the Python package 'playwright': {SETUP}", pytrace=False)
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"the replay browser tests need Chromium at {CHROMIUM}: {SETUP}", pytrace=False)
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as p:
        try:
            context = p.chromium.launch_persistent_context(
                str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1400, "height": 1000}, device_scale_factor=1,
            )  # fmt: skip
        except Exception as e:  # noqa: BLE001 - any launch failure means the setup is missing
            pytest.fail(f"cannot start Chromium ({CHROMIUM}): {e}\n{SETUP}", pytrace=False)
        yield context
        context.close()
