"""Hand-made task records and SWE-bench instances (export and validate tests need no Docker for them), and the demo
world's two-language setting the Docker tests of exported tasks share."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import docker

from swe_forge_dagster.demo.worlds.git_world import GitWorld, build_git_world
from swe_forge_dagster.demo.worlds.git_world_js import JS_REPO
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.export.swebench import SWEBenchInstance
from swe_forge_dagster.export.task_dir import TaskRecord
from swe_forge_dagster.languages.node.pack import NODE_IMAGE
from swe_forge_dagster.tasks.build import PRContext
from tests.support.common import require_image

if TYPE_CHECKING:
    from swe_forge_dagster.demo.worlds.git_world import WorldPR

NO_FIX_PATCH = """diff --git a/NOTES.txt b/NOTES.txt
new file mode 100644
--- /dev/null
+++ b/NOTES.txt
@@ -0,0 +1 @@
+looked at it, fixed nothing
"""
"""A prediction that changes the repository and fixes nothing (a new notes file)."""


def world_context(pr: WorldPR, language: str | None = None) -> PRContext:
    """The task builder's view of a demo-world PR, an easy one, as the tests that prove one by hand build it."""
    return PRContext(
        repo=pr.repo,
        number=pr.number,
        title=pr.title,
        body=pr.body,
        base_sha=pr.base_sha,
        head_sha=pr.head_sha,
        language=language or pr.language,
        difficulty="easy",
        difficulty_score=0.2,
        created_at=pr.created_at.isoformat(),
    )


def make_task(inst: SWEBenchInstance, **overrides: Any) -> TaskRecord:
    tests = inst.FAIL_TO_PASS or ["tests/test_x.py::test_y"]
    fields: dict[str, Any] = {
        "instance": inst,
        "image": "swe-forge-base:bookworm",
        "install_commands": ["pip install -e .", "pip install pytest"],
        "test_command": "python -m pytest -q",
        "test_files": ["tests/test_x.py"],
        "fail_to_pass_commands": [f'python -m pytest -q "{t}"' for t in tests[:3]],
        "pass_to_pass_commands": [f'python -m pytest -q "{t}"' for t in inst.PASS_TO_PASS[:2]],
        "original_pr_url": f"https://github.com/{inst.repo}/pull/{inst.instance_id.rsplit('-', 1)[-1]}",
    }
    fields.update(overrides)
    return TaskRecord(**fields)


def make_instance(**overrides: Any) -> SWEBenchInstance:
    fields: dict[str, Any] = dict(
        instance_id="octo__widgets-42",
        repo="octo/widgets",
        base_commit="a" * 40,
        environment_setup_commit="b" * 40,
        patch="diff --git a/w.py b/w.py\n--- a/w.py\n+++ b/w.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n",
        test_patch="diff --git a/tests/test_w.py b/tests/test_w.py\n",
        problem_statement="x should be 2\n",
        hints_text="",
        created_at="2024-05-01T10:00:00Z",
        version="1.0",
        FAIL_TO_PASS=["tests/test_w.py::test_x"],
        PASS_TO_PASS=["tests/test_w.py::test_y"],
        difficulty="easy",
        difficulty_score=0.25,
        quality_score=0.8,
        language="python",
        license="MIT",
    )
    fields.update(overrides)
    return SWEBenchInstance(**fields)


TWO_LANGUAGE_PRS = (("acme-labs/tinycalc", 12), (JS_REPO, 4))
"""The demo world's Python (pytest) task and its JavaScript (mocha, the Node image) task."""


def two_language_world(root: Path, client: docker.DockerClient) -> tuple[GitWorld, RepoCache]:
    """The demo world with its JavaScript repository, and a repository cache over it (the Node image required)."""
    require_image(client, NODE_IMAGE, "scripts/build-base-image.sh builds it")
    world = build_git_world(root / "world", javascript=True)
    return world, RepoCache(root / "cache", world.url_template)
