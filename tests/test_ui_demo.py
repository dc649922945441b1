"""The Dagster UI on the demo's instance, in headless Chromium: what a new user sees after `swe-forge demo`.

The session's demo (`tests/support/demo_run.py`) leaves its instance with three exported tasks, one
rejected (`globex-oss__yaml-lite-3`: its tests pass without the fix), and the oracle's and the empty
agent's verdicts on the exported ones. Its next steps are run exactly as printed: the SQL ones from the
clone (exit 0), and the UI one (`swe-forge dev` on the demo's home) with a free loopback port added. In
the browser, on that UI:

- the task outcomes: the `accepted` check's Partitions tab of `swe_task` shows the rejected task failed
  and the accepted ones passed (GraphQL says the same);
- several agents read right: `eval_result` is partitioned by (agent, task), and its `harness_ok` check passes for
  every verdict (the oracle resolves, the empty agent does not), so with no agent selected no task reads failed;
  the rejected task's cells are materialized with `status: rejected` (by `eval_summary`), so none reads Missing;
  each agent's verdict per task is `eval_summary`'s `verdicts` table;
- `eval_summary`'s plots: one series per agent (`oracle: resolved_rate` and the empty agent's), and its
  `resolved_rate_by_run` chart, whose runs (the demo's two, seconds apart) carry their own times.

Screenshots go to `$SWE_FORGE_SCREENSHOT_DIR` too: `SWE_FORGE_SCREENSHOT_DIR=docs/images` refreshes the
documentation's pictures (docs/ui.md).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

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
from tests.support.demo_run import DemoRun
from tests.support.eval_matrix import ASSET_CELLS, CHECK_CELLS, cells_by_status

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.timeout(1500)  # the session's demo may run first (about 2 to 4 minutes)

REJECTED = "globex-oss__yaml-lite-3"
ACCEPTED = ("acme-labs__tinycalc-12", "northwind__datekit-7", "initech__slug-lite-4")
CHECK_STATUSES = """
query($path: [String!]!) { assetNodeOrError(assetKey: {path: $path}) { ... on AssetNode {
  assetChecksOrError { ... on AssetChecks { checks { name partitionStatuses {
    ... on AssetCheckDefaultPartitionStatuses { succeededPartitions failedPartitions }
  } } } } } } }
"""

DIMENSIONS = """
query($path: [String!]!) { assetNodeOrError(assetKey: {path: $path}) { ... on AssetNode {
  partitionKeysByDimension { name partitionKeys } } } }
"""
SUMMARY_METADATA = """
{ assetNodeOrError(assetKey: {path: ["eval_summary"]}) { ... on AssetNode {
  assetMaterializations(limit: 1) { metadataEntries { label ... on MarkdownMetadataEntry { mdStr } } } } } }
"""


def next_steps(demo: DemoRun) -> list[str]:
    """The commands the demo printed under `Next:` (its last lines, each indented, some with a comment)."""
    lines = demo.stdout.split("\nNext:", 1)[1].splitlines()
    return [line.strip().split("     #")[0] for line in lines if line.startswith("  SWE_FORGE_HOME=")]


@pytest.fixture
def demo_ui(demo_run: DemoRun, tmp_path: Path) -> Iterator[str]:
    """The demo's printed `swe-forge dev` step, run from the clone with a free loopback port: the UI's URL."""
    assert demo_run.returncode == 0, demo_run.stderr[-3000:]
    (dev,) = [step for step in next_steps(demo_run) if " dev" in step]
    port = free_port()
    log = tmp_path / "swe-forge-dev.log"
    env = {k: v for k, v in demo_run.env.items() if k != "SWE_FORGE_HOME"}  # the step names the demo's home
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            ["bash", "-c", f"{dev} --host 127.0.0.1 --port {port}"],
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_assets(proc, url, log, "eval_result", 180.0)
        yield url
    finally:
        stop_process_group(proc)
        print(f"swe-forge dev log (tail):\n{log.read_text()[-3000:]}")


@pytest.mark.docker
def test_the_demos_next_steps_run_as_printed_from_the_clone(demo_run: DemoRun) -> None:
    assert demo_run.returncode == 0, demo_run.stderr[-3000:]
    steps = next_steps(demo_run)
    assert len(steps) == 3 and all(step.split()[1] == "./swe-forge" for step in steps), steps
    env = {k: v for k, v in demo_run.env.items() if k != "SWE_FORGE_HOME"}
    for step in steps:
        if " dev" in step:
            continue  # a server: the browser test below runs it
        done = subprocess.run(["bash", "-c", step], cwd=REPO_ROOT, env=env, capture_output=True, text=True)
        assert done.returncode == 0, (step, done.stderr[-2000:])
        assert "rows)" in done.stdout, step


def open_check_partitions(page: Page) -> None:
    """The open check's own Partitions tab: the asset has one too, so wait until both are there, then the second."""
    from playwright.sync_api import expect

    tabs = page.get_by_role("tab", name="Partitions")
    expect(tabs).to_have_count(2)
    tabs.last.click()
    expect(page.get_by_text(re.compile(r"^Execution Failed \(\d+\)$"))).to_be_visible()


def _check_partitions(url: str, asset: str, check: str) -> dict[str, list[str]]:
    data = graphql(url, CHECK_STATUSES, path=[asset])["assetNodeOrError"]["assetChecksOrError"]["checks"]
    (found,) = [c["partitionStatuses"] for c in data if c["name"] == check]
    return found or {}


@pytest.mark.browser
def test_outcomes_and_every_agents_verdict_at_a_glance_in_the_demos_ui(
    chromium: str, demo_ui: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=UI_TIMEOUT_MS)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.set_default_timeout(UI_TIMEOUT_MS)
        try:
            # 1. The task outcomes: swe_task's `accepted` check, partition by partition.
            page.goto(f"{demo_ui}/assets/swe_task?view=checks&checkDetail=accepted")
            dismiss_community_dialog(page)
            open_check_partitions(page)
            expect(page.get_by_text("Failed (1)")).to_be_visible()
            expect(page.get_by_text("Passed (3)")).to_be_visible()
            save_screenshot(page, tmp_path, "ui-task-outcomes.png")

            # 2. Two agents, one resolving and one not: eval_result's `harness_ok` passes in all 2 x 4 cells (the
            # rejected task's too), so no task and no agent reads failed or missing with nothing selected.
            page.goto(f"{demo_ui}/assets/eval_result?view=checks&checkDetail=harness_ok")
            open_check_partitions(page)
            for count in ("Passed (8)", "Failed (0)", "Execution Failed (0)", "Missing (0)"):
                expect(page.get_by_text(count, exact=True)).to_be_visible()
            expect(page.get_by_text(re.compile(r"^oracle-[0-9a-f]{8}$")).filter(visible=True)).to_have_count(1)
            save_screenshot(page, tmp_path, "ui-agent-verdicts.png")

            # 3. eval_summary: each agent's figures plotted as their own series, and the runs by their own times.
            page.goto(f"{demo_ui}/assets/eval_summary")
            page.get_by_role("button", name="Plots").click()
            expect(page.get_by_text("oracle: resolved_rate", exact=True)).to_be_visible()
            expect(page.get_by_text(re.compile(r"^python -m emptyagent @ .*: resolved_rate$"))).to_be_visible()
            save_screenshot(page, tmp_path, "ui-eval-summary-plots.png")
            page.get_by_role("button", name="Table").click()
            page.locator("tr", has_text="resolved_rate_by_run").get_by_text("[Show Markdown]").click()
            chart = page.get_by_role("dialog").get_by_role("img", name="resolved rate by run")
            expect(chart).to_be_visible()
            assert chart.evaluate("img => img.naturalWidth") > 0  # the UI's Markdown renders the data: image
            save_screenshot(page, tmp_path, "ui-eval-summary-run-times.png")
        except BaseException:
            save_screenshot(page, tmp_path, "ui-demo-failure.png")
            raise
        finally:
            browser.close()

    # The same, from the webserver's GraphQL: the markers are the outcomes, not a coincidence of counts.
    outcomes = _check_partitions(demo_ui, "swe_task", "accepted")
    assert outcomes["failedPartitions"] == [REJECTED]
    assert sorted(outcomes["succeededPartitions"]) == sorted(ACCEPTED)
    for stage in ("task_patch", "task_tests"):  # accepted by the stages before validation rejected it
        assert REJECTED in _check_partitions(demo_ui, stage, "accepted")["succeededPartitions"], stage
    assert _check_partitions(demo_ui, "task_validation", "accepted")["failedPartitions"] == [REJECTED]
    dimensions = graphql(demo_ui, DIMENSIONS, path=["eval_result"])["assetNodeOrError"]["partitionKeysByDimension"]
    agents = {d["name"]: d["partitionKeys"] for d in dimensions}["agent"]  # the UI shows the long one truncated
    assert len(agents) == 2 and {a.split("-")[0] for a in agents} == {"oracle", "python"}, agents
    assert (tmp_path / "screenshots" / "ui-agent-verdicts.png").stat().st_size > 10_000
    cells = {f"{agent}|{task}" for agent in agents for task in (*ACCEPTED, REJECTED)}
    node = graphql(demo_ui, ASSET_CELLS, path=["eval_result"])["assetNodeOrError"]
    shown = cells_by_status(node["assetPartitionStatuses"]["ranges"], agents, "materializedPartitions")
    assert shown["materializedPartitions"] == cells  # the rejected task's cells too: none reads Missing
    checks = graphql(demo_ui, CHECK_CELLS, path=["eval_result"])["assetNodeOrError"]["assetChecksOrError"]["checks"]
    (check,) = [c["partitionStatuses"] for c in checks if c["name"] == "harness_ok"]
    judged = cells_by_status(check["ranges"], agents, "succeededPartitions", "failedPartitions")
    assert judged == {"succeededPartitions": cells, "failedPartitions": set()}
    entries = graphql(demo_ui, SUMMARY_METADATA)["assetNodeOrError"]["assetMaterializations"][0]["metadataEntries"]
    verdicts = {e["label"]: e.get("mdStr") for e in entries}["verdicts"].splitlines()
    for task in ACCEPTED:  # each agent's verdict, side by side (columns in agent-label order: oracle, python ...)
        assert f"| {task} | resolved | unresolved |" in verdicts, verdicts
    assert f"| {REJECTED} | rejected | rejected |" in verdicts
