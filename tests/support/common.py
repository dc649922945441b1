"""Paths, the base image and small helpers that the fixtures and test modules share."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE, Settings

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_FIXTURES = REPO_ROOT.parent / "shared" / "fixtures"
BASE_IMAGE = os.environ.get("SWE_FORGE_BASE_IMAGE", DEFAULT_BASE_IMAGE)
EXAMPLES = REPO_ROOT / "examples"

SettingsFactory = Callable[..., Settings]


def hour(key: str) -> dt.datetime:
    return dt.datetime.strptime(key, "%Y-%m-%d-%H:%M").replace(tzinfo=dt.UTC)


def require_image(client: docker.DockerClient, image: str, how: str) -> None:
    """Skip without `image` (fail under SWE_FORGE_REQUIRE_DOCKER=1), saying how to build it."""
    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        message = f"{image} missing: {how}"
        if os.environ.get("SWE_FORGE_REQUIRE_DOCKER") == "1":
            pytest.fail(message)
        pytest.skip(message)
