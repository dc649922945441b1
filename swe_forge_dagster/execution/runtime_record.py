"""What an environment says about its runtime: interpreter and toolchain versions, the resolution date, how it was
found, read from the environment image's labels.

An environment image carries its record as `swe-forge.*` labels, inherited from the toolchain image it was built
on (`swe-forge-node:20` labels `swe-forge.node-version`, `swe-forge.npm-version`, `swe-forge.toolchain`) and added
by the build (the base image as `swe-forge.from`; the era resolution's date and the interpreter when the pack
records them). `swe-forge validate` and `swe-forge harness` print this so a result says what it ran on. Which
labels count is decided by their names (versions, dates, the toolchain, the rung that found the recipe), so a
field another part of the build adds later is shown without a change here, and an image that records none
gives `{}`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import docker

PREFIX = "swe-forge."
RUNTIME_LABEL = re.compile(
    r"(-version|version|-date|date|resolution.*|toolchain|runtime.*|interpreter.*|from|rung|found-by|era.*|install-seconds)$"
)
"""Label names (after the prefix) that describe the runtime, and the install's seconds (a compiled repository's
build is paid once per image, and a benchmark reports it); ownership and harness bookkeeping do not."""


def runtime_labels(labels: Mapping[str, str] | None) -> dict[str, str]:
    """The runtime part of an image's labels, keyed without the `swe-forge.` prefix, in name order."""
    found = {
        key.removeprefix(PREFIX): value
        for key, value in (labels or {}).items()
        if key.startswith(PREFIX) and value and RUNTIME_LABEL.search(key.removeprefix(PREFIX))
    }
    return dict(sorted(found.items()))


def runtime_record(client: docker.DockerClient | None, image: str | None) -> dict[str, str]:
    """`runtime_labels` of `image` on `client`; `{}` when there is no image or the engine does not answer."""
    if client is None or not image:
        return {}
    try:
        return runtime_labels(client.images.get(image).labels)
    except (docker.errors.DockerException, OSError):
        return {}


def describe(record: Mapping[str, str]) -> str:
    """One line for people: `node 20.20.2, npm 10.9.9, resolved as of 2021-05-13, from swe-forge-node:20`."""
    parts = []
    for key, value in record.items():
        if key.endswith("version"):
            parts.append(f"{key.removesuffix('version').rstrip('-') or 'version'} {value}")
        elif key == "resolution-date":
            parts.append("today's releases" if value == "none" else f"resolved as of {value}")
        elif key.endswith("-note"):
            continue  # the JSON keeps it; one line does not
        elif "date" in key:
            parts.append(f"{key} {value}")
        elif key == "from":
            parts.append(f"from {value}")
        elif key == "install-seconds":
            parts.append(f"installed in {value} s")
        elif key != "toolchain" or not any(k.endswith("version") for k in record):
            parts.append(f"{key} {value}")
    return ", ".join(parts)
