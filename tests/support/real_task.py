"""A real merged change of a real repository (a bundle of `../shared/fixtures/repos/`) run through the Dagster task
partition: fed in as one hour of `enriched_prs` (GitHub is not reachable here), classified against the OpenAI twin,
added by the task sensor and run as `task_job` by the launcher the CLI uses, then exported by `swe_dataset`.

The twin answers triage, the problem statement and the quality judgement; any environment- or test-agent call is
answered with a failing command, so a test can assert that none was needed (`agent_calls`).
"""

from __future__ import annotations

import datetime as dt
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow as pa
import pytest

from swe_forge_dagster.candidates.datasets import ENRICHED_PRS, ENRICHED_PRS_SCHEMA, partition_file
from swe_forge_dagster.common.dagster_names import TASK_JOB
from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin
from swe_forge_dagster.demo.twins.openai_twin_script import ToolCall, forced_tool_name, tool_schemas, triage_responder
from swe_forge_dagster.lake.writer import write_partition
from swe_forge_dagster.orchestration.launcher import run_partitions
from swe_forge_dagster.settings import Settings
from swe_forge_dagster.wiring.catalog import query

HOUR = "2026-02-23-13:00"
LLM_KEY_ENV, LLM_KEY = "SWE_FORGE_TEST_REAL_TASK_KEY", "sk-test-real-task-0123456789"


@dataclass(frozen=True)
class RealChange:
    """One merged change: the merge (or squash) commit, its PR number, and what the twin says about it."""

    repo: str
    number: int
    merged: str
    language: str
    statement: str
    head_ref: str = "fix"
    license: str = "MIT"

    @property
    def task_id(self) -> str:
        return f"{self.repo.replace('/', '__')}-{self.number}"


def git(remote: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(remote), *args], capture_output=True, text=True, check=True).stdout


def enriched_row(remote: Path, change: RealChange) -> dict[str, Any]:
    """The PR as an accepted `enriched_prs` row, from the real commit."""
    base = git(remote, "rev-parse", f"{change.merged}^").strip()
    title, _, body = git(remote, "show", "-s", "--format=%B", change.merged).partition("\n")
    when = dt.datetime.fromisoformat(git(remote, "show", "-s", "--format=%cI", change.merged).strip())
    when = when.astimezone(dt.UTC)
    files = [line for line in git(remote, "diff", "--name-only", base, change.merged).splitlines() if line]
    row: dict[str, Any] = dict.fromkeys(ENRICHED_PRS_SCHEMA.names)
    row.update(
        repo_name=change.repo,
        number=change.number,
        status="accepted",
        reason=None,
        reasons=[],
        stage="filter",
        merged=True,
        merged_at=when,
        merge_commit_sha=change.merged,
        base_ref="main",
        base_sha=base,
        head_ref=change.head_ref,
        head_sha=change.merged,
        title=title.replace(f" (#{change.number})", ""),
        body=body.strip(),
        author_login="contributor",
        author_is_bot=False,
        pr_created_at=when - dt.timedelta(days=1),
        additions=23,
        deletions=4,
        changed_files=len(files),
        file_paths=files,
        files_complete=True,
        closing_issues=[],
        labels=[],
        stars=900,
        language=change.language,
        is_fork=False,
        is_archived=False,
        license=change.license,
        owner_type="Organization",
        source="fixture",
        from_store=False,
    )
    return {key: value for key, value in row.items() if key in ENRICHED_PRS_SCHEMA.names}


def responder_for(change: RealChange):  # noqa: ANN201 - the twin's responder type is internal to it
    """The LLM: triage as easy, the change's statement, a passing quality judgement; agents get a failing command."""

    def responder(request: dict[str, Any]) -> Any:
        tools = tool_schemas(request)
        if "submit_environment" in tools or "submit_tests" in tools:
            return ToolCall("shell", {"command": "echo this test expects no agent call; exit 1"})
        name = forced_tool_name(request)
        if name == "score_task":
            return ToolCall(
                "score_task",
                {
                    "difficulty": "easy",
                    "difficulty_score": 0.2,
                    "difficulty_reasoning": "A small, local change.",
                    "statement_clear": True,
                    "tests_check_behaviour": True,
                    "solvable_from_statement": True,
                    "quality_score": 0.8,
                    "quality_reasoning": "The statement names the observable behaviour.",
                },
            )
        if name == "write_problem_statement":
            return ToolCall(name, {"title": change.statement.split(".")[0][:60], "statement": change.statement})
        return triage_responder(request)

    return responder


def run_real_change(root: Path, bundle: Path, change: RealChange, settings_env: Mapping[str, str]) -> dict[str, Any]:
    """Clone `bundle` as the change's remote, run the change through Dagster; the outcome, rows and twin requests."""
    owner, name = change.repo.split("/")
    remote = root / "remotes" / owner / f"{name}.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(remote)], check=True, timeout=300)
    settings = Settings(
        SWE_FORGE_HOME=str(root / "home"), SWE_FORGE_GIT_URL=f"file://{root}/remotes/{{repo}}.git", **settings_env
    )
    table = pa.Table.from_pylist([enriched_row(remote, change)], schema=ENRICHED_PRS_SCHEMA)
    write_partition(table, partition_file(settings.lake_dir, ENRICHED_PRS, HOUR).parent, ENRICHED_PRS_SCHEMA)
    with (
        OpenAITwin(responder_for(change), api_key=LLM_KEY) as twin,
        pytest.MonkeyPatch.context() as patch,
        dg.instance_for_test() as instance,
    ):
        patch.setenv(LLM_KEY_ENV, LLM_KEY)
        settings = settings.model_copy(update={"llm_base_url": twin.url})
        defs = build_definitions(settings, llm_key_envs=[LLM_KEY_ENV])
        triage = dg.materialize([defs.resolve_assets_def("classified_prs")], partition_key=HOUR, instance=instance)
        assert triage.success
        with dg.build_sensor_context(instance=instance, resources=defs.resources) as context:
            result = defs.resolve_sensor_def("task_sensor")(context)
        assert isinstance(result, dg.SensorResult)
        assert [request.partition_key for request in result.run_requests or []] == [change.task_id]
        outcome = run_partitions(defs, instance, TASK_JOB, [change.task_id])
        dataset = dg.materialize([defs.resolve_assets_def("swe_dataset")], instance=instance)
        assert dataset.success
        agent_calls = [
            r for r in twin.requests if {"submit_environment", "submit_tests"} & set(tool_schemas(r.json or {}))
        ]
        rows = query(settings.lake_dir, "SELECT * FROM tasks").to_pylist()
    return {
        "settings": settings,
        "outcome": outcome,
        "agent_calls": agent_calls,
        "rows": rows,
        "requests": list(twin.requests),
    }
