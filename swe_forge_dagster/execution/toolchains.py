"""What the language packs share about toolchains: registry reachability from the sandbox, version numbers, JSON.

Which toolchain a repository needs, its images, declared versions and registry problems are the
language packs' (`execution.languages`). `dependency_problem` there lets the pipeline spend nothing
on what cannot be built here: each pack's check needs a registry whose reachability is probed once
per process here (`registry_reachable`, URLs are settings).
"""

from __future__ import annotations

import json
import re
import time

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
