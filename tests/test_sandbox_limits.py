"""Disk limits per sandbox: an agent that writes past the limit is stopped, and the host's disk gets its space back.

The engine here is overlay2 on ext4 (no per-container quota), so the limit is the per-file size limit plus
the watchdog of `execution.disk_guard`; on an xfs engine with project quotas the kernel enforces it instead.
"""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from swe_forge_dagster.execution.sandbox import Sandbox, SandboxConfig
from swe_forge_dagster.harness import Status
from tests.support.common import BASE_IMAGE
from tests.support.harness_world import HarnessWorld, harness_world, write_agent
from tests.support.harness_world import run_items as run

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def hw(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> HarnessWorld:
    return harness_world(tmp_path_factory.getbasetemp() / "harness-world")


def containers_since(client: docker.DockerClient, before: set[str], name_part: str) -> list[str]:
    """Containers made after `before` was taken whose names hold `name_part`, with the bytes they wrote.

    Measured per container from the engine (not the disk's usage: the other test lane builds images beside this one).
    """
    usage = {c["Id"]: c.get("SizeRw", 0) for c in client.df().get("Containers") or []}
    return [
        f"{c.name} ({usage.get(c.id, 0)} bytes written)"
        for c in client.containers.list(all=True, ignore_removed=True)
        if c.id not in before and name_part in c.name
    ]


def test_one_file_past_the_limit_is_refused_by_the_kernel(docker_client: docker.DockerClient) -> None:
    with Sandbox.start(
        docker_client, SandboxConfig(image=BASE_IMAGE, disk_limit="50m", network="none"), name_hint="disk-file"
    ) as box:
        result = box.run("head -c 80000000 /dev/zero > /tmp/big; echo status=$?; stat -c %s /tmp/big")
    assert "status=153" in result.output or "File size limit exceeded" in result.output, result.output
    assert result.output.strip().splitlines()[-1] == str(50 * 1024 * 1024)  # the file stopped at the limit


def test_an_agent_writing_past_the_disk_limit_is_an_agent_error_and_the_disk_is_given_back(
    hw: HarnessWorld, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    """Many files, each under the per-file limit: the watchdog stops the agent; nothing stays on the host."""
    agent = write_agent(
        tmp_path / "agent",
        "cd /repo\nfor i in $(seq 1 60); do head -c 20000000 /dev/zero > /tmp/f$i; "
        "sleep 0.05; done\necho done writing\n",
    )
    before = {c.id for c in docker_client.containers.list(all=True, ignore_removed=True)}
    (result,) = run(
        hw,
        docker_client,
        [hw.task()],
        agent="command",
        agent_dir=agent,
        agent_cmd="sh /agent/run.sh",
        disk_limit="200m",
    )
    assert result.status is Status.AGENT_ERROR, (result.status, result.reason)
    assert "disk limit (200m)" in (result.reason or "") and "done writing" not in result.agent_output
    assert containers_since(docker_client, before, "tinycalc-12") == []  # gone, and their writes with them
    (honest,) = run(hw, docker_client, [hw.task()], agent="oracle", disk_limit="200m")
    assert honest.status is Status.RESOLVED, honest.reason  # a normal task fits well under the limit
