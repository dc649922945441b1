"""What the real-repository benchmarks share: bundles as remotes, the executor, and one instance's cold/warm proof.

Cold = no environment image for any of the instance's candidate recipes (removed first, with their layers), so the
environment is found from the manifests, built, then proven (1 run without the fix + 3 with it); warm = the same
again with the image cached. Disk = the environment image's size and what it adds on top of its base image.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from functools import partial
from pathlib import Path

import docker

from swe_forge_dagster.environments.candidates import environment_candidates
from swe_forge_dagster.environments.environment import env_image_tag, image_available
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.export.swebench import SWEBenchInstance
from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE
from swe_forge_dagster.tasks.prove import TaskExecutor, TaskValidation
from swe_forge_dagster.tasks.revalidate_instances import instance_split, prove_with_manifests

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")


def clone_bundle(tmp: Path, repo: str) -> Path:
    """`repo`'s bundle from the fixtures as the bare remote `tmp/remotes/<owner>/<name>.git` (once)."""
    remote = tmp / "remotes" / f"{repo}.git"
    if not remote.exists():
        bundle = FIXTURES / "repos" / f"{repo.replace('/', '+')}.bundle"
        subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(remote)], check=True)
    return remote


def executor_for(client: docker.DockerClient, tmp: Path) -> TaskExecutor:
    """A task executor on the remotes of `tmp` (the host CA bundle in the sandbox: npm and PyPI need it here)."""
    cache = RepoCache(tmp / "cache", f"file://{tmp}/remotes/{{repo}}.git")
    sandbox = sandbox_config(image=DEFAULT_BASE_IMAGE, ca_bundle=HOST_CA if HOST_CA.is_file() else None, build=True)
    return TaskExecutor(client, cache, sandbox)


def remove_images(client: docker.DockerClient, tags: set[str]) -> None:
    """Remove `tags` and the layers built on them (`<tag>-<deps>`), layers first."""
    found = set()
    for tag in tags:
        for image in client.images.list(name=tag.rsplit(":", 1)[0]):
            found |= {name for name in image.tags if name == tag or name.startswith(f"{tag}-")}
    for name in sorted(found, key=len, reverse=True):
        with contextlib.suppress(docker.errors.APIError):
            client.images.remove(name, force=True)


def candidate_tags(inst: SWEBenchInstance, executor: TaskExecutor) -> set[str]:
    """The environment image tags of every recipe the manifests give for the instance."""
    executor.cache.ensure(inst.repo)
    executor.cache.fetch(inst.repo, [inst.base_commit])
    found = environment_candidates(
        executor.cache,
        inst.repo,
        inst.base_commit,
        instance_split(inst).src_files,
        available=partial(image_available, executor.client),
    )
    return {env_image_tag(inst.repo, recipe) for recipe in found.recipes}


def measure(inst: SWEBenchInstance, executor: TaskExecutor) -> tuple[dict, TaskValidation]:
    """The cold and warm figures of one instance, and the warm proof (its image is left for the caller to remove)."""
    client = executor.client
    remove_images(client, candidate_tags(inst, executor))
    row: dict = {}
    for phase in ("cold", "warm"):
        started = time.perf_counter()
        result, problem, tried = prove_with_manifests(inst, executor)
        if result is None:
            raise RuntimeError(f"{inst.instance_id}: no environment ({problem}); tried {tried}")
        runs = [result.before, *result.after]
        row[f"{phase}_s"] = round(time.perf_counter() - started, 2)
        row[f"{phase}_validation_s"] = round(sum(run.seconds for run in runs), 2)
        row[f"{phase}_runs_s"] = [round(run.seconds, 2) for run in runs]
        row[f"{phase}_image_cached"] = result.image_cached
    image = client.images.get(result.image)
    base = client.images.get(tried[-1].split(": ", 1)[0])  # "image: install" of the recipe that worked
    row.update(
        recipe=tried[-1],
        runner=result.runner,
        image=result.image,
        accepted=result.validation.accepted,
        image_mb=round(image.attrs["Size"] / 1e6, 1),
        image_adds_mb=round((image.attrs["Size"] - base.attrs["Size"]) / 1e6, 1),
    )
    return row, result
