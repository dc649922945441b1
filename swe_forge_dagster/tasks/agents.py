"""The two sandbox agents of the task stage: one finds how to install and test a repository, one
writes tests for a PR that has none.

Neither agent is trusted. Each submission is checked by running it again in a fresh container,
the way validation will run it, and only a submission that survives that replay ends the loop;
a failed replay goes back to the agent as the reason, so it can fix its answer. Even then, the
test writer's FAIL_TO_PASS/PASS_TO_PASS lists are ignored: the caller turns the files into a
`test_patch` (`execution.patch.patch_adding_files`) and proves the lists by execution at base.

Both work in every language the task stages build: the environment agent on the repository's
toolchain image with that language's prompt, its test command a runner adapter's template whose replay
runs the files that runner runs and reads its report (`execution.suite`, as validation does); the test
agent writes tests for the runner of the environment's test command. Python keeps its pytest forms.

The loop itself (shell tool, turns, transcript) is in `agent_tools`; prompts and answer forms per language
in `agent_prompts`.
"""

from __future__ import annotations

import posixpath
import re
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath

import docker

from swe_forge_dagster.common.paths import is_test_path
from swe_forge_dagster.execution.environment import (
    INSTALL_TIMEOUT_S,
    EnvRecipe,
    image_available,
    install_git_script,
)
from swe_forge_dagster.execution.junit import Outcome, parse_junit
from swe_forge_dagster.execution.patch import patch_adding_files
from swe_forge_dagster.execution.repo_box import TREE_NAME, WorkspaceError, start_repo_box
from swe_forge_dagster.execution.runners import JUNIT, PYTEST_RUNNER, Runner, runner_of
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxConfig, owned_by_root
from swe_forge_dagster.execution.suite import run_suite
from swe_forge_dagster.execution.test_sample import proof_sample
from swe_forge_dagster.execution.toolchain_recipes import RETOUCH
from swe_forge_dagster.execution.toolchains import EXTRA_FILES, TOOLCHAIN_MANIFESTS, toolchain_images
from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.llm.prompts import data
from swe_forge_dagster.tasks.agent_prompts import (
    COMPILED,
    EXAMPLE_FILE,
    JUNIT_OPTIONS,
    NAMING,
    SUBMIT_ENVIRONMENT,
    SUBMIT_TESTS,
    SubmitEnvironment,
    SubmitTests,
    WrittenFile,
    env_prompt,
    recipe_test_command,
    submit_environment_model,
    submit_tests_model,
    toolchain_runners,
    toolchain_test_command,
    writer_prompt,
)
from swe_forge_dagster.tasks.agent_tools import (
    SHELL_TIMEOUT_S,
    AgentFailed,
    AgentTool,
    clip,
    run_agent,
)

__all__ = [
    "JUNIT_OPTIONS",
    "AgentFailed",
    "SubmitEnvironment",
    "SubmitTests",
    "WrittenFile",
    "find_environment",
    "recipe_test_command",
    "run_agent",
    "toolchain_image",
    "write_tests",
]

ENV_STAGE = "environment_agent"
TEST_STAGE = "test_agent"
TEST_TIMEOUT_S = 900.0  # as `TaskExecutor.validate_pr`
TAIL = 3000


def find_environment(
    client: LLMClient,
    docker_client: docker.DockerClient,
    tree: Path,
    *,
    base_image: str,
    toolchain: str | None = None,
    max_turns: int = 30,
    transcript_path: Path,
    sandbox: SandboxConfig | None = None,
    item: str | None = None,
    shell_timeout: float = SHELL_TIMEOUT_S,
) -> EnvRecipe:
    """Let the agent find an `EnvRecipe` for the repository files in `tree` (at base), proven by replay.

    `toolchain` (`execution.toolchains`; None: Python) picks the prompt and the forms of the test command:
    pytest, or a runner adapter's template (`agent_prompts`), whose replay runs the test files that runner
    runs and reads its report. `base_image` is the toolchain's image (`toolchain_image`). `sandbox` carries
    the limits, network and CA bundle (registries need the network, and a CA bundle behind a TLS-intercepting
    proxy); its image is replaced by `base_image`.
    """
    toolchain = None if toolchain == "python" else toolchain
    config = (sandbox or SandboxConfig(image=base_image)).model_copy(update={"image": base_image})
    if toolchain is None:
        paths = [p.relative_to(tree).as_posix() for p in tree.rglob("*.py") if p.is_file()]
        tests = proof_sample(paths)
        tool = SUBMIT_ENVIRONMENT
    else:
        paths = [p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()]
        runners = toolchain_runners(toolchain)
        tests = proof_sample(paths, runs=lambda path: any(runner.runs(path) for runner in runners))
        tool = AgentTool(SUBMIT_ENVIRONMENT.name, SUBMIT_ENVIRONMENT.description, submit_environment_model(toolchain))

    def on_submit(args: SubmitEnvironment) -> str | EnvRecipe:
        try:
            if toolchain is None:
                test_command, sample = recipe_test_command(args.test_command), tests
            else:
                test_command = toolchain_test_command(args.test_command, toolchain)
                sample = proof_sample(paths, runs=runner_of(test_command).runs)
        except ValueError as exc:
            return str(exc)
        if toolchain is not None and not sample:
            return f"the repository has no test files {runner_of(test_command).name} runs to replay this with"
        install = list(args.install_commands)
        if toolchain in COMPILED and RETOUCH not in install:
            install.append(RETOUCH)  # as manifest recipes: runs re-date the tree so builds see changed sources
        recipe = EnvRecipe(tuple(install), test_command, base_image)
        problem = _replay(docker_client, config, tree, recipe, sample)
        return problem if problem is not None else recipe

    listing = sorted(p.name + ("/" if p.is_dir() else "") for p in tree.iterdir())
    with Sandbox.start(docker_client, config, name_hint="env-agent") as box:
        box.copy_in(tree, "/repo")
        box.run("cd /repo")
        return run_agent(
            client,
            box,
            env_prompt(toolchain, base_image, config.network != "none"),
            [
                "Find the install commands and the test command of this repository.",
                data("repository_files", "\n".join(listing)),
                data("test_files_sample", "\n".join(tests) or "(no test files found)"),
            ],
            [tool],
            on_submit,
            stage=ENV_STAGE,
            item=item,
            max_turns=max_turns,
            transcript_path=transcript_path,
            shell_timeout=shell_timeout,
        )


def toolchain_image(docker_client: docker.DockerClient, tree: Path, toolchain: str) -> str | None:
    """The image the environment agent works on for a `toolchain` repository: the first local toolchain image
    that meets the version its manifests in `tree` declare (`toolchains.toolchain_images`); None: none built."""
    files = {
        name: (tree / name).read_text("utf-8", "replace")
        for name in (*TOOLCHAIN_MANIFESTS, *EXTRA_FILES)
        if (tree / name).is_file()
    }
    images = toolchain_images(toolchain, files, partial(image_available, docker_client))
    return images[0] if images else None


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

    The tests are for the runner of the environment's test command (pytest, mocha, go test, …), in that
    language. The sandboxes start from the environment `image` with no network, as validation runs: tests
    that only pass online, or with something the agent installed by hand, would not validate.
    """
    config = (sandbox or SandboxConfig(image=image)).model_copy(update={"image": image, "network": "none"})
    runner = runner_of(recipe.test_command)
    example = EXAMPLE_FILE[runner.name]
    if runner is PYTEST_RUNNER:
        tool, shown = SUBMIT_TESTS, recipe.tests_command([example])
    else:
        tool = AgentTool(SUBMIT_TESTS.name, SUBMIT_TESTS.description, submit_tests_model(runner))
        shown = runner.command(recipe.test_command, [example], "/tmp/report")[0]

    def on_submit(args: SubmitTests) -> str | dict[str, str]:
        files = _checked_files(args, tree_with_fix, runner)
        if isinstance(files, str):
            return files
        problem = _check_written_tests(docker_client, config, tree_with_fix, files, patch, recipe)
        return problem if problem is not None else files

    with _prepared_box(docker_client, config, tree_with_fix, "test-agent") as box:
        return run_agent(
            client,
            box,
            writer_prompt(runner, shown),
            [
                "Write tests for this pull request.",
                data("pr_title", pr_title),
                data("pr_body", pr_body),
                data("patch", patch, limit=60_000),
            ],
            [tool],
            on_submit,
            stage=TEST_STAGE,
            item=item,
            max_turns=max_turns,
            transcript_path=transcript_path,
            shell_timeout=shell_timeout,
        )


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
        run = _run_tests(box, recipe, tests)
    counts = Counter(run.outcomes.values())
    if counts["passed"]:
        return None
    runner = runner_of(recipe.test_command)
    ran = ", ".join(f"{n} {o}" for o, n in sorted(counts.items())) or f"no {runner.report_kind} report with any test"
    why = f"; {run.error}" if run.error and not counts else ""
    return (
        f"replay failed: the test command ran no passing test ({ran}; exit code {run.exit_code}{why[:1000]}): "
        f"{run.command}\n{clip(run.output, TAIL)}"
    )


@dataclass
class _Run:
    command: str
    exit_code: int
    output: str
    outcomes: dict[str, Outcome]
    error: str | None = None


def _run_tests(box: Sandbox, recipe: EnvRecipe, files: list[str]) -> _Run:
    """The recipe's tests for `files` in `box`'s /repo, read from the runner's report (pytest: JUnit at `JUNIT`,
    as the agents always did; other runners through `execution.suite`, as validation reads them)."""
    runner = runner_of(recipe.test_command)
    if runner is PYTEST_RUNNER:
        command = recipe.tests_command(files)
        box.run(f"rm -f {JUNIT}")
        result = box.run(command, timeout=TEST_TIMEOUT_S)
        return _Run(command, result.exit_code, result.output, _outcomes(box.read_file(JUNIT)))
    run = run_suite(box, recipe.test_command, files, TEST_TIMEOUT_S, runner=runner, plugin_autoload=True)
    command = runner.command(recipe.test_command, files, "/tmp/report")[0]
    return _Run(command, run.exit_code, run.output, run.outcomes or {}, run.error)


def _check_written_tests(
    docker_client: docker.DockerClient,
    config: SandboxConfig,
    tree: Path,
    files: dict[str, str],
    patch: str,
    recipe: EnvRecipe,
) -> str | None:
    """Run the files as a test_patch with the fix (all must pass), then with it reverted (one must fail)."""
    runner = runner_of(recipe.test_command)
    modules = sorted(p for p in files if _runs(runner, p))
    with _prepared_box(docker_client, config, tree, "test-check") as box:
        box.write_file("/tmp/tests.diff", patch_adding_files(files))
        applied = box.run("git apply /tmp/tests.diff")
        if not applied.ok:
            return f"the files do not apply as a patch: {clip(applied.output, TAIL)}"
        run = _run_tests(box, recipe, modules)
        after = _ours(run.outcomes, files, runner)
        if not after:
            why = f" ({run.error[:1000]})" if run.error else ""
            return f"no test of your files ran with the change{why}: {run.command}\n{clip(run.output, TAIL)}"
        bad = sorted(f"{test_id} ({outcome})" for test_id, outcome in after.items() if outcome != "passed")
        if bad:
            return f"with the change, not every test passes: {', '.join(bad)}\n{clip(run.output, TAIL)}"
        box.write_file("/tmp/fix.diff", patch.encode("utf-8", "surrogateescape"))
        if not box.run("git apply -R --binary /tmp/fix.diff").ok:
            return None  # the change cannot be reverted here: validation at base will decide
        run = _run_tests(box, recipe, modules)
        before = _ours(run.outcomes, files, runner)
    if all(before.get(test_id) == "passed" for test_id in after):
        return (
            "every test also passes with the change reverted, so none of them checks it: write at least one "
            f"test that fails without the change\n{clip(run.output, TAIL)}"
        )
    return None


def _checked_files(args: SubmitTests, tree: Path, runner: Runner = PYTEST_RUNNER) -> dict[str, str] | str:
    """The submitted files as path -> content, or why they cannot be a test_patch of new test files."""
    files: dict[str, str] = {}
    problems = []
    for written in args.files:
        path = written.path
        if path.startswith("/") or "\\" in path or path != posixpath.normpath(path) or ".." in path.split("/"):
            problems.append(f"{path}: use a normalized relative path inside the repository (no /, \\ or ..)")
        elif not is_test_path(path):
            where = "put it in a tests directory" if runner is PYTEST_RUNNER else f"name it {NAMING[runner.name]}"
            problems.append(f"{path}: not a test file path ({where})")
        elif path in files:
            problems.append(f"{path}: submitted twice")
        elif (tree / path).exists() or (tree / path).is_symlink():
            problems.append(f"{path}: already exists; only new files can be added")
        files[path] = written.content
    if not problems and not any(_runs(runner, p) for p in files):
        if runner is PYTEST_RUNNER:
            problems.append("no test module: name at least one file test_*.py (those are the files that run)")
        else:
            problems.append(f"no file {runner.name} runs: name at least one {NAMING[runner.name]}")
    return "; ".join(problems) if problems else files


def _runs(runner: Runner, path: str) -> bool:
    """Whether a written file is one the runner is given (pytest: a test_*.py module, as always here)."""
    if runner is PYTEST_RUNNER:
        return path.endswith(".py") and PurePosixPath(path).name.startswith("test")
    return is_test_path(path) and runner.runs(path)


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


def _ours(outcomes: dict[str, Outcome], files: dict[str, str], runner: Runner = PYTEST_RUNNER) -> dict[str, Outcome]:
    """The outcomes of the tests in `files`. A pytest id starts with its file; go runs whole packages (their
    `Test…` functions name them); Surefire ids start with the class; mocha, jest, vitest, cargo (`--test x`)
    and gtest (the file's target) run only the files they are given."""
    if runner is PYTEST_RUNNER:
        return {test_id: o for test_id, o in outcomes.items() if test_id.split("::")[0] in files}
    if runner.name == "go":
        names = {
            name
            for path, text in files.items()
            if path.endswith("_test.go")
            for name in re.findall(r"^func\s+(Test\w*)\s*\(", text, re.MULTILINE)
        }
        return {test_id: o for test_id, o in outcomes.items() if test_id.split("/")[0] in names}
    if runner.name == "maven":
        classes = {PurePosixPath(path).stem for path in files}
        return {test_id: o for test_id, o in outcomes.items() if test_id.split("#")[0].rsplit(".", 1)[-1] in classes}
    return dict(outcomes)
