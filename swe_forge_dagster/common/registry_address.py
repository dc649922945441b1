"""The image registry's address (`SWE_FORGE_REGISTRY`), checked where settings are read.

Kept apart from `execution.registry` (which pulls and pushes through Docker) so that `settings` can
check the address without importing the execution layer: settings sit below every domain package.
"""

from __future__ import annotations

import re

REGISTRY_SETTING = "SWE_FORGE_REGISTRY"
_ADDRESS = re.compile(r"^[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[a-z0-9._/-]+)?$")


class RegistryConfigError(ValueError):
    """`SWE_FORGE_REGISTRY` is not a registry address."""


def parse_registry(value: str | None) -> str:
    """`host[:port][/prefix]` without a scheme or trailing slash; empty means no registry.

    A scheme is refused rather than stripped: docker names carry none, and `https://` vs `http://`
    is the engine's decision (`insecure-registries`), not ours.
    """
    address = (value or "").strip().rstrip("/")
    if not address:
        return ""
    if "://" in address or not _ADDRESS.match(address):
        raise RegistryConfigError(
            f"{REGISTRY_SETTING}={value!r} is not a registry address: use host:port[/prefix], e.g. 127.0.0.1:5000"
        )
    return address
