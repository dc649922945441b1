"""`swe-forge demo`: the pipeline end to end on a generated world, with no keys and no network but package registries.

Two generated GH Archive hours (one classic payload, one trimmed 2025 payload) in a local
`file://` mirror, and the GitHub twin on 127.0.0.1 serving a world consistent with them. The
real assets run through Dagster, recorded in the demo's own instance: ingest, candidates,
GitHub enrichment and the local filter, and LLM difficulty triage against the OpenAI-compatible
twin. Then the task stage: hours whose PRs live in local git remotes (the task world) become
task partitions and run `task_job` (environment and test agents answered by the twin, validation
by execution in Docker), and `swe_dataset` exports the accepted ones. One of those PRs is in a
JavaScript repository (npm + mocha): its environment comes from its manifests on the local Node
image (`swe-forge-node:bookworm`) with mocha installed from the npm registry (through the host's CA
bundle, `host_ca_bundle`), which the demo builds when absent, as it builds the sandbox image; without the image
or the registry it is rejected before any LLM call, with why.

All of the demo's hours are recent (the day before the task world's, which end at the last complete hour) unless
SWE_FORGE_START_DATE is set, and its home keeps its world (`world_home`): the home's `settings.env` starts the
hourly partitions on the demo's first day and points every later command (`swe-forge dev`, `ingest`) at the
demo's world, whose GitHub and LLM twins those commands bring back up.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from swe_forge_dagster.common.dagster_names import HOURLY_PIPELINE_JOB
from swe_forge_dagster.common.invocation import next_step
from swe_forge_dagster.common.terminal import inert
from swe_forge_dagster.demo.world_home import DEMO_LLM_KEY_ENV, DEMO_TOKEN_ENV, demo_twins, write_demo_home
from swe_forge_dagster.demo.worlds.gharchive_world import TRIMMED_SINCE, write_hour
from swe_forge_dagster.gharchive.hours import partition_key
from swe_forge_dagster.gharchive.parse import parse_hour
from swe_forge_dagster.lake.render import render
from swe_forge_dagster.settings import Settings

if TYPE_CHECKING:
    from swe_forge_dagster.demo.tasks_stage import TaskStageResult

SUMMARY_SQL = """
SELECT e.dt, e.hour, any_value(e.payload_format) AS payload, count(*) AS pr_events,
       count(*) FILTER (WHERE e.action = 'closed') AS closed,
       (SELECT count(*) FROM pr_candidates c WHERE c.dt = e.dt AND c.hour = e.hour AND c.status = 'candidate')
           AS candidates,
       (SELECT count(*) FROM enriched_prs p WHERE p.dt = e.dt AND p.hour = e.hour AND p.status = 'accepted')
           AS accepted,
       (SELECT count(*) FROM classified_prs t WHERE t.dt = e.dt AND t.hour = e.hour AND t.difficulty = 'easy')
           AS easy,
       (SELECT count(*) FROM classified_prs t WHERE t.dt = e.dt AND t.hour = e.hour AND t.difficulty = 'medium')
           AS medium,
       (SELECT count(*) FROM classified_prs t WHERE t.dt = e.dt AND t.hour = e.hour AND t.difficulty = 'hard')
           AS hard
FROM gharchive_pr_events e GROUP BY ALL ORDER BY e.dt, e.hour
"""
LLM_SQL = (
    "SELECT stage, count(*) AS calls, sum(prompt_tokens) AS tokens_in, sum(completion_tokens) AS tokens_out, "
    "round(sum(cost), 4) AS cost_usd FROM llm_calls GROUP BY 1"
)
HARNESS_SQL = """
SELECT split_part(agent, ' @ ', 1) AS agent, count(*) AS tasks, count(*) FILTER (WHERE status = 'resolved') AS resolved,
       count(*) FILTER (WHERE status = 'unresolved') AS unresolved,
       count(*) FILTER (WHERE status NOT IN ('resolved', 'unresolved')) AS errors,
       round(avg(agent_duration_secs), 1) AS avg_agent_s, round(avg(total_duration_secs), 1) AS avg_total_s
FROM eval_results GROUP BY ALL ORDER BY resolved DESC
"""
REASONS_SQL = """
SELECT stage, reason, count(*) AS prs FROM enriched_prs WHERE status = 'rejected'
GROUP BY ALL ORDER BY prs DESC LIMIT 8
"""


def demo_hours(settings: Settings, newest: dt.datetime) -> list[dt.datetime]:
    """The two generated hours, before the task world's (`newest` and the hours just before it).

    By default both on the day before `newest`, so that the demo's home starts its hourly partitions that day and
    the UI shows days of hours, not years: both in the trimmed payload GitHub ships since 2025-10-07. With
    SWE_FORGE_START_DATE set: an hour at the start date (the classic payload when it is before 2025-10-07) and a
    trimmed-payload hour."""
    if "start_date" not in settings.model_fields_set:
        day = dt.datetime.combine((newest - dt.timedelta(days=1)).date(), dt.time(), tzinfo=dt.UTC)
        return [day + dt.timedelta(hours=6), day + dt.timedelta(hours=18)]
    start = dt.datetime.combine(settings.start_date, dt.time(), tzinfo=dt.UTC)
    trimmed = max(start, TRIMMED_SINCE) + dt.timedelta(hours=12)
    return sorted({start, trimmed})


def run_demo(settings: Settings, home: Path, out: Console, err: Console) -> int:
    from swe_forge_dagster.definitions import build_definitions
    from swe_forge_dagster.demo.worlds.github_world_gen import world_from_pr_events
    from swe_forge_dagster.demo.worlds.task_world import build_task_world, newest_complete_hour
    from swe_forge_dagster.gharchive.download import DownloadError
    from swe_forge_dagster.orchestration.ingest import IngestUsageError, ingest_hours
    from swe_forge_dagster.wiring.catalog import query

    mirror = home / "gharchive-mirror"
    newest = newest_complete_hour()
    hours = demo_hours(settings, newest)
    rows: list[dict] = []
    for index, hour in enumerate(hours):
        path, _ = write_hour(mirror, hour, events=20_000, seed=index)
        rows += parse_hour(path, home / "cache" / "work").table.to_pylist()
    world = world_from_pr_events(rows, seed=0)
    task_world = build_task_world(home / "task-world", newest, mirror=mirror, javascript=True)
    task_hours = task_world.hours[:TASK_HOURS]
    world.repos.update(task_world.github.repos)
    world.pulls.update(task_world.github.pulls)
    world.issues.update(task_world.github.issues)
    docker_client, image, docker_problem = _docker(err)
    if "DAGSTER_HOME" not in os.environ:
        os.environ["DAGSTER_HOME"] = str(home / "dagster")
    with demo_twins(world, task_world.git) as (twin, llm):
        demo_settings = settings.model_copy(
            update={
                "home": home,
                "gharchive_url": f"file://{mirror}",
                "github_api_url": twin.url,
                "llm_base_url": llm.url,
                "pr_file": home / "processed_prs.jsonl",
                "git_url": task_world.git.url_template,
                "docker_image": image or settings.docker_image,
                "output": home / "tasks",
                "difficulty": "",
                "ca_bundle": host_ca_bundle(settings),
            }
        )
        first = min([*hours, newest - dt.timedelta(hours=max(task_world.plan))])
        write_demo_home(
            home, world, task_world.git.root, javascript=True, values=_home_settings(demo_settings, first, image)
        )
        err.print(
            f"demo world: {len(hours) + len(task_hours)} GH Archive hours in {mirror}; GitHub twin at "
            f"{twin.url}; LLM twin at {llm.url}; git remotes in {task_world.git.root}"
        )
        keys = [partition_key(h) for h in hours] + task_hours
        try:
            defs = build_definitions(demo_settings, DEMO_TOKEN_ENV, [DEMO_LLM_KEY_ENV])
            ok = ingest_hours(demo_settings, defs, keys, err, job_name=HOURLY_PIPELINE_JOB)
        except (DownloadError, IngestUsageError) as exc:  # the demo's own mirror and hours: a bug, said plainly
            err.print(f"demo ingest failed: {exc}", style="red", markup=False)
            return 1
        requests = len(twin.counted_requests())
        tasks, evaluated = None, False
        if docker_client is not None:
            err.print(f"task stage: building tasks for the PRs of {', '.join(task_hours)} in Docker ({image})")
            tasks = _build_tasks(demo_settings, task_hours)
            if tasks.accepted:
                err.print(f"harness: the oracle and the empty agent on {len(tasks.accepted)} exported task(s)")
                evaluated = _evaluate(demo_settings, [row["task_id"] for row in tasks.accepted])
    lake = demo_settings.lake_dir
    out.print("\n[bold]Funnel per hour[/] (swe-forge sql over the Parquet lake):")
    render(query(lake, SUMMARY_SQL), "table", out)
    out.print("[bold]Top rejection reasons[/]:")
    render(query(lake, REASONS_SQL), "table", out)
    candidates = query(lake, "SELECT count(*) AS n FROM enriched_prs").to_pylist()[0]["n"]
    out.print(f"GitHub requests spent: {requests} for {candidates} candidates (GraphQL, 30 PRs per request)")
    out.print("[bold]LLM calls[/] (the llm_calls view; the demo's twin bills like a priced model):")
    render(query(lake, LLM_SQL), "table", out)
    if tasks is None:
        out.print(Text.assemble(("Task stage skipped:", "red"), " ", inert(docker_problem, multiline=True)))
    else:
        _print_tasks(tasks, out)
        if tasks.accepted:
            out.print("[bold]Harness[/] (the eval_results view; the oracle must resolve all, the empty agent none):")
            render(query(lake, HARNESS_SQL), "table", out)
    out.print("\nNext:", highlight=False)
    for step in (
        next_step("sql", "SELECT reason, count(*) FROM enriched_prs GROUP BY 1", home=home),
        next_step("sql", "SELECT task_id, status, stage, reason FROM tasks", home=home),
        next_step("dev", home=home) + "     # the Dagster UI on this demo's instance",
    ):
        out.print(Text(f"  {step}"), soft_wrap=True)
    out.print(Text(f"  DuckDB clients: {home / 'catalog.duckdb'} (views over {home / 'lake'})"), soft_wrap=True)
    return 0 if ok and tasks is not None and tasks.accepted and evaluated else 1


TASK_HOURS = 2  # the task world's two newest hours: 3 PRs become tasks (2 Python, 1 JavaScript), 1 is rejected
HOST_CA_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem")


def _home_settings(settings: Settings, first: dt.datetime, image: str | None) -> dict[str, str | None]:
    """What the demo's home keeps (`world_home`): the demo's settings that a later command must see too (the
    sandbox image only when the demo chose one: without Docker, a later command chooses as usual)."""
    ca_bundle = settings.ca_bundle
    return {
        "SWE_FORGE_START_DATE": f"{first:%Y-%m-%d}",
        "SWE_FORGE_GHARCHIVE_URL": settings.gharchive_url,
        "SWE_FORGE_GIT_URL": settings.git_url,
        "SWE_FORGE_DOCKER_IMAGE": image,
        "SWE_FORGE_OUTPUT": str(settings.output_dir),
        "SWE_FORGE_PR_FILE": str(settings.pr_file_path),
        "SWE_FORGE_CA_BUNDLE": str(ca_bundle) if ca_bundle else None,
        "SWE_FORGE_DIFFICULTY": settings.difficulty,
    }


def host_ca_bundle(settings: Settings) -> Path | None:
    """The CA bundle the demo's sandboxes trust: `SWE_FORGE_CA_BUNDLE` when set, else the host's own
    (`SSL_CERT_FILE`, else the system bundle), so that npm (and pip) in a container get through the TLS proxy
    the host gets through. Public certificates only, mounted read-only; None when the host has none."""
    if settings.ca_bundle is not None:
        return settings.ca_bundle
    for candidate in (os.environ.get("SSL_CERT_FILE"), *HOST_CA_BUNDLES):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def _docker(err: Console) -> tuple[object | None, str | None, str | None]:
    """(client, sandbox image, None) or (None, None, why the task stage cannot run)."""
    import docker

    from swe_forge_dagster.demo.images import NoSandboxImage, ensure_node_image, ensure_sandbox_image

    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as exc:
        return None, None, f"no Docker engine answers ({str(exc)[:200]}); tasks are built in containers"
    try:
        image = ensure_sandbox_image(client, err.print)
    except NoSandboxImage as exc:
        return None, None, str(exc)
    if problem := ensure_node_image(client, err.print):
        err.print(Text.assemble(("JavaScript task:", "yellow"), " ", inert(problem, multiline=True)))
    return client, image, None


def _build_tasks(settings: Settings, task_hours: list[str]) -> TaskStageResult:
    import dagster as dg

    from swe_forge_dagster.definitions import build_definitions
    from swe_forge_dagster.demo.tasks_stage import build_demo_tasks

    defs = build_definitions(settings, DEMO_TOKEN_ENV, [DEMO_LLM_KEY_ENV])
    instance = dg.DagsterInstance.get()
    return build_demo_tasks(defs, instance, settings, task_hours)


def _evaluate(settings: Settings, task_ids: list[str]) -> bool:
    import dagster as dg

    from swe_forge_dagster.demo.tasks_stage import evaluate_demo_tasks

    return evaluate_demo_tasks(settings, dg.DagsterInstance.get(), task_ids, [DEMO_LLM_KEY_ENV])


def _print_tasks(tasks: TaskStageResult, out: Console) -> None:
    from rich.table import Table

    table = Table(title="Tasks (the tasks view): FAIL_TO_PASS / PASS_TO_PASS proven by execution in Docker")
    table.add_column("task", no_wrap=True)
    for column in ("status", "tests", "F2P", "P2P", "why rejected / exported to"):
        table.add_column(column)
    for row in tasks.rows:
        detail = (
            f"tasks/{row['task_id']}/" if row["status"] == "accepted" else f"{row.get('stage')}: {row.get('reason')}"
        )
        counts = [str(len(row.get(name) or [])) for name in ("fail_to_pass", "pass_to_pass")]
        cells = (row["task_id"], row["status"], row.get("test_source") or "", *counts, detail[:120])
        table.add_row(*map(inert, cells))  # ids and reasons come from repositories: inert text
    out.print(table)
    if tasks.dataset is not None:
        out.print(f"SWE-bench dataset: {tasks.dataset} (and .parquet)")
