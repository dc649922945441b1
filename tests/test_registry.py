"""Environment images through a real image registry (Debian's docker-registry on 127.0.0.1).

One machine builds and pushes; another (its own repository cache, the image gone from the engine)
pulls and builds nothing; a later stage pulls exactly the environment stage's image by its digest; a
registry that is down costs a logged reason and a local build, never a failed task.
`SWE_FORGE_REGISTRY` is checked when settings are read.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.environments.environment import VARIANT_OF_LABEL, EnvRecipe, env_image_tag
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.registry import RegistryConfigError, parse_registry
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.languages.python.runner import PYTEST
from swe_forge_dagster.settings import Settings
from swe_forge_dagster.tasks.environment_record import environment_record, stage_image
from swe_forge_dagster.tasks.prove import TaskExecutor
from tests.support.common import BASE_IMAGE
from tests.support.git_repos import repo_with_commits
from tests.support.registry_server import RegistryServer


def test_the_registry_setting_is_an_address_or_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_registry("") == parse_registry("  ") == ""
    assert parse_registry("127.0.0.1:5000/") == "127.0.0.1:5000"
    assert parse_registry("registry.example.org/team/swe") == "registry.example.org/team/swe"
    for bad in ("http://127.0.0.1:5000", "127.0.0.1:5000 x", "host:port"):
        with pytest.raises(RegistryConfigError, match="SWE_FORGE_REGISTRY"):
            parse_registry(bad)
    monkeypatch.setenv("SWE_FORGE_REGISTRY", "https://127.0.0.1:5000")
    with pytest.raises(ValueError, match="SWE_FORGE_REGISTRY"):
        Settings()


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[RegistryServer]:
    with RegistryServer(tmp_path / "registry") as server:
        yield server


def _image_id(client: docker.DockerClient, tag: str) -> str | None:
    try:
        return client.images.get(tag).id
    except docker.errors.ImageNotFound:
        return None


@pytest.mark.docker
def test_an_image_built_on_one_machine_is_pulled_not_rebuilt_on_another(
    tmp_path: Path, docker_client: docker.DockerClient, registry: RegistryServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="swe_forge_dagster.execution.registry")
    cache, shas = repo_with_commits(
        tmp_path / "origin",
        [
            {"pyproject.toml": f'[project]\nname = "r"\nversion = "1"\ndependencies = {deps}\n'}
            for deps in ('["attrs"]', '["attrs", "httpx"]')
        ],
    )
    marker = uuid.uuid4().hex  # a recipe of its own: no other test's image can answer for it
    recipe = EnvRecipe(
        (f"echo {marker} > /opt/marker && (grep -o httpx pyproject.toml >> /opt/marker || true)",), PYTEST, BASE_IMAGE
    )
    sandbox = sandbox_config(build=True, image=BASE_IMAGE, network="none")
    tag = env_image_tag("o/r", recipe)
    repository = tag.split(":")[0]
    built: list[str] = []
    try:
        first = TaskExecutor(docker_client, cache, sandbox, registry=registry.address)
        assert first.environment_image("o/r", shas[0], recipe) == (tag, False)
        layer, layer_reused = first.environment_image("o/r", shas[1], recipe)  # other manifests: a layer
        built = [tag, layer]
        assert not layer_reused and layer.startswith(f"{tag}-")
        ids = {name: _image_id(docker_client, name) for name in built}
        assert registry.tags(repository) == sorted(name.split(":")[1] for name in built)
        assert [
            e.split(" found ")[1].split(",")[0] if " found " in e else e.split(" as sha256:")[0]
            for e in first.environments.registry.events
        ] == ["nothing", f"pushed {tag} to {registry.address}", "nothing", f"pushed {layer} to {registry.address}"]
        assert all(first.environments.digest_of(name) for name in built)  # each push's digest, kept
        assert not [t for i in docker_client.images.list(repository) for t in i.tags if t.startswith(registry.address)]

        for name in built:  # the second machine's engine has neither image
            docker_client.images.remove(name, force=True)
        second_cache = RepoCache(tmp_path / "machine-2" / "repos", f"file://{tmp_path / 'origin'}/{{repo}}.git")
        second = TaskExecutor(docker_client, second_cache, sandbox, registry=registry.address)
        assert second.environment_image("o/r", shas[0], recipe) == (tag, True)
        assert second.environment_image("o/r", shas[1], recipe) == (layer, True)
        assert {name: _image_id(docker_client, name) for name in built} == ids  # the same images, not rebuilds
        layer_image = docker_client.images.get(layer)
        assert layer_image.labels[VARIANT_OF_LABEL] == ids[tag]
        out = docker_client.containers.run(layer, ["cat", "/opt/marker"], remove=True).decode().split()
        assert out == [marker, "httpx"]
        assert [e.split()[0] for e in second.environments.registry.events] == ["pulled", "pulled"]
    finally:
        for name in built:
            with contextlib.suppress(docker.errors.ImageNotFound):
                docker_client.images.remove(name, force=True)


@pytest.mark.docker
def test_a_registry_that_is_down_means_a_local_build_and_a_logged_reason(
    tmp_path: Path, docker_client: docker.DockerClient, registry: RegistryServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="swe_forge_dagster.execution.registry")
    cache, shas = repo_with_commits(tmp_path / "origin", [{"setup.py": "print('x')\n"}])
    recipe = EnvRecipe((f"echo {uuid.uuid4().hex} > /opt/marker",), PYTEST, BASE_IMAGE)
    tag = env_image_tag("o/r", recipe)
    registry.stop()
    try:
        executor = TaskExecutor(
            docker_client,
            cache,
            sandbox_config(build=True, image=BASE_IMAGE, network="none"),
            registry=registry.address,
        )
        assert executor.environment_image("o/r", shas[0], recipe) == (tag, False)
        pull, push = executor.environments.registry.events
        assert pull.startswith(f"pull of {registry.address}/{tag} failed, building instead: ")
        assert "connection refused" in pull.lower() and "push of" in push and "failed" in push
        assert [r.levelname for r in caplog.records if r.name.endswith("registry")] == ["WARNING", "WARNING"]
        # back up: the image exists here now and is reused as is: nothing is pulled, and nothing is pushed
        # either (the image built while the registry was down reaches it with the next build of it, anywhere)
        registry.start()
        assert executor.environment_image("o/r", shas[0], recipe) == (tag, True)
        assert registry.tags(tag.split(":")[0]) == []
    finally:
        with contextlib.suppress(docker.errors.ImageNotFound):
            docker_client.images.remove(tag, force=True)


@pytest.mark.docker
def test_a_later_stage_pulls_the_environment_image_by_digest_or_builds_it_here_and_says_so(
    tmp_path: Path, docker_client: docker.DockerClient, registry: RegistryServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="swe_forge_dagster.environments.image_source")
    cache, shas = repo_with_commits(tmp_path / "origin", [{"setup.py": "print('x')\n"}])
    recipe = EnvRecipe((f"echo {uuid.uuid4().hex} > /opt/marker",), PYTEST, BASE_IMAGE)
    sandbox = sandbox_config(build=True, image=BASE_IMAGE, network="none")
    tag = env_image_tag("o/r", recipe)

    def machine(name: str) -> TaskExecutor:
        other = RepoCache(tmp_path / name / "repos", f"file://{tmp_path / 'origin'}/{{repo}}.git")
        return TaskExecutor(docker_client, other, sandbox, registry=registry.address)

    try:
        first = TaskExecutor(docker_client, cache, sandbox, registry=registry.address)
        assert first.environment_image("o/r", shas[0], recipe) == (tag, False)
        env, facts = environment_record(first, recipe, tag, False, "agent")  # what the environment stage saves
        digest = env["image_digest"]
        assert digest and digest.startswith("sha256:") and facts["image_digest"] == digest
        image_id = _image_id(docker_client, tag)
        assert image_id is not None

        docker_client.images.remove(tag, force=True)  # the next stage's host has no image
        second = machine("machine-2")
        got = stage_image(second, "o/r", shas[0], env)
        assert (got.tag, got.cached, got.source) == (tag, True, "pulled by digest")
        assert _image_id(docker_client, tag) == image_id  # exactly the environment stage's image
        assert second.environments.registry is not None
        assert second.environments.registry.events == [
            f"pulled {tag} by digest {digest} from {registry.address} ({image_id[:19]})"
        ]
        assert not [t for i in docker_client.images.list(tag.split(":")[0]) for t in i.tags if registry.address in t]
        assert stage_image(second, "o/r", shas[0], env).source == "local"

        docker_client.images.remove(tag, force=True)
        registry.stop()  # a host that cannot reach the registry builds the image from the recipe, and says so
        built = stage_image(machine("machine-3"), "o/r", shas[0], env)
        assert built.tag == tag and not built.cached and built.source.startswith("built here: pull of ")
        assert "connection refused" in built.source.lower() and _image_id(docker_client, tag) is not None
        assert any("built here" in record.getMessage() for record in caplog.records)
    finally:
        with contextlib.suppress(docker.errors.ImageNotFound):
            docker_client.images.remove(tag, force=True)
