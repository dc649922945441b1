"""Re-derive a SWE-bench instance's FAIL_TO_PASS / PASS_TO_PASS by execution, with no environment given.

`swe-forge validate -i instances.jsonl` runs this per instance: the environment is found from the
repository's own manifests (`execution.env_candidates`: for Python a base image per Python version,
nearest to what the project declares, and its test extras or requirements in a venv; for the other
toolchains their image and the runner adapter the project uses), each candidate built and
proven in turn until one gives a verdict; then the proof of the validation stage (the test patch's
files once at base, N times with the gold patch) gives the lists, which are compared with the
instance's in the instance's own id form (SWE-bench's cut ids, `runners.swebench_ids`). No LLM call.
"""

from __future__ import annotations

from functools import partial

from docker.errors import ImageNotFound

from swe_forge_dagster.execution.env_candidates import environment_candidates
from swe_forge_dagster.execution.environment import image_available
from swe_forge_dagster.execution.languages.registry import runner_for
from swe_forge_dagster.execution.manifest import remember
from swe_forge_dagster.execution.patch import SplitPatch, split_diff
from swe_forge_dagster.execution.runners import swebench_ids
from swe_forge_dagster.export.swebench import SWEBenchInstance
from swe_forge_dagster.tasks.differences import explain_differences
from swe_forge_dagster.tasks.prove import TaskBuildError, TaskExecutor, TaskValidation
from swe_forge_dagster.tasks.revalidate import CHANGED, ERROR, INVALID, VALID, Revalidation

NOT_STARTED = "test suite did not start"


def instance_split(inst: SWEBenchInstance) -> SplitPatch:
    """The instance's patches as a split: the test files are those its test patch touches."""
    src, tests = split_diff(inst.patch), split_diff(inst.test_patch or "")
    return SplitPatch(
        inst.patch,
        inst.test_patch or "",
        src.src_files + src.test_files,
        tests.test_files or tests.src_files,
        src.binary_files,
    )


def prove_with_manifests(
    inst: SWEBenchInstance, executor: TaskExecutor, after_runs: int = 3
) -> tuple[TaskValidation | None, str | None, list[str]]:
    """(the first proof that gives a verdict, why none did, the recipes tried as `image: install`)."""
    executor.cache.ensure(inst.repo)
    executor.cache.fetch(inst.repo, [inst.base_commit])
    split = instance_split(inst)
    found = environment_candidates(
        executor.cache,
        inst.repo,
        inst.base_commit,
        split.src_files,
        available=partial(image_available, executor.client),
    )
    if not found.recipes:
        return None, found.problem, []
    tried: list[str] = []
    problem = None
    for recipe in found.recipes:
        tried.append(f"{recipe.base_image}: {recipe.install_commands[-1]}")
        try:
            result = executor.prove(inst.repo, inst.base_commit, split, recipe, after_runs=after_runs)
        except ImageNotFound:
            problem = f"base image {recipe.base_image} is not built (scripts/build-base-image.sh)"
            continue
        except TaskBuildError as exc:
            problem = str(exc)[:1000]
            continue
        verdict = result.validation
        if (verdict.reason or "").startswith(NOT_STARTED) or (not verdict.fail_to_pass and verdict.stuck):
            problem = verdict.reason
            continue  # an old code base on a new Python (no report, or modules that fail to import): next one
        remember(executor.cache, inst.repo, inst.base_commit, recipe)
        return result, None, tried
    return None, problem, tried


def revalidate_instance(
    inst: SWEBenchInstance, executor: TaskExecutor, source: str, after_runs: int = 3
) -> Revalidation:
    """Valid when the lists re-derived by execution equal the instance's, id for id (in its id form)."""
    try:
        result, problem, tried = prove_with_manifests(inst, executor, after_runs)
    except Exception as exc:  # the machine, not the task (a Docker or git failure): reported, the scan goes on
        return Revalidation(inst.instance_id, source, ERROR, f"could not run the proof: {type(exc).__name__}: {exc}")
    if result is None:
        return Revalidation(
            inst.instance_id, source, INVALID, f"no environment from the manifests: {problem}", recipes_tried=tried
        )
    verdict, runner = result.validation, runner_for(result.runner)
    f2p = swebench_ids(runner, verdict.fail_to_pass)
    p2p = [t for t in swebench_ids(runner, verdict.pass_to_pass) if t not in f2p]
    report = Revalidation(
        inst.instance_id,
        source,
        VALID,
        None,
        f2p,
        p2p,
        seconds=result.seconds,
        recipe=f"{result.image} ({tried[-1]})",
        recipes_tried=tried,
    )
    report.fail_to_pass_missing = sorted(set(inst.FAIL_TO_PASS) - set(f2p))
    report.fail_to_pass_extra = sorted(set(f2p) - set(inst.FAIL_TO_PASS))
    report.pass_to_pass_missing = sorted(set(inst.PASS_TO_PASS) - set(p2p))
    report.pass_to_pass_extra = sorted(set(p2p) - set(inst.PASS_TO_PASS))
    report.missing_fail_to_pass = report.fail_to_pass_missing
    differing = (
        report.fail_to_pass_missing
        + report.fail_to_pass_extra
        + report.pass_to_pass_missing
        + report.pass_to_pass_extra
    )
    report.differences = explain_differences(result, runner, differing, set(inst.FAIL_TO_PASS), set(f2p))
    if not verdict.accepted:
        report.status, report.reason = INVALID, verdict.reason
    elif (
        report.fail_to_pass_missing
        or report.fail_to_pass_extra
        or report.pass_to_pass_missing
        or (report.pass_to_pass_extra)
    ):
        report.status = CHANGED
        report.reason = (
            f"FAIL_TO_PASS {len(inst.FAIL_TO_PASS)} given / {len(f2p)} now, "
            f"PASS_TO_PASS {len(inst.PASS_TO_PASS)} / {len(p2p)}"
        )
    return report
