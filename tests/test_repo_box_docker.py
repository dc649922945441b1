"""The repository box in real Docker: the base tree is the commit exactly, and what leaves a box is bounded."""

from __future__ import annotations

import subprocess
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.repo_box import (
    WorkspaceError,
    fetch_base,
    start_repo_box,
    take_diff,
    write_tree_archive,
)
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.sandbox import SandboxError
from tests.support.common import BASE_IMAGE

pytestmark = pytest.mark.docker


def test_the_base_tree_is_the_commit_exactly_and_agent_output_is_bounded(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    """`export-ignore`/`export-subst` do not change the tree; tracked-but-ignored files are in the base commit and
    in the agent's diff; a diff or a file read past its limit is refused, a symlinked report too."""
    source = tmp_path / "src" / "acme" / "attrs"
    files = {
        ".gitignore": "build/\n*.log\n",
        ".gitattributes": "secret.txt export-ignore\nversion.txt export-subst\n",
        "secret.txt": "kept\n",
        "version.txt": "$Format:%H$\n",
        "build/keep.txt": "tracked\n",
        "app.log": "x\n",
    }
    for name, text in files.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(source)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A", "-f"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    cache = RepoCache(tmp_path / "cache", f"{tmp_path}/src/{{repo}}")
    fetch_base(cache, "acme/attrs", sha)
    archive = write_tree_archive(cache, "acme/attrs", sha, tmp_path / "tree.tar")
    box, base = start_repo_box(
        docker_client, sandbox_config(build=True, image=BASE_IMAGE, network="none"), archive, name_hint="attrs"
    )
    try:
        listed = box.container.exec_run(["git", "-C", "/repo", "ls-files"]).output.decode().split()
        assert set(listed) == set(files)  # secret.txt (export-ignore) and the ignored-but-tracked files
        assert box.read_file("/repo/version.txt") == b"$Format:%H$\n"  # not substituted
        box.container.exec_run(["sh", "-c", "echo changed > /repo/build/keep.txt"])
        assert "+changed" in take_diff(box, base)
        with pytest.raises(WorkspaceError, match="over the 10 byte limit"):
            take_diff(box, base, limit=10)
        box.container.exec_run(["ln", "-s", "/etc/passwd", "/tmp/report.xml"])
        with pytest.raises(SandboxError, match="symbolic link"):
            box.read_file("/tmp/report.xml", follow_symlinks=False)
        with pytest.raises(SandboxError, match="limit"):
            box.read_file("/etc/passwd", max_bytes=10)
    finally:
        box.close()
