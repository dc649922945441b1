"""`swe-forge dev` for real: it starts without a warning a Dagster user would take for a fault, and its UI shows a
rejected task's cells of `eval_result` as recorded (`status: rejected`), not Missing, with `harness_ok` passed.

The command runs as a user runs it: from the clone (whose `dagster.yaml` and `workspace.yaml` are there), on a
new home (no Dagster daemon has run on its instance yet), on a free loopback port, until it serves the assets;
then it is stopped with SIGINT. Before, Dagster 1.13 printed a `SupersessionWarning` ("Use 'dg dev'"), a WARNING
that the folder's `dagster.yaml` is not used, and the daemon's first-tick WARNINGs ("No cursor for event type").
The UI's grid is read through the same GraphQL fields the webserver's partition views use.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from swe_forge_dagster.assets.harness import HARNESS_OK_CHECK
from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.harness.store import agent_key
from swe_forge_dagster.orchestration.instance import open_instance
from swe_forge_dagster.settings import Settings
from tests.support.browser import free_port, graphql, stop_process_group, wait_for_assets
from tests.support.common import REPO_ROOT
from tests.support.eval_matrix import AGENTS, ASSET_CELLS, CHECK_CELLS, REJECTED, cells_by_status, lay_out_matrix

pytestmark = pytest.mark.timeout(600)
DAEMON_STARTED = "Instance is configured with the following daemons"


@dataclass
class Served:
    url: str
    log: Path
    output: str = ""  # all the command printed, stdout and stderr, once it stopped


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`swe-forge dev` on a home holding the two-agent matrix (`tests.support.eval_matrix`) after `eval_summary`."""
    tmp = tmp_path_factory.mktemp("dev")
    home = tmp / "home"
    settings = Settings(SWE_FORGE_HOME=str(home))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DAGSTER_HOME", str(home / "dagster"))
        instance = open_instance(settings)
        lay_out_matrix(settings, instance)
        summary = build_definitions(settings).resolve_assets_def("eval_summary")
        assert dg.materialize([summary], instance=instance).success
        instance.dispose()
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "SWE_FORGE_AGENT")}
    env["SWE_FORGE_HOME"] = str(home)
    port = free_port()
    result = Served(url=f"http://127.0.0.1:{port}", log=tmp / "swe-forge-dev.log")
    with open(result.log, "wb") as out:
        proc = subprocess.Popen(
            [str(REPO_ROOT / ".venv" / "bin" / "swe-forge"), "dev", "--host", "127.0.0.1", "--port", str(port)],
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for_assets(proc, result.url, result.log, "eval_result", 300.0)
        deadline = time.monotonic() + 60
        while DAEMON_STARTED not in result.log.read_text() and time.monotonic() < deadline:
            time.sleep(1)
        time.sleep(10)  # the daemon's first ticks, where its cursor WARNINGs were logged
        yield result
    finally:
        stop_process_group(proc)
        result.output = result.log.read_text()


def test_the_ui_shows_a_rejected_tasks_cells_as_recorded_and_harness_ok_passed(served: Served) -> None:
    dimensions = graphql(served.url, ASSET_CELLS, path=["eval_result"])["assetNodeOrError"]
    agents = {d["name"]: d["partitionKeys"] for d in dimensions["partitionKeysByDimension"]}["agent"]
    assert sorted(agents) == sorted(agent_key(agent) for agent in AGENTS)
    statuses = dimensions["assetPartitionStatuses"]
    assert statuses["primaryDimensionName"] == "agent"
    materialized = cells_by_status(statuses["ranges"], agents, "materializedPartitions", "failedPartitions")
    rejected_cells = {f"{agent}|{REJECTED}" for agent in agents}
    assert materialized == {"materializedPartitions": rejected_cells, "failedPartitions": set()}  # not Missing

    checks = graphql(served.url, CHECK_CELLS, path=["eval_result"])["assetNodeOrError"]["assetChecksOrError"]
    (check,) = checks["checks"]
    assert check["name"] == HARNESS_OK_CHECK
    cells = cells_by_status(check["partitionStatuses"]["ranges"], agents, "succeededPartitions", "failedPartitions")
    assert cells == {"succeededPartitions": rejected_cells, "failedPartitions": set()}


def test_swe_forge_dev_starts_without_a_warning(served: Served) -> None:
    output = served.log.read_text()
    assert DAEMON_STARTED in output, output[-3000:]
    assert "SupersessionWarning" not in output
    assert "in the current folder" not in output  # Dagster's notice about ./dagster.yaml
    assert "No cursor for event type" not in output
    assert not re.search(r"WARNING|Warning:", output), output[-3000:]
    home = re.search(r"DAGSTER_HOME=(\S+) dg dev -w workspace.yaml --host 127.0.0.1", output)
    assert home, output[:2000]
    assert f"instance configuration: {home.group(1)}/dagster.yaml" in output  # said as information instead
