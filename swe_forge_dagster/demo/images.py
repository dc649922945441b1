"""The sandbox base image for the demo: one that exists here, or one built from what the machine can reach.

The task stage and the harness need an image with python3, venv, pip, pytest and git. In order:
`SWE_FORGE_DOCKER_IMAGE` when the user set it; the local `swe-forge-base:bookworm` (what
`scripts/build-base-image.sh` builds with debootstrap on machines without a registry); a small
image built FROM `python:3.12-slim` with git and pytest (machines that reach Docker Hub and PyPI);
and last the debootstrap script itself. Each failure is kept, so the final error says what was
tried and how to fix it.
"""

from __future__ import annotations

import io
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import docker

from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE

LOCAL_BASE = DEFAULT_BASE_IMAGE
DEMO_IMAGE = "swe-forge-base:demo"
DOCKERFILE = """FROM python:3.12-slim
RUN apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir pytest setuptools wheel
"""
REPO_ROOT = Path(__file__).resolve().parents[2]


class NoSandboxImage(RuntimeError):
    pass


def _present(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False


def ensure_sandbox_image(client: docker.DockerClient, say: Callable[[str], None] = print) -> str:
    chosen = os.environ.get("SWE_FORGE_DOCKER_IMAGE")
    if chosen:
        return chosen
    for tag in (LOCAL_BASE, DEMO_IMAGE):
        if _present(client, tag):
            return tag
    tried = []
    say(f"building the sandbox image {DEMO_IMAGE} from python:3.12-slim (once)")
    try:
        client.images.build(fileobj=io.BytesIO(DOCKERFILE.encode()), tag=DEMO_IMAGE, rm=True, pull=True)
        return DEMO_IMAGE
    except docker.errors.DockerException as exc:
        tried.append(f"docker build FROM python:3.12-slim: {str(exc).splitlines()[0][:200]}")
    script = REPO_ROOT / "scripts" / "build-base-image.sh"
    if script.is_file():
        say(f"building {LOCAL_BASE} with debootstrap instead (about a minute)")
        done = subprocess.run([str(script), LOCAL_BASE], capture_output=True, text=True, timeout=1800)
        if done.returncode == 0 and _present(client, LOCAL_BASE):
            return LOCAL_BASE
        tried.append(f"{script.name}: {(done.stderr or done.stdout).strip()[-300:]}")
    raise NoSandboxImage(
        "no sandbox image: "
        + "; ".join(tried)
        + ". Set SWE_FORGE_DOCKER_IMAGE to an image with python3, venv, pip, pytest and git, "
        "or run scripts/build-base-image.sh (needs debootstrap and root)."
    )
