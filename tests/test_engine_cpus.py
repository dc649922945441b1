"""A sandbox asks for no more CPU than its engine has: on a machine (or a worker host) with fewer cores than
`SandboxSpec.cpu`, the engine refused the container before (`execution/engine_cpus.py`)."""

from __future__ import annotations

import docker
import pytest

from swe_forge_dagster.execution.engine_cpus import engine_cpus, nano_cpus
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxConfig
from tests.support.common import BASE_IMAGE


@pytest.mark.docker
def test_a_sandbox_asking_for_more_cores_than_the_engine_has_starts_with_all_of_them(
    docker_client: docker.DockerClient,
) -> None:
    cores = engine_cpus(docker_client)
    with pytest.raises(docker.errors.APIError, match="CPUs"):  # what the engine does with the raw request
        docker_client.containers.create(BASE_IMAGE, ["true"], nano_cpus=int((cores + 1) * 1e9)).remove(force=True)
    config = SandboxConfig(image=BASE_IMAGE, mem_limit="256m", cpu=cores + 1)
    with Sandbox.start(docker_client, config, name_hint="test-cpus") as box:
        assert box.run("echo ok").ok
        assert box.container.attrs["HostConfig"]["NanoCpus"] == cores * 10**9
    assert nano_cpus(docker_client, 0.5) == 5 * 10**8  # a smaller request is kept as it is
