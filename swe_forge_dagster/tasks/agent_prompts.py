"""What the sandbox agents are told, per language, and the forms their answers must take.

Every language pack (`languages`) fills the prompts with its hints (`LanguagePack.hints`): how projects of that
language install on its image, what carries over in the shell, what of the install is kept, and which of its
runner adapters can run and read its tests. A pack's environment agent submits either a runner's template form,
with `{tests}` (the runner's targets of the test files) and `{report}` (its structured report): `runner_of` then
recognises it, and validation reads per-test results from that report, never from the console; or the pack's own
form (`LanguagePack.agent_command`: Python's pytest command, to which the harness adds its JUnit options).
The test agent is told the runner of the environment's command and how that language names test files.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, create_model

from swe_forge_dagster.execution.runners import Runner
from swe_forge_dagster.languages.registry import (
    DEFAULT_PACK,
    pack,
    pack_of_runner,
    runner_hints,
    runner_of,
)
from swe_forge_dagster.tasks.agent_tools import AgentTool


class SubmitEnvironment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    install_commands: list[str] = Field(
        description="bash commands, in order, run from /repo in one persistent shell of a fresh container"
    )
    test_command: str = Field(
        min_length=1,
        description="the test command, with {tests} where the test targets go",
    )


class WrittenFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, description="relative to the repository root")
    content: str = Field(min_length=1, description="the whole file")


class SubmitTests(BaseModel):
    model_config = ConfigDict(extra="forbid")

    files: list[WrittenFile] = Field(min_length=1, description="the new test files")
    fail_to_pass: list[str] = Field(default_factory=list, description="test ids that fail without the change")
    pass_to_pass: list[str] = Field(default_factory=list, description="test ids that pass with and without it")


SUBMIT_TESTS = AgentTool(
    "submit_tests",
    "Submit the new test files. They are run in a fresh container before they are accepted; problems come back.",
    SubmitTests,
)


def recipe_test_command(command: str, toolchain: str | None = None) -> str:
    """The agent's test command in a pack's own form (`toolchain`'s, None: the default pack's) as an
    `EnvRecipe.test_command` (`LanguagePack.agent_command`). Raises ValueError with what to change."""
    language = pack(toolchain) if toolchain is not None else DEFAULT_PACK
    if language.agent_command is None:
        return toolchain_test_command(command, language.name)
    return language.agent_command(command)


def toolchain_runners(toolchain: str) -> list[Runner]:
    """The runner adapters that can run `toolchain`'s tests (its pack's: node: mocha, jest, vitest; go: go; …)."""
    return list(pack(toolchain).runners)


def runners_text(toolchain: str) -> str:
    return "\n".join(
        f"- {r.name} ({r.report_kind} report; {{tests}} becomes {runner_hints(r).targets}): {r.template}"
        for r in toolchain_runners(toolchain)
    )


ENV_PROMPT = """\
You set up the test environment of a {language} repository inside a Docker container.

The container runs {base_image} ({image}). The repository's files are in /repo (without .git) and your \
shell starts there. Commands run one at a time in a persistent bash session: {carry_over} carry over. \
Network: {network}.

{install}

Explore the repository ({kind}, CI configuration, test configuration), {install_goal}, and run some of its \
tests. Then call submit_environment with:
- install_commands: {kept}
- test_command: {test_command}

The recipe is replayed before it is accepted: each install command must exit 0, then the test command \
runs some of the repository's test files without network, and {proof}."""

KEPT = """the commands that install and build everything, starting from a fresh container of the same image with \
the same files in /repo. What they create inside /repo (installed dependencies, build directories) and outside it \
(caches, downloaded modules) is kept; the tests run offline."""
"""What of an install is kept, for a pack whose hints do not say (`AgentHints.kept`)."""

TEMPLATE_COMMAND = """the command of one of these test runners, in its template form. Keep {{tests}}, where the \
runner puts the targets of the test files it is given, and {{report}}, where the structured report is \
written: per-test results are read from that report, never from the console. Start from the template and \
add only what the repository needs (options, environment variables); double any other curly braces.
{runners}"""
"""The `test_command` line for a pack whose agent submits a runner's template form."""

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
    """The environment agent's system prompt for `toolchain` (None: the default pack's), from its pack's hints."""
    name = DEFAULT_PACK.name if toolchain is None else toolchain
    hints = pack(name).hints
    return ENV_PROMPT.format(
        language=hints.title,
        base_image=base_image,
        image=hints.image,
        carry_over=hints.carry_over,
        network=f"available while you install ({hints.network}); the tests run without it" if network else "none",
        install=hints.install,
        kind=hints.kind or "manifests",
        install_goal=hints.install_goal,
        kept=hints.kept or KEPT,
        test_command=hints.test_command or TEMPLATE_COMMAND.format(runners=runners_text(name)),
        proof=hints.proof,
    )


def writer_prompt(runner: Runner, test_command: str) -> str:
    """The test agent's system prompt for tests run by `runner` (`test_command`: the command for an example file):
    its own (`RunnerHints.writer_prompt`), else the generic one from its hints."""
    hints = runner_hints(runner)
    return (hints.writer_prompt or RUNNER_TEST_PROMPT).format(
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


def submit_environment_model(toolchain: str | None) -> type[BaseModel]:
    """`submit_environment`'s arguments for a `toolchain` repository (None: the default pack's): the test command
    described by its runners, or by the pack's own form (`AgentHints.command_form`)."""
    name = DEFAULT_PACK.name if toolchain is None else toolchain
    hints = pack(name).hints
    forms = "; ".join(f"{r.name}: {r.template}" for r in toolchain_runners(name))
    described = (
        f"the test runner's command in its template form, with {{tests}} and {{report}} (one of: {forms})"
        if hints.submit_forms
        else hints.command_form
    )
    return create_model(
        "SubmitEnvironment",
        __base__=_Closed,
        install_commands=(
            list[str],
            Field(description="bash commands, in order, run from /repo in one persistent shell of a fresh container"),
        ),
        test_command=(
            str,
            Field(min_length=1, description=described),
        ),
    )


def submit_tests_model(runner: Runner) -> type[BaseModel]:
    """`submit_tests`'s arguments for tests run by `runner` (ids in its form, named as its hints name them)."""
    hints = runner_hints(runner)
    failing = hints.ids_name or f"{runner.name} test ids ({hints.id_form})"
    passing = hints.ids_name or f"{runner.name} test ids"
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
            Field(default_factory=list, description=f"{failing} that fail without the change"),
        ),
        pass_to_pass=(
            list[str],
            Field(default_factory=list, description=f"{passing} that pass with and without it"),
        ),
    )


SUBMIT_ENVIRONMENT = AgentTool(
    "submit_environment",
    "Submit the recipe. It is replayed in a fresh container before it is accepted; a failed replay comes back.",
    submit_environment_model(None),
)
"""The default pack's tool; another pack's has the same name and description, its arguments
`submit_environment_model(toolchain)`."""
