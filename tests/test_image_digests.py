"""Environment images by registry digest, without Docker: what a push and a pull learn, what a machine keeps,
and where a later stage's image comes from (on this engine, pulled by digest, or built here and said so).

The engine and the registry are `tests.support.fake_image_engine` (in memory, as far as the code uses
Docker); the Docker tier's `tests/test_registry.py` runs the same paths on a real engine and registry.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from swe_forge_dagster.environments.environment import Environments, EnvRecipe
from swe_forge_dagster.environments.image_digests import DigestBook
from swe_forge_dagster.environments.image_source import (
    BUILT_HERE,
    LOCAL,
    NO_REGISTRY,
    PULLED_BY_DIGEST,
    PULLED_BY_TAG,
    obtain_image,
)
from swe_forge_dagster.execution.registry import ImageRegistry, Pushed, pushed_digest, repo_digest
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.sandbox import SandboxConfig
from swe_forge_dagster.tasks.environment_record import environment_record, stage_image
from swe_forge_dagster.tasks.prove import TaskExecutor
from tests.support.fake_image_engine import FakeClient, FakeImages

ADDRESS = "127.0.0.1:5000"
TAG = "swe-forge-env/o-r:0123456789abcdef"
REMOTE = f"{ADDRESS}/swe-forge-env/o-r"
A, B = "sha256:" + "a" * 64, "sha256:" + "b" * 64
RECIPE = EnvRecipe(("pip install -e .",), "python -m pytest {tests}", "base:1")


def two_machines() -> tuple[FakeClient, FakeClient]:
    """Two engines sharing one registry."""
    first = FakeClient()
    return first, FakeClient(FakeImages(remote=first.images.remote))


def environments(client: FakeClient, root: Path, registry: str = ADDRESS) -> Environments:
    cache = RepoCache(root / "repos", "file:///nowhere/{repo}.git")
    return Environments(client, cache, SandboxConfig(image="unused"), registry=registry)  # type: ignore[arg-type]


def test_a_push_stream_names_the_digest_in_aux_or_in_its_last_status_line() -> None:
    stream: list[Any] = [{"status": "Preparing"}, {"status": f"latest: digest: {B} size: 528"}, {"aux": {"Digest": A}}]
    assert pushed_digest(stream) == A
    assert pushed_digest(stream[:2]) == B  # an engine that sends no aux
    assert pushed_digest(["not json", {"error": "denied"}, {"aux": {"Digest": "md5:x"}}, {"aux": "x"}]) is None
    repo_digests = [f"other/o-r@{A}", f"{REMOTE}@{B}", f"{REMOTE}@sha256:short", "junk"]
    assert repo_digest(repo_digests, REMOTE) == B
    assert repo_digest(None, REMOTE) is None and repo_digest([f"{REMOTE}:tag"], REMOTE) is None


@pytest.mark.parametrize("report", ["aux", "status", "none"])
def test_a_push_returns_its_digest_however_the_engine_reports_it(report: str) -> None:
    client = FakeClient(FakeImages(report=report))
    client.images.build(TAG, "env")
    registry = ImageRegistry(client, ADDRESS)  # type: ignore[arg-type]
    pushed = registry.push(TAG)
    assert pushed and pushed.digest is not None and pushed.digest.startswith("sha256:")  # "none": from RepoDigests
    assert client.images.remote[(REMOTE, "0123456789abcdef")][1] == pushed.digest
    assert registry.events == [f"pushed {TAG} to {ADDRESS} as {pushed.digest}"]
    assert sorted(client.images.local) == [TAG]  # no transfer name left, neither the tag nor the digest reference


def test_a_failed_push_is_false_as_before_and_keeps_no_transfer_name() -> None:
    client = FakeClient(FakeImages(down=True))
    client.images.build(TAG, "env")
    registry = ImageRegistry(client, ADDRESS)  # type: ignore[arg-type]
    pushed = registry.push(TAG)
    assert pushed == Pushed(False) and not pushed and pushed.digest is None
    assert (
        registry.events[0].startswith(f"push of {TAG} to {ADDRESS} failed")
        and "connection refused" in registry.events[0]
    )
    assert sorted(client.images.local) == [TAG]


def test_an_image_is_pulled_by_digest_under_its_local_name_and_the_transfer_name_dropped() -> None:
    machine_a, machine_b = two_machines()
    built = machine_a.images.build(TAG, "env")
    digest = ImageRegistry(machine_a, ADDRESS).push(TAG).digest  # type: ignore[arg-type]
    assert digest is not None
    registry = ImageRegistry(machine_b, ADDRESS)  # type: ignore[arg-type]
    pulled = registry.pull_image(TAG, digest)
    assert pulled and pulled.image is not None and pulled.image.id == built.id and pulled.digest == digest
    assert machine_b.images.pulls == [f"{REMOTE}@{digest}"]
    assert sorted(machine_b.images.local) == [TAG]  # `<registry>/<repo>@sha256:…` untagged again
    assert registry.events == [f"pulled {TAG} by digest {digest} from {ADDRESS} ({built.id[:19]})"]
    # by tag as before, now with the digest the engine recorded for it
    machine_b.images.remove(TAG)
    by_tag = registry.pull_image(TAG)
    assert by_tag.digest == digest and registry.events[-1].startswith(f"pulled {TAG} from {ADDRESS} (")
    assert sorted(machine_b.images.local) == [TAG]


def test_a_pull_that_cannot_serve_says_why_and_raises_nothing() -> None:
    client = FakeClient()
    registry = ImageRegistry(client, ADDRESS)  # type: ignore[arg-type]
    gone = registry.pull_image(TAG, A)
    assert not gone and gone.problem == f"pull of {REMOTE}@{A} found nothing: manifest for {REMOTE}:{A} not found"
    assert registry.pull(TAG) is None and registry.events[-1].startswith(f"pull of {REMOTE}:0123456789abcdef found")
    assert registry.events[-1].split(" found ")[1].startswith("nothing, building instead")  # by tag: as before
    refused = registry.pull_image(TAG, "sha256:nope")
    assert refused.problem is not None and "not a sha256 digest" in refused.problem
    client.images.down = True
    down = registry.pull_image(TAG, A)
    assert down.problem is not None and down.problem.startswith(f"pull of {REMOTE}@{A} failed: ")
    assert "connection refused" in down.problem


def test_a_digest_is_kept_across_processes_and_claimed_only_for_the_image_it_was_learned_for(tmp_path: Path) -> None:
    book = DigestBook(tmp_path / "digests")
    book.record(TAG, A, "sha256:image1")
    book.record("other:tag", "not-a-digest", "sha256:image2")  # nothing recorded
    book.record("other:tag", A, None)
    later = DigestBook(tmp_path / "digests")  # another process, the same machine
    assert later.digest_of(TAG, "sha256:image1") == A
    assert later.digest_of(TAG, "sha256:rebuilt-here") is None  # built again since: that digest is another image's
    assert later.digest_of(TAG, None) == A  # not on this engine: the last digest this machine knew
    assert later.get("other:tag") is None and later.digest_of("never:seen", None) is None
    next(iter((tmp_path / "digests").iterdir())).write_text("{damaged")
    assert DigestBook(tmp_path / "digests").get(TAG) is None


def test_environments_remember_what_they_pushed_and_pull_it_by_that_digest_elsewhere(tmp_path: Path) -> None:
    machine_a, machine_b = two_machines()
    here = environments(machine_a, tmp_path / "a")
    machine_a.images.build(TAG, "env")
    here._push(TAG)  # what `Environments.image` does after a build
    digest = here.digest_of(TAG)
    assert digest is not None and environments(machine_a, tmp_path / "a").digest_of(TAG) == digest  # kept on disk
    machine_a.images.build(TAG, "rebuilt while the registry was down")
    assert here.digest_of(TAG) is None  # not this image's digest any more

    there = environments(machine_b, tmp_path / "b")
    assert there.digest_of(TAG) is None and not there.on_engine(TAG)
    assert there.fetch(TAG, digest) and machine_b.images.pulls == [f"{REMOTE}@{digest}"]
    assert there.digest_of(TAG) == digest  # a pull is remembered too
    machine_b.images.remove(TAG)
    machine_b.images.pulls.clear()
    assert there.fetch(TAG)  # the hook's fetch: the digest this machine knows first
    assert machine_b.images.pulls == [f"{REMOTE}@{digest}"]
    machine_b.images.remove(TAG)
    del machine_b.images.remote[(REMOTE, digest)]  # the digest gone from the registry: then by tag
    assert there.fetch(TAG) and machine_b.images.pulls[-2:] == [f"{REMOTE}@{digest}", f"{REMOTE}:0123456789abcdef"]
    assert environments(machine_b, tmp_path / "c", registry="").pull(TAG) == "no registry (SWE_FORGE_REGISTRY is unset)"


class Sources:
    """`image_source.ImageSources` with set answers; records the pulls asked for."""

    def __init__(self, on_engine: bool, registry: bool = True, problem: str | None = None) -> None:
        self.here, self.has_registry, self.problem = on_engine, registry, problem
        self.pulls: list[tuple[str, str | None]] = []

    def on_engine(self, tag: str) -> bool:
        return self.here

    def pull(self, tag: str, digest: str | None = None) -> str | None:
        self.pulls.append((tag, digest))
        return self.problem


def test_a_stage_image_is_judged_by_its_recipe_whatever_its_origin_and_says_where_it_came_from(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The recipe's own check (`Environments.image`: the image's dependency manifests) runs every time, after a pull
    by the saved digest seeded this engine: a tag here may hold another task's or another host's build."""
    judged: list[str] = []

    def recipe_image(made: str = TAG, reused: bool = True) -> Callable[[], tuple[str, bool]]:
        def judge() -> tuple[str, bool]:
            judged.append(made)
            return made, reused

        return judge

    assert obtain_image(Sources(True), TAG, A, recipe_image()).source == LOCAL
    pulled = Sources(False)
    assert obtain_image(pulled, TAG, A, recipe_image()).source == PULLED_BY_DIGEST and pulled.pulls == [(TAG, A)]
    by_tag = Sources(False)
    assert obtain_image(by_tag, TAG, None, recipe_image()).source == PULLED_BY_TAG and by_tag.pulls == [(TAG, None)]
    assert judged == [TAG, TAG, TAG]

    caplog.set_level(logging.WARNING, logger="swe_forge_dagster.environments.image_source")
    stale = obtain_image(Sources(True), TAG, A, recipe_image(TAG + "-d1", reused=False))
    assert stale.tag == TAG + "-d1" and stale.built_here and "other dependency manifests" in stale.source
    layer = obtain_image(Sources(False), TAG, A, recipe_image(TAG + "-d1"))
    assert layer.cached and layer.source.startswith(f"{PULLED_BY_DIGEST}, with {TAG}-d1")
    failed = obtain_image(
        Sources(False, problem="pull of x@sha256:a failed: connection refused"), TAG, A, recipe_image(reused=False)
    )
    assert not failed.cached and failed.built_here
    assert failed.source == f"{BUILT_HERE}: pull of x@sha256:a failed: connection refused"
    assert "connection refused" in caplog.text and TAG in caplog.text
    no_digest = obtain_image(Sources(False, problem="pull of x:t found nothing"), TAG, None, recipe_image(reused=False))
    assert no_digest.source == f"{BUILT_HERE}: no digest was saved, and pull of x:t found nothing"
    alone = obtain_image(Sources(False, registry=False), TAG, A, recipe_image(reused=False))
    assert alone.source == f"{BUILT_HERE}: {NO_REGISTRY}"
    reused = obtain_image(Sources(False, problem="gone"), TAG, A, recipe_image())
    assert reused.cached and not reused.built_here and reused.source == f"from the recipe, reused {TAG}: gone"


def executor_on(client: FakeClient, root: Path) -> TaskExecutor:
    cache = RepoCache(root / "repos", "file:///nowhere/{repo}.git")
    return TaskExecutor(client, cache, SandboxConfig(image="unused"), registry=ADDRESS)  # type: ignore[arg-type]


def test_later_stages_read_the_saved_digest_and_build_from_the_recipe_when_it_cannot_be_pulled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine_a, machine_b = two_machines()
    first = executor_on(machine_a, tmp_path / "a")
    machine_a.images.build(TAG, "env")
    first.environments._push(TAG)
    data, facts = environment_record(first, RECIPE, TAG, False, "agent")
    assert data["image_digest"] == facts["image_digest"] is not None and data["image"] == TAG

    second = executor_on(machine_b, tmp_path / "b")
    built: list[tuple[str, str, EnvRecipe]] = []

    def image(repo: str, base: str, recipe: EnvRecipe) -> tuple[str, bool]:
        """`Environments.image`, judged by presence alone here: reused when the tag is on machine b."""
        if TAG in machine_b.images.local:
            return TAG, True
        built.append((repo, base, recipe))
        machine_b.images.build(TAG, "env, built on machine b")
        return TAG, False

    monkeypatch.setattr(second.environments, "image", image)
    got = stage_image(second, "o/r", "base-sha", data)
    assert got.source == PULLED_BY_DIGEST and machine_b.images.get(TAG).id == machine_a.images.get(TAG).id
    assert built == []

    machine_b.images.remove(TAG)
    machine_b.images.down = True  # this host cannot reach the registry: built here, and said so
    got = stage_image(second, "o/r", "base-sha", data)
    assert got.built_here and "connection refused" in got.source and built == [("o/r", "base-sha", RECIPE)]

    # the sandbox hook: an image this executor knows the recipe of is built again when it cannot be pulled
    machine_b.images.remove(TAG)
    assert second.sandbox.ensure_image is not None
    second.sandbox.ensure_image(machine_b, TAG)  # type: ignore[arg-type]
    assert machine_b.images.get(TAG) is not None and len(built) == 2
    second.sandbox.ensure_image(machine_b, "swe-forge-base:unknown")  # type: ignore[arg-type]  # no recipe: no build
    assert len(built) == 2
