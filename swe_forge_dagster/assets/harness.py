"""`eval_result` (per task, pool `docker_harness`) and `eval_summary`: the configured agent on exported tasks.

Thin: `eval_result` hands the task's exported directory to `harness.session.evaluate_and_record`,
the per-task function `swe-forge harness` runs too (it stores the row in `eval_results`), and
reports the verdict. `eval_summary` tabulates every agent with results, the CLI's included.
A task that was not exported (rejected, still building) has nothing to evaluate and says so.
"""

import dagster as dg

from swe_forge_dagster.assets.partitions import task_partitions
from swe_forge_dagster.gym.episodes import EPISODES, reward_rows, reward_table
from swe_forge_dagster.harness import Harness, Status, load_task_dir
from swe_forge_dagster.harness.session import evaluate_and_record
from swe_forge_dagster.harness.store import EVAL_RESULTS, read_results, result_path, summaries_by_agent, summary_of
from swe_forge_dagster.resources import LakeResource
from swe_forge_dagster.resources.harness import HarnessResource
from swe_forge_dagster.resources.tasks import TaskBuildResource
from swe_forge_dagster.tasks.status import read_status

NOT_CONFIGURED = (
    "no agent configured: set SWE_FORGE_AGENT=oracle, or SWE_FORGE_AGENT_DIR and SWE_FORGE_AGENT_CMD "
    "(or the `harness` resource in the launchpad)"
)
STATUSES = tuple(status.value for status in Status)


@dg.asset(
    deps=["swe_task"],
    partitions_def=task_partitions,
    pool="docker_harness",
    group_name="harness",
    op_tags={"swe_forge/stage": "harness"},
    kinds={"docker"},
    code_version="1",
)
def eval_result(
    context: dg.AssetExecutionContext, harness: HarnessResource, lake: LakeResource, tasks: TaskBuildResource
) -> dg.MaterializeResult:
    """The configured agent on this task in Docker: resolved, unresolved, agent_error, test_error, setup_error
    or sanity_fail, with every check's result."""
    if not harness.configured:
        raise dg.Failure(NOT_CONFIGURED, allow_retries=False)
    task = read_status(lake.lake_dir, context.partition_key) or {}
    if task.get("status") != "accepted" or not task.get("task_dir"):
        context.log.info(f"{context.partition_key} was not exported ({task.get('status')}): nothing to evaluate")
        return dg.MaterializeResult(metadata={"evaluated": False, "task_status": str(task.get("status"))})
    task_dir = tasks.shared_files().export_dir(context.partition_key, task["task_dir"])  # exported elsewhere?
    if task_dir is None:
        raise dg.Failure(
            f"{context.partition_key} is accepted but its exported directory is neither at "
            f"{task['task_dir']} nor on the store"
        )
    config = harness.config(context.run.run_id)
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
        }
    )


@dg.asset(deps=[eval_result], group_name="harness", code_version="2")
def eval_summary(
    context: dg.AssetExecutionContext, harness: HarnessResource, lake: LakeResource
) -> dg.MaterializeResult:
    """Every agent's results over the tasks it was evaluated on (UI and CLI runs alike): the seed's counts and
    the resolved rate, a row per agent; the configured agent's figures also as plain numbers. Gym episodes'
    verdicts are among the results (agent `gym:<name>`), and their rewards per (agent, task) are `gym_rewards`."""
    rows = read_results(lake.lake_dir)
    by_agent = summaries_by_agent(rows)
    header = "| agent | tasks | " + " | ".join(STATUSES) + " | resolved rate | avg agent s |"
    lines = [header, "|---" * (len(STATUSES) + 4) + "|"]
    for agent, summary in by_agent.items():
        counts = " | ".join(str(summary[status]) for status in STATUSES)
        name = agent.replace("|", "/")
        lines.append(
            f"| {name} | {summary['total']} | {counts} | {summary['resolved_rate']:.1%} | "
            f"{summary['avg_agent_time_secs']} |"
        )
    agent = harness.label if harness.configured else None
    mine = summary_of(row for row in rows if row.get("agent") == agent) if agent else summary_of(rows)
    gym = reward_rows(lake.lake_dir)
    for name, summary in by_agent.items():
        context.log.info(f"{name}: {summary}")
    return dg.MaterializeResult(
        metadata={
            "agents": len(by_agent),
            "by_agent": dg.MetadataValue.md("\n".join(lines)),
            "agent": agent or "all agents",
            "total": mine["total"],
            "resolved": mine["resolved"],
            "resolved_rate": mine["resolved_rate"],
            "avg_agent_time_secs": mine["avg_agent_time_secs"],
            "dataset": dg.MetadataValue.path(str(lake.lake_dir / EVAL_RESULTS)),
            "gym_rewards": dg.MetadataValue.md(reward_table(gym)),
            "gym_pairs": len(gym),
            "gym_episodes": dg.MetadataValue.path(str(lake.lake_dir / EPISODES)),
        }
    )


HARNESS_ASSETS = [eval_result, eval_summary]
