"""The tasks' images for an agent, built as `swebench eval --task-repo` builds them, under the names it grades in.

`swebench images build` tags `sweb.eval.x86_64.<id>` unless given a namespace, while `swebench eval` (and the image
name our task repositories carry, `export.task_repo.image_name`) says `swebench/sweb.eval.x86_64.<owner>_1776_...`:
without the namespace the agent would start from an image of the same task built earlier, or from none. So the
namespace is the one the name carries, every image is rebuilt as `eval` rebuilds it (Docker's layer cache makes an
unchanged task cheap), and each is checked by the very name the agent will start.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import docker

from swe_forge_dagster.export.task_repo import image_name

BUILD_S = 7200


class ImageBuildError(RuntimeError):
    """An image could not be built, or is not there under the name the agent starts (the message says which)."""


def swebench_executable() -> Path:
    """SWE-bench's CLI beside this interpreter (`swebench` is installed with the project's dev tools)."""
    executable = Path(sys.executable).with_name("swebench")
    if not executable.is_file():
        raise ImageBuildError(f"SWE-bench's CLI is not installed beside {sys.executable}: pip install swebench")
    return executable


def build_images(task_repo: Path, ids: list[str], logs: Path, say: Callable[[str], None]) -> None:
    """Build the tasks' images with SWE-bench's own `images build`; its logs go under `logs` (it writes them in its
    working folder, never the user's)."""
    namespace = image_name(ids[0]).split("/")[0]
    command = [str(swebench_executable()), "images", "build", str(task_repo), "-j", "1", "-n", namespace]
    command.append("--force-rebuild")
    for instance_id in ids:
        command += ["-i", instance_id]
    say(f"images: swebench {' '.join(command[1:])}")
    logs.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_S, cwd=logs)
    except subprocess.TimeoutExpired:
        raise ImageBuildError(f"swebench images build took over {BUILD_S} s (its logs: {logs})") from None
    if done.returncode != 0:
        raise ImageBuildError(f"swebench images build failed: {(done.stderr or done.stdout).strip()[-1500:]}")
    missing = [name for name in map(image_name, ids) if not _present(name)]
    if missing:
        raise ImageBuildError(f"built, but not under the name the agent starts: {', '.join(missing)} (logs: {logs})")


def _present(name: str) -> bool:
    client = docker.from_env()
    try:
        client.images.get(name)
        return True
    except docker.errors.ImageNotFound:
        return False
    finally:
        client.close()
