"""A sandbox asks for no more CPU than its engine has: on a machine (or a worker host) with fewer cores than
`SandboxSpec.cpu`, the engine refused the container before (`execution/engine_cpus.py`)."""

from __future__ import annotations

import os
from pathlib import Path

import docker
import pytest
from docker.models.containers import Container

from swe_forge_dagster.execution import engine_cpus as engine_cpus_module
from swe_forge_dagster.execution.engine_cpus import engine_cpus, nano_cpus, start_within_engine
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


QUOTA_PARENT = Path("/sys/fs/cgroup/cpu")


@pytest.mark.docker
def test_an_engine_under_half_a_core_gets_containers_of_half_a_core(
    docker_client: docker.DockerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine of a worker host of half a core (`SWE_FORGE_HOST_CPUS=0.5`) runs its containers in a cgroup whose
    quota is half a core; cgroup v1 refuses a child's quota over it. Here a parent cgroup with that quota, real, and
    the engine's own refusal; the cap found is kept for the engine's later containers."""
    if not (QUOTA_PARENT / "cpu.cfs_quota_us").is_file() or not os.access(QUOTA_PARENT, os.W_OK):
        pytest.skip("needs cgroup v1's cpu controller, writable (the refusal this answers is cgroup v1's)")
    if docker_client.info().get("CgroupDriver") != "cgroupfs":
        pytest.skip("the parent cgroup is made by path: needs the engine's cgroupfs driver")
    parent = QUOTA_PARENT / f"swe-forge-quota-{os.getpid()}"
    parent.mkdir()
    try:
        (parent / "cpu.cfs_quota_us").write_text("50000")  # of a 100000 period: half a core
        monkeypatch.setattr(engine_cpus_module, "_CPUS", {})  # this engine's cap, apart from the other tests'

        def create(nano: int) -> Container:
            return docker_client.containers.create(
                BASE_IMAGE, ["sleep", "30"], nano_cpus=nano, cgroup_parent=f"/{parent.name}"
            )

        with pytest.raises(docker.errors.APIError, match="cfs_quota_us"):  # the raw request, refused by the kernel
            create(10**9).start()
        started = start_within_engine(docker_client, create, 1.0)
        try:
            assert started.attrs["HostConfig"]["NanoCpus"] == 5 * 10**8
            assert engine_cpus(docker_client) == 0.5 and nano_cpus(docker_client, 2) == 5 * 10**8
        finally:
            started.remove(force=True)
    finally:
        for container in docker_client.containers.list(all=True, ignore_removed=True):
            if container.attrs["HostConfig"].get("CgroupParent") == f"/{parent.name}":
                container.remove(force=True)
        parent.rmdir()
