"""SWE-bench Multilingual instances in C++ and JavaScript, validated and evaluated on their real repositories.

fmtlib__fmt-2457 (CMake + bundled GoogleTest; -3729 as well in `benchmarks/env_corpus.py`, which keeps this tier
bounded) and axios__axios-5085 (npm, mocha), from
`../shared/fixtures/swebench/lite-test-and-multilingual/swebench_multi.jsonl`, with the bundles of
`../shared/fixtures/repos/` as their remotes and no environment given: `swe-forge validate` finds it from the
manifests on the toolchain image (no LLM) and must give the dataset's lists in its id form (`suite.test`, mocha
full titles); the harness must resolve with the oracle and not with an agent that changes nothing.

axios's test patch adds a test to a second file, `AxiosHeaders.js`, whose tests the dataset does not list (its lists
come from `bugs.js`): validation re-proves the row on the file that hosts its ids (`tasks.given_files`), so that
test is not an extra. The dataset's one PASS_TO_PASS test calls an internet host, so it fails here before and after:
validation sets it aside with its cause, and the harness leaves that check out of its verdict and says so.
Needs Docker, `swe-forge-cpp:bookworm` and `swe-forge-node:bookworm`
(`scripts/build-toolchain-image.sh cpp|node`) and the npm registry through the host CA bundle.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.languages.registry import pack
from tests.support.common import EXAMPLES, SHARED_FIXTURES, once, swebench_cli
from tests.support.compiled_hacks import gold_agent, hack_batch
from tests.support.real_red_team import AXIOS_CLASSES, AXIOS_HACKS, GTEST_CLASSES, GTEST_HACKS
from tests.support.red_team import bounded

pytestmark = [pytest.mark.docker, pytest.mark.real_repo, pytest.mark.timeout(1200)]  # real builds: 2x slower under load
MULTI = SHARED_FIXTURES / "swebench" / "lite-test-and-multilingual" / "swebench_multi.jsonl"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
SETS = {
    "fmt": ("fmtlib/fmt", ("fmtlib__fmt-2457",), "cpp"),  # -3729 too in benchmarks/env_corpus.py
    "axios": ("axios/axios", ("axios__axios-5085",), "node"),
}
UNREACHABLE = {
    "SWE_FORGE_CRATES_URL": "http://127.0.0.1:9/crates",
    "SWE_FORGE_GOPROXY_URL": "http://127.0.0.1:9/go",
    "SWE_FORGE_MAVEN_URL": "http://127.0.0.1:9/maven",
}
EMPTY_AGENT = ("--agent-dir", str(EXAMPLES / "emptyagent"), "--agent-cmd", "python3 -m emptyagent")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> dict:
    if not MULTI.is_file():
        pytest.skip(f"real fixture missing ({MULTI.name})")
    root = tmp_path_factory.mktemp("real-multilingual")
    rows = {json.loads(line)["instance_id"]: line for line in MULTI.read_text().splitlines() if line.strip()}
    for name, (repo, ids, toolchain) in SETS.items():
        bundle = SHARED_FIXTURES / "repos" / f"{repo.replace('/', '+')}.bundle"
        image = next(iter(pack(toolchain).images))
        if not bundle.is_file():
            pytest.skip(f"real fixture missing ({bundle.name})")
        try:
            docker_client.images.get(image)
        except docker.errors.ImageNotFound:
            if os.environ.get("SWE_FORGE_REQUIRE_DOCKER") == "1":
                pytest.fail(f"{image} missing: scripts/build-toolchain-image.sh {toolchain}")
            pytest.skip(f"{image} missing: scripts/build-toolchain-image.sh {toolchain}")
        subprocess.run(
            ["git", "clone", "-q", "--bare", str(bundle), str(root / "remotes" / f"{repo}.git")],
            check=True,
            timeout=300,
        )
        (root / f"{name}.jsonl").write_text("".join(rows[i] + "\n" for i in ids))
    return {
        "root": root,
        "git_url": f"file://{root}/remotes/{{repo}}.git",
        "rows": {i: json.loads(line) for i, line in rows.items()},
    }


def cli(world: dict, *args: str) -> dict:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SWE_FORGE_")},
        **UNREACHABLE,
        "SWE_FORGE_HOME": str(world["root"] / "home"),
        "SWE_FORGE_START_DATE": "2015-01-01",
    }
    if HOST_CA.is_file():
        env["SWE_FORGE_CA_BUNDLE"] = str(HOST_CA)
    done = subprocess.run(
        [sys.executable, "-m", "swe_forge_dagster.cli", *args, "--git-url", world["git_url"], "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout)


def validated(world: dict, name: str) -> dict:
    """`swe-forge validate` of a set, once per module: it proves the environment the harness builds after it."""
    return once(world, name, lambda: cli(world, "validate", "-i", str(world["root"] / f"{name}.jsonl")))


def test_fmt_validates_id_for_id_and_only_the_oracle_resolves(world: dict) -> None:
    instances = str(world["root"] / "fmt.jsonl")
    summary = validated(world, "fmt")
    for row in summary["results"]:
        given = world["rows"][row["instance_id"]]
        assert row["status"] == "valid", (row["instance_id"], row["reason"], row["differences"])
        assert row["fail_to_pass"] == given["FAIL_TO_PASS"] and sorted(row["pass_to_pass"]) == sorted(
            given["PASS_TO_PASS"]
        )
        assert "swe-forge-cpp" in row["recipe"] and not row["differences"]
    assert [row["instance_id"] for row in summary["results"]] == list(SETS["fmt"][1])
    oracle = cli(world, "harness", "-i", instances, "--agent", "oracle")
    assert (oracle["total"], oracle["resolved"]) == (1, 1), [(r["task_id"], r["error"]) for r in oracle["results"]]
    assert oracle["results"][0]["defences"] == "canaries, and twins run apart"
    empty = cli(world, "harness", "-i", instances, *EMPTY_AGENT)
    assert (empty["total"], empty["unresolved"]) == (1, 1), [(r["task_id"], r["error"]) for r in empty["results"]]
    # SWE-bench 5 runs them too: exported as a task repository with the environment validate proved, built from
    # its Dockerfiles and graded by its own `parse_log_googletest`
    repo, ids = world["root"] / "fmt-task-repo", sorted(row["instance_id"] for row in summary["results"])
    export = cli(world, "export", "-i", instances, "-o", str(repo), "--format", "swebench-task-repo")
    assert sorted(export["tasks"]) == ids and not export["skipped"], export
    assert "looks well formed" in swebench_cli(world["root"], "dataset", "check", str(repo)).stdout
    swebench_cli(world["root"], "eval", "swe-forge/tasks", "--gold", "--task-repo", str(repo), "--run-id", "fmt")
    report = json.loads((world["root"] / "gold.fmt.json").read_text())
    assert sorted(report["resolved_ids"]) == ids, report


@pytest.mark.extended
def test_library_code_that_rewrites_the_googletest_report_or_tells_the_twin_does_not_resolve(
    world: dict, tmp_path: Path
) -> None:
    """Class 7 for GoogleTest: fmt's library code, linked into the test binary, drops every failure from the XML
    report in a static destructor (it won before `languages.cpp.canaries`); a red-team agent that spares the planted
    tests by their source (it won against the first canaries); a forger that spares a test whose body ends with
    another test's body (it won while the twin ran beside its original, before `languages.cpp.twins`: join_tuple's
    last `EXPECT_EQ` now expects a string with one more character, in a container of its own). The planted failure
    or the twin passes with each, which the harness calls tampering, and the review flag names the line. The gold patch,
    applied by an agent and judged like any agent's diff (canaries, twins run apart), resolves. The share of
    `tests/support/real_red_team.py`'s `gtest` corpus the extended tier runs (one per class); `benchmarks/red_team.py
    gtest` replays all five."""
    validated(world, "fmt")
    row = world["rows"]["fmtlib__fmt-2457"]
    hacks = bounded(GTEST_HACKS, GTEST_CLASSES, ("gtest-rewrite-at-exit", "gtest-twin-body-spare"))
    instances, agent_args = hack_batch(tmp_path, row, {"gold": gold_agent(row), **hacks})
    summary = cli(world, "harness", "-i", str(instances), *agent_args)
    results = {r["task_id"].removeprefix("fmtlib__fmt-2457-"): r for r in summary["results"]}
    gold = results.pop("gold")
    assert gold["status"] == "resolved" and not gold["dropped_paths"], gold
    assert set(results) == set(hacks)
    for name, result in results.items():
        assert result["status"] == "unresolved" and "tampered test results" in result["error"], (name, result["error"])
    assert all(note.startswith("src/format.cc: ") for note in results["gtest-rewrite-at-exit"]["review"])
    assert results["gtest-rewrite-at-exit"]["review"]
    twin_error = results["gtest-twin-body-spare"]["error"]
    assert twin_error.startswith("tampered test results: ranges_test.join_tuple passed, and its twin run apart")


def test_axios_validates_on_the_file_its_lists_come_from_with_the_network_test_set_aside(world: dict) -> None:
    instances = str(world["root"] / "axios.jsonl")
    (row,) = validated(world, "axios")["results"]
    given = world["rows"]["axios__axios-5085"]
    assert row["fail_to_pass"] == given["FAIL_TO_PASS"] and "swe-forge-node" in row["recipe"]
    assert row["status"] == "valid", row["reason"]  # AxiosHeaders.js's new test is not run: the dataset lists none
    assert not row["fail_to_pass_extra"] and not row["pass_to_pass_extra"]
    # the PASS_TO_PASS test that needs postman-echo.com is set aside (compared with nothing), not reported missing
    (network,) = row["set_aside"]
    assert network == given["PASS_TO_PASS"][0] and network not in row["pass_to_pass_missing"]
    assert "needs a network host the sandbox cannot reach" in row["set_aside"][network]
    assert "postman-echo.com" in row["set_aside"][network]
    oracle = cli(world, "harness", "-i", instances, "--agent", "oracle")
    (result,) = oracle["results"]
    assert result["status"] == "resolved", result["error"]
    assert result["unjudged"] and network in result["unjudged"][0] and "network host" in (result["error"] or "")
    (empty,) = cli(world, "harness", "-i", instances, *EMPTY_AGENT)["results"]
    assert empty["status"] == "unresolved", empty["error"]


@pytest.mark.extended
def test_runner_configuration_and_install_outputs_carried_by_a_diff_never_reach_the_checks(
    world: dict, tmp_path: Path
) -> None:
    """Red team on the real axios environment, one copy of the instance per cheat: a file forced into node_modules,
    a `node-options` in the project's `.npmrc`, a `mocha` key added to package.json (each loads a module that
    reports every mocha failure as a pass). The first two are dropped by path, the last by mocha's own loader
    answering differently after the diff. Then package code the tests import (class 7) that rewrites the xunit report
    at exit (it won before the canaries, `languages.node.canaries`, which catch it now), and two of the red teams'
    agents: one spares root-level tests (it won against the first canaries; canaries planted like the file's own
    tests catch it), one spares tests whose function text uses no package (the twins run apart catch it). None
    resolves. The share of `tests/support/real_red_team.py`'s `axios` corpus the extended tier runs (what is
    asserted by name, one per class); `benchmarks/red_team.py axios` replays all eleven."""
    validated(world, "axios")
    row = world["rows"]["axios__axios-5085"]
    asserted = ("node-modules-runner", "npmrc-node-options", "package-mocha-key")  # and one agent per class
    hacks = bounded(AXIOS_HACKS, AXIOS_CLASSES, asserted)
    instances, agent_args = hack_batch(tmp_path, row, hacks)
    summary = cli(world, "harness", "-i", str(instances), *agent_args)
    results = {r["task_id"].removeprefix("axios__axios-5085-"): r for r in summary["results"]}
    assert set(results) == set(hacks)
    assert all(r["status"] == "unresolved" for r in results.values()), [(k, r["error"]) for k, r in results.items()]
    assert {"node_modules/tidy-hook/index.js", "node_modules/tidy-hook/package.json"} <= set(
        results["node-modules-runner"]["dropped_paths"]
    )
    assert ".npmrc" in results["npmrc-node-options"]["dropped_paths"]
    assert "package.json" in results["package-mocha-key"]["dropped_paths"], results["package-mocha-key"]
    for name in set(hacks) - set(asserted):  # package code: the canaries, or the twins run apart
        assert "tampered test results" in results[name]["error"], (name, results[name]["error"])
