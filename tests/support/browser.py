"""The browser tests' shared parts: Debian's Chromium for Playwright, a free loopback port, the webserver's
GraphQL, stopping `dagster dev`'s process group, screenshots, and the newsletter dialog of a fresh instance.

The browser is Debian's `chromium` (Playwright's own browser download needs the internet);
`SWE_FORGE_CHROMIUM` names another binary. Without one the browser tests skip, unless
`SWE_FORGE_REQUIRE_BROWSER=1` (set by .ci/run), which makes a missing browser a failure.
Screenshots go to the test's tmp dir, and to `$SWE_FORGE_SCREENSHOT_DIR` when set (docs/images for the
documentation's pictures).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

UI_TIMEOUT_MS = 30_000


def find_chromium() -> str | None:
    explicit = os.environ.get("SWE_FORGE_CHROMIUM")
    if explicit:
        return shutil.which(explicit)  # None when it is not an executable
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def chromium() -> str:
    """The browser's path; skips (or, with SWE_FORGE_REQUIRE_BROWSER=1, fails) naming what is missing."""
    required = os.environ.get("SWE_FORGE_REQUIRE_BROWSER") == "1"
    path = find_chromium()
    problem = None
    if path is None:
        problem = "no Chromium found (apt-get install chromium, or set SWE_FORGE_CHROMIUM to its binary)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError as exc:
            problem = f"playwright is not installed ({exc}); run scripts/bootstrap"
    if problem:
        if required:
            pytest.fail(f"SWE_FORGE_REQUIRE_BROWSER=1 but {problem}")
        pytest.skip(problem)
    return path  # type: ignore[return-value]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def graphql(url: str, query: str, **variables: object) -> dict:
    response = httpx.post(f"{url}/graphql", json={"query": query, "variables": variables}, timeout=30)
    response.raise_for_status()
    return response.json()["data"]


def stop_process_group(proc: subprocess.Popen) -> None:
    """Ask `dagster dev` (or `swe-forge dev`, which passes it on) to stop, then make sure: every process it
    started is killed, also those in a process group of their own (`swe-forge dev` runs `dagster dev` in one)."""
    tree = descendants(proc.pid)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=20)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of the group this test started
    for pid in tree | descendants(proc.pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    proc.wait(timeout=10)


def descendants(pid: int) -> set[int]:
    """Every live process below `pid`, from /proc's parent links."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def save_screenshot(page: Page, tmp_path: Path, name: str) -> Path:
    path = tmp_path / "screenshots" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)
    target = os.environ.get("SWE_FORGE_SCREENSHOT_DIR")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, Path(target) / name)
    return path


def dismiss_community_dialog(page: Page) -> None:
    """A fresh instance greets a visitor on 127.0.0.1 with a newsletter dialog, 1 s after the first
    page loads; it steals focus (closing any open dropdown), so skip it before doing anything else."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
    from playwright.sync_api import expect

    try:
        page.get_by_role("dialog").get_by_role("button", name="Skip").click(timeout=10_000)
    except PlaywrightTimeoutError:
        return  # not shown: this instance has seen it already
    expect(page.get_by_text("Join the Dagster community")).to_be_hidden()


def wait_for_assets(proc: subprocess.Popen, url: str, log: Path, asset: str, timeout: float) -> None:
    """Until the webserver at `url` serves `asset`; fails with the log's tail when `proc` exits or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            pytest.fail(f"dagster dev exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
        try:
            nodes = graphql(url, "{ assetNodes { assetKey { path } } }")["assetNodes"]
            if any(n["assetKey"]["path"] == [asset] for n in nodes):
                return
        except (httpx.HTTPError, KeyError, TypeError, ValueError):
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"dagster dev did not serve the assets in {timeout}s:\n{log.read_text()[-4000:]}")
        time.sleep(1)
