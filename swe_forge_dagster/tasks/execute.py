"""Prove a task by running it: FAIL_TO_PASS and PASS_TO_PASS come from execution, never an LLM.

For one PR: take its change at the merge-base, split it into `patch` and `test_patch`, check
both apply, then in Docker (never on the host) run the tests touched by `test_patch` once at
base+test_patch and three times at base+test_patch+patch, each run in a fresh container with no
network, from an environment image cached per (repo, recipe). `validation.validate` turns the
per-test outcomes into the lists, or a rejection with its reason.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shlex
import subprocess
import tarfile
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import docker

from swe_forge_dagster.execution.junit import Outcome, parse_junit
from swe_forge_dagster.execution.patch import SplitPatch, check_applies, split_diff
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxConfig
from swe_forge_dagster.tasks.validation import Validation, validate

JUNIT = "/tmp/junit.xml"
PYTEST = (
    "python -m pytest -p no:cacheprovider --continue-on-collection-errors -o junit_family=xunit1 "
    f"--junitxml={JUNIT} -q {{tests}}"
)
GIT_ID = "-c user.name=swe-forge -c user.email=swe-forge@localhost"
DEPS_LABEL = "swe-forge.deps"
# Root-level manifests whose change means the environment must be installed again.
DEPENDENCY_FILES = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "requirements-dev.txt",
    "requirements-test.txt",
    "Pipfile.lock",
    "poetry.lock",
    "uv.lock",
    "tox.ini",
    "package.json",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "go.mod",
    "go.sum",
    "Cargo.toml",
    "Cargo.lock",
    "pom.xml",
    "build.gradle",
    "Gemfile.lock",
)


class TaskBuildError(Exception):
    """The task cannot be built (patch does not apply, environment does not install)."""


@dataclass(frozen=True)
class EnvRecipe:
    """How to install a repository and run its tests; cached as an image per (repo, recipe)."""

    install_commands: tuple[str, ...] = ()
    test_command: str = PYTEST  # `{tests}` is replaced by the quoted test files
    base_image: str = "swe-forge-base:bookworm"

    def key(self) -> str:
        raw = json.dumps([self.base_image, list(self.install_commands), self.test_command])
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    def tests_command(self, test_files: list[str]) -> str:
        return self.test_command.format(tests=" ".join(shlex.quote(t) for t in test_files))


@dataclass
class SuiteRun:
    outcomes: dict[str, Outcome] | None
    exit_code: int
    output_tail: str
    seconds: float


@dataclass
class TaskValidation:
    repo: str
    base_commit: str
    split: SplitPatch
    validation: Validation
    image: str
    image_cached: bool
    before: SuiteRun
    after: list[SuiteRun]
    fail_to_pass_commands: list[str] = field(default_factory=list)
    pass_to_pass_commands: list[str] = field(default_factory=list)
    seconds: float = 0.0


def env_image_tag(repo: str, recipe: EnvRecipe) -> str:
    """The cached environment image of (repo, recipe): later tasks of the repo start warm from it."""
    return f"swe-forge-env/{re.sub(r'[^a-z0-9]+', '-', repo.lower()).strip('-')}:{recipe.key()}"


class TaskExecutor:
    def __init__(self, client: docker.DockerClient, cache: RepoCache, sandbox: SandboxConfig | None = None) -> None:
        self.client = client
        self.cache = cache
        self.sandbox = sandbox or SandboxConfig(image="swe-forge-base:bookworm")

    # -- trees and images -----------------------------------------------------------------
    def export_tree(self, repo: str, sha: str, into: Path) -> Path:
        """The files of `sha` (no .git) in a host folder: `git archive` runs no repository code."""
        archive = subprocess.run(["git", "-C", str(self.cache.path(repo)), "archive", "--format=tar", sha],
                                 capture_output=True, check=True, timeout=300).stdout  # fmt: skip
        into.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(into, filter="data")
        return into

    def dependency_fingerprint(self, repo: str, sha: str) -> str:
        """A hash of the dependency manifests at `sha`: an image built when they differed is stale."""
        digest = hashlib.sha256()
        for name in DEPENDENCY_FILES:
            content = self.cache.show_file(repo, sha, name)
            if content is not None:
                digest.update(name.encode() + b"\0" + _dependency_part(name, content) + b"\0")
        return digest.hexdigest()[:16]

    def environment_image(self, repo: str, base_sha: str, recipe: EnvRecipe) -> tuple[str, bool]:
        """The repo's environment, built once per (repo, recipe) and cached as a local image.

        A cached image is reused only while the repository's dependency manifests at `base_sha`
        are the ones it was built from; a task at a commit that changed them rebuilds it (the
        tag then points at the new build), so new dependencies are installed.
        """
        tag = env_image_tag(repo, recipe)
        deps = self.dependency_fingerprint(repo, base_sha)
        try:
            if self.client.images.get(tag).labels.get(DEPS_LABEL) == deps:
                return tag, True
        except docker.errors.ImageNotFound:
            pass
        config = self.sandbox.model_copy(update={"image": recipe.base_image})
        with tempfile.TemporaryDirectory() as tmp, Sandbox.start(self.client, config, name_hint="env") as box:
            box.copy_in(self.export_tree(repo, base_sha, Path(tmp) / "tree"), "/repo")
            box.run("cd /repo")
            for command in recipe.install_commands:
                result = box.run(command, timeout=1800)
                if result.exit_code != 0:
                    raise TaskBuildError(
                        f"install step failed ({result.exit_code}): {command}\n{result.output[-2000:]}"
                    )
            repository, _, version = tag.partition(":")
            box.commit(
                repository, version, {"swe-forge.repo": repo, "swe-forge.recipe": recipe.key(), DEPS_LABEL: deps}
            )
        return tag, False

    # -- one suite run --------------------------------------------------------------------
    def run_suite(
        self, image: str, tree: Path, patches: list[str], recipe: EnvRecipe, test_files: list[str], timeout: float
    ) -> SuiteRun:
        """Fresh container from `image`, the base tree, `patches` applied in it, the tests run."""
        started = time.perf_counter()
        config = self.sandbox.model_copy(update={"image": image, "network": "none"})
        with Sandbox.start(self.client, config, name_hint="suite") as box:
            box.run("find /repo -mindepth 1 -maxdepth 1 ! -name '*.egg-info' -exec rm -rf {} + 2>/dev/null; true")
            box.copy_in(tree, "/repo")
            setup = box.run(f"cd /repo && git init -q && git add -A && git {GIT_ID} commit -qm base")
            if setup.exit_code != 0:
                raise TaskBuildError(f"could not snapshot the base tree: {setup.output[-500:]}")
            for index, patch in enumerate(p for p in patches if p):
                box.write_file(f"/tmp/patch-{index}.diff", patch.encode("utf-8", "surrogateescape"))
                applied = box.run(f"git apply --binary /tmp/patch-{index}.diff")
                if applied.exit_code != 0:
                    raise TaskBuildError(f"patch {index} does not apply in the sandbox: {applied.output[-500:]}")
            result = box.run(recipe.tests_command(test_files), timeout=timeout)
            xml = box.read_file(JUNIT)
        outcomes = parse_junit(xml) if xml else None
        return SuiteRun(
            outcomes or None, result.exit_code, result.output[-3000:], round(time.perf_counter() - started, 2)
        )

    # -- the whole proof ------------------------------------------------------------------
    def validate_pr(
        self, repo: str, base_sha: str, head_sha: str, recipe: EnvRecipe, *, after_runs: int = 3,
        timeout: float = 900, extra_test_patch: str | None = None,
    ) -> TaskValidation:  # fmt: skip
        started = time.perf_counter()
        self.cache.ensure(repo)
        self.cache.fetch(repo, [base_sha, head_sha])
        base = self.cache.merge_base(repo, base_sha, head_sha)
        split = split_diff(self.cache.diff(repo, base, head_sha))
        test_patch = extra_test_patch if extra_test_patch is not None else split.test_patch
        if not split.patch:
            raise TaskBuildError("the PR changes no source files (only tests)")
        if not test_patch:
            raise TaskBuildError("the PR has no tests (the test agent must write them)")
        if extra_test_patch is not None:
            split = SplitPatch(split.patch, test_patch, split.src_files, _patch_files(test_patch), split.binary_files)
        return self.prove(repo, base, split, recipe, after_runs=after_runs, timeout=timeout, started=started)

    def prove(
        self, repo: str, base: str, split: SplitPatch, recipe: EnvRecipe, *, after_runs: int = 3,
        timeout: float = 900, started: float | None = None,
    ) -> TaskValidation:  # fmt: skip
        """Run `split.test_patch`'s tests at `base` (+test_patch) once and with `split.patch` N times.

        Also what `swe-forge validate` re-runs on an exported task: the same proof, from its files.
        """
        started = time.perf_counter() if started is None else started
        self.cache.fetch(repo, [base])
        with tempfile.TemporaryDirectory() as tmp, self.cache.worktree(repo, base) as worktree:
            for name, patch in (("test_patch", split.test_patch), ("patch", split.patch)):
                problem = check_applies(worktree, patch)
                if problem:
                    raise TaskBuildError(f"{name} does not apply at {base[:12]}: {problem}")
            tree = self.export_tree(repo, base, Path(tmp) / "tree")
            image, cached = self.environment_image(repo, base, recipe)
            tests = [f for f in split.test_files if f.endswith(".py") and Path(f).name.startswith("test")] or list(
                split.test_files
            )
            before = self.run_suite(image, tree, [split.test_patch], recipe, tests, timeout)
            after = [self.run_suite(image, tree, [split.test_patch, split.patch], recipe, tests, timeout)
                     for _ in range(after_runs)]  # fmt: skip
        verdict = validate(before.outcomes, [run.outcomes for run in after])
        single = "python -m pytest -p no:cacheprovider -q {}"
        return TaskValidation(
            repo=repo, base_commit=base, split=split, validation=verdict, image=image, image_cached=cached,
            before=before, after=after,
            fail_to_pass_commands=[single.format(shlex.quote(t)) for t in verdict.fail_to_pass],
            pass_to_pass_commands=[single.format(shlex.quote(t)) for t in verdict.pass_to_pass],
            seconds=round(time.perf_counter() - started, 2),
        )  # fmt: skip


def _dependency_part(name: str, content: bytes) -> bytes:
    """What of a manifest decides the install: for pyproject.toml its dependency tables (a version bump
    or a tool setting does not make an image stale), for every other manifest all of it."""
    if name != "pyproject.toml":
        return content
    try:
        data = tomllib.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return content
    project, tool = data.get("project") or {}, data.get("tool") or {}
    poetry = tool.get("poetry") or {}
    parts = {
        "build-system": data.get("build-system"), "dependency-groups": data.get("dependency-groups"),
        "dependencies": project.get("dependencies"), "optional": project.get("optional-dependencies"),
        "poetry": [poetry.get(k) for k in ("dependencies", "dev-dependencies", "group")],
        "pdm": (tool.get("pdm") or {}).get("dev-dependencies"),
    }  # fmt: skip
    return json.dumps(parts, sort_keys=True, default=str).encode()


def _patch_files(patch: str) -> list[str]:
    split = split_diff(patch)
    return split.test_files + split.src_files


def patch_adding_files(files: dict[str, str]) -> str:
    """A git diff that creates `files` (path -> text): how agent-written tests become a `test_patch`."""
    sections = []
    for path, text in sorted(files.items()):
        lines = text.splitlines(keepends=True)
        body = "".join(f"+{line}" for line in lines)
        if lines and not lines[-1].endswith("\n"):
            body += "\n\\ No newline at end of file\n"
        sections.append(
            f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n{body}"
        )
    return "".join(sections)
