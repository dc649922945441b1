"""The task partition's assets: patch → environment → tests → validation → quality → `swe_task` | `task_rejection`.

Thin: each asset runs one stage of `tasks.stages.TaskBuilder` for its partition, records the
task's row in the `tasks` dataset (also on failure), and reports what the stage did. A rejected
task materializes its stages successfully with `status: rejected` and the reason (rejection is
an answer); an exception fails the step, so that one task's stage can be retried alone from the UI.
The last stage, `export_task`, materializes exactly one of two assets per partition: `swe_task`
(the exported directory) for an accepted task, `task_rejection` (stage and reason) for a rejected
one, so the partitions bar of `swe_task` is green for real tasks and a rejected task is told
apart at a glance (grey there, green in `task_rejection`). A task exported once and rejected on a
re-run keeps its older `swe_task` materialization; its newer `task_rejection` one says what holds.
`swe_dataset` (unpartitioned) rebuilds the SWE-bench JSONL/Parquet from the exported directories.
"""

from collections.abc import Callable, Iterator

import dagster as dg

from swe_forge_dagster.assets.partitions import task_partitions
from swe_forge_dagster.assets.triage import classified_prs
from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.export.dataset import export_dataset
from swe_forge_dagster.resources import LakeResource, LLMResource
from swe_forge_dagster.resources.tasks import TaskBuildResource
from swe_forge_dagster.tasks.stages import StageOutcome, TaskBuilder
from swe_forge_dagster.tasks.status import write_status
from swe_forge_dagster.tasks.work import TaskWork

TASK_GROUP = {"group_name": "tasks", "partitions_def": task_partitions, "op_tags": {"swe_forge/stage": "tasks"}}


def _facts_table(facts: dict[str, object]) -> str:
    rows = "\n".join(f"| {key} | {str(value).replace('|', '/')[:300]} |" for key, value in facts.items())
    return f"| fact | value |\n|---|---|\n{rows}"


def run_stage(
    context: dg.AssetExecutionContext,
    stage: str,
    tasks: TaskBuildResource,
    lake: LakeResource,
    work: Callable[[TaskBuilder, str], StageOutcome],
) -> dg.MaterializeResult:
    task_id = context.partition_key
    task = TaskWork(HomeLayout.of(tasks.home).work, task_id)
    shared = tasks.shared_files()
    if pulled := shared.pull(task_id):  # a store home: the stages before ran elsewhere, or in another container
        context.log.info(f"{task_id}: {pulled} file(s) of earlier stages taken from the store")
    try:
        outcome = work(tasks.builder(), task_id)  # Docker down fails here too, and is recorded below
    except Exception as exc:
        task.fail(stage, f"{type(exc).__name__}: {exc}")
        shared.push(task_id)
        write_status(lake.lake_dir, task)
        raise
    shared.push(task_id)  # before the row: a row never names results the store does not have
    row = write_status(lake.lake_dir, task)
    if outcome.status == "rejected":
        context.log.warning(f"{task_id} rejected at {stage}: {outcome.reason}")
    elif outcome.status == "passed_on":
        context.log.info(f"{task_id}: already rejected earlier ({outcome.reason}); nothing to do at {stage}")
    metadata: dict[str, object] = {
        "status": outcome.status,
        "task_status": row["status"],
        "work_dir": dg.MetadataValue.path(str(task.dir)),
    }
    if outcome.reason:
        metadata["reason"] = outcome.reason
    if outcome.facts:
        metadata["facts"] = dg.MetadataValue.md(_facts_table(outcome.facts))
    if "task_dir" in outcome.facts:
        metadata["task_dir"] = dg.MetadataValue.path(str(outcome.facts["task_dir"]))
    for name in ("environment.transcript.jsonl", "tests.transcript.jsonl"):
        if stage in name and task.path(name).is_file():
            metadata["transcript"] = dg.MetadataValue.path(str(task.path(name)))
    return dg.MaterializeResult(metadata=metadata)


@dg.asset(
    deps=[dg.AssetDep(classified_prs, partition_mapping=dg.AllPartitionMapping())],
    pool="task_build",
    code_version="1",
    **TASK_GROUP,
)
def task_patch(
    context: dg.AssetExecutionContext, tasks: TaskBuildResource, lake: LakeResource, llm: LLMResource
) -> dg.MaterializeResult:
    """The PR's change at its merge-base, split into patch and test_patch (both must apply), and its problem
    statement (the linked issues, else the LLM writer)."""
    return run_stage(context, "patch", tasks, lake, lambda b, t: b.patch(t, llm.client))


@dg.asset(deps=[task_patch], pool="task_build", code_version="1", **TASK_GROUP)
def task_environment(
    context: dg.AssetExecutionContext, tasks: TaskBuildResource, lake: LakeResource, llm: LLMResource
) -> dg.MaterializeResult:
    """Install and test commands (the repo's stored recipe, else the environment agent), proven by replay and
    cached as an image per (repo, recipe)."""
    return run_stage(context, "environment", tasks, lake, lambda b, t: b.environment(t, llm.client))


@dg.asset(deps=[task_environment], pool="task_build", code_version="1", **TASK_GROUP)
def task_tests(
    context: dg.AssetExecutionContext, tasks: TaskBuildResource, lake: LakeResource, llm: LLMResource
) -> dg.MaterializeResult:
    """The PR's own tests, or for a PR without tests the test agent's (transcript kept per task)."""
    return run_stage(context, "tests", tasks, lake, lambda b, t: b.tests(t, llm.client))


@dg.asset(deps=[task_tests], pool="task_build", code_version="1", **TASK_GROUP)
def task_validation(
    context: dg.AssetExecutionContext, tasks: TaskBuildResource, lake: LakeResource
) -> dg.MaterializeResult:
    """FAIL_TO_PASS / PASS_TO_PASS by execution in Docker: once at base+tests, N times with the fix."""
    return run_stage(context, "validation", tasks, lake, lambda b, t: b.validation(t))


@dg.asset(deps=[task_validation], pool="llm_api", code_version="1", **TASK_GROUP)
def task_quality(
    context: dg.AssetExecutionContext, tasks: TaskBuildResource, lake: LakeResource, llm: LLMResource
) -> dg.MaterializeResult:
    """Difficulty and, separately, quality (clear statement, behavioural tests, solvable); low quality rejects."""
    return run_stage(context, "quality", tasks, lake, lambda b, t: b.quality(t, llm.client))


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            "swe_task",
            deps=[task_quality],
            skippable=True,
            kinds={"yaml"},
            group_name="tasks",
            code_version="2",
            description="The exported task directory (workspace.yaml, prompt.md, "
            "checks.txt, environment.json, patches/): materialized for accepted tasks only.",
        ),
        dg.AssetSpec(
            "task_rejection",
            deps=[task_quality],
            skippable=True,
            group_name="tasks",
            code_version="1",
            description="Why the task was rejected (stage and reason): materialized for rejected tasks only.",
        ),
    ],
    partitions_def=task_partitions,
    op_tags=TASK_GROUP["op_tags"],
    can_subset=False,
)
def export_task(
    context: dg.AssetExecutionContext, tasks: TaskBuildResource, lake: LakeResource
) -> Iterator[dg.MaterializeResult]:
    """Export an accepted task's directory (`swe_task`), or record a rejected task's reason (`task_rejection`)."""
    result = run_stage(context, "export", tasks, lake, lambda b, t: b.export(t))
    exported = (result.metadata or {}).get("status") == "done"
    yield dg.MaterializeResult(asset_key="swe_task" if exported else "task_rejection", metadata=result.metadata)


TASK_STAGE_ASSETS = [task_patch, task_environment, task_tests, task_validation, task_quality, export_task]


@dg.asset(deps=["swe_task"], code_version="1", kinds={"parquet"}, group_name="tasks")
def swe_dataset(context: dg.AssetExecutionContext, tasks: TaskBuildResource) -> dg.MaterializeResult:
    """Every exported task as one SWE-bench-schema JSONL and Parquet file (`datasets` loads the Parquet)."""
    shared = tasks.shared_files()
    shared.pull_exports()  # with a store home, tasks exported by every machine
    report = export_dataset(tasks.output_path, tasks.dataset_dir)
    shared.push_datasets()
    for path, why in report.skipped.items():
        context.log.warning(f"left out {path}: {why}")
    tiers = "\n".join(f"| {tier} | {count} |" for tier, count in sorted(report.by_difficulty.items()))
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(report.instances),
            "skipped": len(report.skipped),
            "by_difficulty": dg.MetadataValue.md(f"| difficulty | tasks |\n|---|---|\n{tiers}"),
            "jsonl": dg.MetadataValue.path(str(report.jsonl)),
            "parquet": dg.MetadataValue.path(str(report.parquet)),
        }
    )
