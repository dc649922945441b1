"""The Docker sandbox against a real engine: shell state that carries over between commands,
timeouts that kill and leave the sandbox usable, bounded output, resource and network limits,
files in and out, and no container left behind by a crashed owner."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from docker.utils import parse_bytes
from pydantic import ValidationError

from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.ownership import (
    LABEL,
    OWNER_BOOT_LABEL,
    OWNER_PID_LABEL,
    OWNER_START_LABEL,
    SESSION_LABEL,
    cleanup_stale,
    current_owner,
    owner_labels,
    stale_reason,
)
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxConfig
from swe_forge_dagster.execution.shell_state import OutputBuffer
from tests.support.common import BASE_IMAGE

HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
TEST_LABELS = {"swe-forge.test": "sandbox"}
# Every process's command line, one a line (the base image has no ps).
LIST_PROCESSES = r"for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline 2>/dev/null; echo; done"


def config(**overrides: object) -> SandboxConfig:
    """As the product configures sandboxes (`environments.sandboxes`: the packs' CA variables, the toolchain images'
    hook), with the kernel's former defaults (a network, no disk bound) that these tests were written against."""
    return sandbox_config(build=True, **{"image": BASE_IMAGE, "mem_limit": "1g", "labels": TEST_LABELS, **overrides})


@pytest.fixture(scope="module")
def sandbox(docker_client: docker.DockerClient) -> Iterator[Sandbox]:
    """One sandbox for the tests that do not care about the shell state they start from."""
    with Sandbox.start(docker_client, config(), name_hint="test-shared") as shared:
        yield shared


@pytest.fixture(scope="module")
def limited(docker_client: docker.DockerClient) -> Iterator[Sandbox]:
    with Sandbox.start(
        docker_client,
        SandboxConfig(image=BASE_IMAGE, cpu=0.5, mem_limit="256m", pids_limit=64, network="none", labels=TEST_LABELS),
        name_hint="test-limited",
    ) as tight:
        yield tight


# --- without Docker -----------------------------------------------------------------------------


def test_output_buffer_keeps_head_and_tail() -> None:
    buffer = OutputBuffer(10)
    for chunk in (b"0123", b"456789abcdef", b"ghij", b"KLMNO"):
        buffer.feed(chunk)
    assert buffer.truncated and buffer.total == 25
    assert buffer.render() == "01234\n[... 15 bytes truncated ...]\nKLMNO"

    short = OutputBuffer(10)
    short.feed(b"0123456789")
    assert not short.truncated and short.render() == "0123456789"


def test_stale_reason_judges_owners_only_where_their_pid_means_something() -> None:
    """Same boot and pid namespace: judged by pid and start time; another boot: never (only by age)."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    me = current_owner()
    mine = owner_labels("s")
    gone = {**mine, OWNER_PID_LABEL: str(dead.pid), OWNER_START_LABEL: ""}
    now = time.time()
    assert stale_reason(mine, now, now=now, max_age_s=0, me=me) is None
    assert "gone" in (stale_reason(gone, now, now=now, max_age_s=0, me=me) or "")
    assert stale_reason({**gone, OWNER_BOOT_LABEL: "another-machine"}, now, now=now, max_age_s=0, me=me) is None
    assert stale_reason({OWNER_PID_LABEL: str(dead.pid)}, now, now=now, max_age_s=0, me=me) is None  # old labels
    assert stale_reason({}, now, now=now, max_age_s=0, me=me) is None
    assert "older" in (stale_reason(mine, now - 100, now=now, max_age_s=60, me=me) or "")
    reused = {**mine, OWNER_START_LABEL: "1"}  # our pid, but another process's start time
    assert "gone" in (stale_reason(reused, now, now=now, max_age_s=0, me=me) or "")


def test_config_rejects_bad_values() -> None:
    with pytest.raises(ValidationError):
        SandboxConfig(image=BASE_IMAGE, mem_limit="lots")
    with pytest.raises(ValidationError):
        SandboxConfig(image=BASE_IMAGE, workdir="repo")
    with pytest.raises(ValidationError):
        SandboxConfig(image=BASE_IMAGE, network="wifi")
    assert config(ca_bundle=HOST_CA).environment()["PIP_CERT"] == "/etc/ssl/certs/ca-certificates.crt"


# --- shell semantics ----------------------------------------------------------------------------


@pytest.mark.docker
def test_state_carries_over_between_commands(docker_client: docker.DockerClient) -> None:
    with Sandbox.start(docker_client, config(), name_hint="test-state") as box:
        assert box.run("pwd").output == "/repo\n"
        assert box.run("cd /tmp && mkdir x && cd x").exit_code == 0
        assert box.run("pwd").output == "/tmp/x\n"
        box.run("export FOO=bar")
        assert box.run("echo $FOO").output == "bar\n"
        box.run("unset FOO")
        assert box.run('echo "[$FOO]"').output == "[]\n"
        assert box.run("python3 -m venv --without-pip /tmp/v && source /tmp/v/bin/activate").exit_code == 0
        assert box.run("which python").output == "/tmp/v/bin/python\n"
        assert box.run("echo $VIRTUAL_ENV").output == "/tmp/v\n"
        # `exit` keeps its status and still saves the state.
        assert box.run("cd /etc; export BAR=1; exit 3").exit_code == 3
        assert box.run('echo "$PWD $BAR"').output == "/etc 1\n"
        # A working directory deleted in the meantime falls back to / with a note.
        box.run("mkdir -p /tmp/doomed && cd /tmp/doomed && rm -rf /tmp/doomed")
        moved = box.run("pwd")
        assert moved.output.endswith("/\n") and "is gone" in moved.output
        assert box.cwd == "/"


@pytest.mark.docker
def test_exit_code_and_interleaved_output(sandbox: Sandbox) -> None:
    result = sandbox.run("echo out1; echo err1 >&2; echo out2; echo err2 >&2; exit 7")
    assert result.exit_code == 7 and not result.ok and not result.timed_out
    assert result.output == "out1\nerr1\nout2\nerr2\n"
    assert sandbox.run("false").exit_code == 1
    assert sandbox.run("this-command-does-not-exist").exit_code == 127


@pytest.mark.docker
def test_command_runs_verbatim(sandbox: Sandbox) -> None:
    command = """x="it's \\"quoted\\" $((6 * 7))"
echo "$x"
echo $(echo sub $(echo nested))
cat <<'EOF'
literal $HOME `date` \\n 'single' "double"
EOF
printf '%s\\n' 'back\\slash' "tab	here"
echo "args: $#"
"""
    result = sandbox.run(command)
    assert result.exit_code == 0, result.output
    assert result.output == (
        'it\'s "quoted" 42\nsub nested\nliteral $HOME `date` \\n \'single\' "double"\nback\\slash\ntab\there\nargs: 0\n'
    )
    assert sandbox.run("if then").exit_code == 2  # a syntax error is the command's failure, not ours


@pytest.mark.docker
def test_timeout_kills_the_whole_command_and_the_sandbox_survives(sandbox: Sandbox) -> None:
    result = sandbox.run("echo started; sleep 31 & sleep 32", timeout=2)
    assert result.timed_out and result.exit_code == 124
    assert result.duration_s < 10
    assert result.output == "started\n"
    assert sandbox.run("echo ok").output == "ok\n"
    survivors = sandbox.run(f"{LIST_PROCESSES} | grep -c '^sleep 3[12]' || true").output.strip()
    assert survivors == "0"


@pytest.mark.docker
def test_background_jobs_outlive_their_command(sandbox: Sandbox) -> None:
    started = sandbox.run("sleep 123 >/dev/null 2>&1 & echo $! > /tmp/bg.pid")
    assert started.exit_code == 0 and started.duration_s < 2
    assert "sleep 123" in sandbox.run(LIST_PROCESSES).output
    assert sandbox.run("kill $(cat /tmp/bg.pid)").exit_code == 0


@pytest.mark.docker
def test_long_output_keeps_head_and_tail(sandbox: Sandbox) -> None:
    full = "".join(f"{i}\n" for i in range(1, 100001))
    result = sandbox.run("seq 1 100000", max_output=1000)
    assert result.truncated and result.exit_code == 0
    assert result.output.startswith("1\n2\n3\n") and result.output.endswith("99999\n100000\n")
    assert f"[... {len(full) - 1000} bytes truncated ...]" in result.output
    assert len(result.output) < 1100
    assert not sandbox.run("seq 1 10", max_output=1000).truncated


# --- limits and isolation -----------------------------------------------------------------------


def read_cgroup(box: Sandbox, v2: str, v1: str) -> str:
    return box.run(f"cat /sys/fs/cgroup/{v2} 2>/dev/null || cat /sys/fs/cgroup/{v1}").output.strip()


@pytest.mark.docker
def test_memory_cpu_and_privilege_limits(limited: Sandbox) -> None:
    assert read_cgroup(limited, "memory.max", "memory/memory.limit_in_bytes") == str(parse_bytes("256m"))
    assert read_cgroup(limited, "pids.max", "pids/pids.max") == "64"
    cpu = read_cgroup(limited, "cpu.max", "cpu/cpu.cfs_quota_us").split()
    assert cpu[0] == "50000"  # half of the 100 ms period
    assert "NoNewPrivs:\t1" in limited.run("cat /proc/self/status").output


@pytest.mark.docker
def test_pids_limit_stops_a_fork_storm_and_the_sandbox_survives(limited: Sandbox) -> None:
    script = """python3 - <<'EOF'
import os, signal, time
children = []
try:
    for _ in range(200):
        pid = os.fork()
        if pid == 0:
            time.sleep(20)
            os._exit(0)
        children.append(pid)
except OSError as exc:
    print("fork failed after", len(children), exc.errno)
for pid in children:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
EOF"""
    result = limited.run(script, timeout=30)
    assert "fork failed after" in result.output, result.output
    assert int(result.output.split()[3]) < 64
    assert limited.run("echo alive").output == "alive\n"


@pytest.mark.docker
def test_network_none_has_no_route_out(limited: Sandbox) -> None:
    result = limited.run("python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 2)'", timeout=20)
    assert result.exit_code != 0
    assert "OSError" in result.output or "unreachable" in result.output.lower()


@pytest.mark.docker
def test_nothing_runs_on_the_host(sandbox: Sandbox) -> None:
    marker = Path(f"/tmp/swe-forge-marker-{uuid.uuid4().hex}")
    result = sandbox.run(f"touch {marker} && test -f {marker} && hostname")
    assert result.exit_code == 0, result.output
    assert not marker.exists()


@pytest.mark.docker
def test_pip_install_through_the_mounted_ca_bundle(docker_client: docker.DockerClient) -> None:
    if not HOST_CA.is_file():
        pytest.skip(f"no host CA bundle at {HOST_CA}")
    with Sandbox.start(docker_client, config(ca_bundle=HOST_CA), name_hint="test-ca") as box:
        assert box.run("echo $PIP_CERT $SSL_CERT_FILE").output.split() == [str(HOST_CA)] * 2
        assert box.run("touch /etc/ssl/certs/ca-certificates.crt").exit_code != 0  # mounted read-only
        assert box.run("python3 -m venv /tmp/v && source /tmp/v/bin/activate").exit_code == 0
        install = box.run("pip install -q six==1.16.0", timeout=180)
        assert install.exit_code == 0, install.output
        assert box.run("python -c 'import six; print(six.__version__)'").output == "1.16.0\n"


# --- lifecycle ----------------------------------------------------------------------------------


@pytest.mark.docker
def test_labels_mounts_and_close(docker_client: docker.DockerClient, tmp_path: Path) -> None:
    (tmp_path / "seen.txt").write_text("from the host\n")
    box = Sandbox.start(
        docker_client,
        config(labels={**TEST_LABELS, "swe-forge.task": "t1"}),
        name_hint="test lifecycle/with odd name",
        mounts={tmp_path: ("/mnt/in", "ro")},
    )
    try:
        labels = docker_client.containers.get(box.id).labels
        assert labels[LABEL] == "1" and labels[SESSION_LABEL] == box.session
        assert labels[OWNER_PID_LABEL] == str(os.getpid())
        assert labels["swe-forge.task"] == "t1"
        assert box.run("cat /mnt/in/seen.txt").output == "from the host\n"
        assert box.run("touch /mnt/in/new").exit_code != 0
    finally:
        box.close()
    with pytest.raises(docker.errors.NotFound):
        docker_client.containers.get(box.id)
    box.close()  # idempotent


@pytest.mark.docker
def test_missing_mount_source_is_refused(docker_client: docker.DockerClient, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Sandbox.start(docker_client, config(), name_hint="test-missing", mounts={tmp_path / "nope": ("/x", "ro")})
    assert not (tmp_path / "nope").exists()


@pytest.mark.docker
def test_cleanup_stale_removes_dead_owners_and_keeps_live_ones(
    docker_client: docker.DockerClient, sandbox: Sandbox
) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan_labels = {**owner_labels("orphan"), OWNER_PID_LABEL: str(dead.pid), OWNER_START_LABEL: ""}
    orphan = docker_client.containers.create(BASE_IMAGE, ["sleep", "60"], labels={**TEST_LABELS, **orphan_labels})
    try:
        removed = cleanup_stale(docker_client)  # the other lane's cleanup may be the one that removes the orphan
        assert sandbox.id not in removed
        with pytest.raises(docker.errors.NotFound):
            orphan.reload()
        assert docker_client.containers.get(sandbox.id).status == "running"
    finally:
        with contextlib.suppress(docker.errors.NotFound):
            orphan.remove(force=True)


# --- files --------------------------------------------------------------------------------------


@pytest.mark.docker
def test_files_round_trip(sandbox: Sandbox, tmp_path: Path) -> None:
    source = tmp_path / "checkout"
    (source / "pkg").mkdir(parents=True)
    (source / "a file with spaces.txt").write_text("spaced out\n")
    (source / "pkg" / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (source / "pkg" / "run.sh").chmod(0o755)
    (source / "link").symlink_to("pkg/run.sh")

    assert sandbox.copy_in(source, "/work/copy") == "/work/copy"
    assert sandbox.read_file("/work/copy/a file with spaces.txt") == b"spaced out\n"
    assert sandbox.read_file("/work/copy/link") == b"#!/bin/sh\necho ran\n"  # followed
    assert sandbox.run("/work/copy/pkg/run.sh").output == "ran\n"  # mode kept
    assert sandbox.run("stat -c %u:%g '/work/copy/a file with spaces.txt'").output == "0:0\n"

    payload = "héllo 'quoted' $HOME\n"
    assert sandbox.write_file("/tmp/new dir/x y.txt", payload) == "/tmp/new dir/x y.txt"
    assert sandbox.read_file("/tmp/new dir/x y.txt") == payload.encode()
    sandbox.write_file("/tmp/tool", b"#!/bin/sh\necho tool\n", mode=0o755)
    assert sandbox.run("/tmp/tool").output == "tool\n"
    sandbox.run("cd /work/copy")
    assert sandbox.write_file("relative.txt", "r") == "/work/copy/relative.txt"  # the session's cwd
    assert sandbox.run("cat /work/copy/relative.txt").output == "r"
    assert sandbox.read_file("/no/such/file") is None
    with pytest.raises(IsADirectoryError):
        sandbox.read_file("/work/copy/pkg")


@pytest.mark.docker
def test_commit_bakes_the_session_into_an_image(docker_client: docker.DockerClient) -> None:
    tag = uuid.uuid4().hex[:12]
    with Sandbox.start(docker_client, config(), name_hint="test-commit") as box:
        box.run("python3 -m venv --without-pip /opt/venv && source /opt/venv/bin/activate && mkdir -p /src && cd /src")
        box.run("echo cached > /src/marker")
        image_id = box.commit("swe-forge-test-sandbox", tag, {"swe-forge.recipe": "abc"})
    try:
        image = docker_client.images.get(image_id)
        assert image.labels["swe-forge.recipe"] == "abc"
        assert image.labels.get(LABEL) != "1"  # the image's containers are not this dead session's
        assert "VIRTUAL_ENV=/opt/venv" in image.attrs["Config"]["Env"]
        with Sandbox.start(docker_client, config(image=image_id, workdir="/src"), name_hint="test-cached") as again:
            result = again.run("which python; cat marker")
            assert result.output == "/opt/venv/bin/python\ncached\n"
    finally:
        docker_client.images.remove(image_id, force=True)
