"""The Node.js a repository or a task gets: the major it declares, from the npm registry's Node binaries, built on
first need (issue 22, item 2 for Node, and the seed tasks' runtime).

Fast: which majors a declaration admits (`.nvmrc`, `.node-version`, `volta.node`, `engines.node` ranges), the order
of images, how a major's image is built. Docker: a package made here whose test needs Node 20 (global `File`) and
says `engines.node: ">=20"` gets an environment on Node 20 or later where its tests pass, and fails that test on
Debian's Node 18. Real: the seed task noi-techpark/opendatahub-gtfs-api-3 (`node: '20'`) runs on swe-forge-node:20
with no flag: the oracle resolves it, the empty agent does not.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.environments import toolchain_images
from swe_forge_dagster.environments.environment import FROM_LABEL
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.repo_box import write_tree_archive
from swe_forge_dagster.execution.toolchains import registry_reachable
from swe_forge_dagster.languages.node import image as node_image
from swe_forge_dagster.languages.node.pack import NODE_IMAGE, declared_version, image_order
from swe_forge_dagster.languages.node.versions import declared_range, majors_satisfying
from swe_forge_dagster.languages.registry import toolchain_images as images_for
from swe_forge_dagster.settings import get_settings
from swe_forge_dagster.tasks.manifest_env import find_manifest_environment
from swe_forge_dagster.tasks.prove import TaskExecutor
from tests.support.common import BASE_IMAGE, EXAMPLES, SHARED_FIXTURES
from tests.support.git_repos import repo_with_commits

MAJORS = list(range(16, 27))
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")


def package(**fields: object) -> dict[str, str]:
    return {"package.json": json.dumps({"name": "x", "version": "1.0.0", **fields})}


@pytest.mark.parametrize(
    ("spec", "majors"),
    [
        (">=20", list(range(20, 27))),
        ("^18.17.0 || >=20.5.0", [18, *range(20, 27)]),
        ("20.x", [20]),
        ("~20.11", [20]),
        ("v20.11.1", [20]),
        ("16 - 18", [16, 17, 18]),
        (">=14 <19", [16, 17, 18]),
        (">18", list(range(19, 27))),
        (">=18.0.0 <=20", [18, 19, 20]),
        ("<16", []),
        ("lts/iron", [20]),
        ("lts/*", [16, 18, 20, 22, 24, 26]),
        ("*", MAJORS),
        ("not a range", []),
    ],
)
def test_which_majors_a_declared_range_admits(spec: str, majors: list[int]) -> None:
    assert majors_satisfying(spec, MAJORS) == majors


def test_the_most_exact_declaration_wins() -> None:
    files = {".nvmrc": "# pinned\nv20.11.1\n", **package(engines={"node": ">=16"}, volta={"node": "22.1.0"})}
    assert declared_range(files) == (".nvmrc", "v20.11.1")
    assert declared_range({".node-version": "22\n", **package(engines={"node": ">=16"})}) == (".node-version", "22")
    assert declared_range(package(engines={"node": ">=16"}, volta={"node": "22.1.0"})) == ("volta.node", "22.1.0")
    assert declared_range(package(engines={"node": ">=16"})) == ("engines.node", ">=16")
    assert declared_range({".nvmrc": "node\n", **package()}) is None  # "the latest": says nothing
    assert declared_version(package(engines={"node": "^18.17 || >=20"})) == (18,)


def test_the_highest_lts_major_that_satisfies_comes_first_and_undeclared_repositories_keep_debian_first() -> None:
    # as before, then the newest LTS: today's releases of an undeclared package's ranges may need a newer Node
    assert image_order(package()) == [NODE_IMAGE, "swe-forge-node:trixie", "swe-forge-node:26"]
    assert image_order(package(engines={"node": ">=20"}))[:3] == [
        "swe-forge-node:26",
        "swe-forge-node:24",
        "swe-forge-node:22",
    ]
    assert image_order({".nvmrc": "18\n"}) == [NODE_IMAGE, "swe-forge-node:18", "swe-forge-node:trixie"]
    assert image_order({".nvmrc": "19\n"})[0] == "swe-forge-node:19"  # an odd line only when asked for
    assert image_order({".nvmrc": "12\n"}) == [NODE_IMAGE, "swe-forge-node:trixie"]  # nothing that old: Debian's
    # only the images on the engine (or buildable on it) are offered
    assert images_for("node", package(engines={"node": ">=20"}), available=lambda t: t.endswith((":20", ":22"))) == [
        "swe-forge-node:22",
        "swe-forge-node:20",
    ]


def test_a_majors_image_is_built_from_the_npm_registry_on_the_local_base_image() -> None:
    build = toolchain_images.build_of("swe-forge-node:20")
    assert build is not None and build.base == "swe-forge-base:bookworm" and build.context is not None
    assert build.describe == "Node 20 + npm 10 from npm"
    assert [node_image.npm_major(m) for m in (16, 18, 22, 24, 26)] == [9, 10, 10, 11, 11]
    assert (
        node_image.newest({"20.1.0": {}, "20.10.0": {}, "20.9.9": {}, "21.0.0": {}, "20.11.0-rc.1": {}}, 20)
        == "20.10.0"
    )
    debian = toolchain_images.build_of("swe-forge-go:trixie")
    assert debian is not None and (debian.base, debian.context) == ("swe-forge-base:trixie", None)
    assert debian.debian_packages == "golang-go"
    assert toolchain_images.build_of("swe-forge-base:bookworm") is None
    assert toolchain_images.build_of("swe-forge-env/o-r:abc") is None


NEEDS_NODE_20 = {
    **package(engines={"node": ">=20"}, devDependencies={"mocha": "^10.2.0"}, scripts={"test": "mocha"}),
    "test/file.test.js": (
        "const assert = require('assert')\n"
        "describe('files', () => {\n"
        "  it('has the global File of Node 20', () => assert.strictEqual(typeof File, 'function'))\n"
        "  it('adds', () => assert.strictEqual(1 + 1, 2))\n"
        "})\n"
    ),
}


@pytest.mark.docker
def test_a_package_that_needs_node_20_runs_on_node_20_or_later(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    if not registry_reachable(get_settings().npm_registry):
        pytest.skip(f"the npm registry ({get_settings().npm_registry}) is unreachable")
    cache, (sha,) = repo_with_commits(tmp_path, [NEEDS_NODE_20])
    sandbox = sandbox_config(build=True, image=BASE_IMAGE, ca_bundle=HOST_CA if HOST_CA.is_file() else None)
    executor = TaskExecutor(docker_client, cache, sandbox)
    found = find_manifest_environment(executor, "o/r", sha, ["test/file.test.js"])
    assert found.recipe is not None and found.image is not None, found.problem
    assert found.recipe.base_image == "swe-forge-node:26"  # built on first need when it was missing
    labels = docker_client.images.get(found.recipe.base_image).labels
    assert labels[node_image.VERSION_LABEL].startswith("26.") and toolchain_images.BUILT_LABEL in labels
    archive = write_tree_archive(cache, "o/r", sha, tmp_path / "tree.tar")
    run = executor.run_tests(found.image, archive, [], found.recipe, ["test/file.test.js"], 300)
    assert run.outcomes == {"files has the global File of Node 20": "passed", "files adds": "passed"}, run.error

    on_18 = dataclasses.replace(found.recipe, base_image=NODE_IMAGE)
    image, _ = executor.environment_image("o/r", sha, on_18)
    run = executor.run_tests(image, archive, [], on_18, ["test/file.test.js"], 300)
    assert run.outcomes == {"files has the global File of Node 20": "failed", "files adds": "passed"}, run.error


SEED_TASK = (
    SHARED_FIXTURES / "swe-forge" / "workspaces" / "test-run" / "easy" / "noi-techpark" / "opendatahub-gtfs-api-3"
)
SEED_BUNDLE = SHARED_FIXTURES / "repos" / "noi-techpark+opendatahub-gtfs-api.bundle"


@pytest.mark.docker
@pytest.mark.real_repo
def test_the_seed_task_that_asks_for_node_20_runs_on_it_with_no_flag(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    if not SEED_TASK.is_dir() or not SEED_BUNDLE.is_file():
        pytest.skip("real fixture missing (opendatahub-gtfs-api-3 or its bundle)")
    if not registry_reachable(get_settings().npm_registry):
        pytest.skip(f"the npm registry ({get_settings().npm_registry}) is unreachable")
    remote = tmp_path / "remotes" / "noi-techpark" / "opendatahub-gtfs-api.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(SEED_BUNDLE), str(remote)], check=True, timeout=300)
    shutil.copytree(SEED_TASK, tmp_path / "in" / "opendatahub-gtfs-api-3")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWE_FORGE_") or k == "SWE_FORGE_CA_BUNDLE"}
    env |= {"SWE_FORGE_HOME": str(tmp_path / "home"), "SWE_FORGE_GIT_URL": f"file://{tmp_path}/remotes/{{repo}}.git"}
    env.pop("SWE_FORGE_DOCKER_IMAGE", None)  # no image given: the task's own runtime decides
    if HOST_CA.is_file():
        env.setdefault("SWE_FORGE_CA_BUNDLE", str(HOST_CA))

    def harness(*agent: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-m", "swe_forge_dagster.cli", "harness", "-i", str(tmp_path / "in"), "--json", *agent],
            capture_output=True,
            text=True,
            env=env,
            timeout=1200,
        )
        assert done.stdout.strip(), done.stderr[-3000:]
        (result,) = json.loads(done.stdout)["results"]
        return result

    oracle = harness("--agent", "oracle")
    assert oracle["status"] == "resolved", oracle["error"]
    labels = docker_client.images.get(oracle["image"]).labels  # its environment, built from the Node 20 image
    assert labels[FROM_LABEL] == "swe-forge-node:20" and labels[node_image.VERSION_LABEL].startswith("20."), labels
    empty = harness("--agent-dir", str(EXAMPLES / "emptyagent"), "--agent-cmd", "python3 -m emptyagent")
    assert empty["status"] == "unresolved", empty["error"]
