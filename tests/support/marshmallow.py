"""The real marshmallow repository and its SWE-bench Lite dev rows, which several Docker tests start from.

`marshmallow_remote` skips (or fails under SWE_FORGE_REQUIRE_DOCKER=1) without the fixtures or the Python 3.9
base image the repository's manifests choose, then clones the bundle as a bare remote under `root`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.languages.python.recipes import BASE_IMAGES
from tests.support.common import SHARED_FIXTURES, require_image

BUNDLE = SHARED_FIXTURES / "repos" / "marshmallow-code+marshmallow.bundle"
LITE_DEV = SHARED_FIXTURES / "swebench" / "lite-dev" / "princeton-nlp-SWE-bench_Lite-dev.json"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
BULLSEYE = BASE_IMAGES["3.9"]


def marshmallow_remote(root: Path, docker_client: docker.DockerClient) -> str:
    """A bare clone of the bundle at root/remotes/marshmallow-code/marshmallow.git; the git URL template."""
    if not BUNDLE.is_file() or not LITE_DEV.is_file():
        pytest.skip(f"real fixtures missing ({BUNDLE.name} or SWE-bench Lite dev)")
    require_image(docker_client, BULLSEYE, f"scripts/build-base-image.sh {BULLSEYE}")
    remote = root / "remotes" / "marshmallow-code" / "marshmallow.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(remote)], check=True, timeout=300)
    return f"file://{root}/remotes/{{repo}}.git"
