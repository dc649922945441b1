"""The sandbox base image for the demo: one that exists here, or one built from what the machine can reach.

The task stage and the harness need an image with python3, venv, pip, pytest and git. In order:
`SWE_FORGE_DOCKER_IMAGE` when the user set it; the local `swe-forge-base:bookworm` (what
`scripts/build-base-image.sh` builds with debootstrap on machines without a registry); a small
image built FROM `python:3.12-slim` with git and pytest (machines that reach Docker Hub and PyPI);
and last the debootstrap script itself. Each failure is kept, so the final error says what was
tried and how to fix it.

The demo's JavaScript task runs on the Node pack's default image (`LanguagePack.default_image`, Debian's nodejs +
npm on `swe-forge-base:bookworm`): `ensure_node_image` builds it up front with a progress line, the base image
first when it is missing (debootstrap), rather than leave it to a silent first-need build inside a run, or to no
build at all when the demo's sandbox is `swe-forge-base:demo` (the Node image is not built on that one).
"""

from __future__ import annotations

import io
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import docker

from swe_forge_dagster.environments import toolchain_images
from swe_forge_dagster.languages.registry import pack
from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE

NODE_IMAGE = pack("node").default_image
"""The Node pack's default image, which the demo's JavaScript task runs on."""

LOCAL_BASE = DEFAULT_BASE_IMAGE
DEMO_IMAGE = "swe-forge-base:demo"
DOCKERFILE = """FROM python:3.12-slim
RUN apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir pytest setuptools wheel
"""
REPO_ROOT = Path(__file__).resolve().parents[2]


class NoSandboxImage(RuntimeError):
    pass


def _debootstrap(client: docker.DockerClient, tag: str) -> str | None:
    """Build base image `tag` with scripts/build-base-image.sh (debootstrap, root): None when it is there after,
    else why not."""
    script = REPO_ROOT / "scripts" / "build-base-image.sh"
    if not script.is_file():
        return f"{script} is missing"
    done = subprocess.run([str(script), tag], capture_output=True, text=True, timeout=1800)
    if done.returncode == 0 and toolchain_images.present(client, tag):
        return None
    return f"{script.name}: {(done.stderr or done.stdout).strip()[-300:]}"


def ensure_sandbox_image(client: docker.DockerClient, say: Callable[[str], None] = print) -> str:
    chosen = os.environ.get("SWE_FORGE_DOCKER_IMAGE")
    if chosen:
        return chosen
    for tag in (LOCAL_BASE, DEMO_IMAGE):
        if toolchain_images.present(client, tag):
            return tag
    tried = []
    say(f"building the sandbox image {DEMO_IMAGE} from python:3.12-slim (once)")
    try:
        client.images.build(fileobj=io.BytesIO(DOCKERFILE.encode()), tag=DEMO_IMAGE, rm=True, pull=True)
        return DEMO_IMAGE
    except docker.errors.DockerException as exc:
        tried.append(f"docker build FROM python:3.12-slim: {str(exc).splitlines()[0][:200]}")
    say(f"building {LOCAL_BASE} with debootstrap instead (about a minute)")
    problem = _debootstrap(client, LOCAL_BASE)
    if problem is None:
        return LOCAL_BASE
    tried.append(problem)
    raise NoSandboxImage(
        "no sandbox image: "
        + "; ".join(tried)
        + ". Set SWE_FORGE_DOCKER_IMAGE to an image with python3, venv, pip, pytest and git, "
        "or run scripts/build-base-image.sh (needs debootstrap and root)."
    )


def ensure_node_image(client: docker.DockerClient, say: Callable[[str], None] = print) -> str | None:
    """Build the Node image the demo's JavaScript task needs when it is absent; None when it is there, else why
    not (the demo goes on: that task is then rejected before any LLM call, with the reason)."""
    if toolchain_images.present(client, NODE_IMAGE):
        return None
    build = toolchain_images.build_of(NODE_IMAGE)
    if build is None:  # the Node pack no longer builds its default image: a bug here, said plainly
        return f"{NODE_IMAGE} is absent and no language pack says how to build it"
    fix = "build it with scripts/build-toolchain-image.sh node (then run the demo again), or expect no JavaScript task"
    if not toolchain_images.present(client, build.base):
        say(f"building {build.base} with debootstrap, the base of {NODE_IMAGE} (about a minute, once)")
        if problem := _debootstrap(client, build.base):
            return f"{NODE_IMAGE} needs {build.base}: {problem}; {fix}"
    say(
        f"building {NODE_IMAGE} for the JavaScript task: {build.debian_packages or build.describe} on {build.base} "
        "(a few minutes, once)"
    )
    try:
        toolchain_images.ensure(client, NODE_IMAGE)
    except docker.errors.DockerException as exc:  # ToolchainImageError is one: a missing base, a failed install
        return f"could not build {NODE_IMAGE}: {str(exc)[:300]}; {fix}"
    return None
