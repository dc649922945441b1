"""What the language packs share about toolchains: registry reachability from the sandbox, version numbers, JSON,
and how a toolchain image is built (`ImageBuild`, run by `environments.toolchain_images`).

Which toolchain a repository needs, its images, declared versions and registry problems are the
language packs' (`languages`). `dependency_problem` there lets the pipeline spend nothing
on what cannot be built here: each pack's check needs a registry whose reachability is probed once
per process here (`registry_reachable`, URLs are settings).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from swe_forge_dagster.settings import get_settings

_REACHED: dict[str, float] = {}
RETRY_UNREACHABLE_S = 300.0


def registry_reachable(url: str, timeout: float = 5.0) -> bool:
    """Whether `url` answers at all (any HTTP status), from this host. A success is remembered for the process; a
    failure only for `RETRY_UNREACHABLE_S` (a blip must not reject every later task of the process)."""
    now = time.monotonic()
    if url in _REACHED and (_REACHED[url] > 0 or now + _REACHED[url] < RETRY_UNREACHABLE_S):
        return _REACHED[url] > 0
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False, verify=_verify()) as client:
            client.head(url)
    except httpx.HTTPError:
        _REACHED[url] = -now  # negative: when it failed
        return False
    _REACHED[url] = now or 1.0
    return True


def _verify() -> str | bool:
    bundle = get_settings().ca_bundle
    return str(bundle) if bundle else True


def version_numbers(version: str) -> tuple[int, ...]:
    """`1.19.2` -> (1, 19, 2): the first three numbers, comparable."""
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def json_object(text: str | None) -> dict:
    """A JSON object's text parsed, or {} (not JSON, not an object)."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class ImageBuild:
    """How one toolchain image is built on first need (`environments.toolchain_images`), from a local base image:
    its Debian packages installed with apt, or a `docker build` of the files `context` fetches (a Dockerfile
    among them; fetched only when the image is really built)."""

    base: str
    """The local image it starts from (must be on the engine: base images are not built on need)."""
    debian_packages: str = ""
    context: Callable[[], dict[str, bytes]] | None = None
    describe: str = ""
    """What is installed, for the log (`Node 20.20.2 + npm 10.9.4 from the npm registry`)."""
