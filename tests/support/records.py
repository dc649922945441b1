"""Hand-made task records and SWE-bench instances (export and validate tests need no Docker for them)."""

from __future__ import annotations

from typing import Any

from swe_forge_dagster.export.swebench import SWEBenchInstance
from swe_forge_dagster.export.task_dir import TaskRecord


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
