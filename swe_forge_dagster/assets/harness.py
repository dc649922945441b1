"""`eval_result` (per agent and task, pool `docker_harness`) and `eval_summary`: agents on exported tasks.

Thin: `eval_result` hands the task's exported directory to `harness.session.evaluate_and_record`,
the per-task function `swe-forge harness` runs too (it stores the row in `eval_results`), and
reports the verdict. Its partitions are (agent, task) pairs (`assets.partitions.eval_partitions`),
so every agent's latest verdict on a task stays visible, and the verdict is the partitioned check
`resolved`: passed when resolved, failed WARN when unresolved, failed ERROR when the run could not
judge (agent_error, test_error, setup_error, sanity_fail). A run evaluates the partition's agent: the
configured one, or one this lake evaluated before (`harness.agent_registry`), so a UI backfill over
the whole matrix re-runs each agent on its own row; an agent never seen here, or whose folder changed,
fails at once and says why.
`eval_summary` tabulates every agent with results, the CLI's included, with each agent's figures
as their own numeric metadata (one plotted series per agent).
A task that was not exported (rejected, still building) has nothing to evaluate and says so.
"""

import dagster as dg

from swe_forge_dagster.assets.partitions import eval_partitions
from swe_forge_dagster.common.dagster_names import (
    AGENT_DIMENSION,
    DOCKER_HARNESS_POOL,
    HARNESS_STAGE,
    STAGE_TAG,
    TASK_DIMENSION,
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
from swe_forge_dagster.resources import LakeResource
from swe_forge_dagster.resources.harness import HarnessResource
from swe_forge_dagster.resources.tasks import TaskBuildResource
from swe_forge_dagster.tasks.stage_declaration import FINAL
from swe_forge_dagster.tasks.status import read_status

NOT_CONFIGURED = (
    "no agent configured: set SWE_FORGE_AGENT=oracle, or SWE_FORGE_AGENT_DIR and SWE_FORGE_AGENT_CMD "
    "(or the `harness` resource in the launchpad)"
)
STATUSES = tuple(status.value for status in Status)
RESOLVED_CHECK = "resolved"


def verdict_check(status: str, reason: str) -> dg.AssetCheckResult:
    """The verdict as the `resolved` check: passed, WARN when unresolved (or when a task that was not exported
    could not be evaluated), ERROR when the run could not judge the agent."""
    if status == Status.RESOLVED.value:
        return dg.AssetCheckResult(check_name=RESOLVED_CHECK, passed=True, metadata={"status": status})
    judged = status in (Status.UNRESOLVED.value, "not evaluated")
    severity = dg.AssetCheckSeverity.WARN if judged else dg.AssetCheckSeverity.ERROR
    return dg.AssetCheckResult(
        check_name=RESOLVED_CHECK,
        passed=False,
        severity=severity,
        description=f"{status}: {reason or 'no reason given'}",
        metadata={"status": status},
    )


@dg.asset(
    deps=[dg.AssetDep(FINAL.asset, partition_mapping=dg.MultiToSingleDimensionPartitionMapping(TASK_DIMENSION))],
    partitions_def=eval_partitions,
    pool=DOCKER_HARNESS_POOL,
    group_name="harness",
    op_tags={STAGE_TAG: HARNESS_STAGE},
    kinds={"docker"},
    code_version="2",
    check_specs=[
        dg.AssetCheckSpec(
            RESOLVED_CHECK,
            asset="eval_result",
            partitions_def=eval_partitions,
            description="The agent resolved the task: fails WARN when unresolved, ERROR when the run could not "
            "judge it (agent_error, test_error, setup_error, sanity_fail).",
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
        return dg.MaterializeResult(
            metadata={"evaluated": False, "task_status": str(task.get("status"))},
            check_results=[verdict_check("not evaluated", f"the task was not exported ({task.get('status')})")],
        )
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
        check_results=[verdict_check(result.status.value, result.reason or "")],
    )


@dg.asset(deps=[eval_result], group_name="harness", code_version="3")
def eval_summary(context: dg.AssetExecutionContext, lake: LakeResource) -> dg.MaterializeResult:
    """Every agent's results over the tasks it was evaluated on (UI and CLI runs alike): the seed's counts and
    the resolved rate, a row per agent, and each agent's figures as their own numeric entries
    (`<agent>: resolved`, `<agent>: resolved_rate`, `<agent>: tasks`), so the metadata plots draw one series per
    agent. Gym episodes' verdicts are among the results (agent `gym:<name>`), and their rewards per (agent, task)
    are `gym_rewards`."""
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
            f"{agent}: resolved_rate": summary["resolved_rate"],
            f"{agent}: tasks": summary["total"],
        }
        context.log.info(f"{agent}: {summary}")
    gym = reward_rows(lake.lake_dir)
    return dg.MaterializeResult(
        metadata={
            "agents": len(by_agent),
            "results": len(rows),
            "by_agent": dg.MetadataValue.md("\n".join(lines)),
            **series,
            "dataset": dg.MetadataValue.path(str(lake.lake_dir / EVAL_RESULTS)),
            "gym_rewards": dg.MetadataValue.md(reward_table(gym)),
            "gym_pairs": len(gym),
            "gym_episodes": dg.MetadataValue.path(str(lake.lake_dir / EPISODES)),
        }
    )


HARNESS_ASSETS = [eval_result, eval_summary]
