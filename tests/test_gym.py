"""The gym without Docker: the six tools' schemas and argument checks, the file tools' text rules (1-indexed
inclusive ranges, replace-all, insert at a line, the diff shown), /testbed paths, the episodes dataset (a killed
server's episodes abandoned, rewards per agent and task in SQL and in `eval_summary`), and the HTTP server's
token and errors in front of a gym whose Docker engine is down."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import httpx
import pytest
from typer.testing import CliRunner

from swe_forge_dagster.cli import app
from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.execution.ownership import Owner, current_owner
from swe_forge_dagster.gym.config import GymConfig
from swe_forge_dagster.gym.editing import insert_at, numbered, replace_all, split_lines, unified_diff
from swe_forge_dagster.gym.episodes import OPEN, Recorder, owner_text, read_episodes, reward_rows
from swe_forge_dagster.gym.server import GymServer
from swe_forge_dagster.gym.service import Gym
from swe_forge_dagster.gym.toolbox import container_path, shown_path
from swe_forge_dagster.gym.tools import TOOL_NAMES, ToolError, parse_arguments, tool_schemas
from swe_forge_dagster.harness.models import HarnessTask, Status, TaskResult
from swe_forge_dagster.settings import Settings
from swe_forge_dagster.wiring.catalog import query
from tests.support.common import BASE_IMAGE

TEXT = "one\ntwo\nthree\nfour\nfive\n"


def test_the_six_tools_are_openai_function_schemas_and_the_cli_prints_them() -> None:
    tools = tool_schemas()
    assert (
        [t["function"]["name"] for t in tools]
        == list(TOOL_NAMES)
        == ["bash", "view", "str_replace", "insert", "create", "answer"]
    )
    for tool in tools:
        assert tool["type"] == "function" and tool["function"]["description"]
        params = tool["function"]["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert set(params["required"]) <= set(params["properties"])
    by_name = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    assert by_name["view"]["required"] == ["path"] and set(by_name["view"]["properties"]) == {"path", "start", "end"}
    assert by_name["insert"]["required"] == ["path", "start", "content"]
    assert by_name["str_replace"]["required"] == ["path", "old_str", "new_str"]
    assert by_name["answer"]["properties"] == {}
    printed = CliRunner().invoke(app, ["gym", "tools"])
    assert printed.exit_code == 0 and json.loads(printed.output) == tools


def test_arguments_are_checked_against_the_schemas() -> None:
    assert parse_arguments("view", '{"path": "a.py", "start": 2}') == {"path": "a.py", "start": 2}
    assert parse_arguments("answer", None) == {} and parse_arguments("answer", "") == {}
    assert parse_arguments("view", {"path": "a.py", "end": None}) == {"path": "a.py"}
    refused = [
        ("grep", {}, "unknown tool 'grep'"),
        ("view", '{"path": ', "not valid JSON"),
        ("view", "[1]", "must be a JSON object"),
        ("view", {"path": "a", "lines": [1, 2]}, "takes no argument lines"),
        ("str_replace", {"path": "a", "old_str": "x"}, "needs new_str"),
        ("insert", {"path": "a", "start": True, "content": "x"}, "must be an integer"),
        ("insert", {"path": "a", "start": "3", "content": "x"}, "must be an integer"),
        ("view", {"path": "a", "start": 0}, "1-indexed"),
        ("answer", {"force": True}, "takes no argument force"),
    ]
    for name, arguments, message in refused:
        with pytest.raises(ToolError, match=message):
            parse_arguments(name, arguments)


def test_view_ranges_are_one_indexed_and_inclusive() -> None:
    assert numbered(TEXT, "/testbed/f", 2, 4).splitlines() == [
        "/testbed/f (lines 2-4 of 5):",
        "     2\ttwo",
        "     3\tthree",
        "     4\tfour",
    ]
    assert numbered(TEXT, "/testbed/f").splitlines()[1:] == [f"{i:6}\t{w}" for i, w in enumerate(TEXT.split(), 1)]
    assert numbered(TEXT, "/testbed/f", 5, 5).splitlines()[1:] == ["     5\tfive"]
    assert numbered(TEXT, "/testbed/f", start=4).splitlines()[1:] == ["     4\tfour", "     5\tfive"]
    clipped = numbered(TEXT, "/testbed/f", 4, 99)
    assert "     5\tfive" in clipped and "has 5 lines; shown up to line 5" in clipped
    for start, end, message in ((6, None, "past the end"), (3, 2, "before start")):
        with pytest.raises(ToolError, match=message):
            numbered(TEXT, "/testbed/f", start, end)
    assert "empty" in numbered("", "/testbed/e")
    assert split_lines("a\r\nb\x0cc\nd") == ["a\r\n", "b\x0cc\n", "d"]  # only \n ends a line, as in git and cat -n


def test_str_replace_replaces_every_occurrence_and_insert_puts_content_at_a_line() -> None:
    after, count = replace_all("x = a + a\nb = a\n", "a", "z", "/testbed/f")
    assert (after, count) == ("x = z + z\nb = z\n", 3)
    with pytest.raises(ToolError, match="does not occur"):
        replace_all(TEXT, "six", "6", "/testbed/f")
    with pytest.raises(ToolError, match="empty"):
        replace_all(TEXT, "", "6", "/testbed/f")
    assert insert_at(TEXT, 1, "zero", "f").split("\n")[:2] == ["zero", "one"]
    assert insert_at(TEXT, 3, "2.5\n2.7\n", "f").split("\n")[1:5] == ["two", "2.5", "2.7", "three"]
    assert insert_at(TEXT, 6, "six", "f").endswith("five\nsix\n")  # lines + 1 appends
    assert insert_at("last", 2, "more", "f") == "last\nmore\n"  # a last line without newline is ended first
    assert insert_at("", 1, "first", "f") == "first\n"
    for start in (0, 7):
        with pytest.raises(ToolError, match="from 1 to 6"):
            insert_at(TEXT, start, "x", "f")
    diff = unified_diff(TEXT, insert_at(TEXT, 3, "2.5", "f"), "/testbed/f")
    assert diff.splitlines()[:2] == ["--- /testbed/f", "+++ /testbed/f"] and "\n+2.5\n" in diff
    assert " two\n+2.5\n three" in diff
    assert "No newline at end of file" in unified_diff("a", "b", "/testbed/g")
    assert unified_diff(TEXT, TEXT, "/testbed/f") == "(no change to /testbed/f)"


def test_paths_under_testbed_are_the_repository() -> None:
    assert container_path("/testbed/src/x.py") == "/repo/src/x.py"
    assert container_path("src/x.py") == container_path("./src/x.py") == "/repo/src/x.py"
    assert container_path("/testbed") == container_path(".") == "/repo"
    assert container_path("/etc/os-release") == "/etc/os-release"
    assert container_path("/testbed/../etc/passwd") == "/etc/passwd"
    assert container_path("/testbedx/y") == "/testbedx/y"
    assert shown_path("/repo/src/x.py") == "/testbed/src/x.py" and shown_path("/tmp/x") == "/tmp/x"
    with pytest.raises(ToolError, match="empty"):
        container_path("  ")


def _row(recorder: Recorder, episode: str, **values: object) -> dict:
    """An episode's row; ended (in the order made) unless it is open."""
    now = dt.datetime.now(dt.UTC)
    ended = None if values.get("status") == OPEN else now
    return recorder.row(
        episode_id=episode,
        task_id="acme__calc-1",
        repo="acme/calc",
        agent="scripted",
        steps=3,
        tool_counts=dict.fromkeys(TOOL_NAMES, 1),
        errors=0,
        seconds=1.5,
        setup_seconds=4.0,
        transcript_path=f"/t/{episode}.jsonl",
        started_at=now,
        ended_at=ended,
        **values,
    )


def test_a_killed_servers_open_episodes_are_abandoned_and_rewards_are_grouped(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    me = current_owner()
    gone = Owner(me.boot, me.pidns, dead.pid, None)  # a process of this machine that has exited
    recorder = Recorder(lake, "gym-test")
    recorder.episode(_row(recorder, "e-live", status=OPEN))
    orphan = _row(recorder, "e-orphan", status=OPEN)
    orphan["owner"] = owner_text(gone)
    recorder.episode(orphan)
    for episode, reward in (("e-1", 1.0), ("e-2", 0.0), ("e-3", 1.0)):
        recorder.episode(_row(recorder, episode, status="resolved" if reward else "unresolved", reward=reward))
    config = GymConfig(state_dir=tmp_path / "state")
    with Gym(config, lake_dir=lake) as gym:  # opening a gym marks them (the engine may be there or not)
        assert gym.abandoned == ["e-orphan"]
    statuses = {row["episode_id"]: row["status"] for row in read_episodes(lake)}
    assert statuses == {
        "e-live": OPEN,
        "e-orphan": "abandoned",
        "e-1": "resolved",
        "e-2": "unresolved",
        "e-3": "resolved",
    }
    assert reward_rows(lake) == [
        {"agent": "scripted", "task_id": "acme__calc-1", "episodes": 3, "mean_reward": 0.6667, "last_reward": 1.0}
    ]
    sql = "SELECT status, count(*) AS n, sum(tool_counts.bash) AS bash FROM episodes GROUP BY 1 ORDER BY 1"
    assert query(lake, sql).to_pylist() == [
        {"status": "abandoned", "n": 1, "bash": 1},
        {"status": OPEN, "n": 1, "bash": 1},
        {"status": "resolved", "n": 2, "bash": 2},
        {"status": "unresolved", "n": 1, "bash": 1},
    ]


def test_eval_summary_shows_gym_rewards_per_agent_and_task(tmp_path: Path, instance: dg.DagsterInstance) -> None:
    settings = Settings(SWE_FORGE_HOME=str(tmp_path / "home"))
    recorder = Recorder(settings.lake_dir, "gym-test")
    now = TaskResult(task_id="acme__calc-1", repo="acme/calc", status=Status.RESOLVED)
    for episode, reward in (("e-1", 0.0), ("e-2", 1.0)):
        recorder.episode(_row(recorder, episode, status="resolved" if reward else "unresolved", reward=reward))
    recorder.result(now, "scripted", "e-2")
    defs = build_definitions(settings)
    summary = dg.materialize([defs.resolve_assets_def("eval_summary")], instance=instance)
    meta = summary.asset_materializations_for_node("eval_summary")[0].metadata
    assert meta["gym_pairs"].value == 1
    assert "| scripted | acme__calc-1 | 2 | 0.5 | 1.0 |" in meta["gym_rewards"].value
    assert "gym:scripted" in meta["by_agent"].value and meta["gym:scripted: tasks"].value == 1  # a result too


@pytest.fixture
def dead_engine_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GymServer:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    task = HarnessTask(
        task_id="acme__calc-1",
        repo="acme/calc",
        base_commit="a" * 40,
        prompt="fix it",
        mode="tests",
        fail_to_pass=("t.py::x",),
        image=BASE_IMAGE,
        test_command="pytest",
    )
    gym = Gym(GymConfig(state_dir=tmp_path / "state"), lake_dir=tmp_path / "lake")
    server = GymServer(
        gym, {task.task_id: task}, "s3cret-token-0123456789", unloadable={"acme__broken-2": "no workspace.yaml"}
    )
    yield server.start()
    server.stop()
    gym.close()


def test_the_server_wants_its_token_and_says_what_is_wrong(dead_engine_server: GymServer, tmp_path: Path) -> None:
    url, good = dead_engine_server.url, {"Authorization": "Bearer s3cret-token-0123456789"}
    assert url.startswith("http://127.0.0.1:")
    health = httpx.get(f"{url}/health").json()
    assert health["ok"] and health["docker"] is False
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token-0123456789"}):
        assert httpx.get(f"{url}/tools", headers=headers).status_code == 401
    assert httpx.get(f"{url}/tools", headers=good).json()["tools"] == tool_schemas()
    tasks = httpx.get(f"{url}/tasks", headers=good).json()
    assert tasks["tasks"] == [{"task_id": "acme__calc-1", "repo": "acme/calc"}]
    expected = {
        ("POST", "/open", '{"task_id": "nope"}'): (404, "no task 'nope'"),
        ("POST", "/open", '{"task_id": "acme__broken-2"}'): (404, "no workspace.yaml"),
        ("POST", "/open", "{not json"): (400, "not JSON"),
        ("POST", "/open", "[]"): (400, "JSON object"),
        ("POST", "/call", '{"env_id": "e0", "tool": "bash"}'): (404, "no environment 'e0'"),
        ("POST", "/call", '{"tool": "bash"}'): (400, "env_id"),
        ("POST", "/reset", "{}"): (404, "no route"),
    }
    for (method, path, body), (status, message) in expected.items():
        response = httpx.request(method, f"{url}{path}", content=body, headers=good)
        assert response.status_code == status and message in response.json()["error"], (path, body, response.text)
    started = time.monotonic()
    failed = httpx.post(f"{url}/open", json={"task_id": "acme__calc-1", "agent": "a1"}, headers=good)
    assert failed.status_code == 422 and failed.json()["status"] == "setup_error", failed.text
    assert "not reachable" in failed.json()["reason"] and time.monotonic() - started < 30
    (row,) = read_episodes(tmp_path / "lake")
    assert (row["status"], row["reward"], row["agent"], row["steps"]) == ("setup_error", None, "a1", 0)
