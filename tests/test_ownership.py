"""Sandbox ownership across pid namespaces: a process that cannot see an owner never removes its sandboxes,
and a killed owner's sandboxes are still removed by one that can.

The real conditions, no mocks: owners and judges in new pid namespaces (`unshare --pid`), and a cleanup run
by a process in a host-network container (the host's hostname, its own pid namespace), which used to take
every live sandbox of the host for a dead owner's.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.execution.ownership import (
    LABEL,
    OWNER_PID_LABEL,
    OWNER_START_LABEL,
    Owner,
    cleanup_stale,
    current_owner,
    owner_labels,
    owner_state,
)
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxConfig
from tests.support.common import BASE_IMAGE, REPO_ROOT

TEST_LABELS = {"swe-forge.test": "ownership"}
SITE_PACKAGES = Path(docker.__file__).resolve().parents[1]


def unshare(code: str, *extra: str) -> list[str]:
    """argv: `code` in this Python as pid 1 of a new pid namespace (same hostname, same kernel)."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed")
    return ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", *extra, sys.executable, "-c", code]


@contextlib.contextmanager
def owner_in_new_namespace(*extra: str) -> Iterator[tuple[subprocess.Popen[str], Owner]]:
    """A live process in its own pid namespace (and the namespaces `extra` asks unshare for), and the owner it
    reports for itself."""
    code = (
        "import json, time; from dataclasses import asdict; from swe_forge_dagster.execution.ownership import "
        "current_owner; print(json.dumps(asdict(current_owner())), flush=True); time.sleep(120)"
    )
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    proc = subprocess.Popen(unshare(code, *extra), **pipes, cwd=REPO_ROOT)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line:
            pytest.skip(f"cannot make these namespaces here: {proc.stderr.read() if proc.stderr else ''}")
        yield proc, Owner(**json.loads(line))
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_an_owner_in_another_namespace_is_judged_only_by_who_can_see_it() -> None:
    me = current_owner()
    with owner_in_new_namespace() as (proc, owner):
        assert owner.boot == me.boot and owner.pidns != me.pidns and owner.pid == 1
        assert owner_state(owner) is True  # the initial namespace sees the process, whatever its pid here
        # From inside a new namespace, this (live) process is invisible: unknown, never "gone".
        judge = (
            "import json, sys; from swe_forge_dagster.execution.ownership import Owner, owner_state; "
            "print(owner_state(Owner(**json.loads(sys.argv[1]))))"
        )
        inside = subprocess.run(
            [*unshare(judge), json.dumps(asdict(me))], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60
        )
        assert inside.stdout.strip() == "None", inside.stderr
        proc.send_signal(signal.SIGKILL)  # unshare dies, and --kill-child takes the namespace's pid 1 with it
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while owner_state(owner) is not False:
            assert time.monotonic() < deadline, "the killed owner still looks alive"
            time.sleep(0.1)


def test_a_reused_namespace_inode_does_not_pass_for_a_dead_owner() -> None:
    """The kernel reuses a dead pid namespace's inode number, and every container has a pid 1: a killed owner (pid 1
    of a container) looked alive to the host when a newer container got its namespace's inode, so its sandboxes
    were kept (a CI flake under load). Only the start time tells the two apart."""
    with owner_in_new_namespace() as (_, live):
        assert live.start is not None and owner_state(live) is True
        dead = Owner(live.boot, live.pidns, live.pid, str(int(live.start) - 7))  # same inode and pid, started before
        assert owner_state(dead) is False


def test_an_owner_in_a_time_namespace_is_known_by_the_start_it_saw() -> None:
    """A process in a time namespace reads its start time shifted by the namespace's boottime offset; the host
    still finds it alive by that start, and gone once killed."""
    with owner_in_new_namespace("--time", "--boottime", "1000") as (proc, owner):
        assert owner.start is not None and owner_state(owner) is True
        assert owner_state(Owner(owner.boot, owner.pidns, owner.pid, str(int(owner.start) - 7))) is False
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while owner_state(owner) is not False:
            assert time.monotonic() < deadline, "the killed owner still looks alive"
            time.sleep(0.1)


# --- with Docker ------------------------------------------------------------------------------------


# A host-network container of the base image running this checkout with this environment's packages
# (stdlib + the docker SDK suffice) and the engine's socket.
HOST_NETWORK = {
    "network_mode": "host",
    "volumes": {
        "/var/run/docker.sock": {"bind": "/var/run/docker.sock", "mode": "rw"},
        str(REPO_ROOT): {"bind": "/src", "mode": "ro"},
        str(SITE_PACKAGES): {"bind": "/site", "mode": "ro"},
    },
    "environment": {"PYTHONPATH": "/src:/site"},
    "labels": TEST_LABELS,
}


def skip_unless_python_fits(client: docker.DockerClient) -> None:
    probe = client.containers.run(
        BASE_IMAGE, ["python3", "-c", "import sys; print(sys.version_info[:2])"], remove=True
    ).decode()
    if probe.strip() != str(tuple(sys.version_info[:2])):
        pytest.skip(f"the base image's Python {probe.strip()} cannot load this environment's packages")


def in_host_network_container(client: docker.DockerClient, code: str) -> str:
    """The stdout of `code` run by python3 in a host-network container (see HOST_NETWORK)."""
    skip_unless_python_fits(client)
    return client.containers.run(BASE_IMAGE, ["python3", "-c", code], remove=True, **HOST_NETWORK).decode()


def exists(client: docker.DockerClient, container_id: str) -> bool:
    """Whether the engine still has the container. Asserted instead of "this cleanup removed it": another
    lane's cleanup may get there first, and the container is gone all the same."""
    try:
        client.containers.get(container_id)
    except docker.errors.NotFound:
        return False
    return True


@pytest.fixture
def orphan(docker_client: docker.DockerClient) -> Iterator[str]:
    """A sandbox-labelled container whose owner (a process of this host) is dead."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    labels = {**TEST_LABELS, **owner_labels("orphan"), OWNER_PID_LABEL: str(dead.pid), OWNER_START_LABEL: ""}
    container = docker_client.containers.create(BASE_IMAGE, ["sleep", "60"], labels=labels)
    yield container.id
    with contextlib.suppress(docker.errors.NotFound):
        container.remove(force=True)


@pytest.mark.docker
def test_a_host_network_process_spares_live_sandboxes(docker_client: docker.DockerClient, orphan: str) -> None:
    """Same hostname, other pid namespace: it cannot see the host's owners, so it removes none of their
    sandboxes (it used to remove every one); this host's cleanup still removes the dead owner's."""
    code = (
        "import json, socket, docker; from swe_forge_dagster.execution.ownership import cleanup_stale; "
        "print(json.dumps([socket.gethostname(), cleanup_stale(docker.from_env())]))"
    )
    config = SandboxConfig(image=BASE_IMAGE, mem_limit="256m", labels=TEST_LABELS)
    with Sandbox.start(docker_client, config, name_hint="test-live-owner") as live:
        hostname, removed = json.loads(in_host_network_container(docker_client, code).strip().splitlines()[-1])
        assert hostname == socket.gethostname()  # the very condition that fooled hostname + pid
        assert live.id not in removed and orphan not in removed
        assert docker_client.containers.get(live.id).status == "running"
        assert live.id not in cleanup_stale(docker_client) and not exists(docker_client, orphan)


@pytest.mark.docker
def test_a_killed_owner_in_a_host_network_container_is_cleaned_up_by_the_host(
    docker_client: docker.DockerClient,
) -> None:
    """The other way round: a harness-like owner inside a container starts a sandbox; alive, the host spares
    it (it finds the owner through NSpid); killed with its container, the host's next cleanup removes it."""
    name = f"swe-forge-test-owner-{os.getpid()}"
    code = (
        "import docker, time; from swe_forge_dagster.execution.ownership import owner_labels; "
        f"c = docker.from_env().containers.create({BASE_IMAGE!r}, ['sleep', '300'], "
        f"labels={{**{TEST_LABELS!r}, **owner_labels('in-container')}}); c.start(); print(c.id, flush=True); "
        "time.sleep(300)"
    )
    skip_unless_python_fits(docker_client)
    owner = docker_client.containers.run(BASE_IMAGE, ["python3", "-c", code], detach=True, name=name, **HOST_NETWORK)
    sandbox_id = ""
    try:
        deadline = time.monotonic() + 60
        while not (sandbox_id := owner.logs(stdout=True, stderr=False).decode().strip()):
            assert time.monotonic() < deadline, owner.logs().decode()
            time.sleep(0.2)
        labels = docker_client.containers.get(sandbox_id).labels
        assert labels[LABEL] == "1" and labels[OWNER_PID_LABEL] == "1"  # pid 1 of the owner's container
        assert sandbox_id not in cleanup_stale(docker_client)
        owner.kill()  # SIGKILL: the owner cannot clean up
        owner.wait(timeout=30)
        cleanup_stale(docker_client)
        assert not exists(docker_client, sandbox_id)
    finally:
        owner.remove(force=True)
        if sandbox_id:
            with contextlib.suppress(docker.errors.NotFound):
                docker_client.api.remove_container(sandbox_id, force=True)


@pytest.mark.docker
def test_cleanups_racing_for_the_same_stale_containers_all_finish(docker_client: docker.DockerClient) -> None:
    """Two lanes (or a finalizer and a start-up cleanup) remove the same dead owner's containers at once: the
    loser of each race finds the container gone or its removal under way, and that is no error."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    labels = {**TEST_LABELS, **owner_labels("race"), OWNER_PID_LABEL: str(dead.pid), OWNER_START_LABEL: ""}
    orphans = [docker_client.containers.create(BASE_IMAGE, ["sleep", "60"], labels=labels).id for _ in range(6)]
    try:
        with ThreadPoolExecutor(3) as pool:
            removed = [set(ids) for ids in pool.map(lambda _: cleanup_stale(docker_client), range(3))]
        assert set(orphans) <= set().union(*removed)  # every one removed, and no cleanup raised
        assert not any(exists(docker_client, orphan) for orphan in orphans)
    finally:
        for orphan in orphans:
            with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
                docker_client.api.remove_container(orphan, force=True)
