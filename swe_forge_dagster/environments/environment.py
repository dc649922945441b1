"""Environment images: a repository installed by a recipe, built once per (repo, recipe) and cached by tag.

Task building and evaluation both take their images from here (`Environments.image`). The first
build of (repo, recipe) is the repository's environment image; a task whose base commit has the same
dependency manifests (a label on the image) reuses it as is. A task whose manifests differ gets a
thin layer on top of it, tagged by its manifests' fingerprint: the new tree installed again over the
existing environment, so only what changed is downloaded and stored, and tasks that alternate
between two sets of manifests reuse both images instead of rebuilding one. One build per (repo,
recipe) runs at a time, across threads and processes (a lock file per tag). With a registry
(`SWE_FORGE_REGISTRY`, `execution.registry`) an image missing here is pulled before it is built, and
every image built is pushed, so other machines reuse it; the digest of each image pushed or pulled is
kept (`image_digests`, `digest_of`) for later stages to pull exactly that image (`image_source`).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import inspect
import re
import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import docker

from swe_forge_dagster.environments import toolchain_images
from swe_forge_dagster.environments.image_digests import DigestBook
from swe_forge_dagster.environments.install_scripts import (
    install_git_script,
    pretend_version,
    runtime_labels,
)
from swe_forge_dagster.execution.era import RESOLUTION_VAR
from swe_forge_dagster.execution.recipe import RUNTIME_FILE, EnvRecipe
from swe_forge_dagster.execution.registry import ImageRegistry
from swe_forge_dagster.execution.repo_box import ENV_DIR, TREE_NAME, write_tree_archive
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxConfig, SandboxError
from swe_forge_dagster.execution.tar_safety import safe_extract
from swe_forge_dagster.execution.test_user import OPEN_IN_IMAGE
from swe_forge_dagster.languages.registry import (
    DEFAULT_PACK,
    dependency_files,
    dependency_part,
    runtime_probes,
)

DEPS_LABEL = "swe-forge.deps"
BUILT_AT_LABEL = "swe-forge.built-at"
"""The commit whose tree was installed: SWE-bench's `environment_setup_commit` of the tasks that use the image."""
FROM_LABEL = "swe-forge.from"
"""The image the build started from (a base image, or the environment image a layer sits on)."""
INSTALL_SECONDS_LABEL = "swe-forge.install-seconds"
"""How long the install took (a compiled repository's build is most of it): paid once per image, every task of the
environment reuses what it built."""
VARIANT_OF_LABEL = "swe-forge.variant-of"
"""On a per-manifests image: the id of the repository's environment image it stands in for."""
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
INSTALL_TIMEOUT_S = 1800
DEPENDENCY_FILES = (*dependency_files(), "Gemfile.lock")
"""Root-level manifests whose change means the environment must be installed again (every language pack's)."""


class EnvironmentBuildError(RuntimeError):
    """An install step failed: the repository does not install with this recipe at this commit."""


def image_available(client: docker.DockerClient, image: str) -> bool:
    """Whether `image` is on the engine (a local base image may not have been built), or is a toolchain image that
    is built on first need (`environments.toolchain_images`: when a sandbox starts on it)."""
    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        return toolchain_images.buildable(client, image)
    return True


def env_image_tag(repo: str, recipe: EnvRecipe, procedure: str | None = None) -> str:
    """The cached environment image of (repo, recipe), built by this code's procedure: later tasks of the repo start
    warm from it, and an image an older procedure built (another tree layout, outputs list or git history) is
    never taken for this one's."""
    key = hashlib.sha256(f"{recipe.key()} {procedure or build_procedure()}".encode()).hexdigest()[:16]
    return f"swe-forge-env/{re.sub(r'[^a-z0-9]+', '-', repo.lower()).strip('-')}:{key}"


@functools.cache
def build_procedure() -> str:
    """A fingerprint of how `Environments` turns a recipe into an image (the build's own code and the scripts it
    writes), part of every environment image's tag: images outlive code on an engine, and one built by another
    procedure may differ in what the checks rely on, which the recipe alone does not show."""
    parts = (
        RECORD_BASE_TREE,
        OUTPUTS_SCRIPT,
        install_git_script(("v0.0", "0.0")),
        runtime_probes(),
        OPEN_IN_IMAGE,
        inspect.getsource(Environments._build),
        inspect.getsource(pretend_version),
    )
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


class Environments:
    """Builds and reuses environment images; thread-safe (one build per tag at a time)."""

    def __init__(
        self,
        client: docker.DockerClient,
        cache: RepoCache,
        sandbox: SandboxConfig,
        lock_dir: Path | None = None,
        registry: str = "",
    ) -> None:
        self.client = client
        self.cache = cache
        self.sandbox = sandbox
        self.registry = ImageRegistry(client, registry) if registry else None
        self.lock_dir = lock_dir or cache.root / ".image-locks"
        self.digests = DigestBook(self.lock_dir.parent / ".image-digests")
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._index: dict[str, str | None] = {}

    def index_problem(self, base_image: str) -> str | None:
        """Why installs from the default pack's package index (its `index_probe`) cannot work in `base_image`'s
        sandbox, or None when they can (or the pack has no probe).

        Asked once per image and process (a probe is a container start and one download, ~2 s): a
        machine whose sandboxes cannot reach PyPI (no route, or a TLS proxy without the CA bundle) then
        skips the manifest recipes at once instead of spending pip's retries on each one.
        """
        probe = DEFAULT_PACK.index_probe
        if not probe:
            return None
        if base_image not in self._index:
            config = self.sandbox.model_copy(update={"image": base_image})
            try:
                with Sandbox.start(self.client, config, name_hint="index-probe") as box:
                    result = box.run(probe, timeout=120)
            except (docker.errors.DockerException, SandboxError) as exc:  # not cached: the next task asks again
                return f"the package index probe could not run in {base_image}: {exc}"
            self._index[base_image] = (
                None
                if result.ok
                else (
                    f"the package index is unreachable from the sandbox (behind a TLS proxy, set SWE_FORGE_CA_BUNDLE): "
                    f"{result.output.strip().splitlines()[-1][:300] if result.output.strip() else result.exit_code}"
                )
            )
        return self._index[base_image]

    def export_tree(self, repo: str, sha: str, into: Path) -> Path:
        """The files of `sha` (no .git) in a host folder, exactly as every container sees the tree:
        the same `git archive` as `repo_box.write_tree_archive` (export attributes off, isolated git),
        which runs no repository code."""
        with tempfile.TemporaryDirectory(prefix="swe-forge-tree-") as tmp:
            archive = write_tree_archive(self.cache, repo, sha, Path(tmp) / "tree.tar")
            with tarfile.open(archive) as tar:
                safe_extract(tar, Path(tmp) / "x")  # Debian bookworm's Python 3.11.2 has no filter=
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
                digest.update(name.encode() + b"\0" + dependency_part(name, content) + b"\0")
        return digest.hexdigest()[:16]

    def image(self, repo: str, base_sha: str, recipe: EnvRecipe) -> tuple[str, bool]:
        """(tag, reused) of the repo's environment for `recipe` at `base_sha` (see the module docstring).

        docker's ImageNotFound propagates when the recipe's base image is absent; EnvironmentBuildError
        when an install step fails (its output tail in the message).
        """
        tag = env_image_tag(repo, recipe)
        with self._build_lock(tag):
            deps = self.dependency_fingerprint(repo, base_sha)
            current = self._get(tag) or self._pull(tag)
            if current is None:
                self._build(repo, base_sha, recipe, tag, deps, recipe.base_image)
                self._push(tag)
                return tag, False
            if current.labels.get(DEPS_LABEL) == deps:
                return tag, True
            layer = f"{tag}-{deps[:12]}"
            existing = self._get(layer) or self._pull(layer)  # another machine may have built this layer
            if existing is not None and existing.labels.get(VARIANT_OF_LABEL) == current.id:
                return layer, True
            variant = {VARIANT_OF_LABEL: current.id}
            try:
                self._build(repo, base_sha, recipe, layer, deps, current.id, variant)
            except EnvironmentBuildError:  # the new manifests do not install over the old environment: from scratch
                self._build(repo, base_sha, recipe, layer, deps, recipe.base_image, variant)
            if existing is not None:  # a layer over an older environment image would pile up untagged
                with contextlib.suppress(docker.errors.APIError):
                    self.client.images.remove(existing.id)
            self._push(layer)
        return layer, False

    def fetch(self, tag: str, digest: str | None = None) -> bool:
        """Whether `tag` is on this engine now: there already, or pulled from the registry (an image built by another
        machine: by `digest`, or the one this machine knows, then by tag; a failed pull is logged by the registry,
        and the sandbox's start then names the missing image)."""
        if self.on_engine(tag):
            return True
        digest = digest or self.digest_of(tag)
        return (digest is not None and self.pull(tag, digest) is None) or self.pull(tag) is None

    @property
    def has_registry(self) -> bool:
        return self.registry is not None

    def on_engine(self, tag: str) -> bool:
        return self._get(tag) is not None

    def pull(self, tag: str, digest: str | None = None) -> str | None:
        """Why `tag` (exactly the image `digest` names, when given) could not be pulled; None: it is here now."""
        if self.registry is None:
            return "no registry (SWE_FORGE_REGISTRY is unset)"
        with self._build_lock(tag):  # the local name is retagged: never while another process builds or pulls it
            return None if self._get(tag) is not None else self._pull_here(tag, digest)

    def _pull_here(self, tag: str, digest: str | None = None) -> str | None:
        """`pull` for a caller that holds `tag`'s build lock (or has no registry: the reason)."""
        if self.registry is None:
            return "no registry (SWE_FORGE_REGISTRY is unset)"
        pulled = self.registry.pull_image(tag, digest)
        if pulled.image is not None:
            self.digests.record(tag, pulled.digest, pulled.image.id)
        return pulled.problem if pulled.image is None else None

    def digest_of(self, tag: str) -> str | None:
        """The registry digest of the image `tag` names here, when this machine pushed or pulled that image (None:
        built while the registry was down, or never through one); of the last one it knew when `tag` is not here."""
        image = self._get(tag)
        return self.digests.digest_of(tag, image.id if image is not None else None)

    def built_at(self, tag: str) -> str | None:
        """The commit the image's environment was installed from (`environment_setup_commit`)."""
        image = self._get(tag)
        return image.labels.get(BUILT_AT_LABEL) if image is not None else None

    def own_bytes(self, tag: str) -> int | None:
        """What the image adds on disk over the image it was built from (a layer: what one task costs)."""
        image = self._get(tag)
        parent = self._get(image.labels.get(FROM_LABEL, "")) if image is not None else None
        if image is None or parent is None:
            return None
        return int(image.attrs.get("Size") or 0) - int(parent.attrs.get("Size") or 0)

    def _pull(self, tag: str) -> docker.models.images.Image | None:
        """`tag` from the registry (None without one, or when the pull fails: then it is built); the caller holds
        its build lock."""
        return self._get(tag) if self._pull_here(tag) is None else None

    def _push(self, tag: str) -> None:
        if self.registry is not None and (pushed := self.registry.push(tag)):
            image = self._get(tag)
            self.digests.record(tag, pushed.digest, image.id if image is not None else None)

    def _get(self, name: str) -> docker.models.images.Image | None:
        if not name:
            return None
        try:
            return self.client.images.get(name)
        except docker.errors.ImageNotFound:
            return None

    def _build(
        self,
        repo: str,
        base_sha: str,
        recipe: EnvRecipe,
        tag: str,
        deps: str,
        start: str,
        extra_labels: dict[str, str] | None = None,
    ) -> None:
        """Install `recipe` on the tree of `base_sha` in a container of `start` and commit it as `tag`.

        Over an environment image (a layer) the old tree and whatever its install left in /repo are
        removed first, so the layer's /repo is exactly this commit's tree plus its own install outputs.
        """
        config = self.sandbox.model_copy(update={"image": start})
        pretend = pretend_version(self.cache, repo, base_sha)
        with tempfile.TemporaryDirectory() as tmp, Sandbox.start(self.client, config, name_hint="env") as box:
            if start != recipe.base_image:
                cleared = box.run("find /repo -mindepth 1 -delete && cd /repo")
                if not cleared.ok:  # old modules left in a layer would shadow the new tree: build from scratch
                    raise EnvironmentBuildError(f"clearing the old tree failed: {cleared.output[-500:]}")
            box.copy_in(self.export_tree(repo, base_sha, Path(tmp) / "tree"), "/repo")
            box.run("cd /repo")
            recorded = box.run(RECORD_BASE_TREE)
            if recorded.exit_code != 0:
                raise EnvironmentBuildError(f"recording the build tree failed: {recorded.output[-500:]}")
            box.run(f"export {pretend}")  # for the installs only: unset before the image is committed
            box.run(install_git_script(self.cache.release_tags(repo, base_sha)))
            started = time.monotonic()
            for command in recipe.install_commands:
                result = box.run(command, timeout=INSTALL_TIMEOUT_S)
                if result.exit_code != 0:
                    raise EnvironmentBuildError(
                        f"install step failed ({result.exit_code}): {command}\n{result.output[-2000:]}"
                    )
            box.run("rm -rf /repo/.git; cd /repo")  # runs make their own history: the install's is not an output
            box.write_file(f"{ENV_DIR}/outputs.py", OUTPUTS_SCRIPT)
            box.run(f"cd /repo && (python3 {ENV_DIR}/outputs.py || true); cd /repo")  # no python3: no outputs list
            box.run(f"unset {pretend.split('=', 1)[0]} {RESOLUTION_VAR}")  # install-time only: not the image's
            box.write_file(f"{ENV_DIR}/probe", runtime_probes())  # the packs' facts, when the install wrote none
            box.run(f"[ -s {RUNTIME_FILE} ] || sh {ENV_DIR}/probe > {RUNTIME_FILE} 2>/dev/null; cd /repo")
            runtime = box.run(f"cat {RUNTIME_FILE} 2>/dev/null || true")
            box.run(f"({OPEN_IN_IMAGE}); cd /repo")  # opened here once, not copied up by every test run
            repository, _, version = tag.partition(":")
            labels = {
                "swe-forge.repo": repo,
                "swe-forge.recipe": recipe.key(),
                DEPS_LABEL: deps,
                BUILT_AT_LABEL: base_sha,
                FROM_LABEL: start,
                INSTALL_SECONDS_LABEL: str(round(time.monotonic() - started)),
                **runtime_labels(runtime.output if runtime.ok else ""),
                **(extra_labels or {}),
            }
            box.commit(repository, version, labels)

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
