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
agent writes tests for the runner of the environment's test command. A pack may keep its own command form
(`LanguagePack.agent_command`: Python's pytest command).

The test agent is in `test_agent`, the loop itself (shell tool, turns, transcript) in `agent_tools`, and
the prompts and answer forms per language in `agent_prompts` (from the language packs' hints).
"""

from __future__ import annotations

import tarfile
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import docker

from swe_forge_dagster.environments.environment import (
    INSTALL_TIMEOUT_S,
    EnvRecipe,
    image_available,
    install_git_script,
)
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.execution.recipe import RETOUCH
from swe_forge_dagster.execution.repo_box import TREE_NAME, WorkspaceError, start_repo_box
from swe_forge_dagster.execution.runners import Runner
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxConfig, owned_by_root
from swe_forge_dagster.execution.suite import run_suite
from swe_forge_dagster.execution.test_sample import proof_sample
from swe_forge_dagster.languages.registry import (
    DEFAULT_PACK,
    install_outputs,
    is_default,
    is_test_path,
    pack,
    proof_file,
    runner_hints,
    runner_of,
)
from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.llm.prompts import data
from swe_forge_dagster.tasks.agent_prompts import (
    SUBMIT_ENVIRONMENT,
    SubmitEnvironment,
    env_prompt,
    submit_environment_model,
    toolchain_test_command,
)
from swe_forge_dagster.tasks.agent_tools import (
    SHELL_TIMEOUT_S,
    AgentFailed,
    AgentTool,
    clip,
    run_agent,
)

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
    max_tokens: int | None = None,
) -> EnvRecipe:
    """Let the agent find an `EnvRecipe` for the repository files in `tree` (at base), proven by replay.

    `toolchain` (a language pack's name; None: the default, Python) picks the prompt and the forms of the test command:
    pytest, or a runner adapter's template (`agent_prompts`), whose replay runs the test files that runner
    runs and reads its report. `base_image` is the toolchain's image (`toolchain_image`). `sandbox` carries
    the limits, network and CA bundle (registries need the network, and a CA bundle behind a TLS-intercepting
    proxy); its image is replaced by `base_image`.
    """
    toolchain = None if is_default(toolchain) else toolchain
    config = (sandbox or sandbox_config(image=base_image, build=True)).model_copy(update={"image": base_image})
    language = pack(toolchain or DEFAULT_PACK.name)
    paths = [p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()]
    tests = proof_sample(paths, runs=proof_file(language), is_test=is_test_path)
    tool = AgentTool(SUBMIT_ENVIRONMENT.name, SUBMIT_ENVIRONMENT.description, submit_environment_model(toolchain))

    def on_submit(args: SubmitEnvironment) -> str | EnvRecipe:
        try:
            if language.agent_command is not None:  # the pack's own form: replayed on the proof sample
                test_command, sample = language.agent_command(args.test_command), tests
            else:
                test_command = toolchain_test_command(args.test_command, language.name)
                sample = proof_sample(paths, runs=runner_of(test_command).runs, is_test=is_test_path)
        except ValueError as exc:
            return str(exc)
        if language.agent_command is None and not sample:
            return f"the repository has no test files {runner_of(test_command).name} runs to replay this with"
        install = list(args.install_commands)
        if language.compiled and RETOUCH not in install:
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
            max_tokens=max_tokens,
        )


def toolchain_image(docker_client: docker.DockerClient, tree: Path, toolchain: str) -> str | None:
    """The image the environment agent works on for a `toolchain` repository: the first local toolchain image
    that meets the version its manifests in `tree` declare (`LanguagePack.usable_images`); None: none built."""
    language = pack(toolchain)
    files = {
        name: (tree / name).read_text("utf-8", "replace") for name in language.all_files() if (tree / name).is_file()
    }
    images = language.usable_images(files, partial(image_available, docker_client))
    return images[0] if images else None


# -- replays ---------------------------------------------------------------------------------------


def _replay(
    docker_client: docker.DockerClient, config: SandboxConfig, tree: Path, recipe: EnvRecipe, tests: list[str]
) -> str | None:
    """Install and test as `TaskExecutor` will (install online, tests offline on a fresh tree); the problem or None."""
    with Sandbox.start(docker_client, config, name_hint="env-replay") as box:
        box.copy_in(tree, "/repo")
        box.run("cd /repo")
        box.run(install_git_script(()))  # as the image build: setuptools-scm / hatch-vcs installs need git
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
        run = run_tests(box, recipe, tests)
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


def prepared_box(docker_client: docker.DockerClient, config: SandboxConfig, tree: Path, name_hint: str) -> Sandbox:
    """A sandbox of the environment image whose /repo is `tree` committed as the base, prepared exactly as
    validation prepares its runs (`execution.repo_box.start_repo_box`): the install's outputs (a src/ layout's
    egg-info, a generated version file) are kept and kept out of git."""
    with tempfile.TemporaryDirectory(prefix="swe-forge-agent-tree-") as tmp:
        archive = Path(tmp) / "tree.tar"
        link = tree / ".git"  # a git worktree's pointer file names a path that does not exist in the sandbox
        skipped = f"{TREE_NAME}/.git" if link.is_file() else None
        with tarfile.open(archive, "w") as tar:
            tar.add(tree, arcname=TREE_NAME, filter=lambda info: None if info.name == skipped else owned_by_root(info))
        try:
            box, _sha = start_repo_box(docker_client, config, archive, name_hint=name_hint, kept=install_outputs())
        except WorkspaceError as exc:
            raise AgentFailed(f"could not set up /repo in the sandbox: {exc}") from exc
    return box


@dataclass
class ReplayRun:
    """One run of a recipe's tests in an agent's sandbox: the command, its exit and output, the outcomes."""

    command: str
    exit_code: int
    output: str
    outcomes: dict[str, Outcome]
    error: str | None = None


def run_tests(box: Sandbox, recipe: EnvRecipe, files: list[str]) -> ReplayRun:
    """The recipe's tests for `files` in `box`'s /repo, read from the runner's report (pytest: JUnit at its
    `stored_report`, as the agents always did; other runners through `execution.suite`, as validation reads them)."""
    runner = runner_of(recipe.test_command)
    if runner_hints(runner).replays_recipe:
        command = recipe.tests_command(files, runner.stored_report)
        box.run(f"rm -f {runner.stored_report}")
        result = box.run(command, timeout=TEST_TIMEOUT_S)
        outcomes = _outcomes(runner, box.read_file(runner.stored_report))
        return ReplayRun(command, result.exit_code, result.output, outcomes)
    run = run_suite(box, recipe.test_command, files, TEST_TIMEOUT_S, runner=runner, plugin_autoload=True)
    command = runner.command(recipe.test_command, files, "/tmp/report")[0]
    return ReplayRun(command, run.exit_code, run.output, run.outcomes or {}, run.error)


def _outcomes(runner: Runner, xml: bytes | None) -> dict[str, Outcome]:
    if not xml:
        return {}
    try:
        return runner.parse(xml, ())
    except (ET.ParseError, ValueError):  # a half-written report: the run did not finish
        return {}
