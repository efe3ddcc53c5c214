"""
A real headless Chromium for the tests that look at pages as a person does: Debian's chromium package
(/usr/bin/chromium), driven by Playwright with a fresh profile, every wait bounded, closed afterwards.
Screenshots go to test-artifacts/screenshots/<database>/, which the end of the test run names.
"""

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
# Flags that let Chromium run headless as root in a container, and keep it from calling out.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ACTION_TIMEOUT_MS = 15_000
LAUNCH_TIMEOUT_MS = 60_000
SCREENSHOTS_KEY = pytest.StashKey[list]()


def require_chromium():
    """Skip where Debian's chromium is not installed (`apt-get install chromium`); in CI, .ci/run installs it, so fail."""
    if CHROMIUM.exists():
        return
    message = f"{CHROMIUM} is missing: apt-get install chromium (.ci/run installs it)."
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def screenshot_folder(config) -> Path:
    """test-artifacts/screenshots/<sqlite or postgresql>/, emptied once per run, and noted for its closing lines."""
    vendor = "postgresql" if "postgresql" in settings.DATABASES["default"]["ENGINE"] else "sqlite"
    folder = ROOT / "test-artifacts" / "screenshots" / vendor
    noted = config.stash.setdefault(SCREENSHOTS_KEY, [])
    if folder not in noted:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        noted.append(folder)
    return folder


@contextmanager
def chromium_page(profile: Path):
    """A page of a headless Chromium with a fresh profile in `profile`; the browser is closed on the way out."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            timeout=LAUNCH_TIMEOUT_MS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            context.set_default_timeout(ACTION_TIMEOUT_MS)
            context.set_default_navigation_timeout(ACTION_TIMEOUT_MS)
            yield context.new_page()
        finally:
            context.close()
