"""`eval_result` (per agent and task, pool `docker_harness`) and `eval_summary`: agents on exported tasks.

Thin: `eval_result` hands the task's exported directory to `harness.session.evaluate_and_record`,
the per-task function `swe-forge harness` runs too (it stores the row in `eval_results`), and
reports the verdict. Its partitions are (agent, task) pairs (`assets.partitions.eval_partitions`),
so every agent's latest verdict on a task stays visible. A run evaluates the partition's agent: the
configured one, or one this lake evaluated before (`harness.agent_registry`), so a UI backfill over
the whole matrix re-runs each agent on its own row; an agent never seen here, or whose folder changed,
fails at once and says why.

The partitioned check is `harness_ok`, not the verdict itself. Dagster's check partition grid paints a
task with no agent selected (and an agent with no task selected) in the worst status over the other
dimension: a check that failed whenever an agent did not resolve a task painted every task red as soon
as one agent (the empty agent) never resolves, which read as "every task failed". One check per agent
cannot be declared (agents are dynamic partitions, check specs are fixed at load time, and a check's
partitions must be its asset's), so the check says what is wrong with the evaluation instead: it passes
for every verdict about the agent (resolved, unresolved, agent_error; `status` and `resolved` in its
metadata and description) and for a rejected task (`status: rejected`, nothing to evaluate), and fails
only when the harness could not judge: ERROR for setup_error and test_error, WARN for sanity_fail (the
task is broken) and for a task evaluated before it was exported. The verdicts themselves, agent by agent,
are `eval_summary`'s `verdicts` table and each partition's metadata.

`eval_summary` tabulates every agent with results, the CLI's included, with each agent's figures as
their own numeric metadata (one plotted series per agent), the `verdicts` table (a row per task, a
column per agent), and `resolved_rate_by_run`: a chart of each agent's resolved rate over its last runs
labelled with each run's time to the second (Dagster's own plots label their time axis to the minute, so
runs seconds apart all read the same minute there). It also records, for every (agent, rejected task)
cell of `eval_result` never materialized, a runless materialization and a passed `harness_ok` result
saying `status: rejected`: Dagster's partition grid shows a partition with no materialization as
Missing and has no other status, so this is how a rejected task's cells read rejected (the metadata)
rather than Missing; running `eval_result` on such a partition records the same.
"""

import datetime as dt

import dagster as dg

from swe_forge_dagster.assets.partitions import eval_partitions
from swe_forge_dagster.assets.steps import step_options
from swe_forge_dagster.common.dagster_names import (
    AGENT_DIMENSION,
    AGENT_PARTITIONS,
    DOCKER_HARNESS_POOL,
    HARNESS_STAGE,
    TASK_DIMENSION,
    TASK_PARTITIONS,
)
from swe_forge_dagster.gym.episodes import EPISODES, reward_rows, reward_table
from swe_forge_dagster.harness import Harness, Status, load_task_dir
from swe_forge_dagster.harness.agent_registry import UnknownAgent, config_for, record_agent
from swe_forge_dagster.harness.session import evaluate_and_record
from swe_forge_dagster.harness.store import (
    EVAL_RESULTS,
    read_results,
    result_path,
    summaries_by_agent,
)
from swe_forge_dagster.harness.summary_views import REJECTED, rate_history_svg, svg_markdown, verdict_matrix
from swe_forge_dagster.resources import LakeResource
from swe_forge_dagster.resources.harness import HarnessResource
from swe_forge_dagster.resources.tasks import TaskBuildResource
from swe_forge_dagster.tasks.stage_declaration import FINAL
from swe_forge_dagster.tasks.status import read_status
from swe_forge_dagster.wiring.catalog import query

NOT_CONFIGURED = (
    "no agent configured: set SWE_FORGE_AGENT=oracle, or SWE_FORGE_AGENT_DIR and SWE_FORGE_AGENT_CMD "
    "(or the `harness` resource in the launchpad)"
)
STATUSES = tuple(status.value for status in Status)
HARNESS_OK_CHECK = "harness_ok"
NOT_EVALUATED = "not evaluated"
JUDGED = frozenset({Status.RESOLVED.value, Status.UNRESOLVED.value, Status.AGENT_ERROR.value, REJECTED})
"""Outcomes the check passes: a verdict about the agent, or a rejected task that has nothing to evaluate."""
HARNESS_FAULTS = frozenset({Status.SETUP_ERROR.value, Status.TEST_ERROR.value})
"""Outcomes that fail the check with severity ERROR: the harness could not run the evaluation."""
RATE_SUFFIX = ": resolved_rate"
HISTORY_RUNS = 12
"""Runs of `eval_summary` in `resolved_rate_by_run` (this one and the ones before it)."""


def outcome_check(status: str, reason: str) -> dg.AssetCheckResult:
    """The `harness_ok` check of one (agent, task): passed for a verdict (or a rejected task), failed ERROR when
    the harness could not judge, failed WARN when the task is broken (sanity_fail) or was not exported."""
    metadata = {"status": status, "resolved": status == Status.RESOLVED.value}
    description = f"{status}: {reason or 'no reason given'}"
    if status in JUDGED:
        return dg.AssetCheckResult(check_name=HARNESS_OK_CHECK, passed=True, description=description, metadata=metadata)
    severity = dg.AssetCheckSeverity.ERROR if status in HARNESS_FAULTS else dg.AssetCheckSeverity.WARN
    return dg.AssetCheckResult(
        check_name=HARNESS_OK_CHECK, passed=False, severity=severity, description=description, metadata=metadata
    )


def rejected_outcome(why: str) -> tuple[dict[str, object], dg.AssetCheckResult]:
    """What `eval_result` records for a rejected task (`why`: its stage and reason): metadata and a passed check."""
    reason = f"{why}; nothing to evaluate"
    metadata = {"evaluated": False, "status": REJECTED, "task_status": REJECTED, "reason": reason}
    return metadata, outcome_check(REJECTED, reason)


def not_exported(task: dict) -> dg.MaterializeResult:
    """A task without an exported directory: `rejected` (a settled outcome, the check passes) or not exported yet."""
    if task.get("status") == REJECTED:
        metadata, check = rejected_outcome(f"{task.get('stage')}: {task.get('reason')}")
        return dg.MaterializeResult(metadata=metadata, check_results=[check])
    reason = f"the task was not exported ({task.get('status')})"
    return dg.MaterializeResult(
        metadata={
            "evaluated": False,
            "status": NOT_EVALUATED,
            "task_status": str(task.get("status")),
            "reason": reason,
        },
        check_results=[outcome_check(NOT_EVALUATED, reason)],
    )


@dg.asset(
    deps=[dg.AssetDep(FINAL.asset, partition_mapping=dg.MultiToSingleDimensionPartitionMapping(TASK_DIMENSION))],
    partitions_def=eval_partitions,
    **step_options(HARNESS_STAGE, DOCKER_HARNESS_POOL),
    group_name="harness",
    kinds={"docker"},
    code_version="2",
    check_specs=[
        dg.AssetCheckSpec(
            HARNESS_OK_CHECK,
            asset="eval_result",
            partitions_def=eval_partitions,
            description="The harness judged the agent on the task: passes for every verdict (resolved, unresolved, "
            "agent_error: the verdict is in the metadata) and for a rejected task; fails ERROR when the run could "
            "not judge (setup_error, test_error), WARN when the task is broken (sanity_fail) or not exported.",
        )
    ],
)
def eval_result(
    context: dg.AssetExecutionContext, harness: HarnessResource, lake: LakeResource, tasks: TaskBuildResource
) -> dg.MaterializeResult:
    """The partition's agent on the partition's task in Docker: resolved, unresolved, agent_error, test_error,
    setup_error or sanity_fail, with every check's result."""
    if not harness.configured:
        raise dg.Failure(NOT_CONFIGURED, allow_retries=False)
    keys = eval_partitions.get_partition_key_from_str(str(context.partition_key)).keys_by_dimension
    task_id = keys[TASK_DIMENSION]
    try:  # the partition's agent: the configured one, or one this lake evaluated before (`agent_registry`)
        config = config_for(lake.lake_dir, keys[AGENT_DIMENSION], harness.config(context.run.run_id))
    except UnknownAgent as exc:
        raise dg.Failure(str(exc), allow_retries=False) from exc
    record_agent(lake.lake_dir, config)
    task = read_status(lake.lake_dir, task_id) or {}
    if task.get("status") != "accepted" or not task.get("task_dir"):
        context.log.info(f"{task_id} was not exported ({task.get('status')}): nothing to evaluate")
        return not_exported(task)
    task_dir = tasks.shared_files().export_dir(task_id, task["task_dir"])  # exported elsewhere?
    if task_dir is None:
        where = task["task_dir"]
        raise dg.Failure(f"{task_id} is accepted but its exported directory is neither at {where} nor stored")
    loaded = load_task_dir(task_dir, default_image=config.docker_image)
    with Harness(config) as runner:  # each stage (environment, sanity, agent, verify) shows up in the run's log
        result = evaluate_and_record(
            runner,
            loaded,
            lake_dir=lake.lake_dir,
            run_id=context.run.run_id,
            on_stage=lambda stage: context.log.info(f"{loaded.task_id}: {stage}"),
        )
    path = result_path(lake.lake_dir, config.agent_label, result.task_id)
    context.log.info(f"{result.task_id}: {result.status.value} ({result.reason or 'no reason given'})")
    checks = [("FAIL_TO_PASS", result.fail_to_pass), ("PASS_TO_PASS", result.pass_to_pass)]
    table = "\n".join(
        f"| {kind} | {c.test_id or c.command} | {'pass' if c.passed else 'FAIL'} |"
        for kind, group in checks
        for c in group
    )
    return dg.MaterializeResult(
        metadata={
            "evaluated": True,
            "agent": config.agent_label,
            "status": result.status.value,
            "resolved": result.status.value == "resolved",
            "reason": result.reason or "",
            "agent_duration_secs": result.agent_duration_secs or 0.0,
            "total_duration_secs": result.total_duration_secs or 0.0,
            "checks": dg.MetadataValue.md(f"| kind | check | result |\n|---|---|---|\n{table}"),
            "path": dg.MetadataValue.path(str(path)),
        },
        check_results=[outcome_check(result.status.value, result.reason or "")],
    )


@dg.asset(deps=[eval_result], group_name="harness", code_version="3")
def eval_summary(context: dg.AssetExecutionContext, lake: LakeResource) -> dg.MaterializeResult:
    """Every agent's results over the tasks it was evaluated on (UI and CLI runs alike): the seed's counts and
    the resolved rate, a row per agent, and each agent's figures as their own numeric entries
    (`<agent>: resolved`, `<agent>: resolved_rate`, `<agent>: tasks`), so the metadata plots draw one series per
    agent; `verdicts` (task by agent) and `resolved_rate_by_run` (the rates over the last runs, each run labelled
    to the second). Gym episodes' verdicts are among the results (agent `gym:<name>`), and their rewards per
    (agent, task) are `gym_rewards`. Marks `eval_result`'s never-materialized cells of rejected tasks rejected."""
    rows = read_results(lake.lake_dir)
    by_agent = summaries_by_agent(rows)
    header = "| agent | tasks | " + " | ".join(STATUSES) + " | resolved rate | avg agent s |"
    lines = [header, "|---" * (len(STATUSES) + 4) + "|"]
    series: dict[str, float | int] = {}
    for agent, summary in by_agent.items():
        counts = " | ".join(str(summary[status]) for status in STATUSES)
        name = agent.replace("|", "/")
        lines.append(
            f"| {name} | {summary['total']} | {counts} | {summary['resolved_rate']:.1%} | "
            f"{summary['avg_agent_time_secs']} |"
        )
        series |= {
            f"{agent}: resolved": summary["resolved"],
            f"{agent}{RATE_SUFFIX}": summary["resolved_rate"],
            f"{agent}: tasks": summary["total"],
        }
        context.log.info(f"{agent}: {summary}")
    rejected = rejected_tasks(context.instance, lake)
    marked = mark_rejected_cells(context.instance, context.asset_key, rejected)
    runs = [*earlier_rates(context.instance, context.asset_key), (dt.datetime.now(dt.UTC), rates_of(series))]
    gym = reward_rows(lake.lake_dir)
    return dg.MaterializeResult(
        metadata={
            "agents": len(by_agent),
            "results": len(rows),
            "by_agent": dg.MetadataValue.md("\n".join(lines)),
            **series,
            "verdicts": dg.MetadataValue.md(verdict_matrix(rows, sorted(rejected))),
            "resolved_rate_by_run": dg.MetadataValue.md(
                svg_markdown(rate_history_svg(runs, "resolved rate per agent, run by run"), "resolved rate by run")
            ),
            "rejected_cells_marked": marked,
            "dataset": dg.MetadataValue.path(str(lake.lake_dir / EVAL_RESULTS)),
            "gym_rewards": dg.MetadataValue.md(reward_table(gym)),
            "gym_pairs": len(gym),
            "gym_episodes": dg.MetadataValue.path(str(lake.lake_dir / EPISODES)),
        }
    )


def rates_of(metadata: dict) -> dict[str, float]:
    """Each agent's resolved rate among `eval_summary` metadata (plain numbers or Dagster metadata values)."""
    rates = {}
    for label, value in metadata.items():
        number = getattr(value, "value", value)
        if label.endswith(RATE_SUFFIX) and isinstance(number, int | float):
            rates[label.removesuffix(RATE_SUFFIX)] = float(number)
    return rates


def earlier_rates(instance: dg.DagsterInstance, key: dg.AssetKey) -> list[tuple[dt.datetime, dict[str, float]]]:
    """The resolved rates of the `HISTORY_RUNS - 1` materializations of `eval_summary` before this one, oldest
    first, each at its own time."""
    records = instance.fetch_materializations(key, limit=HISTORY_RUNS - 1).records
    found = []
    for record in reversed(records):
        materialization = record.asset_materialization
        if materialization is not None:
            when = dt.datetime.fromtimestamp(record.timestamp, dt.UTC)
            found.append((when, rates_of(dict(materialization.metadata))))
    return found


def rejected_tasks(instance: dg.DagsterInstance, lake: LakeResource) -> dict[str, str]:
    """The task partitions whose task was rejected, with the stage and reason."""
    partitions = set(instance.get_dynamic_partitions(TASK_PARTITIONS))
    table = query(lake.lake_dir, f"SELECT task_id, stage, reason FROM tasks WHERE status = '{REJECTED}'")
    return {
        row["task_id"]: f"{row['stage']}: {row['reason']}" for row in table.to_pylist() if row["task_id"] in partitions
    }


def mark_rejected_cells(instance: dg.DagsterInstance, summary_key: dg.AssetKey, rejected: dict[str, str]) -> int:
    """Record, for each (agent, rejected task) of `eval_result` never materialized, what running it would record:
    a materialization and a passed `harness_ok` saying `status: rejected` (runless: no run, no Docker). How many.
    The check result names the materialization it judged, as a run's does: Dagster shows a check's result only
    while it targets the partition's latest materialization."""
    from dagster._core.definitions.asset_checks.asset_check_evaluation import (
        AssetCheckEvaluationTargetMaterializationData,
    )

    key = eval_result.key
    done = instance.get_materialized_partitions(key)
    marked = 0
    for agent in instance.get_dynamic_partitions(AGENT_PARTITIONS):
        for task_id, why in sorted(rejected.items()):
            partition = str(dg.MultiPartitionKey({AGENT_DIMENSION: agent, TASK_DIMENSION: task_id}))
            if partition in done:
                continue
            metadata, check = rejected_outcome(why)
            instance.report_runless_asset_event(
                dg.AssetMaterialization(
                    asset_key=key,
                    partition=partition,
                    description=f"recorded by {summary_key.to_user_string()}: the task was rejected",
                    metadata={**metadata, "recorded_by": summary_key.to_user_string()},
                )
            )
            cell = dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition])
            (recorded,) = instance.fetch_materializations(cell, limit=1).records
            instance.report_runless_asset_event(
                dg.AssetCheckEvaluation(
                    asset_key=key,
                    check_name=HARNESS_OK_CHECK,
                    passed=check.passed,
                    partition=partition,
                    description=check.description,
                    metadata=check.metadata,
                    target_materialization_data=AssetCheckEvaluationTargetMaterializationData(
                        storage_id=recorded.storage_id, run_id=recorded.run_id, timestamp=recorded.timestamp
                    ),
                )
            )
            marked += 1
    return marked


HARNESS_ASSETS = [eval_result, eval_summary]
