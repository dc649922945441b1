"""`common.buildx` and `swe-forge setup --buildx`: the docker buildx plugin that `swebench eval` builds with.

The fast tests build small `.deb` files here (real `ar` bytes, real xz/gzip/zstd data archives) and serve them from a
loopback mirror, so unpacking, the checksum refusal, retries and the one-line errors are proved without the network.
The `docker` test installs the real pinned package from the real Debian mirror (skipped when it cannot be reached)
into a temporary `DOCKER_CONFIG`, through the CLI, behind a `docker` that hides the machine's own plugin: the path a
fresh Debian machine takes.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from swe_forge_dagster.common import buildx
from swe_forge_dagster.common.buildx import (
    BUILDX_DEB,
    INSTALL_COMMAND,
    PLUGIN_MEMBER,
    BuildxInstallError,
    ar_members,
    deb_url,
    install_buildx,
    install_deb,
)
from swe_forge_dagster.common.retry import Backoff
from tests.support.common import run_cli
from tests.support.debs import PLUGIN, ar_archive, make_deb, sha


@pytest.mark.parametrize("data_name", ["data.tar.xz", "data.tar.gz", "data.tar"])
def test_the_plugin_is_unpacked_from_the_deb_and_installed_0755(tmp_path: Path, data_name: str) -> None:
    deb = make_deb(tmp_path / "buildx.deb", data_name)
    if shutil.which("ar"):  # the bytes are a real ar archive: binutils lists the same members
        listed = subprocess.run(["ar", "t", str(deb)], capture_output=True, text=True, check=True).stdout.split()
        assert listed == ["debian-binary", "control.tar.xz", data_name]
    with deb.open("rb") as raw:
        assert [name for name, _, _ in ar_members(raw)] == ["debian-binary", "control.tar.xz", data_name]

    dest = tmp_path / "config" / "cli-plugins"
    installed = install_deb(deb, dest, sha(deb))

    assert installed == dest / "docker-buildx"
    assert installed.read_bytes() == PLUGIN
    assert installed.stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in dest.iterdir()) == ["docker-buildx"]  # no temporary file left behind


def test_a_deb_that_does_not_match_the_pin_is_refused_and_nothing_is_installed(tmp_path: Path) -> None:
    deb = make_deb(tmp_path / BUILDX_DEB)
    dest = tmp_path / "cli-plugins"
    with pytest.raises(BuildxInstallError) as refused:
        install_deb(deb, dest)  # the real pin: our synthetic bytes are not Debian's
    message = str(refused.value)
    assert "refusing" in message and buildx.BUILDX_SHA256 in message and sha(deb) in message
    assert "\n" not in message
    assert not (dest / "docker-buildx").exists()


def test_an_existing_plugin_is_replaced_whole(tmp_path: Path) -> None:
    dest = tmp_path / "cli-plugins"
    dest.mkdir()
    (dest / "docker-buildx").write_bytes(b"old")
    deb = make_deb(tmp_path / "buildx.deb")
    install_deb(deb, dest, sha(deb))
    assert (dest / "docker-buildx").read_bytes() == PLUGIN


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"PK\x03\x04 not an ar archive", "no ar archive header"),
        (ar_archive([("debian-binary", b"2.0\n")]), "no data.tar member"),
    ],
)
def test_a_file_that_is_not_a_deb_is_a_clear_error(tmp_path: Path, content: bytes, expected: str) -> None:
    deb = tmp_path / "broken.deb"
    deb.write_bytes(content)
    with pytest.raises(BuildxInstallError, match=expected):
        install_deb(deb, tmp_path / "dest", sha(deb))


def test_a_deb_without_the_plugin_names_what_is_missing(tmp_path: Path) -> None:
    deb = make_deb(tmp_path / "other.deb", member="usr/bin/something-else")
    with pytest.raises(BuildxInstallError, match=f"does not contain {PLUGIN_MEMBER}"):
        install_deb(deb, tmp_path / "dest", sha(deb))
    assert not (tmp_path / "dest" / "docker-buildx").exists()


def zstd_deb(tmp_path: Path) -> Path:
    """A `.deb` with `data.tar.zst`, built by dpkg-deb itself (skipped where it cannot build one)."""
    if not shutil.which("dpkg-deb") or not shutil.which("zstd"):
        pytest.skip("dpkg-deb and zstd are needed to build a zstd .deb")
    root = tmp_path / "pkg"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        "Package: docker-buildx\nVersion: 0.0.0\nArchitecture: amd64\nMaintainer: t <t@example.org>\n"
        "Description: test\n"
    )
    plugin = root / PLUGIN_MEMBER
    plugin.parent.mkdir(parents=True)
    plugin.write_bytes(PLUGIN)
    deb = tmp_path / "zstd.deb"
    built = subprocess.run(["dpkg-deb", "-Zzstd", "--root-owner-group", "--build", str(root), str(deb)], check=False)
    if built.returncode != 0:
        pytest.skip("this dpkg-deb cannot build zstd packages")
    with deb.open("rb") as raw:
        assert "data.tar.zst" in [name for name, _, _ in ar_members(raw)]
    return deb


def test_zstd_data_is_read_through_dpkg_deb_when_zstandard_is_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deb = zstd_deb(tmp_path)
    monkeypatch.setitem(sys.modules, "zstandard", None)  # `import zstandard` raises ImportError
    installed = install_deb(deb, tmp_path / "dest", sha(deb))
    assert installed.read_bytes() == PLUGIN


def test_zstd_data_without_zstandard_or_dpkg_deb_says_what_is_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deb = tmp_path / "zstd.deb"
    deb.write_bytes(ar_archive([("debian-binary", b"2.0\n"), ("data.tar.zst", b"\x28\xb5\x2f\xfd not really")]))
    monkeypatch.setitem(sys.modules, "zstandard", None)
    monkeypatch.setattr(buildx.shutil, "which", lambda name: None)
    with pytest.raises(BuildxInstallError, match=r"zstandard package .* or dpkg-deb"):
        install_deb(deb, tmp_path / "dest", sha(deb))


class Mirror:
    """A loopback Debian mirror: each path answers the queued (status, body) replies in order, the last one for
    good; every request is recorded."""

    def __init__(self) -> None:
        self.replies: dict[str, list[tuple[int, bytes]]] = {}
        self.requests: list[str] = []
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                mirror.requests.append(self.path)
                queue = mirror.replies.get(self.path, [(404, b"not found")])
                status, body = queue.pop(0) if len(queue) > 1 else queue[0]
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/debian"
        self.deb_path = deb_url(self.url).removeprefix(f"http://127.0.0.1:{self.server.server_address[1]}")


@pytest.fixture
def mirror() -> Iterator[Mirror]:
    served = Mirror()
    thread = threading.Thread(target=served.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield served
    served.server.shutdown()
    served.server.server_close()


@pytest.fixture
def no_buildx(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A machine without buildx, on amd64, whose DOCKER_CONFIG is a fresh directory; retries do not wait."""
    monkeypatch.setattr(buildx, "buildx_available", lambda: False)
    monkeypatch.setattr(buildx.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(buildx, "_BACKOFF", Backoff(max_attempts=3, initial=0.0, maximum=0.0))
    config = tmp_path / "docker-config"
    monkeypatch.setenv("DOCKER_CONFIG", str(config))
    return config


def test_install_buildx_downloads_the_pinned_deb_retrying_a_busy_mirror(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mirror: Mirror, no_buildx: Path
) -> None:
    deb = make_deb(tmp_path / "served.deb")
    monkeypatch.setattr(buildx, "BUILDX_SHA256", sha(deb))
    mirror.replies[mirror.deb_path] = [(503, b"busy"), (200, deb.read_bytes())]

    installed = install_buildx(mirror=mirror.url)

    assert installed == no_buildx / "cli-plugins" / "docker-buildx"  # $DOCKER_CONFIG/cli-plugins by default
    assert installed.read_bytes() == PLUGIN
    assert mirror.requests == [mirror.deb_path, mirror.deb_path]


def test_the_mirror_comes_from_the_environment_and_a_404_is_not_retried(
    monkeypatch: pytest.MonkeyPatch, mirror: Mirror, no_buildx: Path
) -> None:
    monkeypatch.setenv("SWE_FORGE_DEBIAN_MIRROR", mirror.url)
    with pytest.raises(BuildxInstallError) as failed:
        install_buildx()
    assert "HTTP 404" in str(failed.value) and "SWE_FORGE_DEBIAN_MIRROR" in str(failed.value)
    assert mirror.requests == [mirror.deb_path]


def test_an_unreachable_mirror_is_one_line_naming_the_setting(no_buildx: Path) -> None:
    with pytest.raises(BuildxInstallError) as failed:
        install_buildx(mirror="http://127.0.0.1:9/debian")
    message = str(failed.value)
    assert message.startswith(f"cannot download http://127.0.0.1:9/debian/pool/main/d/docker-buildx/{BUILDX_DEB}")
    assert "SWE_FORGE_DEBIAN_MIRROR" in message and "\n" not in message
    assert not (no_buildx / "cli-plugins" / "docker-buildx").exists()


def test_another_architecture_is_told_to_use_its_distribution_package(
    monkeypatch: pytest.MonkeyPatch, no_buildx: Path
) -> None:
    monkeypatch.setattr(buildx.platform, "machine", lambda: "aarch64")
    with pytest.raises(BuildxInstallError, match="amd64, this machine is aarch64"):
        install_buildx(mirror="http://127.0.0.1:9/debian")


def test_nothing_is_downloaded_when_buildx_already_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "docker-config"
    (config / "cli-plugins").mkdir(parents=True)
    (config / "cli-plugins" / "docker-buildx").write_bytes(b"existing")
    monkeypatch.setenv("DOCKER_CONFIG", str(config))
    monkeypatch.setattr(buildx, "buildx_available", lambda: True)
    assert install_buildx(mirror="http://127.0.0.1:9/debian") == config / "cli-plugins" / "docker-buildx"
    assert (config / "cli-plugins" / "docker-buildx").read_bytes() == b"existing"


def test_the_default_directory_is_the_one_the_docker_cli_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "cfg"))
    assert buildx.default_plugin_dir() == tmp_path / "cfg" / "cli-plugins"
    monkeypatch.delenv("DOCKER_CONFIG")
    monkeypatch.setattr(buildx.os, "geteuid", lambda: 0)
    assert buildx.default_plugin_dir() == Path("/usr/local/lib/docker/cli-plugins")
    monkeypatch.setattr(buildx.os, "geteuid", lambda: 1000)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert buildx.default_plugin_dir() == tmp_path / "home" / ".docker" / "cli-plugins"


def test_no_docker_cli_means_no_buildx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert buildx.buildx_available() is False


def test_the_ca_bundle_handed_in_is_what_https_mirrors_are_verified_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str | None] = []
    monkeypatch.setattr(buildx.ssl, "create_default_context", lambda cafile=None: asked.append(cafile))
    buildx._verify(tmp_path / "proxy-ca.pem")
    assert asked == [str(tmp_path / "proxy-ca.pem")]


# --- the command ---

FAKE_DOCKER = """#!/bin/sh
# `docker` that has buildx only when a plugin is in $DOCKER_CONFIG/cli-plugins (the machine's own is hidden)
if [ "$1" = buildx ]; then
  [ -x "$DOCKER_CONFIG/cli-plugins/docker-buildx" ] || { echo "docker: 'buildx' is not a docker command." >&2; exit 1; }
  exec {real} "$@"
fi
exec {real} "$@"
"""


def cli_env(tmp_path: Path, docker_real: str = "false", **extra: str) -> dict[str, str]:
    """A user's environment: this shell's minus SWE_FORGE_*, a fresh home and DOCKER_CONFIG, and a `docker` on PATH
    that sees only plugins in that DOCKER_CONFIG and otherwise runs `docker_real`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "docker"
    fake.write_text(FAKE_DOCKER.replace("{real}", docker_real))
    fake.chmod(0o755)
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("SWE_FORGE_")},
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "SWE_FORGE_HOME": str(tmp_path / "home"),
        "DOCKER_CONFIG": str(tmp_path / "docker-config"),
        **extra,
    }


def test_setup_buildx_with_an_unreachable_mirror_is_one_error_line_and_exit_1(tmp_path: Path) -> None:
    env = cli_env(tmp_path, SWE_FORGE_DEBIAN_MIRROR="http://127.0.0.1:9/debian")
    done = run_cli("setup", "--buildx", env=env, cwd=tmp_path, timeout=120)
    if platform.machine().lower() not in {"x86_64", "amd64"}:
        assert done.returncode == 1 and "amd64" in done.stderr
        return
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot install docker buildx: cannot download"), lines
    assert "SWE_FORGE_DEBIAN_MIRROR" in lines[0]
    assert not (tmp_path / "home").exists()  # --buildx sets up nothing else


def test_setup_buildx_without_a_docker_cli_says_to_install_docker(tmp_path: Path) -> None:
    env = {**cli_env(tmp_path), "PATH": str(tmp_path / "empty")}
    done = run_cli("setup", "--buildx", env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 1
    assert (
        done.stderr.strip() == "error: no docker CLI on PATH: install Docker first (Debian: apt-get install docker.io)"
    )


def test_setup_buildx_when_buildx_works_prints_its_version_and_installs_nothing(tmp_path: Path) -> None:
    plugins = tmp_path / "docker-config" / "cli-plugins"
    plugins.mkdir(parents=True)
    (plugins / "docker-buildx").write_bytes(PLUGIN)
    (plugins / "docker-buildx").chmod(0o755)
    fake_cli = tmp_path / "real-docker"  # stands in for the docker CLI: runs the plugin for `buildx version`
    fake_cli.write_text(f'#!/bin/sh\nexec "{plugins}/docker-buildx"\n')
    fake_cli.chmod(0o755)
    done = run_cli("setup", "--buildx", env=cli_env(tmp_path, str(fake_cli)), cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["buildx     github.com/docker/buildx v0.0.0-test"]
    assert (plugins / "docker-buildx").read_bytes() == PLUGIN


def test_install_command_is_the_cli_command() -> None:
    assert INSTALL_COMMAND == "swe-forge setup --buildx"


@pytest.mark.docker
def test_setup_buildx_installs_the_real_plugin_from_the_debian_mirror(tmp_path: Path) -> None:
    """A fresh Debian machine: `docker buildx` fails until `swe-forge setup --buildx` installs the pinned plugin
    into DOCKER_CONFIG; then the real docker CLI runs it from there (it shadows any system-wide one)."""
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("no docker CLI on PATH")
    if platform.machine().lower() not in {"x86_64", "amd64"}:
        pytest.skip(f"the pinned {BUILDX_DEB} is amd64; this machine is {platform.machine()}")
    mirror = os.environ.get("SWE_FORGE_DEBIAN_MIRROR", buildx.DEFAULT_MIRROR)
    try:
        httpx.head(deb_url(mirror), timeout=15, follow_redirects=True).raise_for_status()
    except httpx.HTTPError as exc:
        pytest.skip(f"the Debian mirror {mirror} cannot be reached ({exc}); set SWE_FORGE_DEBIAN_MIRROR")
    env = cli_env(tmp_path, docker, SWE_FORGE_DEBIAN_MIRROR=mirror)
    plugin = tmp_path / "docker-config" / "cli-plugins" / "docker-buildx"

    hidden = subprocess.run(["docker", "buildx", "version"], env=env, capture_output=True, text=True, check=False)
    assert hidden.returncode != 0  # the shim hides any plugin outside DOCKER_CONFIG: buildx is missing

    done = run_cli("setup", "--buildx", env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"installed  {plugin}"
    assert done.stdout.splitlines()[1].startswith("buildx     github.com/docker/buildx 0.13.1")
    assert plugin.stat().st_mode & 0o777 == 0o755

    real_env = {**os.environ, "DOCKER_CONFIG": str(tmp_path / "docker-config")}
    version = subprocess.run([docker, "buildx", "version"], env=real_env, capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and "0.13.1" in version.stdout, version.stderr
    info = subprocess.run(
        [docker, "info", "--format", "{{json .ClientInfo.Plugins}}"], env=real_env, capture_output=True, text=True
    )
    plugins = json.loads(info.stdout.strip().splitlines()[0]) if info.stdout.strip() else []
    assert [p["Path"] for p in plugins if p.get("Name") == "buildx"] == [str(plugin)], info.stdout + info.stderr

    again = run_cli("setup", "--buildx", env=env, cwd=tmp_path, timeout=120)  # installed: nothing to do
    assert again.returncode == 0 and not again.stdout.startswith("installed"), again.stderr
