"""The two sandbox agents of the task stage: one finds how to install and test a repository, one
writes tests for a PR that has none.

Neither agent is trusted. Each submission is checked by running it again in a fresh container,
the way validation will run it, and only a submission that survives that replay ends the loop;
a failed replay goes back to the agent as the reason, so it can fix its answer. Even then, the
test writer's FAIL_TO_PASS/PASS_TO_PASS lists are ignored: the caller turns the files into a
`test_patch` (`execution.patch.patch_adding_files`) and proves the lists by execution at base.

The loop itself (shell tool, turns, transcript) is in `agent_tools`.
"""

from __future__ import annotations

import posixpath
import re
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path, PurePosixPath

import docker
from pydantic import BaseModel, ConfigDict, Field

from swe_forge_dagster.common.paths import is_test_path
from swe_forge_dagster.execution.environment import INSTALL_TIMEOUT_S, EnvRecipe, install_git_script
from swe_forge_dagster.execution.junit import Outcome, parse_junit
from swe_forge_dagster.execution.patch import patch_adding_files
from swe_forge_dagster.execution.repo_box import TREE_NAME, WorkspaceError, start_repo_box
from swe_forge_dagster.execution.runners import JUNIT
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxConfig, owned_by_root
from swe_forge_dagster.execution.test_sample import proof_sample
from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.llm.prompts import data
from swe_forge_dagster.tasks.agent_tools import (
    SHELL_TIMEOUT_S,
    AgentFailed,
    AgentTool,
    clip,
    run_agent,
)

__all__ = ["AgentFailed", "find_environment", "recipe_test_command", "run_agent", "write_tests"]

ENV_STAGE = "environment_agent"
TEST_STAGE = "test_agent"
# What the harness needs from every pytest run (as in `execution.runners.PYTEST`); added to agent commands.
JUNIT_OPTIONS = f"-p no:cacheprovider --continue-on-collection-errors -o junit_family=xunit1 --junitxml={JUNIT} -rA"
TEST_TIMEOUT_S = 900.0  # as `TaskExecutor.validate_pr`
TAIL = 3000


class SubmitEnvironment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    install_commands: list[str] = Field(
        description="bash commands, in order, run from /repo in one persistent shell of a fresh container"
    )
    test_command: str = Field(
        min_length=1,
        description="the pytest command, with {tests} where the test file paths go, or ending with the pytest "
        "invocation so they can be appended",
    )


class WrittenFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, description="relative to the repository root, e.g. tests/test_feature.py")
    content: str = Field(min_length=1, description="the whole file")


class SubmitTests(BaseModel):
    model_config = ConfigDict(extra="forbid")

    files: list[WrittenFile] = Field(min_length=1, description="the new test files")
    fail_to_pass: list[str] = Field(default_factory=list, description="pytest node ids that fail without the change")
    pass_to_pass: list[str] = Field(default_factory=list, description="pytest node ids that pass with and without it")


SUBMIT_ENVIRONMENT = AgentTool(
    "submit_environment",
    "Submit the recipe. It is replayed in a fresh container before it is accepted; a failed replay comes back.",
    SubmitEnvironment,
)
SUBMIT_TESTS = AgentTool(
    "submit_tests",
    "Submit the new test files. They are run in a fresh container before they are accepted; problems come back.",
    SubmitTests,
)

ENV_PROMPT = """\
You set up the test environment of a Python repository inside a Docker container.

The container runs {base_image} (Debian bookworm with python3, python3-venv, pip and pytest). The \
repository's files are in /repo (without .git) and your shell starts there. Commands run one at a time \
in a persistent bash session: cd, export and an activated venv carry over. Network: {network}. \
Debian's system Python is externally managed, so install into a virtualenv, e.g. \
`python3 -m venv --system-site-packages /opt/venv && . /opt/venv/bin/activate && pip install -e .`.

Explore the repository (packaging files, CI configuration, test configuration), install it with its \
test dependencies, and run some of its tests. Then call submit_environment with:
- install_commands: the commands that install everything, starting from a fresh container of the same \
image with the same files in /repo. Keep what they create outside /repo (a venv in /opt/venv): before the \
tests run, /repo is replaced by a fresh copy of the repository files and only *.egg-info directories of \
the install are kept.
- test_command: the pytest command, run in /repo with the venv state of the install. Put {{tests}} where \
the test file paths go, or end the command with the pytest invocation so the paths can be appended. \
Leave out --junitxml (the harness adds it) and double any other curly braces.

The recipe is replayed before it is accepted: each install command must exit 0, then the test command \
runs some of the repository's test files without network, and at least one test must pass."""

TEST_PROMPT = """\
You write tests for a merged pull request that came without tests, so that it can become a benchmark task.

The container is the repository's installed test environment (no network). /repo holds the repository \
with the pull request's change already applied (committed, so `git status` shows your new files); your \
shell starts there. Tests run with: {test_command}

Write new pytest test files that check the behaviour the pull request changes, through the public \
interface it describes: they must pass with the change, and at least one of them must fail without it. \
Make them deterministic, fast and offline, and do not test implementation details. Use shell to read \
the code, write the files and run them. Then call submit_tests with the whole content of every new file \
(paths relative to the repository root, in a tests directory; existing files cannot be changed), the \
node ids you expect to fail without the change (fail_to_pass) and those that pass either way \
(pass_to_pass).

Submissions are checked in a fresh container: the files must be new test files with at least one \
test_*.py module, every test in them must pass with the change, and at least one must fail when the \
change is reverted. The task's lists come from running them, not from your lists."""


def recipe_test_command(command: str) -> str:
    """The agent's test command as an `EnvRecipe.test_command`: `{tests}` placed, JUnit options added.

    Accepted forms: a command with `{tests}` where the test paths go, or one that ends with a pytest
    invocation (`{tests}` is appended). The JUnit options go in front of `{tests}`, where pytest
    reads them, unless the command already writes the report to `runners.JUNIT`.
    Raises ValueError with what to change.
    """
    command = command.strip()
    try:
        command.format(tests="")
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(f"the test command has braces other than {{tests}} ({exc!r}): double them") from exc
    if "{tests}" not in command:
        if not re.search(r"\bpytest\b", command):
            raise ValueError("the test command must contain {tests} or end with a pytest invocation")
        command += " {tests}"
    if "--junitxml" in command:
        if JUNIT not in command:
            raise ValueError(f"the test command writes JUnit elsewhere: leave --junitxml out (it goes to {JUNIT})")
        return command
    return command.replace("{tests}", f"{JUNIT_OPTIONS} {{tests}}", 1)


def find_environment(
    client: LLMClient,
    docker_client: docker.DockerClient,
    tree: Path,
    *,
    base_image: str,
    max_turns: int = 30,
    transcript_path: Path,
    sandbox: SandboxConfig | None = None,
    item: str | None = None,
    shell_timeout: float = SHELL_TIMEOUT_S,
) -> EnvRecipe:
    """Let the agent find an `EnvRecipe` for the repository files in `tree` (at base), proven by replay.

    `sandbox` carries the limits, network and CA bundle (PyPI needs the network, and a CA bundle
    behind a TLS-intercepting proxy); its image is replaced by `base_image`.
    """
    config = (sandbox or SandboxConfig(image=base_image)).model_copy(update={"image": base_image})
    tests = proof_sample(p.relative_to(tree).as_posix() for p in tree.rglob("*.py") if p.is_file())

    def on_submit(args: SubmitEnvironment) -> str | EnvRecipe:
        try:
            test_command = recipe_test_command(args.test_command)
        except ValueError as exc:
            return str(exc)
        recipe = EnvRecipe(tuple(args.install_commands), test_command, base_image)
        problem = _replay(docker_client, config, tree, recipe, tests)
        return problem if problem is not None else recipe

    listing = sorted(p.name + ("/" if p.is_dir() else "") for p in tree.iterdir())
    network = "none" if config.network == "none" else "available (PyPI may be reachable)"
    with Sandbox.start(docker_client, config, name_hint="env-agent") as box:
        box.copy_in(tree, "/repo")
        box.run("cd /repo")
        return run_agent(
            client, box, ENV_PROMPT.format(base_image=base_image, network=network),
            ["Find the install commands and the test command of this repository.",
             data("repository_files", "\n".join(listing)),
             data("test_files_sample", "\n".join(tests) or "(no test files found)")],
            [SUBMIT_ENVIRONMENT], on_submit, stage=ENV_STAGE, item=item, max_turns=max_turns,
            transcript_path=transcript_path, shell_timeout=shell_timeout,
        )  # fmt: skip


def write_tests(
    client: LLMClient,
    docker_client: docker.DockerClient,
    tree_with_fix: Path,
    *,
    pr_title: str,
    pr_body: str,
    patch: str,
    recipe: EnvRecipe,
    image: str,
    max_turns: int = 200,
    transcript_path: Path,
    sandbox: SandboxConfig | None = None,
    item: str | None = None,
    shell_timeout: float = SHELL_TIMEOUT_S,
) -> dict[str, str]:
    """Let the agent write tests for `patch` (already applied in `tree_with_fix`); returns path -> content.

    The sandboxes start from the environment `image` with no network, as validation runs: tests
    that only pass online, or with something the agent installed by hand, would not validate.
    """
    config = (sandbox or SandboxConfig(image=image)).model_copy(update={"image": image, "network": "none"})

    def on_submit(args: SubmitTests) -> str | dict[str, str]:
        files = _checked_files(args, tree_with_fix)
        if isinstance(files, str):
            return files
        problem = _check_written_tests(docker_client, config, tree_with_fix, files, patch, recipe)
        return problem if problem is not None else files

    with _prepared_box(docker_client, config, tree_with_fix, "test-agent") as box:
        return run_agent(
            client, box, TEST_PROMPT.format(test_command=recipe.tests_command(["tests/test_example.py"])),
            ["Write tests for this pull request.", data("pr_title", pr_title), data("pr_body", pr_body),
             data("patch", patch, limit=60_000)],
            [SUBMIT_TESTS], on_submit, stage=TEST_STAGE, item=item, max_turns=max_turns,
            transcript_path=transcript_path, shell_timeout=shell_timeout,
        )  # fmt: skip


# -- replays ---------------------------------------------------------------------------------------


def _replay(
    docker_client: docker.DockerClient, config: SandboxConfig, tree: Path, recipe: EnvRecipe, tests: list[str]
) -> str | None:
    """Install and test as `TaskExecutor` will (install online, tests offline on a fresh tree); the problem or None."""
    with Sandbox.start(docker_client, config, name_hint="env-replay") as box:
        box.copy_in(tree, "/repo")
        box.run("cd /repo")
        box.run(install_git_script(None))  # as the image build: setuptools-scm / hatch-vcs installs need git
        for index, command in enumerate(recipe.install_commands, 1):
            result = box.run(command, timeout=INSTALL_TIMEOUT_S)
            if not result.ok:
                how = "timed out" if result.timed_out else f"exited {result.exit_code}"
                return (
                    f"replay failed: install command {index} of {len(recipe.install_commands)} {how}: "
                    f"{command}\n{clip(result.output, TAIL)}"
                )
        box.run("rm -rf /repo/.git; cd /repo")
        if config.network == "bridge":  # validation runs the tests with no network
            docker_client.api.disconnect_container_from_network(box.id, "bridge")
        # on the tree as installed, as validation runs on the environment image (install outputs kept)
        result = box.run(recipe.tests_command(tests), timeout=TEST_TIMEOUT_S)
        outcomes = _outcomes(box.read_file(JUNIT))
    counts = Counter(outcomes.values())
    if counts["passed"]:
        return None
    ran = ", ".join(f"{n} {o}" for o, n in sorted(counts.items())) or "no JUnit report with any test"
    return (
        f"replay failed: the test command ran no passing test ({ran}; exit code {result.exit_code}): "
        f"{recipe.tests_command(tests)}\n{clip(result.output, TAIL)}"
    )


def _check_written_tests(
    docker_client: docker.DockerClient, config: SandboxConfig, tree: Path, files: dict[str, str], patch: str,
    recipe: EnvRecipe,
) -> str | None:  # fmt: skip
    """Run the files as a test_patch with the fix (all must pass), then with it reverted (one must fail)."""
    modules = sorted(p for p in files if p.endswith(".py") and PurePosixPath(p).name.startswith("test"))
    command = recipe.tests_command(modules)
    with _prepared_box(docker_client, config, tree, "test-check") as box:
        box.write_file("/tmp/tests.diff", patch_adding_files(files))
        applied = box.run("git apply /tmp/tests.diff")
        if not applied.ok:
            return f"the files do not apply as a patch: {clip(applied.output, TAIL)}"
        result = box.run(command, timeout=TEST_TIMEOUT_S)
        after = _ours(_outcomes(box.read_file(JUNIT)), files)
        if not after:
            return f"no test of your files ran with the change: {command}\n{clip(result.output, TAIL)}"
        bad = sorted(f"{test_id} ({outcome})" for test_id, outcome in after.items() if outcome != "passed")
        if bad:
            return f"with the change, not every test passes: {', '.join(bad)}\n{clip(result.output, TAIL)}"
        box.write_file("/tmp/fix.diff", patch.encode("utf-8", "surrogateescape"))
        if not box.run("git apply -R --binary /tmp/fix.diff").ok:
            return None  # the change cannot be reverted here: validation at base will decide
        box.run(f"rm -f {JUNIT}")
        result = box.run(command, timeout=TEST_TIMEOUT_S)
        before = _ours(_outcomes(box.read_file(JUNIT)), files)
    if all(before.get(test_id) == "passed" for test_id in after):
        return (
            "every test also passes with the change reverted, so none of them checks it: write at least one "
            f"test that fails without the change\n{clip(result.output, TAIL)}"
        )
    return None


def _checked_files(args: SubmitTests, tree: Path) -> dict[str, str] | str:
    """The submitted files as path -> content, or why they cannot be a test_patch of new test files."""
    files: dict[str, str] = {}
    problems = []
    for written in args.files:
        path = written.path
        if path.startswith("/") or "\\" in path or path != posixpath.normpath(path) or ".." in path.split("/"):
            problems.append(f"{path}: use a normalized relative path inside the repository (no /, \\ or ..)")
        elif not is_test_path(path):
            problems.append(f"{path}: not a test file path (put it in a tests directory)")
        elif path in files:
            problems.append(f"{path}: submitted twice")
        elif (tree / path).exists() or (tree / path).is_symlink():
            problems.append(f"{path}: already exists; only new files can be added")
        files[path] = written.content
    if not problems and not any(p.endswith(".py") and PurePosixPath(p).name.startswith("test") for p in files):
        problems.append("no test module: name at least one file test_*.py (those are the files that run)")
    return "; ".join(problems) if problems else files


def _prepared_box(docker_client: docker.DockerClient, config: SandboxConfig, tree: Path, name_hint: str) -> Sandbox:
    """A sandbox of the environment image whose /repo is `tree` committed as the base, prepared exactly as
    validation prepares its runs (`execution.repo_box.start_repo_box`): the install's outputs (a src/ layout's
    egg-info, a generated version file) are kept and kept out of git."""
    with tempfile.TemporaryDirectory(prefix="swe-forge-agent-tree-") as tmp:
        archive = Path(tmp) / "tree.tar"
        with tarfile.open(archive, "w") as tar:
            tar.add(tree, arcname=TREE_NAME, filter=owned_by_root)
        try:
            box, _sha = start_repo_box(docker_client, config, archive, name_hint=name_hint)
        except WorkspaceError as exc:
            raise AgentFailed(f"could not set up /repo in the sandbox: {exc}") from exc
    return box


def _outcomes(xml: bytes | None) -> dict[str, Outcome]:
    if not xml:
        return {}
    try:
        return parse_junit(xml)
    except (ET.ParseError, ValueError):  # a half-written report: the run did not finish
        return {}


def _ours(outcomes: dict[str, Outcome], files: dict[str, str]) -> dict[str, Outcome]:
    return {test_id: o for test_id, o in outcomes.items() if test_id.split("::")[0] in files}
