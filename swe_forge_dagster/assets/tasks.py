"""The task partition's assets: patch → environment → tests → validation → quality → `swe_task`.

Thin, and made from the stage declaration (`tasks.stage_declaration`): one asset per declared
stage, named, pooled and described there, each after the one before. Each runs its stage of
`tasks.stages.TaskBuilder` for its partition, records the task's row in the `tasks` dataset (also
on failure), and reports what the stage did.

One colour means one thing on every task asset. A partition is materialized (green) when its
stage ran to an answer, failed (red) when the stage raised (an error to retry from the UI, the
exception in the run's log), missing (grey) when it has not run. The answer itself is the
stage's partitioned asset check `accepted`: passed while the task is still accepted after the
stage, failed with severity WARN from the stage that rejected it on (description: the stage and
the reason). So the check's Partitions tab of any stage shows accepted tasks green and rejected
ones red, and the asset graph counts them. `swe_task` is the last stage: an accepted task's
exported directory, or, for a rejected one, the same failed `accepted` check.
`swe_dataset` (unpartitioned) rebuilds the SWE-bench JSONL/Parquet from the exported directories.
"""

import dagster as dg

from swe_forge_dagster.assets.partitions import task_partitions
from swe_forge_dagster.assets.steps import step_options
from swe_forge_dagster.common.dagster_names import TASKS_STAGE
from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.export.dataset import export_dataset
from swe_forge_dagster.resources import LakeResource, LLMResource
from swe_forge_dagster.resources.tasks import TaskBuildResource
from swe_forge_dagster.tasks.stage_declaration import FINAL, STAGES, LLMUse, Stage
from swe_forge_dagster.tasks.stages import ClientFactory
from swe_forge_dagster.tasks.status import write_status
from swe_forge_dagster.tasks.work import TaskWork

TASK_GROUP = {"group_name": "tasks", "partitions_def": task_partitions}


def _facts_table(facts: dict[str, object]) -> str:
    rows = "\n".join(f"| {key} | {str(value).replace('|', '/')[:300]} |" for key, value in facts.items())
    return f"| fact | value |\n|---|---|\n{rows}"


def run_stage(
    context: dg.AssetExecutionContext, stage: Stage, tasks: TaskBuildResource, lake: LakeResource, llm: ClientFactory
) -> dg.MaterializeResult:
    """Run `stage` on the partition's task, record its row in `tasks` (also on failure) and report what it did."""
    task_id = context.partition_key
    task = TaskWork(HomeLayout.of(tasks.home).work, task_id)
    shared = tasks.shared_files()
    if pulled := shared.pull(task_id):  # a store home: the stages before ran elsewhere, or in another container
        context.log.info(f"{task_id}: {pulled} file(s) of earlier stages taken from the store")
    try:
        outcome = tasks.builder().run(stage, task_id, llm)  # Docker down fails here too, and is recorded below
    except Exception as exc:
        task.fail(stage.name, f"{type(exc).__name__}: {exc}")
        shared.push(task_id)
        write_status(lake.lake_dir, task)
        raise
    shared.push(task_id)  # before the row: a row never names results the store does not have
    row = write_status(lake.lake_dir, task)
    if outcome.status == "rejected":
        context.log.warning(f"{task_id} rejected at {stage.name}: {outcome.reason}")
    elif outcome.status == "passed_on":
        context.log.info(f"{task_id}: already rejected earlier ({outcome.reason}); nothing to do at {stage.name}")
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
    if stage.transcript_file and task.path(stage.transcript_file).is_file():
        metadata["transcript"] = dg.MetadataValue.path(str(task.path(stage.transcript_file)))
    return dg.MaterializeResult(metadata=metadata, check_results=[outcome_check(stage, outcome.status, outcome.reason)])


ACCEPTED_CHECK = "accepted"


def outcome_check(stage: Stage, status: str, reason: str | None) -> dg.AssetCheckResult:
    """The stage's answer as its `accepted` check: passed while the task is accepted, WARN once rejected."""
    if status not in ("rejected", "passed_on"):
        return dg.AssetCheckResult(check_name=ACCEPTED_CHECK, passed=True, metadata={"status": status})
    where = f"rejected at {stage.name}" if status == "rejected" else "rejected at an earlier stage"
    return dg.AssetCheckResult(
        check_name=ACCEPTED_CHECK,
        passed=False,
        severity=dg.AssetCheckSeverity.WARN,
        description=f"{where}: {reason or 'no reason recorded'}",
        metadata={"status": status, "reason": reason or ""},
    )


def stage_asset(stage: Stage, upstream: dg.AssetDep | dg.AssetsDefinition) -> dg.AssetsDefinition:
    """The asset that runs `stage` (named, pooled and described by its declaration), after `upstream`.

    Its resources are what the stage needs: `llm` only for the stages declared to take an LLM client.
    """
    spec = {
        "name": stage.asset,
        "deps": [upstream],
        "code_version": stage.code_version,
        "description": stage.description,
        "check_specs": [
            dg.AssetCheckSpec(
                ACCEPTED_CHECK,
                asset=stage.asset,
                partitions_def=task_partitions,
                description="Still accepted after this stage: fails (WARN) from the stage that rejected the task "
                "on, with the stage and the reason.",
            )
        ],
        **TASK_GROUP,
        **step_options(TASKS_STAGE, stage.pool),
    }
    if stage.llm is LLMUse.NONE:

        @dg.asset(**spec)
        def without_llm(
            context: dg.AssetExecutionContext, tasks: TaskBuildResource, lake: LakeResource
        ) -> dg.MaterializeResult:
            return run_stage(context, stage, tasks, lake, None)

        return without_llm

    @dg.asset(**spec)
    def with_llm(
        context: dg.AssetExecutionContext, tasks: TaskBuildResource, lake: LakeResource, llm: LLMResource
    ) -> dg.MaterializeResult:
        return run_stage(context, stage, tasks, lake, llm.client)

    return with_llm


def build_task_stage_assets(classified: dg.AssetsDefinition) -> list[dg.AssetsDefinition]:
    """One asset per declared stage, in the declaration's order, each after the one before, the first after
    `classified` (`classified_prs`, on all of its hours), the last `swe_task` (`task_job` selects them)."""
    built: list[dg.AssetsDefinition] = []
    upstream: dg.AssetDep | dg.AssetsDefinition = dg.AssetDep(classified, partition_mapping=dg.AllPartitionMapping())
    for stage in STAGES:
        built.append(stage_asset(stage, upstream))
        upstream = built[-1]
    return built


@dg.asset(deps=[FINAL.asset], code_version="1", kinds={"parquet"}, group_name="tasks")
def swe_dataset(context: dg.AssetExecutionContext, tasks: TaskBuildResource) -> dg.MaterializeResult:
    """Every exported task as one SWE-bench-schema JSONL and Parquet file (`datasets` loads the Parquet)."""
    shared = tasks.shared_files()
    shared.pull_exports()  # with a store home, tasks exported by every machine
    report = export_dataset(tasks.output_path, tasks.dataset_dir)
    shared.push_datasets()
    for path, why in report.skipped.items():
        context.log.warning(f"left out {path}: {why}")
    task_repo = tasks.write_task_repo()  # SWE_FORGE_TASK_REPO: the same tasks as a SWE-bench 5 task repository
    for path, why in (task_repo.skipped if task_repo else {}).items():
        context.log.warning(f"left out of the task repository {path}: {why}")
    repo_metadata = (
        {"task_repo": dg.MetadataValue.path(str(task_repo.root)), "task_repo_tasks": len(task_repo.written)}
        if task_repo
        else {}
    )
    tiers = "\n".join(f"| {tier} | {count} |" for tier, count in sorted(report.by_difficulty.items()))
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(report.instances),
            "skipped": len(report.skipped),
            "by_difficulty": dg.MetadataValue.md(f"| difficulty | tasks |\n|---|---|\n{tiers}"),
            "jsonl": dg.MetadataValue.path(str(report.jsonl)),
            "parquet": dg.MetadataValue.path(str(report.parquet)),
            **repo_metadata,
        }
    )
