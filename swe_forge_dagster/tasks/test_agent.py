"""The test agent of the task stage: writes tests for a PR that has none, checked by running them.

Its FAIL_TO_PASS/PASS_TO_PASS lists are ignored: a submission is checked by running the files as a
test_patch with the fix (all must pass) and with it reverted (one must fail), in a fresh container of
the environment image with no network, as validation runs; the caller turns the files into a
`test_patch` (`execution.patch.patch_adding_files`) and proves the lists by execution at base. The
tests are for the runner of the environment's test command (its language pack's hints name the files).
"""

from __future__ import annotations

import posixpath
from pathlib import Path

import docker

from swe_forge_dagster.environments.environment import EnvRecipe
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.execution.patch import patch_adding_files
from swe_forge_dagster.execution.runners import Runner
from swe_forge_dagster.execution.sandbox import SandboxConfig
from swe_forge_dagster.languages.registry import DEFAULT_RUNNER, is_test_path, runner_hints, runner_of, written_test
from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.llm.prompts import data
from swe_forge_dagster.tasks.agent_prompts import (
    SUBMIT_TESTS,
    SubmitTests,
    submit_tests_model,
    writer_prompt,
)
from swe_forge_dagster.tasks.agent_tools import SHELL_TIMEOUT_S, AgentTool, clip, run_agent
from swe_forge_dagster.tasks.agents import TAIL, TEST_STAGE, prepared_box, run_tests


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
    max_tokens: int | None = None,
) -> dict[str, str]:
    """Let the agent write tests for `patch` (already applied in `tree_with_fix`); returns path -> content.

    The tests are for the runner of the environment's test command (pytest, mocha, go test, …), in that
    language. The sandboxes start from the environment `image` with no network, as validation runs: tests
    that only pass online, or with something the agent installed by hand, would not validate.
    """
    config = (sandbox or sandbox_config(image=image, build=True)).model_copy(update={"image": image, "network": "none"})
    runner = runner_of(recipe.test_command)
    hints = runner_hints(runner)
    tool = AgentTool(SUBMIT_TESTS.name, SUBMIT_TESTS.description, submit_tests_model(runner))
    if hints.replays_recipe:  # the replay runs the recipe's own command (`agents.run_tests`)
        shown = recipe.tests_command([hints.example], runner.stored_report)
    else:
        shown = runner.command(recipe.test_command, [hints.example], "/tmp/report")[0]

    def on_submit(args: SubmitTests) -> str | dict[str, str]:
        files = _checked_files(args, tree_with_fix, runner)
        if isinstance(files, str):
            return files
        problem = _check_written_tests(docker_client, config, tree_with_fix, files, patch, recipe)
        return problem if problem is not None else files

    with prepared_box(docker_client, config, tree_with_fix, "test-agent") as box:
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
            max_tokens=max_tokens,
        )


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
    with prepared_box(docker_client, config, tree, "test-check") as box:
        box.write_file("/tmp/tests.diff", patch_adding_files(files))
        applied = box.run("git apply /tmp/tests.diff")
        if not applied.ok:
            return f"the files do not apply as a patch: {clip(applied.output, TAIL)}"
        run = run_tests(box, recipe, modules)
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
        run = run_tests(box, recipe, modules)
        before = _ours(run.outcomes, files, runner)
    if all(before.get(test_id) == "passed" for test_id in after):
        return (
            "every test also passes with the change reverted, so none of them checks it: write at least one "
            f"test that fails without the change\n{clip(run.output, TAIL)}"
        )
    return None


def _checked_files(args: SubmitTests, tree: Path, runner: Runner = DEFAULT_RUNNER) -> dict[str, str] | str:
    """The submitted files as path -> content, or why they cannot be a test_patch of new test files."""
    files: dict[str, str] = {}
    problems = []
    for written in args.files:
        path = written.path
        if path.startswith("/") or "\\" in path or path != posixpath.normpath(path) or ".." in path.split("/"):
            problems.append(f"{path}: use a normalized relative path inside the repository (no /, \\ or ..)")
        elif not is_test_path(path):
            hints = runner_hints(runner)
            problems.append(f"{path}: not a test file path ({hints.place or f'name it {hints.naming}'})")
        elif path in files:
            problems.append(f"{path}: submitted twice")
        elif (tree / path).exists() or (tree / path).is_symlink():
            problems.append(f"{path}: already exists; only new files can be added")
        files[path] = written.content
    if not problems and not any(_runs(runner, p) for p in files):
        hints = runner_hints(runner)
        problems.append(hints.no_test_file or f"no file {runner.name} runs: name at least one {hints.naming}")
    return "; ".join(problems) if problems else files


def _runs(runner: Runner, path: str) -> bool:
    """Whether a written file is one the runner is given (`registry.written_test`)."""
    return written_test(runner, path)


def _ours(outcomes: dict[str, Outcome], files: dict[str, str], runner: Runner = DEFAULT_RUNNER) -> dict[str, Outcome]:
    """The outcomes of the tests in `files` (`Runner.own`: a pytest id starts with its file, go runs whole
    packages, …; runners that run only the files they are given report only theirs)."""
    return runner.own(outcomes, files)
