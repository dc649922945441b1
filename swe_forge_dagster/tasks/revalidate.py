"""Re-prove exported tasks by execution: do their FAIL_TO_PASS / PASS_TO_PASS still hold?

`swe-forge validate` runs this on task directories (ours, found at any depth): the same proof
as the validation stage (environment image from the task's recipe, the test-patch files once at
base+test_patch and N times with the patch, fresh no-network containers), from the task's own
files, then compares the lists with the recorded ones. A task someone edited by hand, a recipe
that no longer installs, or a test that turned flaky shows up here before an agent is judged on it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import docker

from swe_forge_dagster.environments.environment import EnvRecipe
from swe_forge_dagster.execution.patch import SplitPatch, split_diff
from swe_forge_dagster.execution.repo_box import WorkspaceError
from swe_forge_dagster.execution.repo_cache import RepoCacheError
from swe_forge_dagster.execution.runtime_record import runtime_record
from swe_forge_dagster.export.task_dir import TaskDirError, TaskRecord, read_task_dir
from swe_forge_dagster.languages.registry import is_test_path
from swe_forge_dagster.llm.client import LLMClient, LLMError
from swe_forge_dagster.llm.functions import score_quality
from swe_forge_dagster.tasks.prove import TaskBuildError, TaskExecutor

VALID, CHANGED, INVALID, ERROR = "valid", "changed", "invalid", "error"
NOT_JUDGEABLE = "not_judgeable"
"""Every FAIL_TO_PASS test is set aside (it needs a network host the sandbox cannot reach, or is not a test id):
nothing here can show whether the task holds; the instance's limit, not the environment's."""


@dataclass
class Revalidation:
    task_id: str
    path: str
    status: str  # valid | changed | invalid | not_judgeable | error
    reason: str | None = None
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    missing_fail_to_pass: list[str] = field(default_factory=list)  # recorded, no longer FAIL_TO_PASS
    seconds: float = 0.0
    quality_score: float | None = None
    quality_passed: bool | None = None
    # SWE-bench inputs (`revalidate_instances`): the lists compared in the input's id form, and the environment
    fail_to_pass_missing: list[str] = field(default_factory=list)
    fail_to_pass_extra: list[str] = field(default_factory=list)
    pass_to_pass_missing: list[str] = field(default_factory=list)
    pass_to_pass_extra: list[str] = field(default_factory=list)
    recipe: str | None = None
    recipes_tried: list[str] = field(default_factory=list)
    differences: dict[str, str] = field(default_factory=dict)
    """Each id in which the lists differ from the input's -> its cause (outcomes per run, the failure's reason)."""
    runtime: dict[str, str] = field(default_factory=dict)
    """What the environment ran on, as its image records it (`execution.runtime_record`: versions, resolution date)."""
    set_aside: dict[str, str] = field(default_factory=dict)
    """Each given id that cannot be judged here -> why (malformed, needs the network): left out of the comparison."""

    @property
    def instance_id(self) -> str:
        return self.task_id


def _split(task: TaskRecord) -> SplitPatch:
    patch, test_patch = task.instance.patch, task.instance.test_patch or ""
    src = split_diff(patch, is_test_path)
    tests = split_diff(test_patch, is_test_path)
    test_files = task.test_files or tests.test_files or tests.src_files
    return SplitPatch(patch, test_patch, src.src_files + src.test_files, test_files, src.binary_files)


def revalidate_dir(
    path: Path, executor: TaskExecutor, after_runs: int = 3, llm: LLMClient | None = None
) -> Revalidation:
    try:
        task = read_task_dir(path)
    except (TaskDirError, ValueError) as exc:
        return Revalidation(path.name, str(path), ERROR, f"unreadable task directory: {exc}")
    recipe = EnvRecipe(tuple(task.install_commands), task.test_command, task.image)
    inst = task.instance
    try:
        executor.cache.ensure(inst.repo)
        result = executor.prove(inst.repo, inst.base_commit, _split(task), recipe, after_runs=after_runs)
    except (TaskBuildError, RepoCacheError) as exc:
        return Revalidation(task.task_id, str(path), INVALID, str(exc))
    except (docker.errors.DockerException, subprocess.SubprocessError, OSError, WorkspaceError) as exc:
        # The machine, not the task: a missing image, a Docker API error. Reported, and the scan goes on.
        return Revalidation(task.task_id, str(path), ERROR, f"could not run the proof: {type(exc).__name__}: {exc}")
    verdict = result.validation
    # compared by full ids when the task has them (ours since they were kept), else as recorded
    recorded_f2p = inst.fail_to_pass_full or inst.FAIL_TO_PASS
    recorded_p2p = inst.pass_to_pass_full if inst.fail_to_pass_full else inst.PASS_TO_PASS
    report = Revalidation(
        task.task_id,
        str(path),
        VALID,
        None,
        verdict.fail_to_pass,
        verdict.pass_to_pass,
        sorted(set(recorded_f2p) - set(verdict.fail_to_pass)),
        result.seconds,
    )
    report.runtime = runtime_record(executor.client, result.image)
    if not verdict.accepted:
        report.status, report.reason = INVALID, verdict.reason
    elif (verdict.fail_to_pass, verdict.pass_to_pass) != (sorted(recorded_f2p), sorted(recorded_p2p)):
        report.status = CHANGED
        report.reason = (
            f"FAIL_TO_PASS {len(recorded_f2p)} recorded / {len(verdict.fail_to_pass)} now, "
            f"PASS_TO_PASS {len(recorded_p2p)} / {len(verdict.pass_to_pass)}"
        )
    if llm is not None:
        try:
            judgement = score_quality(
                llm, inst.repo, inst.problem_statement, inst.patch, inst.test_patch or "", item=task.task_id
            )
            report.quality_score, report.quality_passed = judgement.quality_score, judgement.passed
        except LLMError as exc:
            report.reason = f"{report.reason + '; ' if report.reason else ''}quality not scored: {exc}"
    return report
