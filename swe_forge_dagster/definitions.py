"""The one `Definitions` of the project: assets, asset checks, jobs, sensors, resources, executor."""

from __future__ import annotations

import warnings

import dagster as dg

# Our own use of Dagster's beta and preview features (`backfill_policy`, partitioned asset checks) warns once per
# process at import, five blocks on every command that loads the definitions: silenced for these imports only, so
# a user's code in the same process still hears about its own (`assets.graph` does the same for what it builds).
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.BetaWarning)
    warnings.simplefilter("ignore", dg.PreviewWarning)
    from swe_forge_dagster.assets.graph import build_asset_graph
from swe_forge_dagster.common.dagster_names import (
    CANDIDATES_STAGE,
    CATALOG_STAGE,
    EVAL_JOB,
    GHARCHIVE_STAGE,
    GITHUB_STAGE,
    HARNESS_STAGE,
    HOURLY_PIPELINE_JOB,
    LLM_STAGE,
    STAGE_TAG,
    TASK_JOB,
    TASKS_STAGE,
)
from swe_forge_dagster.orchestration.celery_hosts import executor_config, uses_hosts
from swe_forge_dagster.orchestration.deploy import step_env_names
from swe_forge_dagster.orchestration.host_check import host_check_job
from swe_forge_dagster.orchestration.slot_claims import install as install_atomic_slot_claims
from swe_forge_dagster.resources import (
    GharchiveResource,
    GitHubResource,
    LakeResource,
    LLMResource,
    MiningResource,
    TaskBuildResource,
)
from swe_forge_dagster.resources.harness import HarnessResource
from swe_forge_dagster.resources.sandbox import SandboxResourceConfig
from swe_forge_dagster.sensors.harness import build_harness_sensor
from swe_forge_dagster.sensors.mining import build_mining_sensor
from swe_forge_dagster.sensors.tasks import build_task_sensor
from swe_forge_dagster.settings import Settings, get_settings

# Within one run, the multiprocess executor caps steps per stage by the `swe_forge/stage` op tag;
# across runs, the pools (limits in the instance, see swe_forge_dagster.orchestration.instance) do.
STAGE_LIMITS: dict[str, int] = {
    GHARCHIVE_STAGE: 4,
    CANDIDATES_STAGE: 4,
    GITHUB_STAGE: 1,
    LLM_STAGE: 1,
    CATALOG_STAGE: 1,
    TASKS_STAGE: 1,
    HARNESS_STAGE: 2,
}

executor = dg.multiprocess_executor.configured(
    {
        "max_concurrent": 4,
        "tag_concurrency_limits": [
            {"key": STAGE_TAG, "value": stage, "limit": limit} for stage, limit in STAGE_LIMITS.items()
        ],
    }
)


def build_sensors(hourly_partitions: dg.HourlyPartitionsDefinition) -> list[dg.SensorDefinition]:
    """The sensors, each targeting its job by name; the mining sensor over the same hours as the assets."""
    return [
        build_mining_sensor(HOURLY_PIPELINE_JOB, partitions_def=hourly_partitions),
        build_task_sensor(TASK_JOB),
        build_harness_sensor(EVAL_JOB),
    ]


def build_resources(
    settings: Settings, github_token_env: str = "GITHUB_TOKEN", llm_key_envs: list[str] | None = None
) -> dict[str, dg.ConfigurableResource]:
    """Resources from settings; secrets are named by env var, never stored in config."""
    home = settings.home_ref  # a local path, or the object-store URI (resources resolve it with HomeLayout)
    key_envs = {"key_envs": llm_key_envs} if llm_key_envs else {}
    sandbox = SandboxResourceConfig.of(settings.sandbox)  # one spec, nested whole in the resources that start sandboxes
    return {
        "lake": LakeResource(home=home),
        "gharchive": GharchiveResource(base_url=settings.gharchive_url, home=home),
        "github": GitHubResource(api_url=settings.github_api_url, home=home, token_env=github_token_env),
        "llm": LLMResource(
            base_url=settings.llm_base_url,
            model=settings.model,
            home=home,
            max_in_flight=settings.llm_max_in_flight,
            tool_choice=settings.llm_tool_choice,
            timeout_seconds=settings.llm_timeout,
            max_output_tokens=settings.llm_max_output,
            price_input_per_mtok=settings.llm_price_input,
            price_output_per_mtok=settings.llm_price_output,
            **key_envs,
        ),
        "mining": MiningResource(
            pr_file=str(settings.pr_file_path),
            org_only=settings.org_only,
            min_stars=settings.min_stars,
            languages=settings.language_list,
            difficulty=settings.difficulty_list,
            tasks_per_tick=settings.tasks_per_tick,
        ),
        "tasks": TaskBuildResource(
            home=home,
            git_url=settings.git_url,
            sandbox=sandbox,
            output_dir=str(settings.output_dir),
            after_runs=settings.task_after_runs,
            registry=settings.registry,
            task_repo=str(settings.task_repo) if settings.task_repo else None,
        ),
        "harness": HarnessResource(
            home=home,
            agent=settings.agent,
            agent_dir=str(settings.agent_dir) if settings.agent_dir else None,
            agent_cmd=settings.agent_cmd,
            agent_timeout_seconds=settings.agent_timeout,
            test_timeout_seconds=settings.test_timeout,
            sandbox=sandbox,
            agent_env=[name.strip() for name in settings.agent_env.split(",") if name.strip()],
            git_url=settings.git_url,
            registry=settings.registry,
        ),
    }


def build_definitions(
    settings: Settings | None = None, github_token_env: str = "GITHUB_TOKEN", llm_key_envs: list[str] | None = None
) -> dg.Definitions:
    """Definitions for `settings` (the environment's by default); tests and the demo pass their own.

    Everything that depends on a setting is built from `settings`: the resources, and the hourly partitions (the
    first hour is `settings.start_date`) with the assets, checks, jobs and sensor over them (`assets.graph`).
    """
    settings = settings or get_settings()
    graph = build_asset_graph(settings)
    return dg.Definitions(
        assets=graph.assets,
        asset_checks=graph.asset_checks,
        jobs=[*graph.jobs, host_check_job] if uses_hosts() else graph.jobs,
        sensors=build_sensors(graph.hourly_partitions),
        resources=build_resources(settings, github_token_env, llm_key_envs),
        executor=build_executor(settings),
    )


def build_executor(settings: Settings) -> dg.ExecutorDefinition:
    """The multiprocess executor, or with a broker set (`deploy/hosts`) Dagster's Celery executor, each step in a
    container on a worker host's own engine (`orchestration.celery_hosts`)."""
    if not uses_hosts():
        return executor
    from dagster_celery_docker.executor import celery_docker_executor

    config = executor_config(None, step_env_names(), str(settings.home_abs))
    return celery_docker_executor.configured(config, name="swe_forge_hosts")


@dg.definitions
def defs() -> dg.Definitions:
    # Every process that loads this code location claims pool slots through it (the UI's and the daemon's run
    # workers too, not only the CLI's launcher): make those claims atomic on a SQLite instance (`slot_claims`).
    install_atomic_slot_claims()
    return build_definitions()
