"""The engine's own record of a container's changes names the files a run changed outside what the test user may
write (its checkout, its home, the temporary folders), from outside the container."""

from __future__ import annotations

import docker
import pytest

from swe_forge_dagster.execution.sandbox import Sandbox, SandboxConfig
from swe_forge_dagster.harness.system_files import system_changes, tampering
from tests.support.common import BASE_IMAGE

pytestmark = pytest.mark.docker


def test_replaced_binaries_and_loader_config_are_seen_and_writes_elsewhere_are_not(
    docker_client: docker.DockerClient,
) -> None:
    with Sandbox.start(docker_client, SandboxConfig(image=BASE_IMAGE, network="none"), name_hint="sysfiles") as box:
        box.run("mkdir -p /repo /root/.cache/x && echo hi > /repo/a.txt && echo hi > /root/.cache/x/y && echo > /tmp/t")
        untouched = system_changes(box)
        box.run("mkdir -p /usr/lib/python3/__pycache__ && echo x > /usr/lib/python3/__pycache__/m.cpython-311.pyc")
        assert system_changes(box) == frozenset()  # a bytecode cache an honest first import writes is not counted
        box.run("mkdir -p /var/tmp/x /dev/shm/y && echo > /var/tmp/x/z")
        assert system_changes(box) == frozenset()  # /var of /var/tmp is not a change of its own
        box.run("cp /bin/true /bin/mv && echo /tmp/evil.so > /etc/ld.so.preload && rm -f /usr/bin/tac")
        box.run("mkdir -p /opt/venv/bin && echo '#!/bin/sh' > /opt/venv/bin/python")  # an install's interpreter
        replaced = system_changes(box)
    assert untouched == frozenset()  # the checkout, the home's caches and /tmp are the tests' to write
    assert replaced is not None and {"/usr/bin/mv", "/etc/ld.so.preload", "/usr/bin/tac"} <= replaced
    assert "/opt/venv/bin/python" in replaced  # anywhere the test user may not write
    assert "/usr/bin" not in replaced and "/etc" not in replaced  # leaves only
    why = tampering(replaced, frozenset({"/usr/bin/tac"}))  # what the sanity run's checks did themselves is theirs
    assert why is not None and "/etc/ld.so.preload" in why and "/usr/bin/mv" in why and "tac" not in why
    assert tampering(replaced, replaced) is None and tampering(replaced, None) is None
