"""The sandbox agents for repositories in other languages than Python, against the OpenAI twin.

The environment agent gets a prompt and a `submit_environment` schema for the repository's toolchain (how
that language installs, the runner adapters' templates with `{tests}` and `{report}`), works on that
toolchain's image, and its submission is replayed with the runner's own report. The test agent writes tests
for the runner of the environment's test command, and they are checked the same way. The Docker test runs
both on a small npm package with mocha (`swe-forge-node:bookworm`, the npm registry through the host CA
bundle) and proves the written tests through validation.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin, ToolCall
from swe_forge_dagster.environments.environment import EnvRecipe, env_image_tag
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.patch import patch_adding_files, split_diff
from swe_forge_dagster.execution.recipe import RETOUCH
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.languages.go.pack import GO_TEST
from swe_forge_dagster.languages.node.pack import MOCHA
from swe_forge_dagster.languages.registry import is_test_path, runners
from swe_forge_dagster.tasks.agent_prompts import (
    env_prompt,
    submit_environment_model,
    submit_tests_model,
    toolchain_test_command,
    writer_prompt,
)
from swe_forge_dagster.tasks.agents import find_environment, toolchain_image
from swe_forge_dagster.tasks.prove import TaskExecutor
from swe_forge_dagster.tasks.test_agent import _checked_files, _ours, write_tests
from tests.support.agent_twin import KEY, lines, make_client, tool_names
from tests.support.common import BASE_IMAGE

RUNNERS = runners()
NODE_IMAGE = "swe-forge-node:bookworm"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
NPM_INSTALL = "npm install --no-audit --no-fund"


@pytest.fixture
def twin() -> Iterator[OpenAITwin]:
    with OpenAITwin(api_key=KEY) as server:
        yield server


# -- prompts and forms, without Docker ---------------------------------------------------------------


def test_go_prompt_and_schema_name_go_test_json() -> None:
    prompt = env_prompt("go", "swe-forge-go:trixie", network=True)
    assert "Go repository" in prompt and "swe-forge-go:trixie" in prompt and GO_TEST in prompt
    assert "go test -json" in prompt and "{tests}" in prompt and "{report}" in prompt and "pytest" not in prompt
    schema = submit_environment_model("go").model_json_schema()
    assert "go test -json -count=1 {tests} > {report}" in schema["properties"]["test_command"]["description"]
    assert schema["additionalProperties"] is False and schema["required"] == ["install_commands", "test_command"]
    node = env_prompt("node", NODE_IMAGE, network=False)
    assert all(RUNNERS[name].template in node for name in ("mocha", "jest", "vitest")) and "Network: none" in node
    assert env_prompt(None, BASE_IMAGE, network=True).startswith("You set up the test environment of a Python")

    go_tests = writer_prompt(RUNNERS["go"], "go test -json -count=1 ./pkg > /tmp/report")
    assert "_test.go" in go_tests and "TestName" in go_tests and "./pkg" in go_tests
    tests_schema = submit_tests_model(RUNNERS["go"]).model_json_schema()
    assert "go test ids" in json.dumps(tests_schema) and "pkg/example_test.go" in json.dumps(tests_schema)
    assert "test/<name>.test.js" in writer_prompt(RUNNERS["mocha"], "npx mocha")


def test_toolchain_test_commands_must_be_a_runner_template_with_tests_and_report() -> None:
    go = f"export GOFLAGS=-mod=mod GOPROXY=off && {GO_TEST}"
    assert toolchain_test_command(f"  {go} ", "go") == go
    assert toolchain_test_command(MOCHA, "node") == MOCHA
    for command, toolchain, problem in [
        ("npm test", "node", "start from a template"),
        ("go test ./... -json", "go", "lacks {tests} and {report}"),
        ("go test -json {tests}", "go", "lacks {report}"),
        (MOCHA, "go", "not one of the Go test runners"),
        ("go test -json {tests} > {report} ${HOME}", "go", "braces"),
        ("python -m pytest {tests}", "rust", "start from a template"),
    ]:
        with pytest.raises(ValueError, match=problem.replace("{", r"\{").replace("}", r"\}")):
            toolchain_test_command(command, toolchain)


def test_written_files_must_be_test_files_the_runner_runs(tmp_path: Path) -> None:
    (tmp_path / "uuid_test.go").write_text("package uuid\n")
    model = submit_tests_model(RUNNERS["go"])

    def check(*paths: str) -> str | dict[str, str]:
        files = [{"path": p, "content": "package uuid\n"} for p in paths]
        return _checked_files(model.model_validate({"files": files}), tmp_path, RUNNERS["go"])  # type: ignore[arg-type]

    assert check("v7_test.go", "testdata/v7.json") == {
        "v7_test.go": "package uuid\n",
        "testdata/v7.json": "package uuid\n",
    }
    assert "name it <name>_test.go" in str(check("v7.go"))
    assert "already exists" in str(check("uuid_test.go"))
    assert "no file go runs" in str(check("testdata/v7.json"))
    mocha = submit_tests_model(RUNNERS["mocha"]).model_validate({"files": [{"path": "test/x.test.js", "content": "1"}]})
    assert _checked_files(mocha, tmp_path, RUNNERS["mocha"]) == {"test/x.test.js": "1"}  # type: ignore[arg-type]


def test_only_the_written_tests_count() -> None:
    files = {"v7_test.go": "func TestV7Order(t *testing.T) {}\nfunc helper() {}\n"}
    outcomes = {"TestV7Order": "passed", "TestV7Order/sub": "failed", "TestParse": "passed"}
    assert _ours(outcomes, files, RUNNERS["go"]) == {"TestV7Order": "passed", "TestV7Order/sub": "failed"}
    java = {"src/test/java/org/x/CalcTest.java": "class CalcTest {}"}
    assert _ours({"org.x.CalcTest#adds": "passed", "org.x.OtherTest#a": "passed"}, java, RUNNERS["maven"]) == {
        "org.x.CalcTest#adds": "passed"
    }
    assert _ours({"calc adds": "passed"}, {"test/calc.test.js": ""}, RUNNERS["mocha"]) == {"calc adds": "passed"}


# -- a small npm package with mocha, in Docker --------------------------------------------------------

PACKAGE = {
    "name": "calc",
    "version": "1.0.0",
    "main": "lib/calc.js",
    "scripts": {"test": "mocha --timeout 5000"},
    "devDependencies": {"mocha": "^10.2.0"},
}
CALC = "exports.add = (a, b) => a + b;\n"
CALC_FIXED = CALC + "exports.clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));\n"
OLD_TEST = (
    "const assert = require('assert');\nconst { add } = require('../lib/calc');\n\n"
    "describe('calc', () => {\n  it('adds', () => assert.strictEqual(add(2, 3), 5));\n});\n"
)
NEW_TEST = (
    "const assert = require('assert');\nconst calc = require('../lib/calc');\n\n"
    "describe('clamp', () => {\n"
    "  it('keeps a value inside the range', () => assert.strictEqual(calc.clamp(7, 0, 5), 5));\n"
    "  it('adds still', () => assert.strictEqual(calc.add(1, 1), 2));\n});\n"
)
USELESS = (
    "const assert = require('assert');\nconst { add } = require('../lib/calc');\n\n"
    "describe('more', () => {\n  it('adds again', () => assert.strictEqual(add(1, 2), 3));\n});\n"
)


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x",
        "GIT_CONFIG_GLOBAL": "/dev/null",
    }
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


def node_repo(root: Path) -> tuple[str, str, str]:
    """A bare remote `root/acme/calc.git`: base (add + its mocha test), head (adds `clamp`, no test)."""
    work = root / "work"
    (work / "lib").mkdir(parents=True)
    (work / "test").mkdir()
    (work / "package.json").write_text(json.dumps(PACKAGE, indent=2) + "\n")
    (work / "lib" / "calc.js").write_text(CALC)
    (work / "test" / "calc.test.js").write_text(OLD_TEST)
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "base")
    base = _git(work, "rev-parse", "HEAD")
    (work / "lib" / "calc.js").write_text(CALC_FIXED)
    _git(work, "commit", "-q", "-am", "Add clamp")
    head = _git(work, "rev-parse", "HEAD")
    _git(root, "clone", "-q", "--bare", str(work), str(root / "remotes" / "acme" / "calc.git"))
    return "acme/calc", base, head


@pytest.mark.docker
def test_node_environment_and_test_agents_give_a_validated_mocha_task(
    docker_client: docker.DockerClient, twin: OpenAITwin, tmp_path: Path
) -> None:
    try:
        docker_client.images.get(NODE_IMAGE)
    except docker.errors.ImageNotFound:
        pytest.skip(f"{NODE_IMAGE} missing: scripts/build-toolchain-image.sh node")
    repo, base, head = node_repo(tmp_path)
    sandbox = sandbox_config(build=True, image=BASE_IMAGE, ca_bundle=HOST_CA)
    executor = TaskExecutor(
        docker_client, RepoCache(tmp_path / "cache", f"file://{tmp_path}/remotes/{{repo}}.git"), sandbox
    )
    executor.cache.ensure(repo)
    executor.cache.fetch(repo, [base, head])
    tree = executor.export_tree(repo, base, tmp_path / "tree")
    image = toolchain_image(docker_client, tree, "node")
    assert image == NODE_IMAGE

    # the environment agent: `npm test` is not a runner template (rejected without Docker), the mocha one is replayed
    twin.queue(
        ToolCall("shell", {"command": "cat package.json"}),
        ToolCall("submit_environment", {"install_commands": [NPM_INSTALL], "test_command": "npm test"}),
        ToolCall("submit_environment", {"install_commands": [NPM_INSTALL], "test_command": MOCHA}),
    )
    with make_client(twin, tmp_path) as client:
        recipe = find_environment(
            client,
            docker_client,
            tree,
            base_image=image,
            toolchain="node",
            sandbox=sandbox,
            transcript_path=tmp_path / "environment.jsonl",
            item=repo,
        )
    assert recipe == EnvRecipe((NPM_INSTALL,), MOCHA, NODE_IMAGE) and RETOUCH not in recipe.install_commands
    bodies = [r.json for r in twin.requests]
    assert all(tool_names(b) == ["shell", "submit_environment"] for b in bodies)
    system = bodies[0]["messages"][0]["content"]
    assert "JavaScript/TypeScript repository" in system and MOCHA in system and NODE_IMAGE in system
    assert "test/calc.test.js" in bodies[0]["messages"][1]["content"]  # the sample of files mocha runs
    assert '"mocha"' in bodies[1]["messages"][-1]["content"]
    assert "start from a template" in bodies[2]["messages"][-1]["content"]
    assert [t["outcome"] for t in lines(tmp_path / "environment.jsonl")] == ["continue", "rejected", "accepted"]

    # the test agent writes mocha tests for the PR (which has none), checked with and without the change
    env_image, _cached = executor.environment_image(repo, base, recipe)
    try:
        patch = split_diff(executor.cache.diff(repo, base, head), is_test_path).patch
        fixed = executor.export_tree(repo, head, tmp_path / "fixed")
        twin.reset()
        twin.queue(
            ToolCall("submit_tests", {"files": [{"path": "lib/clamp.js", "content": NEW_TEST}]}),
            ToolCall("submit_tests", {"files": [{"path": "test/more.test.js", "content": USELESS}]}),
            ToolCall(
                "submit_tests",
                {
                    "files": [{"path": "test/clamp.test.js", "content": NEW_TEST}],
                    "fail_to_pass": ["clamp keeps a value inside the range"],
                },
            ),
        )
        with make_client(twin, tmp_path) as client:
            files = write_tests(
                client,
                docker_client,
                fixed,
                pr_title="Add clamp",
                pr_body="",
                patch=patch,
                recipe=recipe,
                image=env_image,
                sandbox=sandbox,
                transcript_path=tmp_path / "tests.jsonl",
            )
        assert files == {"test/clamp.test.js": NEW_TEST}
        bodies = [r.json for r in twin.requests]
        system = bodies[0]["messages"][0]["content"]
        assert "for mocha" in system and "test/example.test.js" in system
        assert "not a test file path (name it test/<name>.test.js" in bodies[1]["messages"][-1]["content"]
        assert "passes with the change reverted" in bodies[2]["messages"][-1]["content"]

        result = executor.validate_pr(
            repo, base, head, recipe, after_runs=1, extra_test_patch=patch_adding_files(files)
        )
    finally:
        with contextlib.suppress(docker.errors.ImageNotFound):
            docker_client.images.remove(env_image_tag(repo, recipe), force=True)
    assert result.validation.accepted, result.validation.reason
    assert result.runner == "mocha" and result.validation.fail_to_pass == ["clamp keeps a value inside the range"]
    assert result.validation.pass_to_pass == ["clamp adds still"]
