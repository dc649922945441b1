"""Environment images: a repository installed by a recipe, built once per (repo, recipe) and cached by tag.

Task building and evaluation both take their images from here (`Environments.image`). A cached
image is reused only while the repository's dependency manifests at the wanted commit are the ones
it was built from (a label on the image); a commit that changed them rebuilds it, so new
dependencies are installed. One build of a tag runs at a time, across threads and processes (a
lock file per tag), so parallel tasks of one repository do not build it twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import re
import shlex
import shutil
import tarfile
import tempfile
import threading
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import docker

from swe_forge_dagster.execution.repo_box import ENV_DIR, TREE_NAME, write_tree_archive
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.runners import PYTEST, fill_tests
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxConfig
from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE

DEPS_LABEL = "swe-forge.deps"
RECORD_BASE_TREE = (
    f"mkdir -p {ENV_DIR} && (find . -mindepth 1 \\( -type f -o -type l \\) -printf '%P\\0' > {ENV_DIR}/base.list)"
)
"""Run in /repo before the install: the build tree's files, which a run replaces by its own tree."""
OUTPUTS_SCRIPT = f"""import os
base = set(open("{ENV_DIR}/base.list", encoding="utf-8", errors="surrogateescape").read().split("\\0")) - {{""}}
dirs = {{os.path.dirname(path) for path in base}}
for path in list(dirs):
    while path:
        path = os.path.dirname(path)
        dirs.add(path)
outputs = []
for root, subdirs, files in os.walk("."):
    rel = os.path.relpath(root, ".")
    rel = "" if rel == "." else rel
    for name in list(subdirs):
        path = os.path.join(rel, name)
        if path not in dirs:  # not a directory of the tree (a symlink of the tree is not descended into either)
            if path not in base:
                outputs.append(path)
            subdirs.remove(name)
    outputs += [os.path.join(rel, name) for name in files if os.path.join(rel, name) not in base]
with open("{ENV_DIR}/outputs.list", "w", encoding="utf-8", errors="surrogateescape") as out:
    out.writelines(path + "\\n" for path in sorted(outputs) if "\\n" not in path)
"""
"""Run in /repo after the install: the topmost paths the install added (kept by every run, out of git)."""
PRETEND_VERSION = "SETUPTOOLS_SCM_PRETEND_VERSION"
"""Read by setuptools-scm (and hatch-vcs, which uses it) when there is no git metadata; `_FOR_<DIST>` scopes it
to one distribution, so dependencies built from sdists keep their own versions."""
INSTALL_TIMEOUT_S = 1800
# Root-level manifests whose change means the environment must be installed again.
DEPENDENCY_FILES = (
    "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "requirements-dev.txt", "requirements-test.txt",
    "Pipfile.lock", "poetry.lock", "uv.lock", "tox.ini", "package.json", "package-lock.json", "yarn.lock",
    "pnpm-lock.yaml", "go.mod", "go.sum", "Cargo.toml", "Cargo.lock", "pom.xml", "build.gradle", "Gemfile.lock",
)  # fmt: skip


class EnvironmentBuildError(RuntimeError):
    """An install step failed: the repository does not install with this recipe at this commit."""


@dataclass(frozen=True)
class EnvRecipe:
    """How to install a repository and run its tests; cached as an image per (repo, recipe)."""

    install_commands: tuple[str, ...] = ()
    test_command: str = PYTEST  # `{tests}` is replaced by the quoted test files
    base_image: str = DEFAULT_BASE_IMAGE

    def key(self) -> str:
        raw = json.dumps([self.base_image, list(self.install_commands), self.test_command])
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    def tests_command(self, test_files: list[str]) -> str:
        """The test command for `test_files`, filled as validation and the harness fill it."""
        return fill_tests(self.test_command, test_files)


def image_available(client: docker.DockerClient, image: str) -> bool:
    """Whether `image` is on the engine (a local base image may not have been built)."""
    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        return False
    return True


def env_image_tag(repo: str, recipe: EnvRecipe) -> str:
    """The cached environment image of (repo, recipe): later tasks of the repo start warm from it."""
    return f"swe-forge-env/{re.sub(r'[^a-z0-9]+', '-', repo.lower()).strip('-')}:{recipe.key()}"


class Environments:
    """Builds and reuses environment images; thread-safe (one build per tag at a time)."""

    def __init__(
        self, client: docker.DockerClient, cache: RepoCache, sandbox: SandboxConfig, lock_dir: Path | None = None
    ) -> None:
        self.client = client
        self.cache = cache
        self.sandbox = sandbox
        self.lock_dir = lock_dir or cache.root / ".image-locks"
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def export_tree(self, repo: str, sha: str, into: Path) -> Path:
        """The files of `sha` (no .git) in a host folder, exactly as every container sees the tree:
        the same `git archive` as `repo_box.write_tree_archive` (export attributes off, isolated git),
        which runs no repository code."""
        with tempfile.TemporaryDirectory(prefix="swe-forge-tree-") as tmp:
            archive = write_tree_archive(self.cache, repo, sha, Path(tmp) / "tree.tar")
            with tarfile.open(archive) as tar:
                tar.extractall(Path(tmp) / "x", filter="data")
            unpacked = Path(tmp) / "x" / TREE_NAME
            unpacked.mkdir(parents=True, exist_ok=True)  # an empty commit has no files at all
            into.mkdir(parents=True, exist_ok=True)
            for entry in unpacked.iterdir():
                shutil.move(str(entry), into / entry.name)
        return into

    def dependency_fingerprint(self, repo: str, sha: str) -> str:
        """A hash of the dependency manifests at `sha`: an image built when they differed is stale."""
        digest = hashlib.sha256()
        for name in DEPENDENCY_FILES:
            content = self.cache.show_file(repo, sha, name)
            if content is not None:
                digest.update(name.encode() + b"\0" + _dependency_part(name, content) + b"\0")
        return digest.hexdigest()[:16]

    def image(self, repo: str, base_sha: str, recipe: EnvRecipe) -> tuple[str, bool]:
        """(tag, reused) of the repo's environment for `recipe` at `base_sha`; built when missing or stale.

        docker's ImageNotFound propagates when the recipe's base image is absent; EnvironmentBuildError
        when an install step fails (its output tail in the message).
        """
        tag = env_image_tag(repo, recipe)
        with self._build_lock(tag):
            deps = self.dependency_fingerprint(repo, base_sha)
            replaced = None
            try:
                current = self.client.images.get(tag)
                if current.labels.get(DEPS_LABEL) == deps:
                    return tag, True
                replaced = current.id
            except docker.errors.ImageNotFound:
                pass
            self._build(repo, base_sha, recipe, tag, deps)
            if replaced is not None:  # the stale build would pile up untagged: remove it (unless still in use)
                with contextlib.suppress(docker.errors.APIError):
                    self.client.images.remove(replaced)
        return tag, False

    def _build(self, repo: str, base_sha: str, recipe: EnvRecipe, tag: str, deps: str) -> None:
        config = self.sandbox.model_copy(update={"image": recipe.base_image})
        pretend = self._pretend_version(repo, base_sha)
        with tempfile.TemporaryDirectory() as tmp, Sandbox.start(self.client, config, name_hint="env") as box:
            box.copy_in(self.export_tree(repo, base_sha, Path(tmp) / "tree"), "/repo")
            box.run("cd /repo")
            recorded = box.run(RECORD_BASE_TREE)
            if recorded.exit_code != 0:
                raise EnvironmentBuildError(f"recording the build tree failed: {recorded.output[-500:]}")
            box.run(f"export {pretend}")  # for the installs only: unset before the image is committed
            for command in recipe.install_commands:
                result = box.run(command, timeout=INSTALL_TIMEOUT_S)
                if result.exit_code != 0:
                    raise EnvironmentBuildError(
                        f"install step failed ({result.exit_code}): {command}\n{result.output[-2000:]}"
                    )
            box.write_file(f"{ENV_DIR}/outputs.py", OUTPUTS_SCRIPT)
            box.run(f"cd /repo && (python3 {ENV_DIR}/outputs.py || true); cd /repo")  # no python3: no outputs list
            box.run(f"unset {pretend.split('=', 1)[0]}")
            repository, _, version = tag.partition(":")
            box.commit(
                repository, version, {"swe-forge.repo": repo, "swe-forge.recipe": recipe.key(), DEPS_LABEL: deps}
            )

    def _pretend_version(self, repo: str, sha: str) -> str:
        """`NAME=version` for the install: the tree has no .git, so a setuptools-scm / hatch-vcs project gets the
        version git would give it (its release tag), scoped to its own distribution when its name is known."""
        version = self.cache.release_version(repo, sha) or "0.0.0"
        name = None
        for manifest in ("pyproject.toml", "setup.cfg", "setup.py"):
            text = (self.cache.show_file(repo, sha, manifest) or b"").decode("utf-8", "replace")
            match = re.search(r"(?m)^\s*name\s*=\s*['\"]?([A-Za-z0-9][A-Za-z0-9._-]*)", text)
            if match:
                name = match.group(1)
                break
        suffix = f"_FOR_{re.sub(r'[^A-Za-z0-9]+', '_', name).upper()}" if name else ""
        return f"{PRETEND_VERSION}{suffix}={shlex.quote(version)}"

    @contextmanager
    def _build_lock(self, tag: str) -> Iterator[None]:
        """One build of an image at a time, across threads and processes (per-task runs in parallel)."""
        path = self.lock_dir / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', tag)}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._locks_guard:
            thread_lock = self._locks.setdefault(tag, threading.Lock())
        with thread_lock, path.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield


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
