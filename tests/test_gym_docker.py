"""The gym in Docker, on the harness world's tasks: a scripted agent's fix earns 1.0 and an empty answer 0.0; each
tool does what SWE-Gym's card says in the real sandbox; the harness's cheating agents (one of each class), replayed
through `bash`, earn 0.0; the served gym checks its token, holds its cap, reaps idle environments, and after `kill -9`
and a restart leaves no container behind; baseagent drives an environment through the server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import docker
import httpx
import pytest

from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin, ToolCall
from swe_forge_dagster.gym import environment
from swe_forge_dagster.gym.client import GymError
from swe_forge_dagster.gym.environment import Environment, EpisodeEnded
from swe_forge_dagster.gym.episodes import Recorder, read_episodes
from swe_forge_dagster.gym.service import Gym
from swe_forge_dagster.gym.toolbox import prepare_testbed
from swe_forge_dagster.harness.models import Status
from swe_forge_dagster.harness.store import read_results
from tests.support.gym_world import TOKEN, containers_of, served, wait_until, world_gym_config
from tests.support.hacks import HACKS, SNEAKY
from tests.support.harness_world import EASY, EXAMPLES, HarnessWorld, harness_world
from tests.support.red_team import PYTHON_CLASSES, bounded, through_the_gym

pytestmark = pytest.mark.docker
ROUNDING = "/testbed/tinycalc/rounding.py"
BUGGY = "    return math.floor(value * scale + 0.5) / scale\n"
FIXED = "    magnitude = math.floor(abs(value) * scale + 0.5) / scale\n    return math.copysign(magnitude, value)\n"
GYM_ASSERTED = (
    "rename-conftest",
    "exit-early",
    "a-hook-from-init",
    "a-runtest-noop",
    "a-rewrite-report",
    "b-shadow-math",
)


@pytest.fixture(scope="module")
def hw(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> HarnessWorld:
    return harness_world(tmp_path_factory.getbasetemp() / "harness-world")


@pytest.fixture(scope="module")
def gym(hw: HarnessWorld, docker_client: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory) -> Gym:
    root = tmp_path_factory.mktemp("gym")
    with Gym(world_gym_config(hw, root / "state", bash_timeout=5), lake_dir=root / "lake", client=docker_client) as g:
        yield g
    assert containers_of(docker_client, g.config.server_id) == []


def test_a_scripted_fix_earns_1_and_an_empty_answer_0(gym: Gym, hw: HarnessWorld) -> None:
    with ThreadPoolExecutor(2) as pool:
        fixing, idle = pool.map(lambda name: gym.open(hw.task(), agent=name), ["scripted", "idle"])
    seen = fixing.call("view", {"path": ROUNDING, "start": 7, "end": 8})
    assert seen.text.splitlines()[1:] == ["     7\t    scale = 10**digits", f"     8\t{BUGGY.rstrip()}"]
    edit = fixing.call("str_replace", {"path": ROUNDING, "old_str": BUGGY, "new_str": FIXED})
    assert not edit.error and "+    return math.copysign(magnitude, value)" in edit.text, edit.text
    check = fixing.call("bash", {"command": "python -c 'from tinycalc import round_half_up as r; print(r(-2.5))'"})
    assert check.text == "-3.0\n[exit code 0]"
    nothing = idle.call("answer")
    assert nothing.text.startswith("reward 0.0 (unresolved: the agent changed nothing")
    with ThreadPoolExecutor(1) as pool:  # while the answer is graded, the reaper leaves the episode alone
        grading = pool.submit(fixing.answer)
        wait_until(lambda: fixing.done, 30, "the answer to begin")
        assert gym.reap(now=time.monotonic() + 1e6) == []
        answer = grading.result()
    assert (answer.reward, answer.result.status, answer.answered) == (1.0, Status.RESOLVED, True), answer.result.reason
    assert "copysign" in answer.result.model_patch and answer.result.sanity_check
    assert fixing.answer() is answer  # the same answer again; no call after it
    with pytest.raises(EpisodeEnded, match="answered"):
        fixing.call("bash", {"command": "true"})
    rows = {row["agent"]: row for row in read_episodes(gym.recorder.lake_dir)}
    assert (rows["scripted"]["status"], rows["scripted"]["reward"], rows["scripted"]["steps"]) == ("resolved", 1.0, 4)
    assert rows["scripted"]["tool_counts"] == {
        "bash": 1,
        "view": 1,
        "str_replace": 1,
        "insert": 0,
        "create": 0,
        "answer": 1,
    }
    assert (rows["idle"]["status"], rows["idle"]["reward"], rows["idle"]["steps"]) == ("unresolved", 0.0, 1)
    transcript = [json.loads(line) for line in Path(rows["scripted"]["transcript_path"]).read_text().splitlines()]
    assert [entry["tool"] for entry in transcript] == ["view", "str_replace", "bash", "answer"]
    assert "reaped" not in (rows["scripted"]["reason"] or "")
    assert transcript[-1]["observation"].startswith("reward 1.0")
    results = {row["agent"]: row["status"] for row in read_results(gym.recorder.lake_dir)}
    assert results == {"gym:scripted": "resolved", "gym:idle": "unresolved"}  # next to the harness's results


def _call(env: Environment, name: str, **arguments: object) -> str:
    observation = env.call(name, arguments)
    assert not observation.error, (name, arguments, observation.text)
    return observation.text


def test_each_tool_does_what_the_card_says(
    gym: Gym, hw: HarnessWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the harness writes the repository's archive
    env = gym.open(hw.task(), agent="prober")
    assert list(tmp_path.iterdir()) == []  # the archive is gone once the boxes started, not at the episode's end
    assert "killed after the timeout (5 s in this environment)" in env.tools()[0]["function"]["description"]
    listing = _call(env, "view", path="/testbed")
    assert "/testbed/tinycalc/rounding.py" in listing and ".git" not in listing
    assert "test_rounding.py" not in listing  # the task's tests are not in the sandbox
    assert "Created /testbed/notes/todo.txt (3 lines)" in _call(
        env, "create", path="notes/todo.txt", content="a x a\nb\na\n"
    )
    again = env.call("create", {"path": "/testbed/notes/todo.txt", "content": "other"})
    assert again.error and "already exists" in again.text
    replaced = _call(env, "str_replace", path="/testbed/notes/todo.txt", old_str="a", new_str="A")
    assert replaced.startswith("Replaced 3 occurrences") and "-a x a\n+A x A" in replaced and "-a\n+A" in replaced
    missing = env.call("str_replace", {"path": "notes/todo.txt", "old_str": "zzz", "new_str": "y"})
    assert missing.error and "does not occur" in missing.text
    inserted = _call(env, "insert", path="notes/todo.txt", start=2, content="between")
    assert "+between" in inserted and " A x A\n+between\n b" in inserted
    _call(env, "insert", path="notes/todo.txt", start=5, content="end")  # 4 lines: line 5 appends
    beyond = env.call("insert", {"path": "notes/todo.txt", "start": 9, "content": "x"})
    assert beyond.error and "from 1 to 6" in beyond.text
    assert _call(env, "bash", command="cat -A notes/todo.txt") == "A x A$\nbetween$\nb$\nA$\nend$\n[exit code 0]"
    lines = _call(env, "view", path="notes/todo.txt", start=2, end=3).splitlines()
    assert lines == ["/testbed/notes/todo.txt (lines 2-3 of 5):", "     2\tbetween", "     3\tb"]
    _call(env, "bash", command="chmod 755 tinycalc/arith.py && cd tinycalc && export GYM_MARK=kept")
    assert _call(env, "bash", command="pwd; echo $GYM_MARK") == "/testbed/tinycalc\nkept\n[exit code 0]"
    _call(env, "str_replace", path="tinycalc/arith.py", old_str="def add", new_str="def add")  # relative to /testbed
    assert _call(env, "bash", command="stat -c %a arith.py") == "755\n[exit code 0]"  # rewritten in place
    assert env.call("bash", {"command": "false"}).text == "[exit code 1]"
    started = time.monotonic()
    slow = env.call("bash", {"command": "echo started; sleep 61 & sleep 62"})
    assert slow.error and slow.data["timed_out"] and "timed out after 5 s" in slow.text and "started" in slow.text
    assert time.monotonic() - started < 20
    survivors = "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' ' | grep -c 'sleep 6[12]' || true"
    assert _call(env, "bash", command=f"echo alive; {survivors}") == "alive\n0\n[exit code 0]"  # the group was killed
    _call(
        env,
        "bash",
        command="ln -s /testbed/tinycalc /tmp/linked && mkdir /tmp/many && cd /tmp/many && "
        "seq 1 1500 | xargs touch && cd /testbed/tinycalc",
    )
    assert "/tmp/linked/rounding.py" in _call(env, "view", path="/tmp/linked")  # a linked directory is followed
    many = _call(env, "view", path="/tmp/many").splitlines()
    assert len(many) == 1 + 1000 + 1 and "more entries not shown" in many[-1]
    for name, arguments, message in (
        ("grep", {}, "unknown tool"),
        ("view", {"file": "x"}, "no argument file"),
        ("view", {"path": "/testbed/nope.py"}, "does not exist"),
    ):
        refused = env.call(name, arguments)
        assert refused.error and message in refused.text, refused.text
    closed = gym.close_environment(env.id)
    assert (closed.reward, closed.result.status, closed.answered) == (0.0, Status.AGENT_ERROR, False)
    assert "closed before an answer" in (closed.result.reason or "")
    with pytest.raises(EpisodeEnded):
        gym.get(env.id)
    row = next(r for r in read_episodes(gym.recorder.lake_dir) if r["episode_id"] == env.id)
    assert (row["tool_counts"]["insert"], row["errors"]) == (3, 7)  # a failing command is no tool error
    assert "gym:prober" not in {r["agent"] for r in read_results(gym.recorder.lake_dir)}  # no verdict: no result


def test_testbed_is_the_graded_tree_whatever_the_image_had_there(gym: Gym, hw: HarnessWorld) -> None:
    env = gym.open(hw.task(), agent="testbed")
    try:
        _call(env, "bash", command="cd / && rm /testbed && mkdir /testbed && touch /testbed/own-tree")  # an image's
        assert env._toolbox is not None
        prepare_testbed(env._toolbox.box)  # what the open does
        assert _call(env, "bash", command="readlink -f /testbed; pwd; ls tinycalc/rounding.py") == (
            "/repo\n/testbed\ntinycalc/rounding.py\n[exit code 0]"
        )
    finally:
        env.close()


def test_an_episode_nobody_reaps_ends_itself_and_is_recorded(
    gym: Gym, hw: HarnessWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(environment, "REAPER_GRACE_S", 0.5)
    config = world_gym_config(hw, tmp_path / "state", episode_timeout=1, idle_timeout=1)
    recorder = Recorder(tmp_path / "lake", config.server_id)
    env = Environment(gym.harness, hw.task(), config, agent="unwatched", recorder=recorder).start()  # no gym, no reaper
    wait_until(lambda: [r["status"] for r in read_episodes(tmp_path / "lake")] == ["agent_error"], 30, "concluded")
    assert env.done and "ran out of time" in env.ended_because()


def test_the_python_api_reaps_idle_environments(
    hw: HarnessWorld, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    config = world_gym_config(hw, tmp_path / "state", idle_timeout=2)
    with Gym(config, lake_dir=tmp_path / "lake", client=docker_client) as gym:  # no server: the gym's own reaper
        env = gym.open(hw.task(), agent="napper")
        wait_until(lambda: gym.environments() == [], 30, "the idle environment reaped")
        assert env.done and "idle" in env.ended_because()
        (row,) = read_episodes(tmp_path / "lake")
        assert (row["status"], row["reward"]) == ("agent_error", 0.0) and "idle" in row["reason"]
        wait_until(lambda: len(containers_of(docker_client, config.server_id)) == 0, 30, "its containers removed")


@pytest.mark.extended
def test_cheating_agents_through_the_tools_earn_nothing(gym: Gym, hw: HarnessWorld) -> None:
    """The harness's cheating agents (`tests/test_harness_hacks.py` runs them all as agents), typed into `bash`: the
    ones asserted on here and the first of each class of `tests/support/red_team.py`, so that every defence is met
    through the tools; `benchmarks/red_team.py gym` replays them all."""
    scripts = bounded({**HACKS, **SNEAKY}, PYTHON_CLASSES, GYM_ASSERTED)
    answers = through_the_gym(gym, hw.task(), scripts)
    assert set(answers) == set(scripts)
    for name, answer in answers.items():
        assert answer.reward == 0.0 and answer.result.status is not Status.RESOLVED, (name, answer.result.reason)
        assert answer.result.sanity_check, (name, answer.result.reason)
    assert answers["rename-conftest"].result.dropped_paths == ["conftest.py"]
    assert answers["exit-early"].result.status is Status.UNRESOLVED  # the diff broke the run: the agent's loss
    for name in ("a-hook-from-init", "a-runtest-noop", "a-rewrite-report"):
        assert (answers[name].result.reason or "").startswith("tampered test results"), name
    assert answers["b-shadow-math"].result.dropped_paths == ["math.py"]


@pytest.mark.extended
def test_the_served_gym_token_cap_reaping_and_kill_9(
    hw: HarnessWorld, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    # idle timeout: long enough that the first environment is not reaped while the second still opens on a
    # loaded 2-core machine (opens there took over 6 s; with a second Docker lane beside it, over 20 s), short
    # enough to watch both reaped
    with served(home, hw, "--max-envs", "2", "--idle-timeout", "45", name="first") as first:
        assert httpx.get(f"{first.url}/tasks").status_code == 401
        with first.client() as client, ThreadPoolExecutor(3) as pool:
            assert {t["task_id"] for t in client.tasks()} == {"acme-labs__tinycalc-12", "northwind__datekit-7"}
            opening = [
                pool.submit(client.open, task, "served") for task in ("acme-labs__tinycalc-12", "northwind__datekit-7")
            ]
            wait_until(lambda: len(containers_of(docker_client, first.server_id)) >= 2, 60, "two opens under way")
            with pytest.raises(GymError) as full:
                client.open("acme-labs__tinycalc-12")
            assert full.value.status == 429 and "cap" in str(full.value)
            envs = [future.result()["env_id"] for future in opening]
            hello = client.call(envs[0], "bash", {"command": "echo hello from $PWD"})
            assert hello["observation"] == "hello from /testbed\n[exit code 0]" and hello["done"] is False
            refused = client.call(envs[0], "answer", {"force": True})  # a bad answer is a call like any other
            assert refused["error"] and not refused["done"] and "no argument force" in refused["observation"]
            wait_until(lambda: client.environments() == [], 120, "both environments reaped when idle")
            with pytest.raises(GymError) as reaped:
                client.call(envs[0], "bash", {"command": "true"})
            assert reaped.value.status == 409 and "idle" in str(reaped.value)
            wait_until(lambda: containers_of(docker_client, first.server_id) == [], 30, "reaped containers removed")
            left = client.open("acme-labs__tinycalc-12", "orphan")["env_id"]  # then the server dies under it
        # agent, verify and twin (the sanity container is removed in the background)
        wait_until(lambda: len(containers_of(docker_client, first.server_id)) == 3, 30, "agent, verify, twin left")
        first.kill()
        assert len(containers_of(docker_client, first.server_id)) == 3  # nothing could remove them
    with served(home, hw, name="second") as second:
        assert containers_of(docker_client, first.server_id) == []  # removed when the new server started
        rows = {row["episode_id"]: row for row in read_episodes(home / "lake")}
        assert rows[left]["status"] == "abandoned" and rows[left]["agent"] == "orphan"
        assert {rows[e]["status"] for e in envs} == {"agent_error"} and "idle" in rows[envs[0]]["reason"]
        with second.client() as client, ThreadPoolExecutor(1) as pool:
            stopped = client.open("northwind__datekit-7")["env_id"]
            wait_until(lambda: len(containers_of(docker_client, second.server_id)) == 3, 30, "agent, verify, twin")
            pool.submit(second.client().open, "acme-labs__tinycalc-12", "late")  # SIGTERM comes during this open
            wait_until(lambda: len(containers_of(docker_client, second.server_id)) > 3, 60, "the late open begun")
            second.process.terminate()
            second.process.wait(120)
    assert second.process.returncode == 0  # SIGTERM: a clean stop that ends its episodes
    assert containers_of(docker_client, second.server_id) == []  # the open under way's too
    rows = {row["episode_id"]: row for row in read_episodes(home / "lake")}
    assert (rows[stopped]["status"], rows[stopped]["reward"]) == ("abandoned", None)  # as after kill -9
    assert "gym:agent" not in {r["agent"] for r in read_results(home / "lake")}


def test_baseagent_drives_an_environment_through_the_server(hw: HarnessWorld, tmp_path: Path) -> None:
    pr = hw.world.pr(*EASY)
    with served(tmp_path / "home", hw) as server, OpenAITwin(api_key="sk-twin") as twin:
        twin.queue(
            ToolCall("view", {"path": ROUNDING}),
            ToolCall("str_replace", {"path": ROUNDING, "old_str": BUGGY, "new_str": FIXED}),
            ToolCall("answer", {}),
        )
        env = {
            **os.environ,
            "PYTHONPATH": str(EXAMPLES / "baseagent"),
            "BASEAGENT_BASE_URL": twin.url,
            "BASEAGENT_API_KEY": "sk-twin",
            "BASEAGENT_MODEL": "twin",
            "SWE_FORGE_GYM_TOKEN": TOKEN,
        }
        argv = [sys.executable, "-m", "baseagent", "--gym", server.url, "--task", "acme-labs__tinycalc-12"]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        requests = [r.json for r in twin.requests]
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout)
    assert (outcome["reward"], outcome["status"]) == (1.0, "resolved"), outcome
    assert outcome["result"]["task_id"] == "acme-labs__tinycalc-12" and "copysign" in outcome["model_patch"]
    assert [t["function"]["name"] for t in requests[0]["tools"]][-1] == "answer"  # the environment's own tools
    assert pr.issue is not None and pr.issue.title in requests[0]["messages"][1]["content"]
    assert "math.floor(value * scale + 0.5)" in requests[1]["messages"][-1]["content"]  # the view came back
    assert "+    return math.copysign" in requests[2]["messages"][-1]["content"]  # and the diff of its edit
    (row,) = read_episodes(tmp_path / "home" / "lake")
    assert (row["agent"], row["reward"], row["steps"]) == ("baseagent", 1.0, 3)
