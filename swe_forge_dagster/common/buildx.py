"""The `docker buildx` CLI plugin: whether this machine has it, and installing it when it has not.

SWE-bench 5's `swebench eval` builds its images with `docker buildx build --load`, and Debian bookworm's
`docker.io` ships without buildx, so on a fresh Debian machine the documented round trip fails with "Docker buildx
failed with exit code 125". `swe-forge setup --buildx` (`INSTALL_COMMAND`) is the one command that fixes that, and
the commands that need buildx name it first (`export --format swebench-task-repo`).

The plugin comes from Debian trixie's `docker-buildx` package, pinned by SHA-256 (`BUILDX_DEB`, `BUILDX_SHA256`:
the one copy of the pin; `scripts/install-buildx.sh` reads it from here), fetched from the Debian mirror
(`SWE_FORGE_DEBIAN_MIRROR`, default `DEFAULT_MIRROR`), reachable where Docker Hub and GitHub often are not. The
mirror may be plain HTTP: the pin, not the transport, is what makes the bytes trustworthy. It builds with the
engine's own builder (the `docker` driver), so images build from local base images with no registry.

The `.deb` is unpacked here in Python (an `ar` archive holding `data.tar.xz`, `.gz` or `.zst`), so a user who
installed the package needs neither `dpkg-deb` nor the project's `scripts/`; `.zst` data, which `tarfile` cannot
read, goes through the `zstandard` package or `dpkg-deb --fsys-tarfile`, whichever is present.
"""

from __future__ import annotations

import hashlib
import io
import os
import platform
import shutil
import ssl
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, BinaryIO

import httpx

from swe_forge_dagster.common.retry import Backoff

INSTALL_COMMAND = "swe-forge setup --buildx"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
MIRROR_VARIABLE = "SWE_FORGE_DEBIAN_MIRROR"
BUILDX_DEB = "docker-buildx_0.13.1+ds1-3_amd64.deb"
BUILDX_SHA256 = "fcf8c48204d1603c8f209451d7827eb91bf30759578baf7704e9e1a87e5f1d7f"
PLUGIN_MEMBER = "usr/libexec/docker/cli-plugins/docker-buildx"
PLUGIN_NAME = "docker-buildx"
SYSTEM_PLUGIN_DIR = Path("/usr/local/lib/docker/cli-plugins")
# Where the docker CLI looks for plugins on Linux after the user's own directory, in its order.
_SYSTEM_PLUGIN_DIRS = (
    SYSTEM_PLUGIN_DIR,
    Path("/usr/local/libexec/docker/cli-plugins"),
    Path("/usr/lib/docker/cli-plugins"),
    Path("/usr/libexec/docker/cli-plugins"),
)
_ARCHES = {"x86_64", "amd64"}  # the pinned package's architecture
_VERSION_TIMEOUT = 20.0
_HTTP_TIMEOUT = httpx.Timeout(30.0, read=120.0)
# A mirror that drops the connection or answers 5xx is retried; 1 s then 2 s between the three attempts.
_BACKOFF = Backoff(max_attempts=3, initial=1.0, maximum=10.0)
_AR_MAGIC = b"!<arch>\n"
_AR_HEADER = 60


class BuildxInstallError(RuntimeError):
    """Installing buildx failed; the message is one line that says why and what to do."""


class _MirrorBusy(Exception):
    """A 5xx answer: worth another attempt, unlike a 404."""


def buildx_version() -> str | None:
    """`docker buildx version`'s line, or None when it fails (no docker CLI, no plugin, a hung CLI).

    The docker CLI is run with this process's environment, so `DOCKER_CONFIG` decides where it looks for plugins
    exactly as it does for the user; the timeout keeps a wedged CLI from hanging a command that only asks."""
    docker = shutil.which("docker")
    if docker is None:
        return None
    try:
        done = subprocess.run(
            [docker, "buildx", "version"], capture_output=True, text=True, timeout=_VERSION_TIMEOUT, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[0] if done.returncode == 0 and lines else None


def buildx_available() -> bool:
    """Whether `docker buildx version` works here: what `swebench eval` needs before it builds anything."""
    return buildx_version() is not None


def default_plugin_dir() -> Path:
    """Where `install_buildx` puts the plugin: `$DOCKER_CONFIG/cli-plugins` when set (the docker CLI looks there
    first), the system-wide directory for root (every user's CLI finds it), else `~/.docker/cli-plugins`."""
    if config := os.environ.get("DOCKER_CONFIG"):
        return Path(config).expanduser() / "cli-plugins"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return SYSTEM_PLUGIN_DIR
    return Path.home() / ".docker" / "cli-plugins"


def installed_plugin() -> Path | None:
    """The `docker-buildx` file the docker CLI would find first, when there is one (its search order on Linux)."""
    config = os.environ.get("DOCKER_CONFIG")
    user_dir = Path(config).expanduser() if config else Path.home() / ".docker"
    for folder in (user_dir / "cli-plugins", *_SYSTEM_PLUGIN_DIRS):
        if (folder / PLUGIN_NAME).is_file():
            return folder / PLUGIN_NAME
    return None


def install_buildx(mirror: str | None = None, dest: Path | None = None, ca_bundle: Path | None = None) -> Path:
    """Make `docker buildx` work: the installed plugin's path. Does nothing when it already works (returns the
    plugin the CLI uses, or where it would be). Raises `BuildxInstallError` with a one-line reason."""
    if buildx_available():
        return installed_plugin() or (dest or default_plugin_dir()) / PLUGIN_NAME
    return fetch_and_install(mirror, dest, ca_bundle)


def fetch_and_install(mirror: str | None = None, dest: Path | None = None, ca_bundle: Path | None = None) -> Path:
    """Download the pinned `.deb` from `mirror` and install its plugin into `dest`, whether or not buildx already
    works (`install_buildx` is the checked entry point; this one lets a test install beside a system plugin)."""
    machine = platform.machine().lower()
    if machine not in _ARCHES:
        raise BuildxInstallError(
            f"the pinned {BUILDX_DEB} is for amd64, this machine is {machine}: install your distribution's "
            "docker-buildx package (Debian trixie and later: apt-get install docker-buildx)"
        )
    base = (mirror or os.environ.get(MIRROR_VARIABLE) or DEFAULT_MIRROR).rstrip("/")
    with tempfile.TemporaryDirectory(prefix="swe-forge-buildx-") as work:
        deb = Path(work) / BUILDX_DEB
        download(deb_url(base), deb, ca_bundle)
        return install_deb(deb, dest or default_plugin_dir())


def deb_url(mirror: str) -> str:
    """The pinned package's address on a Debian mirror (the pool layout every mirror shares)."""
    return f"{mirror.rstrip('/')}/pool/main/d/docker-buildx/{BUILDX_DEB}"


def download(url: str, target: Path, ca_bundle: Path | None = None) -> None:
    """Stream `url` into `target`, retrying dropped connections and 5xx answers a few times; an unreachable or
    refusing mirror is a `BuildxInstallError` naming the address and the variable that changes it."""

    def attempt() -> None:
        with (
            httpx.Client(timeout=_HTTP_TIMEOUT, follow_redirects=True, verify=_verify(ca_bundle)) as client,
            client.stream("GET", url) as response,
        ):
            if response.status_code >= 500:
                raise _MirrorBusy(f"HTTP {response.status_code}")
            if response.status_code != 200:
                raise BuildxInstallError(f"{url} answered HTTP {response.status_code}: set {MIRROR_VARIABLE}")
            with target.open("wb") as out:
                for chunk in response.iter_bytes(1 << 20):
                    out.write(chunk)

    try:
        _BACKOFF.retrying((httpx.TransportError, _MirrorBusy))(attempt)
    except (httpx.HTTPError, _MirrorBusy) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise BuildxInstallError(
            f"cannot download {url} ({reason}): set {MIRROR_VARIABLE} to a reachable Debian mirror"
        ) from None


def install_deb(deb: Path, dest: Path, sha256: str | None = None) -> Path:
    """Check `deb` against `sha256` (default: the pin), then install its buildx plugin into `dest` (mode 0755,
    atomically: a concurrent `docker buildx` sees the old file or the new one, never half of one); the path."""
    sha256 = sha256 or BUILDX_SHA256
    digest = _sha256(deb)
    if digest != sha256:
        raise BuildxInstallError(f"{deb.name} has SHA-256 {digest}, not the pinned {sha256}: refusing to install it")
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / PLUGIN_NAME
    fd, temporary = tempfile.mkstemp(prefix=f".{PLUGIN_NAME}.", dir=dest)
    try:
        with os.fdopen(fd, "wb") as out, _deb_member(deb, PLUGIN_MEMBER) as plugin:
            shutil.copyfileobj(plugin, out, 1 << 20)
        os.chmod(temporary, 0o755)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def ar_members(data: BinaryIO) -> Iterator[tuple[str, int, int]]:
    """The members of an `ar` archive (the `.deb` container): (name, offset of its data, size). The format is an
    8-byte magic, then per member a 60-byte text header (name 16, mtime 12, uid 6, gid 6, mode 8, size 10, "`\\n")
    and its data padded to an even length."""
    if data.read(len(_AR_MAGIC)) != _AR_MAGIC:
        raise BuildxInstallError("not a .deb: no ar archive header")
    while header := data.read(_AR_HEADER):
        if len(header) != _AR_HEADER or header[58:60] != b"`\n":
            raise BuildxInstallError("not a .deb: a damaged ar member header")
        name = header[:16].decode("ascii", "replace").strip().rstrip("/")
        try:
            size = int(header[48:58].decode("ascii").strip() or 0)
        except ValueError:
            raise BuildxInstallError("not a .deb: an ar member with no size") from None
        offset = data.tell()
        yield name, offset, size
        data.seek(offset + size + size % 2)


@contextmanager
def _deb_member(deb: Path, member: str) -> Iterator[IO[bytes]]:
    """A regular file of the `.deb`'s data archive, readable; `./`-prefixed or not, as dpkg writes either."""
    with deb.open("rb") as raw:
        found = [(name, offset, size) for name, offset, size in ar_members(raw) if name.startswith("data.tar")]
        if not found:
            raise BuildxInstallError(f"{deb.name} has no data.tar member")
        name, offset, size = found[0]
        raw.seek(offset)
        payload = raw.read(size)
    with _data_tar(deb, name, payload) as tar:
        for info in tar:
            if info.name.removeprefix("./") == member:
                if not info.isfile():
                    raise BuildxInstallError(f"{member} in {deb.name} is not a regular file")
                extracted = tar.extractfile(info)
                assert extracted is not None  # a regular file always has content
                yield extracted
                return
    raise BuildxInstallError(f"{deb.name} does not contain {member}")


@contextmanager
def _data_tar(deb: Path, name: str, payload: bytes) -> Iterator[tarfile.TarFile]:
    """The data archive as a tar: `tarfile` reads xz, gzip, bzip2 and plain tar itself; zstd needs the
    `zstandard` package or dpkg-deb, and without either the error says so."""
    if not name.endswith(".zst"):
        with tarfile.open(fileobj=io.BytesIO(payload), mode="r:*") as tar:
            yield tar
        return
    try:
        import zstandard  # type: ignore[import-not-found]  # optional: not a dependency
    except ImportError:
        zstandard = None
    if zstandard is not None:
        with (
            zstandard.ZstdDecompressor().stream_reader(io.BytesIO(payload)) as stream,
            tarfile.open(fileobj=stream, mode="r|") as tar,
        ):
            yield tar
        return
    dpkg_deb = shutil.which("dpkg-deb")
    if dpkg_deb is None:
        raise BuildxInstallError(
            f"{deb.name} holds {name} (zstd), which needs the zstandard package (pip install zstandard) or dpkg-deb"
        )
    with tempfile.TemporaryFile() as plain:
        done = subprocess.run([dpkg_deb, "--fsys-tarfile", str(deb)], stdout=plain, stderr=subprocess.PIPE)
        if done.returncode != 0:
            detail = " ".join(done.stderr.decode(errors="replace").split())
            raise BuildxInstallError(f"dpkg-deb --fsys-tarfile {deb.name} failed: {detail}")
        plain.seek(0)
        with tarfile.open(fileobj=plain, mode="r:") as tar:
            yield tar


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        for chunk in iter(lambda: data.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _verify(ca_bundle: Path | None = None) -> ssl.SSLContext:
    """`ca_bundle` (the settings' `SWE_FORGE_CA_BUNDLE`, handed in by the command: a TLS-intercepting proxy in front
    of an https mirror), else the system's certificates (a machine's own CA store is what its admin set up), else
    certifi's when this Python knows no system store."""
    if ca_bundle is not None:
        return ssl.create_default_context(cafile=str(ca_bundle))
    system = ssl.get_default_verify_paths()
    if system.cafile or system.capath:
        return ssl.create_default_context()
    import certifi  # httpx's own dependency

    return ssl.create_default_context(cafile=certifi.where())
