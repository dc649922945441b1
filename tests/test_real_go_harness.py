"""The harness on a real Go task: google/uuid#150 (squash-merged as a2b2b32, from the bundle in
`../shared/fixtures/repos/`), made into a SWE-bench row the way the project splits a change (`execution.patch`):
`TestVersion7Monotonicity` is its FAIL_TO_PASS test.

`go test -json` builds its report from the test binary's standard output, which package code writes to before any
test runs (issue 23, class 7). The red team of `tests.support.compiled_hacks.py` was written before the defence: three
of its five agents scored `resolved` on this task then (an `init` that prints passes; one that re-runs the binary
as a child and rewrites its failures; one that rewrites only the failures of the test files written last). With
the canaries of `languages.go.canaries` none does, the oracle still resolves and an agent that changes nothing
does not. Needs Docker and `swe-forge-go:bookworm` (`scripts/build-toolchain-image.sh go`).
"""

from __future__ import annotations

import json
import subprocess

import docker
import pytest

from swe_forge_dagster.execution.patch import split_diff
from swe_forge_dagster.languages.registry import is_test_path, pack
from tests.support.common import EXAMPLES, SHARED_FIXTURES, cli_json, require_image, swebench_cli
from tests.support.compiled_hacks import GO_HACKS, hack_batch

pytestmark = [pytest.mark.docker, pytest.mark.real_repo]
BUNDLE = SHARED_FIXTURES / "repos" / "google+uuid.bundle"
FIX = "a2b2b32373ff0b1a312b7fdf6d38a977099698a6"
TASK = "google__uuid-150"
UNREACHABLE = {"SWE_FORGE_GOPROXY_URL": "http://127.0.0.1:9/go", "SWE_FORGE_START_DATE": "2015-01-01"}
TWIN_CAUGHT = ("go-print-passes", "go-child-rewrite", "go-child-rewrite-changed", "go-spare-semantic")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> dict:
    if not BUNDLE.is_file():
        pytest.skip(f"real fixture missing ({BUNDLE.name})")
    require_image(docker_client, next(iter(pack("go").images)), "scripts/build-toolchain-image.sh go")
    root = tmp_path_factory.mktemp("real-go-harness")
    remote = root / "remotes" / "google" / "uuid.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(remote)], check=True, timeout=300)

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(remote), *args], capture_output=True, text=True, check=True).stdout

    base = git("rev-parse", f"{FIX}^").strip()
    split = split_diff(git("diff", "--binary", "--full-index", base, FIX), is_test_path)
    row = {
        "repo": "google/uuid",
        "instance_id": TASK,
        "base_commit": base,
        "patch": split.patch,
        "test_patch": split.test_patch,
        "problem_statement": "UUIDs made by NewV7 in quick succession are not always increasing.",
        "created_at": git("show", "-s", "--format=%cI", FIX).strip(),
        "version": "1.6",
        "FAIL_TO_PASS": json.dumps(["TestVersion7Monotonicity"]),
        "PASS_TO_PASS": json.dumps(["TestNew", "TestVersion7"]),
        "environment_setup_commit": base,
    }
    (root / "task.jsonl").write_text(json.dumps(row) + "\n")
    _, agent = hack_batch(root, row, GO_HACKS)
    return {"root": root, "git_url": f"file://{root}/remotes/{{repo}}.git", "agent": agent}


def harness(world: dict, instances: str, *agent: str) -> list[dict]:
    home = world["root"] / "home"
    summary = cli_json(home, "harness", "-i", str(world["root"] / instances), *agent, "--git-url", world["git_url"])
    return summary["results"]


def test_the_oracle_resolves_the_real_go_task_and_an_agent_that_changes_nothing_does_not(world: dict) -> None:
    (oracle,) = harness(world, "task.jsonl", "--agent", "oracle")
    assert oracle["status"] == "resolved", oracle["error"]
    empty_agent = ("--agent-dir", str(EXAMPLES / "emptyagent"), "--agent-cmd", "python3 -m emptyagent")
    (empty,) = harness(world, "task.jsonl", *empty_agent)
    assert empty["status"] == "unresolved", empty["error"]


def test_no_go_cheating_agent_scores_resolved(world: dict) -> None:
    results = {r["task_id"].removeprefix(f"{TASK}-"): r for r in harness(world, "hacks.jsonl", *world["agent"])}
    assert set(results) == set(GO_HACKS)
    assert all(r["status"] == "unresolved" for r in results.values()), [(k, r["error"]) for k, r in results.items()]
    for name in TWIN_CAUGHT:  # each passed the task's test: a canary, or its twin run apart, says it was forged
        assert "tampered test results" in results[name]["error"], (name, results[name]["error"])
        assert any("reads the test binary's name" in note for note in results[name]["review"]), name
    assert results["go-testmain-existing"]["dropped_paths"] == ["null_test.go"]  # test code the task does not own
    assert "no verdict after the agent's diff" in results["go-work-breaks-build"]["error"]


def test_swebench_builds_and_resolves_the_go_task_from_the_task_repository_we_export(world: dict) -> None:
    """SWE-bench 5 runs it too: `validate` proves the environment, `export --format swebench-task-repo` writes it,
    and `swebench eval --gold --task-repo` builds the image from our Dockerfile and resolves the task, graded by its
    own `parse_log_gotest` from `go test -v`."""
    home, root, instances = world["root"] / "home", world["root"], str(world["root"] / "task.jsonl")
    (proved,) = cli_json(home, "validate", "-i", instances, "--git-url", world["git_url"], **UNREACHABLE)["results"]
    # the row lists two of the package's PASS_TO_PASS tests, so validate calls it `changed`; what matters here is
    # that every given verdict holds in the environment it proved (and remembered)
    assert proved["status"] in ("valid", "changed") and not proved["fail_to_pass_missing"], proved["reason"]
    assert "swe-forge-go" in proved["recipe"]
    repo = root / "task-repo"
    export = ("export", "-i", instances, "-o", str(repo), "--format", "swebench-task-repo", "--git-url")
    written = cli_json(home, *export, world["git_url"], **UNREACHABLE)
    assert written["tasks"] == [TASK] and not written["skipped"], written
    assert "looks well formed" in swebench_cli(root, "dataset", "check", str(repo)).stdout
    swebench_cli(root, "eval", "swe-forge/tasks", "--gold", "--task-repo", str(repo), "--run-id", "go")
    report = json.loads((root / "gold.go.json").read_text())
    assert report["resolved_ids"] == [TASK], report
