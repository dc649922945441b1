"""What the sandbox agents are told, per language, and the forms their answers must take.

Python keeps its own prompts (a venv, pytest, JUnit options added by the harness). Every other
language pack (`languages`) gets a prompt from its hints (`LanguagePack.hints`): how projects
of that language install on its image and which of its runner adapters can run and read its tests.
The test command the environment agent submits must be a runner's template form, with
`{tests}` (the runner's targets of the test files) and `{report}` (its structured report): `runner_of`
then recognises it, and validation reads per-test results from that report, never from the console.
The test agent is told the runner of the environment's command and how that language names test files.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, create_model

from swe_forge_dagster.execution.runners import JUNIT, Runner
from swe_forge_dagster.languages.pack import RunnerHints
from swe_forge_dagster.languages.registry import (
    DEFAULT_PACK,
    DEFAULT_RUNNER,
    is_default,
    pack,
    pack_of_runner,
    runner_of,
)
from swe_forge_dagster.tasks.agent_tools import AgentTool

# What the harness needs from every pytest run (as in `execution.runners.PYTEST`); added to agent commands.
JUNIT_OPTIONS = f"-p no:cacheprovider --continue-on-collection-errors -o junit_family=xunit1 --junitxml={JUNIT} -rA"


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


def toolchain_runners(toolchain: str) -> list[Runner]:
    """The runner adapters that can run `toolchain`'s tests (its pack's: node: mocha, jest, vitest; go: go; …)."""
    return list(pack(toolchain).runners)


def runner_hints(runner: Runner) -> RunnerHints:
    """What the agents are told about `runner` (its pack's hints)."""
    return pack_of_runner(runner).hints.runners[runner.name]


def runners_text(toolchain: str) -> str:
    return "\n".join(
        f"- {r.name} ({r.report_kind} report; {{tests}} becomes {runner_hints(r).targets}): {r.template}"
        for r in toolchain_runners(toolchain)
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

TOOLCHAIN_ENV_PROMPT = """\
You set up the test environment of a {language} repository inside a Docker container.

The container runs {base_image} ({image}). The repository's files are in /repo (without .git) and your \
shell starts there. Commands run one at a time in a persistent bash session: cd and export carry over. \
Network: {network}.

{install}

Explore the repository (manifests, CI configuration, test configuration), install its dependencies, \
build what its tests need, and run some of its tests. Then call submit_environment with:
- install_commands: the commands that install and build everything, starting from a fresh container of \
the same image with the same files in /repo. What they create inside /repo (node_modules, build \
directories) and outside it (caches, downloaded modules) is kept; the tests run offline.
- test_command: the command of one of these test runners, in its template form. Keep {{tests}}, where the \
runner puts the targets of the test files it is given, and {{report}}, where the structured report is \
written: per-test results are read from that report, never from the console. Start from the template and \
add only what the repository needs (options, environment variables); double any other curly braces.
{runners}

The recipe is replayed before it is accepted: each install command must exit 0, then the test command \
runs some of the repository's test files without network, and its report must show at least one passing \
test."""

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

RUNNER_TEST_PROMPT = """\
You write tests for a merged pull request that came without tests, so that it can become a benchmark task.

The container is the repository's installed test environment (no network). /repo holds the repository \
with the pull request's change already applied (committed, so `git status` shows your new files); your \
shell starts there. The repository's tests run with {runner} ({report_kind} report); for a file \
{example} the command is: {test_command}

Write new {language} test files for {runner}, in the style of the repository's own tests, that check the \
behaviour the pull request changes, through the public interface it describes: they must pass with the \
change, and at least one of them must fail without it. Name them as {runner} finds them: {naming}. Make \
them deterministic, fast and offline, and do not test implementation details. Use shell to read the code, \
write the files and run them. Then call submit_tests with the whole content of every new file (paths \
relative to the repository root; existing files cannot be changed), the test ids you expect to fail \
without the change (fail_to_pass) and those that pass either way (pass_to_pass), as {runner} names \
them ({id_form}).

Submissions are checked in a fresh container: the files must be new test files with at least one file \
{runner} runs, every test in them must pass with the change, and at least one must fail when the change is \
reverted. The task's lists come from running them, not from your lists."""


def env_prompt(toolchain: str | None, base_image: str, network: bool) -> str:
    """The environment agent's system prompt for `toolchain` (None or python: the Python prompt)."""
    if is_default(toolchain):
        where = DEFAULT_PACK.hints.network
        return ENV_PROMPT.format(base_image=base_image, network=f"available ({where})" if network else "none")
    hints = pack(str(toolchain)).hints
    return TOOLCHAIN_ENV_PROMPT.format(
        language=hints.title,
        base_image=base_image,
        image=hints.image,
        network=f"available while you install ({hints.network}); the tests run without it" if network else "none",
        install=hints.install,
        runners=runners_text(str(toolchain)),
    )


def writer_prompt(runner: Runner, test_command: str) -> str:
    """The test agent's system prompt for tests run by `runner` (`test_command`: the command for an example file)."""
    if runner is DEFAULT_RUNNER:
        return TEST_PROMPT.format(test_command=test_command)
    hints = runner_hints(runner)
    return RUNNER_TEST_PROMPT.format(
        runner=runner.name,
        report_kind=runner.report_kind,
        example=hints.example,
        test_command=test_command,
        language=pack_of_runner(runner).hints.title,
        naming=hints.naming,
        id_form=hints.id_form,
    )


def toolchain_test_command(command: str, toolchain: str) -> str:
    """The environment agent's test command for a `toolchain` repository, checked: a template of one of its
    runners (`runner_of` recognises it) with `{tests}` and `{report}`. Raises ValueError with what to change."""
    command = command.strip()
    runners = toolchain_runners(toolchain)
    templates = "; ".join(f"{r.name}: {r.template}" for r in runners)
    try:
        command.format(tests="", report="")
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(
            f"the test command has braces other than {{tests}} and {{report}} ({exc!r}): double them"
        ) from exc
    if runner_of(command) not in runners:
        raise ValueError(
            f"the test command is not one of the {pack(toolchain).hints.title} test runners that can "
            f"be read here; start from a template ({templates})"
        )
    missing = [field for field in ("{tests}", "{report}") if field not in command]
    if missing:
        runner = runner_of(command)
        raise ValueError(
            f"the test command lacks {' and '.join(missing)}: {{tests}} is where the runner puts the "
            f"test targets, {{report}} where the {runner.report_kind} report goes (the results are read "
            f"from it); the {runner.name} template is: {runner.template}"
        )
    return command


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


def submit_environment_model(toolchain: str) -> type[BaseModel]:
    """`submit_environment`'s arguments for a `toolchain` repository: the test command described by its runners."""
    forms = "; ".join(f"{r.name}: {r.template}" for r in toolchain_runners(toolchain))
    return create_model(
        "SubmitEnvironment",
        __base__=_Closed,
        install_commands=(
            list[str],
            Field(description="bash commands, in order, run from /repo in one persistent shell of a fresh container"),
        ),
        test_command=(
            str,
            Field(
                min_length=1,
                description="the test runner's command in its template form, with "
                f"{{tests}} and {{report}} (one of: {forms})",
            ),
        ),
    )


def submit_tests_model(runner: Runner) -> type[BaseModel]:
    """`submit_tests`'s arguments for tests run by `runner` (ids in its form)."""
    ids = runner_hints(runner).id_form
    written = create_model(
        "WrittenFile",
        __base__=_Closed,
        path=(
            str,
            Field(min_length=1, description=f"relative to the repository root, e.g. {runner_hints(runner).example}"),
        ),
        content=(str, Field(min_length=1, description="the whole file")),
    )
    return create_model(
        "SubmitTests",
        __base__=_Closed,
        files=(list[written], Field(min_length=1, description="the new test files")),  # type: ignore[valid-type]
        fail_to_pass=(
            list[str],
            Field(default_factory=list, description=f"{runner.name} test ids ({ids}) that fail without the change"),
        ),
        pass_to_pass=(
            list[str],
            Field(default_factory=list, description=f"{runner.name} test ids that pass with and without it"),
        ),
    )
