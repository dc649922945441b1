"""The Docker engine works end to end: a container from the local base image runs Python, and
pip installs from PyPI through the mounted host CA bundle (what every later sandbox relies on)."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from tests.support.common import BASE_IMAGE

HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
LABEL = {"swe-forge.test": "docker-smoke"}


def run_in_base(client: docker.DockerClient, command: str, **kwargs: object) -> tuple[int, str]:
    container = client.containers.run(BASE_IMAGE, ["bash", "-lc", command], detach=True, labels=LABEL, **kwargs)
    try:
        status = container.wait(timeout=300)["StatusCode"]
        return status, container.logs().decode("utf-8", "replace")
    finally:
        container.remove(force=True)


@pytest.mark.docker
def test_container_runs_python_and_pytest(docker_client: docker.DockerClient) -> None:
    status, logs = run_in_base(docker_client, "python --version && python -m pytest --version && git --version")
    assert status == 0, logs
    assert "Python 3." in logs and "pytest" in logs and "git version" in logs


@pytest.mark.docker
def test_pip_install_from_pypi_through_the_ca_bundle(docker_client: docker.DockerClient) -> None:
    if not HOST_CA.is_file():
        pytest.skip(f"no host CA bundle at {HOST_CA}")
    status, logs = run_in_base(
        docker_client,
        "python -m venv /tmp/v && /tmp/v/bin/pip install -q --disable-pip-version-check six==1.16.0 "
        "&& /tmp/v/bin/python -c 'import six; print(\"six\", six.__version__)'",
        volumes={str(HOST_CA): {"bind": "/etc/ssl/certs/ca-certificates.crt", "mode": "ro"}},
        mem_limit="1g",
    )
    assert status == 0, logs
    assert "six 1.16.0" in logs


@pytest.mark.docker
def test_no_test_container_is_left_behind(docker_client: docker.DockerClient) -> None:
    run_in_base(docker_client, "true")
    leftovers = docker_client.containers.list(
        all=True, ignore_removed=True, filters={"label": "swe-forge.test=docker-smoke"}
    )
    assert leftovers == []
