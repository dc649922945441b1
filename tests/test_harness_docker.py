"""The harness end to end in real Docker on the test world: reference agents, bad inputs, crashes and cleanup.

Issue acceptance: the oracle resolves 100%, the empty agent 0%, the reference agent (driven by the
scripted OpenAI twin) solves the easy task; every bad input gets its status and a reason; a
`kill -9` leaves no container after the next start; the seed's real workspaces load and name
their missing repository.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest
from typer.testing import CliRunner

from swe_forge_dagster.cli import app
from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin, ToolCall
from swe_forge_dagster.execution.ownership import KEEP_LABEL
from swe_forge_dagster.harness import (
    Harness,
    HarnessTask,
    Status,
    evaluate_task_dir,
    load_inputs,
    results_table,
)
from swe_forge_dagster.harness.cleanup import RUN_LABEL, TASK_LABEL
from swe_forge_dagster.wiring.catalog import query
from tests.support.common import BASE_IMAGE
from tests.support.harness_world import EXAMPLES, HarnessWorld, harness_world, write_agent
from tests.support.harness_world import run_items as run

pytestmark = pytest.mark.docker
SEED_FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "swe-forge" / "workspaces"


@pytest.fixture(scope="module")
def hw(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> HarnessWorld:
    return harness_world(tmp_path_factory.getbasetemp() / "harness-world")


def containers_of(client: docker.DockerClient, label: str) -> list[str]:
    return [c["Id"] for c in client.api.containers(all=True, filters={"label": label})]


def test_oracle_resolves_every_task_from_the_cli(
    hw: HarnessWorld, docker_client: docker.DockerClient, home: Path, tmp_path: Path
) -> None:
    """Our directories and the seed's format together, through `swe-forge harness --json`."""
    inputs = tmp_path / "inputs"
    shutil.copytree(hw.tasks, inputs)
    shutil.copytree(hw.seed, inputs / "seed-format")
    args = [
        "harness",
        "-i",
        str(inputs),
        "--agent",
        "oracle",
        "--parallel",
        "2",
        "--json",
        "--git-url",
        hw.world.url_template,
        "--docker-image",
        BASE_IMAGE,
        "--output",
        str(tmp_path / "summary.json"),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary == json.loads((tmp_path / "summary.json").read_text())
    assert (summary["total"], summary["resolved"]) == (3, 3), summary
    by_id = {r["task_id"]: r for r in summary["results"]}
    assert set(by_id) == {"acme-labs__tinycalc-12", "northwind__datekit-7", "acme-labs/tinycalc-12"}
    ours, seed = by_id["acme-labs__tinycalc-12"], by_id["acme-labs/tinycalc-12"]
    assert ours["sanity_check"] and [c["test_id"] for c in ours["fail_to_pass"]] == list(hw.task().fail_to_pass)
    assert all(c["passed"] and c["outcome"] == "passed" for c in ours["fail_to_pass"] + ours["pass_to_pass"])
    # each check reads as its own test's: exit 0 and no suite output (whose FAILURES block is the planted canary's)
    assert all(c["exit_code"] == 0 and not c["output"] for c in ours["fail_to_pass"] + ours["pass_to_pass"]), ours
    assert ours["defences"] == seed["defences"] == "canaries, and twins run apart"
    assert (
        seed["fail_to_pass"][0]["command"].startswith("python -m pytest") and seed["fail_to_pass"][0]["exit_code"] == 0
    )
    assert set(seed["fail_to_pass"][0]) >= {"command", "exit_code", "passed", "duration_ms"}
    assert not containers_of(docker_client, f"{TASK_LABEL}=acme-labs__tinycalc-12")  # all removed
    # recorded in the eval_results dataset of SWE_FORGE_HOME, as the eval_result asset records (a seed id with
    # a `/` included), so SQL and eval_summary see CLI evaluations too
    rows = query(home / "lake", "SELECT task_id, agent, status, run_id FROM eval_results ORDER BY task_id").to_pylist()
    assert [(r["task_id"], r["agent"], r["status"]) for r in rows] == [
        (task_id, "oracle", "resolved") for task_id in sorted(by_id)
    ]
    assert {r["run_id"][:4] for r in rows} == {"cli-"}


def test_empty_agent_resolves_nothing(hw: HarnessWorld, docker_client: docker.DockerClient) -> None:
    items: list = [hw.task(), *load_inputs(hw.seed, default_image=BASE_IMAGE)]
    results = run(
        hw,
        docker_client,
        items,
        agent="command",
        agent_dir=EXAMPLES / "emptyagent",
        agent_cmd="python -m emptyagent",
        parallel=2,
    )
    assert [r.status for r in results] == [Status.UNRESOLVED, Status.UNRESOLVED]
    for result in results:
        assert result.sanity_check and result.reason == "the agent changed nothing"
        assert "emptyagent: read a" in result.agent_output and "changing nothing" in result.agent_output
        assert not any(c.passed for c in result.fail_to_pass)


def test_baseagent_solves_the_easy_task_through_the_scripted_llm(
    hw: HarnessWorld, docker_client: docker.DockerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reference agent in the task's container; host networking only here, to reach the loopback twin."""
    fix = (
        "    return math.floor(value * scale + 0.5) / scale\n",
        "    magnitude = math.floor(abs(value) * scale + 0.5) / scale\n    return math.copysign(magnitude, value)\n",
    )
    check = 'python -c "from tinycalc import round_half_up; print(round_half_up(-2.5))"'
    with OpenAITwin(api_key="sk-twin-key") as twin:
        twin.queue(
            ToolCall("shell", {"command": "cat tinycalc/rounding.py"}),
            ToolCall("edit_file", {"path": "tinycalc/rounding.py", "old_str": fix[0], "new_str": fix[1]}),
            ToolCall("shell", {"command": check}),
            ToolCall("finish", {"summary": "round the magnitude, then restore the sign"}),
        )
        for name, value in (
            ("BASEAGENT_BASE_URL", twin.url),
            ("BASEAGENT_API_KEY", "sk-twin-key"),
            ("BASEAGENT_MODEL", "twin-model"),
        ):
            monkeypatch.setenv(name, value)
        forwarded = ("BASEAGENT_BASE_URL", "BASEAGENT_API_KEY", "BASEAGENT_MODEL")
        (result,) = run(
            hw,
            docker_client,
            [hw.task()],
            agent="command",
            agent_dir=EXAMPLES / "baseagent",
            network="host",
            agent_env=forwarded,
        )
        requests = [r.json for r in twin.requests]
    assert result.status is Status.RESOLVED, (result.reason, result.agent_output)
    assert twin.pending() == 0 and len(requests) == 4
    assert "round_half_up(-2.5) returns -2" in requests[0]["messages"][1]["content"]  # the prompt, via --prompt
    assert "math.floor(value * scale + 0.5)" in requests[1]["messages"][-1]["content"]  # it read the real file
    assert "-3.0" in requests[3]["messages"][-1]["content"]  # its check ran in the task's environment
    assert "copysign" in result.model_patch and result.dropped_paths == []


def test_every_bad_input_gets_its_status_and_a_reason(
    hw: HarnessWorld, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    inputs = tmp_path / "inputs"
    for name in ("crash", "timeout", "garbage-diff"):
        hw.variant(inputs, f"acme-labs__tinycalc-12-{name}")
    hw.variant(inputs, "acme-labs__tinycalc-12-missing-image", base_image="swe-forge-missing:nope")
    good = (hw.seed / "acme-labs" / "tinycalc-12" / "workspace.yaml").read_text()
    (inputs / "seed" / "broken-1").mkdir(parents=True)
    (inputs / "seed" / "broken-1" / "workspace.yaml").write_text("id: acme-labs/tinycalc-1\nrepo: [unclosed\n")
    (inputs / "seed" / "evil-1").mkdir(parents=True)
    (inputs / "seed" / "evil-1" / "workspace.yaml").write_text(good.replace("acme-labs/tinycalc-12", "../../../etc", 1))
    bogus = r"diff --git a/tinycalc/rounding.py b/tinycalc/rounding.py\n--- a/tinycalc/rounding.py\n"
    bogus += r"+++ b/tinycalc/rounding.py\n@@ -1 +1 @@\n-no such line\n+nor this\n"
    fake_git = f"""#!/bin/sh
case " $* " in *" diff "*) printf '{bogus}';;
  *) exec /usr/bin/git "$@";; esac
"""
    agent = write_agent(
        tmp_path / "agent",
        f"""case "$SWE_FORGE_TASK_ID" in
  *-crash) echo "agent: something broke" >&2; exit 3;;
  *-timeout) sleep 60;;
  *-garbage-diff) cat > /usr/local/bin/git <<'EOF'
{fake_git}EOF
    chmod +x /usr/local/bin/git;;
esac
""",
    )
    items = load_inputs(inputs, default_image=BASE_IMAGE)
    results = {
        r.task_id: r
        for r in run(
            hw,
            docker_client,
            items,
            agent="command",
            agent_dir=agent,
            agent_cmd="sh /agent/run.sh",
            agent_timeout=4,
            parallel=2,
        )
    }
    expected = {
        "acme-labs__tinycalc-12-crash": (Status.AGENT_ERROR, "exited with status 3: agent: something broke"),
        "acme-labs__tinycalc-12-timeout": (Status.AGENT_ERROR, "timed out after 4s"),
        "acme-labs__tinycalc-12-garbage-diff": (Status.AGENT_ERROR, "the agent's diff does not apply"),
        "acme-labs__tinycalc-12-missing-image": (Status.SETUP_ERROR, "'swe-forge-missing:nope' is not on this Docker"),
        "seed/broken-1": (Status.SETUP_ERROR, "malformed YAML"),
        "seed/evil-1": (Status.SETUP_ERROR, "path traversal"),
    }
    assert {task_id: r.status for task_id, r in results.items()} == {k: v[0] for k, v in expected.items()}
    for task_id, (_status, reason) in expected.items():
        assert reason in (results[task_id].reason or ""), (task_id, results[task_id].reason)
    assert results["acme-labs__tinycalc-12-timeout"].agent_duration_secs < 15


def start_sleeping_run(
    hw: HarnessWorld, client: docker.DockerClient, tmp_path: Path, *extra: str
) -> tuple[subprocess.Popen, str]:
    """`swe-forge harness` in a subprocess with an agent that sleeps; returns once the agent runs."""
    agent = write_agent(tmp_path / "agent", "sleep 300\n")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SWE_FORGE_")},
        "SWE_FORGE_HOME": str(tmp_path / "home"),
        "SWE_FORGE_GIT_URL": hw.world.url_template,
    }
    argv = [
        sys.executable,
        "-m",
        "swe_forge_dagster.cli",
        "harness",
        "-i",
        str(hw.tasks / "acme-labs__tinycalc-12"),
        "--agent-dir",
        str(agent),
        "--agent-cmd",
        "sh /agent/run.sh",
        "--docker-image",
        BASE_IMAGE,
        "--json",
        *extra,
    ]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    label = f"{TASK_LABEL}=acme-labs__tinycalc-12"
    deadline = time.monotonic() + 90
    try:
        while not [c for c in client.api.containers(filters={"label": label}) if "-agent-" in c["Names"][0]]:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.3)
        (run_id,) = {c["Labels"][RUN_LABEL] for c in client.api.containers(filters={"label": label})}
    except BaseException:
        proc.kill()
        raise
    return proc, run_id


def test_kill_9_leaves_no_container_after_the_next_start(
    hw: HarnessWorld, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    proc, run_id = start_sleeping_run(hw, docker_client, tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    left = containers_of(docker_client, f"{RUN_LABEL}={run_id}")
    assert left, "the killed run's containers should still be there until the next start"
    with Harness(hw.config(), client=docker_client) as harness:
        assert set(left) <= set(harness.removed_stale)
    assert not containers_of(docker_client, f"{RUN_LABEL}={run_id}")


def test_sigterm_stops_a_run_at_once_and_removes_its_containers(
    hw: HarnessWorld, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    """A cancelled CI job: the run ends now (not after the 600 s agent timeout), cleans up itself, and still
    writes its summary, the unfinished task marked as such."""
    proc, run_id = start_sleeping_run(hw, docker_client, tmp_path, "--output", str(tmp_path / "summary.json"))
    started = time.monotonic()
    proc.terminate()
    assert proc.wait(timeout=30) == 130
    assert time.monotonic() - started < 20
    assert not containers_of(docker_client, f"{RUN_LABEL}={run_id}")
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["total"], summary["results"][0]["status"]) == (1, "setup_error"), summary
    assert summary["results"][0]["error"] == "not finished: the run was interrupted"


def test_one_task_dir_as_the_asset_evaluates_it_keeping_its_containers(
    hw: HarnessWorld, docker_client: docker.DockerClient
) -> None:
    """`evaluate_task_dir` (the per-task asset's call) with --keep-containers; the row it writes."""
    config = hw.config(keep_containers=True)
    result = evaluate_task_dir(hw.tasks / "acme-labs__tinycalc-12", config, client=docker_client)
    try:
        assert result.status is Status.RESOLVED and len(result.containers) == 4  # sanity, agent, verify, twin
        assert "GIT binary patch" in result.model_patch  # the PR's PNG survived diff and apply byte for byte
        row = results_table([result], run_id=config.run_id, agent=config.agent_label).to_pylist()[0]
        assert (row["status"], row["resolved"], row["fail_to_pass_passed"], row["agent"]) == (
            "resolved",
            True,
            2,
            "oracle",
        )
        with Harness(hw.config(), client=docker_client):
            pass  # a new run's stale-container cleanup must spare them
        kept = {c["Names"][0].lstrip("/") for c in docker_client.api.containers(filters={"label": f"{KEEP_LABEL}=1"})}
        assert set(result.containers) <= kept
    finally:
        for name in result.containers:
            docker_client.api.remove_container(name, force=True)


def test_the_seeds_real_workspaces_run_or_name_their_missing_repo(
    hw: HarnessWorld, docker_client: docker.DockerClient
) -> None:
    if not SEED_FIXTURES.is_dir():
        pytest.skip("shared swe-forge fixtures missing")
    items = [*load_inputs(SEED_FIXTURES, default_image=BASE_IMAGE), *load_inputs(hw.seed, default_image=BASE_IMAGE)]
    assert len(items) == 70 and all(isinstance(item, HarnessTask) for item in items)
    results = run(hw, docker_client, items, parallel=2)
    *real, world = results
    assert world.task_id == "acme-labs/tinycalc-12" and world.status is Status.RESOLVED, world.reason
    for result in real:
        assert result.status is Status.SETUP_ERROR, (result.task_id, result.reason)
        assert f"repository {result.repo} is not available" in (result.reason or "")
        assert f"cannot clone {result.repo}" in (result.reason or "")


def test_the_oracle_resolves_a_fix_inside_a_testing_package(
    hw: HarnessWorld, docker_client: docker.DockerClient
) -> None:
    """Source packages named testing/ (sympy/testing, django/test, src/_pytest) are not test code: the gold
    patch moves the fix into tinycalc/testing/ and edits pyproject outside its pytest section; all of it applies."""
    task = hw.task()
    with hw.cache.worktree(task.repo, task.base_commit) as tree:
        subprocess.run(["git", "apply", "--binary", "-"], input=task.gold_patch.encode(), cwd=tree, check=True)
        (tree / "tinycalc" / "testing").mkdir()
        (tree / "tinycalc" / "rounding.py").rename(tree / "tinycalc" / "testing" / "__init__.py")
        subprocess.run(["git", "checkout", "HEAD", "--", "tinycalc/rounding.py"], cwd=tree, check=True)
        init = tree / "tinycalc" / "__init__.py"
        init.write_text(init.read_text().replace("tinycalc.rounding import", "tinycalc.testing import"))
        pyproject = tree / "pyproject.toml"
        pyproject.write_text(pyproject.read_text().replace('version = "0.1.0"', 'version = "0.1.1"'))
        subprocess.run(["git", "add", "-A"], cwd=tree, check=True)
        gold = subprocess.run(
            ["git", "diff", "--cached", "--binary", "HEAD"], cwd=tree, check=True, capture_output=True
        ).stdout.decode()
    assert "tinycalc/testing/__init__.py" in gold and "tinycalc/rounding.py" not in gold
    (result,) = run(hw, docker_client, [task.model_copy(update={"task_id": "testing-package", "gold_patch": gold})])
    assert result.status is Status.RESOLVED and result.dropped_paths == [], result.reason
    assert "pyproject.toml" in result.model_patch
