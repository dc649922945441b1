"""A seed task's environment from its `install_config` (`environments.seed`): image, install, test files."""

from __future__ import annotations

import types

import pytest

from swe_forge_dagster.environments.seed import (
    ENSURE_GIT,
    seed_install_commands,
    seed_task_image,
    seed_test_files,
)
from swe_forge_dagster.languages.node.pack import NODE_IMAGE
from swe_forge_dagster.languages.python.pack import SEED_VENV
from swe_forge_dagster.languages.python.recipes import BASE_IMAGES
from swe_forge_dagster.settings import DEFAULT_DOCKER_IMAGE

BOOKWORM, BULLSEYE = BASE_IMAGES["3.11"], BASE_IMAGES["3.9"]


def seed_image(python: str, default_image: str) -> str:
    return seed_task_image({"python": python}, "python", default_image)


def test_the_image_follows_the_python_the_task_asks_for() -> None:
    assert seed_image("3.11", BOOKWORM) == BOOKWORM
    assert seed_image("3.8", BOOKWORM) == BULLSEYE  # nearest local base image
    assert seed_image("3.12", BOOKWORM) == "swe-forge-base:trixie"  # not older than asked: 3.12 syntax parses
    assert seed_image("3.10", BOOKWORM) == BOOKWORM
    assert seed_image("3.14", BOOKWORM) == "swe-forge-base:trixie"  # newer than every image: the newest
    assert seed_image("3.10", "python:3.13-slim") == "python:3.10-slim"  # an official image given: its family
    assert seed_image("3.11", DEFAULT_DOCKER_IMAGE) == BOOKWORM  # none given: the local image, no flag needed
    assert seed_image("", BOOKWORM) == BOOKWORM and seed_image("3.11", "my/image:1") == "my/image:1"


def test_a_javascript_task_runs_on_the_node_image() -> None:
    """noi-techpark/opendatahub-gtfs-api-3 asks for `node: '20'`: the image of that major from the npm registry,
    with or without a flag; TypeScript tasks may only name the language (Debian's Node)."""
    assert seed_task_image({"install": "npm install", "node": "20"}, "javascript", BOOKWORM) == "swe-forge-node:20"
    assert seed_task_image({"node": "20"}, "javascript", DEFAULT_DOCKER_IMAGE) == "swe-forge-node:20"
    assert seed_task_image({"node": ">=18 <20"}, "javascript", BOOKWORM) == "swe-forge-node:18"
    assert seed_task_image({"install": "npm ci"}, "typescript", BOOKWORM) == NODE_IMAGE
    assert seed_task_image({"node": "20"}, "javascript", "python:3.13-slim") == "node:20-bookworm"
    assert seed_task_image({"python": "3.9"}, "python", BOOKWORM) == BULLSEYE


def test_python_installs_go_into_the_venv_the_seeds_checks_use() -> None:
    python = seed_install_commands({"install": "pip install -e .", "python": "3.11"})
    assert python == (ENSURE_GIT, f"{SEED_VENV} && pip install -e .")
    assert "/tmp/venv" in SEED_VENV and "--system-site-packages" in SEED_VENV
    assert seed_install_commands({"install": "npm install", "node": "20"}) == (ENSURE_GIT, "npm install")
    assert seed_install_commands({}) == (ENSURE_GIT,)


def test_test_files_stay_inside_the_repository() -> None:
    def item(path: str) -> object:
        return types.SimpleNamespace(path=path, content="x")

    assert seed_test_files([item("tests/test_a.py"), item("/repo/tests/test_b.py")]) == {
        "tests/test_a.py": "x",
        "tests/test_b.py": "x",
    }
    for bad in ("../escape.py", "/etc/passwd", ""):
        with pytest.raises(ValueError, match="inside the repository"):
            seed_test_files([item(bad)])


def test_go_rust_and_java_seed_tasks_get_the_toolchain_image_of_the_version_they_name() -> None:
    local = "swe-forge-base:bookworm"
    assert seed_task_image({"java": "21", "install": "./mvnw -q package"}, "java", local) == "swe-forge-java:trixie"
    assert seed_task_image({"rust": "1.75", "install": "cargo fetch"}, "rust", local) == "swe-forge-rust:trixie"
    assert seed_task_image({"install": "go mod download"}, "go", local) == "swe-forge-go:bookworm"
    assert seed_task_image({"go": "1.22"}, "go", local) == "swe-forge-go:trixie"
