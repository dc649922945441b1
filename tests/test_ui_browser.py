"""The Dagster UI, driven for real: `dagster dev` on loopback and headless Chromium via Playwright.

A user's path through the UI: the asset graph, the `gharchive_pr_events` node and its hourly
partitions, the asset's Partitions tab, "Materialize…" with a 2-hour range, "Launch backfill",
then the backfill page until it reports success. The backfill runs on the daemon that
`dagster dev` starts, against a local GH Archive mirror of two generated hours, and must land
their Parquet files in the lake. Screenshots go to the test's tmp dir (and to
`$SWE_FORGE_SCREENSHOT_DIR` when set), on failure too.

The browser and the helpers are `tests/support/browser.py`'s.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pytest

from swe_forge_dagster.demo.worlds.gharchive_world import write_hour
from swe_forge_dagster.gharchive.hours import hive_dir, partition_key
from swe_forge_dagster.orchestration.instance import TEMPLATE
from tests.support.browser import (
    UI_TIMEOUT_MS,
    dismiss_community_dialog,
    free_port,
    graphql,
    save_screenshot,
    stop_process_group,
    wait_for_assets,
)
from tests.support.common import REPO_ROOT

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

SERVER_START_TIMEOUT = 150.0
BACKFILL_TIMEOUT = 180.0


@dataclass
class DagsterDev:
    url: str
    home: Path
    log: Path
    hours: list[dt.datetime]
    pr_events: dict[str, int]  # hour key -> PullRequestEvents written into the mirror


@pytest.fixture
def dagster_dev(tmp_path: Path) -> Iterator[DagsterDev]:
    """`dagster dev -w workspace.yaml` on 127.0.0.1 with an isolated home and a 2-hour mirror.

    The partitions start yesterday (UTC), so the UI shows a day or two of hours, not a decade.
    """
    start = (dt.datetime.now(dt.UTC) - dt.timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    hours = [start, start + dt.timedelta(hours=1)]
    mirror = tmp_path / "mirror"
    pr_events = {}
    for index, hour in enumerate(hours):
        _, truth = write_hour(mirror, hour, events=400, seed=index)
        pr_events[partition_key(hour)] = truth.by_type["PullRequestEvent"]
    home = tmp_path / "home"
    dagster_home = home / "dagster"
    dagster_home.mkdir(parents=True)
    shutil.copyfile(TEMPLATE, dagster_home / "dagster.yaml")  # what `swe-forge` sets up (ensure_dagster_home)
    cwd = tmp_path / "project"
    cwd.mkdir()
    shutil.copyfile(REPO_ROOT / "workspace.yaml", cwd / "workspace.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWE_FORGE_", "DAGSTER_"))}
    env.update(
        SWE_FORGE_HOME=str(home),
        DAGSTER_HOME=str(dagster_home),
        SWE_FORGE_START_DATE=f"{start:%Y-%m-%d}",
        SWE_FORGE_GHARCHIVE_URL=mirror.as_uri(),
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "dagster-dev.log"
    dagster = Path(sys.executable).with_name("dagster")
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(dagster), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for_assets(proc, url, log, "gharchive_pr_events", SERVER_START_TIMEOUT)
        yield DagsterDev(url, home, log, hours, pr_events)
    finally:
        stop_process_group(proc)


def test_ui_backfill_of_two_hours_in_headless_chromium(chromium: str, dagster_dev: DagsterDev, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=UI_TIMEOUT_MS)  # assertions wait as long as actions: CI machines are loaded

    first, last = (partition_key(h) for h in dagster_dev.hours)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.set_default_timeout(UI_TIMEOUT_MS)
        try:
            # 1. The asset graph lists the groups; jump to the hourly asset and see its partitions.
            page.goto(f"{dagster_dev.url}/asset-groups")
            expect(page.get_by_text("Global asset lineage")).to_be_visible()
            dismiss_community_dialog(page)
            for group in ("gharchive", "candidates", "triage", "catalog"):
                expect(page.get_by_text(group, exact=True).first).to_be_visible()
            page.get_by_placeholder("Jump to…").fill("gharchive_pr_events")
            page.get_by_text("gharchive_pr_events", exact=True).first.click()
            expect(page.get_by_text(re.compile(r"^Hourly, starting " + re.escape(first)))).to_be_visible()
            # The partition bar: "N partitions" until statuses load, then "Materialized 0/N <first> <last>".
            partitions = re.compile(r"(^\d+ partitions$)|(^\d+/\d+$)|(^Materialized)")
            expect(page.get_by_text(partitions).first).to_be_visible()
            save_screenshot(page, tmp_path, "ui-1-asset-graph.png")

            # 2. The asset's page, Partitions tab: every hour missing so far.
            page.get_by_role("link", name="View in Asset Catalog").click()
            expect(page).to_have_url(re.compile(r"/assets/gharchive_pr_events"))
            page.get_by_role("tab", name="Partitions").click()
            expect(page.get_by_text("Materialized (0)")).to_be_visible()
            expect(page.get_by_text(re.compile(r"^Missing \(\d+\)$"))).to_be_visible()
            expect(page.get_by_text(first, exact=True).first).to_be_visible()

            # 3. Materialize… -> the two hours as a range -> Launch backfill.
            page.get_by_role("button", name="Materialize…").click()
            dialog = page.get_by_role("dialog")
            expect(dialog.get_by_text("Launch runs to materialize gharchive_pr_events")).to_be_visible()
            selection = dialog.get_by_role("textbox").first
            selection.fill(f"[{first}...{last}]")
            selection.press("Enter")
            expect(dialog.get_by_text("2 partitions", exact=True)).to_be_visible()
            dialog.get_by_role("button", name="Launch backfill").click()

            # 4. The toast links to the backfill; its page must come to "Succeeded".
            toast = page.get_by_text(re.compile(r"^Created backfill \w+"))
            expect(toast).to_be_visible()
            backfill_id = toast.inner_text().split()[-1]
            page.get_by_role("link", name="View", exact=True).click()
            expect(page).to_have_url(re.compile(rf"/runs/b/{backfill_id}"))
            status = wait_for_backfill_status(page, BACKFILL_TIMEOUT)
            assert status == "Succeeded", f"backfill {backfill_id} ended {status}"
            expect(page.get_by_text("100% completed")).to_be_visible()
            save_screenshot(page, tmp_path, "ui-2-backfill-succeeded.png")

            # 5. Back on the partitions: the two hours are materialized.
            page.goto(f"{dagster_dev.url}/assets/gharchive_pr_events?view=partitions")
            expect(page.get_by_text("Materialized (2)")).to_be_visible()
            save_screenshot(page, tmp_path, "ui-3-partitions.png")
        except BaseException:
            save_screenshot(page, tmp_path, "ui-failure.png")
            print(f"dagster dev log (tail):\n{dagster_dev.log.read_text()[-3000:]}")
            raise
        finally:
            browser.close()

    # Cross-checks outside the browser: the backfill was the UI's, and the hours landed in the lake.
    backfill = graphql(
        dagster_dev.url,
        "query($id: String!) { partitionBackfillOrError(backfillId: $id) "
        "{ ... on PartitionBackfill { status partitionNames } } }",
        id=backfill_id,
    )["partitionBackfillOrError"]
    assert backfill == {"status": "COMPLETED_SUCCESS", "partitionNames": [first, last]}
    runs = graphql(
        dagster_dev.url,
        'query($id: String!) { runsOrError(filter: {tags: [{key: "dagster/backfill", value: $id}]}) '
        "{ ... on Runs { results { status tags { key value } } } } }",
        id=backfill_id,
    )["runsOrError"]["results"]
    assert runs and all(r["status"] == "SUCCESS" for r in runs)
    assert all({"key": "dagster/from_ui", "value": "true"} in r["tags"] for r in runs)
    lake = dagster_dev.home / "lake" / "gharchive_pr_events"
    for hour in dagster_dev.hours:
        rows = pl.read_parquet(hive_dir(lake, hour) / "part-0.parquet").height
        assert rows == dagster_dev.pr_events[partition_key(hour)]
    assert (tmp_path / "screenshots" / "ui-2-backfill-succeeded.png").stat().st_size > 10_000


def wait_for_backfill_status(page: Page, timeout: float) -> str:
    """Poll the backfill page (it refreshes itself; reload now and then) until a final status shows."""
    final = ("Succeeded", "Failed", "Canceled", "Completed with failures")
    deadline = time.monotonic() + timeout
    last_reload = time.monotonic()
    status = ""
    while time.monotonic() < deadline:
        text = page.inner_text("body")
        match = re.search(r"Status\s*\n\s*([^\n]+)", text)
        status = match.group(1).strip() if match else ""
        if status in final:
            return status
        if time.monotonic() - last_reload > 20:
            page.reload()
            last_reload = time.monotonic()
        time.sleep(1)
    raise AssertionError(f"backfill still '{status}' after {timeout}s")
