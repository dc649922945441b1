"""The harness without Docker: inputs, the diff filter, the pool, the summary, results rows, the CLI's usage
errors, a dead Docker engine, and the reference agent against the OpenAI twin (on the host)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from swe_forge_dagster.cli import app
from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin, ToolCall
from swe_forge_dagster.demo.worlds.harness_task import world_task_record
from swe_forge_dagster.export.swebench import write_jsonl
from swe_forge_dagster.harness import (
    EVAL_RESULTS_SCHEMA,
    CheckResult,
    Harness,
    HarnessConfig,
    HarnessTask,
    InputError,
    Status,
    TaskLoadError,
    TaskResult,
    exit_code,
    load_env_spec,
    load_inputs,
    results_table,
    run_pool,
    summarize,
)
from swe_forge_dagster.harness.agent import (
    MAX_PROMPT_ARG_BYTES,
    PROMPT_ARG_FILE,
    agent_command,
    agent_environment,
    prompt_files,
)
from tests.support.harness_world import EASY, EXAMPLES, HarnessWorld, harness_world

SEED_FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "swe-forge" / "workspaces"
SWEBENCH_FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "swebench"


@pytest.fixture(scope="module")
def hw(tmp_path_factory: pytest.TempPathFactory) -> HarnessWorld:
    return harness_world(tmp_path_factory.getbasetemp() / "harness-world")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# -- inputs -------------------------------------------------------------------------------------


def test_swebench_files_take_their_environment_from_the_env_spec(hw: HarnessWorld, tmp_path: Path) -> None:
    instance = world_task_record(hw.cache, hw.world.pr(*EASY)).instance
    write_jsonl([instance], tmp_path / "instances.jsonl")
    specs = {"acme-labs/tinycalc": {"image": "img:1", "install_commands": ["make"]}, "*": {"image": "other:2"}}
    spec = write(tmp_path / "envs.json", json.dumps(specs))
    (task,) = load_inputs(tmp_path / "instances.jsonl", default_image="default:0", env_specs=load_env_spec(spec))
    assert isinstance(task, HarnessTask) and task.mode == "tests"
    assert (task.image, task.install_commands) == ("img:1", ("make",))
    assert task.hidden_files == ("tests/test_rounding.py",) and task.fail_to_pass == tuple(instance.FAIL_TO_PASS)
    (default,) = load_inputs(tmp_path / "instances.jsonl", default_image="default:0")
    assert isinstance(default, HarnessTask) and default.image == "default:0"
    assert default.install_commands[0].startswith("command -v git")  # slim images lack the git the harness needs
    write(tmp_path / "bad.json", "[1, 2")
    with pytest.raises(InputError, match="cannot read JSON"):
        load_env_spec(tmp_path / "bad.json")
    with pytest.raises(InputError, match="no such file"):
        load_inputs(tmp_path / "missing", default_image="x")


def test_broken_inputs_become_load_errors_with_a_reason(hw: HarnessWorld, tmp_path: Path) -> None:
    good = (hw.seed / "acme-labs" / "tinycalc-12" / "workspace.yaml").read_text()
    write(tmp_path / "in" / "broken" / "task-1" / "workspace.yaml", "id: [unclosed\n  repo: x\n")
    write(
        tmp_path / "in" / "evil" / "x-1" / "workspace.yaml",
        good.replace("id: acme-labs/tinycalc-12", "id: ../../etc-1"),
    )
    write(tmp_path / "in" / "sha" / "x-2" / "workspace.yaml", good.replace("base_commit: ", "base_commit: main #"))
    errors = {item.task_id: item for item in load_inputs(tmp_path / "in", default_image="x")}
    assert all(isinstance(item, TaskLoadError) for item in errors.values())
    assert "malformed YAML" in errors["broken/task-1"].reason
    assert "path traversal" in errors["evil/x-1"].reason
    assert "not a full 40-hex commit sha" in errors["sha/x-2"].reason


def test_the_seed_projects_real_workspaces_all_load() -> None:
    if not SEED_FIXTURES.is_dir():
        pytest.skip("shared swe-forge fixtures missing")
    items = load_inputs(SEED_FIXTURES, default_image="python:3.12-slim")
    assert len(items) == 69 and all(isinstance(item, HarnessTask) for item in items)
    tasks = [item for item in items if isinstance(item, HarnessTask)]
    assert {task.mode for task in tasks} == {"commands"}
    assert sum(bool(task.extra_test_files) for task in tasks) > 40  # the agentic tests live in meta.test_files
    assert not [path for task in tasks for path in task.extra_test_files if path.startswith("/")]  # /repo/x -> x
    assert sum(not task.fail_to_pass for task in tasks) == 12  # loadable; they become sanity_fail once run


# -- what the agent may change, and what it gets ------------------------------------------------------


def test_the_agent_gets_the_prompt_three_ways_and_only_forwarded_variables(hw: HarnessWorld) -> None:
    config = hw.config(agent="command", agent_dir=EXAMPLES / "emptyagent", agent_cmd="python -m emptyagent")
    assert agent_command(config).endswith(f'python -m emptyagent --prompt "$(cat {PROMPT_ARG_FILE})" --workdir /repo')
    short = prompt_files("fix it")
    assert short["/task/prompt.md"] == short[PROMPT_ARG_FILE] == b"fix it"
    huge = prompt_files("é" * 200_000)  # over the 128 KiB limit of one argument (E2BIG)
    assert len(huge["/task/prompt.md"]) == 400_000 and len(huge[PROMPT_ARG_FILE]) <= MAX_PROMPT_ARG_BYTES
    assert huge[PROMPT_ARG_FILE].decode().endswith("full task statement is in /task/prompt.md]")
    env = agent_environment(hw.task(), {"FORWARDED": "1"})
    assert env["SWE_FORGE_PROMPT_FILE"] == "/task/prompt.md" and env["PYTHONPATH"] == "/agent"
    assert env["FORWARDED"] == "1" and not {"GITHUB_TOKEN", "OPENROUTER_API_KEY", "HOME"} & set(env)
    with pytest.raises(ValueError, match="variable NAME"):
        hw.config(agent_env=("KEY=value",))
    with pytest.raises(ValueError, match="needs --agent-dir"):
        HarnessConfig(agent="command")


# -- pool, summary, rows ------------------------------------------------------------------------------


def fake_task(name: str) -> HarnessTask:
    return HarnessTask(
        task_id=name,
        repo="o/r",
        base_commit="0" * 40,
        prompt="p",
        mode="commands",
        fail_to_pass=("false",),
        image="i",
        test_command="",
    )


def test_the_pool_keeps_n_tasks_running_not_batches() -> None:
    """Durations 0.8, 0.2, 0.2, 0.2 on 2 slots: a pool takes 0.8 s, batches of 2 would take 1.0 s."""
    durations = {"a": 0.8, "b": 0.2, "c": 0.2, "d": 0.2}
    running, peak, lock = [0], [0], threading.Lock()

    def evaluate(task: HarnessTask | TaskLoadError) -> TaskResult:
        if isinstance(task, TaskLoadError):
            return task.as_result()
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(durations[task.task_id])
        with lock:
            running[0] -= 1
        return TaskResult(task_id=task.task_id, repo=task.repo, status=Status.UNRESOLVED)

    items: list[HarnessTask | TaskLoadError] = [fake_task(name) for name in durations]
    items.insert(1, TaskLoadError(task_id="broken", source="x", reason="malformed YAML"))
    seen: list[str] = []
    started = time.perf_counter()
    results = run_pool(items, evaluate, parallel=2, on_result=lambda r: seen.append(r.task_id))
    elapsed = time.perf_counter() - started
    assert [r.task_id for r in results] == ["a", "broken", "b", "c", "d"]  # input order
    assert seen[0] == "broken" and seen[-1] == "a"  # reported as they finish
    assert peak[0] == 2 and elapsed < 0.95, elapsed


def test_summary_is_the_seeds_shape_and_exit_codes_tell_ci_what_happened() -> None:
    check = CheckResult(command="pytest -q t.py", exit_code=0, passed=True, duration_ms=1200)
    results = [
        TaskResult(
            task_id="a",
            repo="o/r",
            status=Status.RESOLVED,
            sanity_check=True,
            agent_duration_secs=10,
            fail_to_pass=[check],
            pass_to_pass=[check],
        ),
        TaskResult(task_id="b", repo="o/r", status=Status.AGENT_ERROR, reason="timed out", agent_duration_secs=20),
    ]
    summary = summarize(results)
    assert list(summary)[:9] == [
        "total",
        "resolved",
        "unresolved",
        "agent_error",
        "test_error",
        "setup_error",
        "sanity_fail",
        "avg_agent_time_secs",
        "results",
    ]
    assert (summary["total"], summary["resolved"], summary["agent_error"], summary["avg_agent_time_secs"]) == (
        2,
        1,
        1,
        15.0,
    )
    first = summary["results"][0]
    assert list(first)[:8] == [
        "task_id",
        "repo",
        "status",
        "sanity_check",
        "agent_duration_secs",
        "total_duration_secs",
        "fail_to_pass",
        "pass_to_pass",
    ]
    assert list(first["fail_to_pass"][0])[:4] == ["command", "exit_code", "passed", "duration_ms"]
    assert summary["results"][1]["error"] == "timed out"
    assert exit_code(results) == 0  # every task got a verdict
    assert exit_code([*results, TaskResult(task_id="c", repo="", status=Status.SETUP_ERROR)]) == 1


def test_results_rows_have_the_eval_results_schema(tmp_path: Path) -> None:
    check = CheckResult(command="c", exit_code=1, passed=False, duration_ms=5, test_id="t.py::x", outcome="failed")
    results = [
        TaskResult(
            task_id="o__r-1",
            repo="o/r",
            status=Status.UNRESOLVED,
            fail_to_pass=[check],
            model_patch="diff --git a/x b/x\n",
            dropped_paths=["conftest.py"],
        )
    ]
    table = results_table(results, run_id="run1", agent="oracle")
    assert table.schema == EVAL_RESULTS_SCHEMA and table.num_rows == 1
    pq.write_table(table, tmp_path / "part-0.parquet")
    row = duckdb.sql(
        f"SELECT status, resolved, fail_to_pass_total, fail_to_pass[1].test_id AS tid "
        f"FROM read_parquet('{tmp_path}/*.parquet')"
    ).fetchall()
    assert row == [("unresolved", False, 1, "t.py::x")]


# -- the engine and the command line ----------------------------------------------------------------


def test_a_dead_docker_engine_is_a_clear_setup_error(hw: HarnessWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with Harness(hw.config()) as harness:
        result = harness.evaluate(hw.task())
    assert result.status is Status.SETUP_ERROR
    assert "unix:///nonexistent/docker.sock is not reachable" in (result.reason or "")


def test_cli_usage_errors_exit_2(hw: HarnessWorld, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SWE_FORGE_NOT_SET", raising=False)
    runner = CliRunner()
    cases = {
        ("-i", str(tmp_path / "nowhere"), "--agent", "oracle"): "no such file",
        ("-i", str(hw.tasks), "--agent-dir", str(tmp_path / "no-agent")): "not a directory",
        ("-i", str(hw.tasks), "--agent", "oracle", "--agent-env", "SWE_FORGE_NOT_SET"): "not set",
        ("-i", str(hw.tasks), "--agent", "oracle", "--network", "overlay"): "network",
        ("-i", str(tmp_path), "--agent", "oracle"): "no tasks found",
    }
    for args, message in cases.items():
        result = runner.invoke(app, ["harness", *args])
        assert result.exit_code == 2, (args, result.output)
        assert message in " ".join(result.output.split()), (args, result.output)


def test_baseagent_solves_a_task_on_the_host_through_the_twin(tmp_path: Path) -> None:
    """The reference agent's loop and tools, outside Docker (its Docker run is in test_harness_docker)."""
    work = write(tmp_path / "repo" / "calc.py", "def double(x):\n    return x + x + 1\n").parent
    with OpenAITwin(api_key="sk-test") as twin:
        twin.queue(
            ToolCall("shell", {"command": "cat calc.py"}),
            ToolCall("edit_file", {"path": "calc.py", "old_str": "x + x + 1", "new_str": "x + x"}),
            ToolCall("edit_file", {"path": "calc.py", "old_str": "not there", "new_str": ""}),
            ToolCall("finish", {"summary": "fixed double"}),
        )
        env = {
            **os.environ,
            "PYTHONPATH": str(EXAMPLES / "baseagent"),
            "BASEAGENT_BASE_URL": twin.url,
            "BASEAGENT_API_KEY": "sk-test",
            "BASEAGENT_MODEL": "test-model",
        }
        argv = [sys.executable, "-m", "baseagent", "--prompt", "double(2) returns 5, not 4", "--workdir", str(work)]
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        requests = [r.json for r in twin.requests]
    assert proc.returncode == 0, proc.stderr
    assert (work / "calc.py").read_text() == "def double(x):\n    return x + x\n"
    assert requests[0]["messages"][1] == {"role": "user", "content": "double(2) returns 5, not 4"}
    assert {tool["function"]["name"] for tool in requests[0]["tools"]} >= {"shell", "edit_file", "finish"}
    assert "return x + x + 1" in requests[1]["messages"][-1]["content"]  # the shell result went back
    assert "occurs 0 times" in requests[3]["messages"][-1]["content"]  # a bad edit is reported, not a crash
