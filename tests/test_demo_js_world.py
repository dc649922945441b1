"""The demo world's JavaScript repository is real and its ground truth is right.

`initech/slug-lite#4` is judged by the task pipeline against its expected lists, so they are checked
here the way `tests/test_git_world.py` checks the Python PRs, with the project's own tool: mocha
(installed by `npm ci` from the committed lock file) runs in the Node toolchain image at base with the
PR's test file and at the merge commit, and its own JSON report gives the full titles.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.demo.worlds.git_world import GitWorld, build_git_world, enriched_pr_rows
from swe_forge_dagster.demo.worlds.git_world_js import JS_REPO
from swe_forge_dagster.demo.worlds.task_world import build_task_world
from swe_forge_dagster.environments.candidates import environment_candidates
from swe_forge_dagster.execution import toolchains
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.toolchains import registry_reachable
from swe_forge_dagster.languages.node.pack import NODE_IMAGE
from swe_forge_dagster.settings import get_settings
from tests.support.common import require_image

HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> GitWorld:
    return build_git_world(tmp_path_factory.mktemp("js-world"), javascript=True)


def git(world: GitWorld, repo: str, *args: str) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(world.root), GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
    return subprocess.run(
        ["git", "--git-dir", str(world.remote(repo)), *args], env=env, capture_output=True, check=True
    ).stdout


def export(world: GitWorld, sha: str, dest: Path, overlay: dict[str, bytes]) -> Path:
    with tarfile.open(fileobj=io.BytesIO(git(world, JS_REPO, "archive", "--format=tar", sha))) as tar:
        tar.extractall(dest, filter="data")
    for path, content in overlay.items():
        (dest / path).write_bytes(content)
    return dest


def test_the_javascript_pr_is_a_real_npm_package_with_mocha_tests(world: GitWorld, tmp_path: Path) -> None:
    pr = world.pr(JS_REPO, 4)
    assert (pr.src_files, pr.test_files, pr.language) == (["lib/slugify.js"], ["test/slugify.test.js"], "JavaScript")
    package = json.loads(pr.base_tree["package.json"])
    lock = json.loads(pr.base_tree["package-lock.json"])
    assert package["scripts"]["test"] == "mocha" and package["devDependencies"] == {"mocha": "^10.2.0"}
    assert lock["lockfileVersion"] == 3 and lock["packages"][""]["devDependencies"] == package["devDependencies"]
    assert lock["packages"]["node_modules/mocha"]["version"].startswith("10.")
    assert (
        pr.base_tree["package-lock.json"].endswith(b"}\n")
        and b'\n  "name": "slug-lite",' in pr.base_tree["package-lock.json"]
    )  # as npm writes it
    assert pr.issue is not None and pr.issue.number == 3 and "#3" in pr.body
    assert sorted(git(world, JS_REPO, "diff", "--name-only", pr.base_sha, pr.head_sha).decode().split()) == [
        "lib/slugify.js",
        "test/slugify.test.js",
    ]
    row = next(r for r in enriched_pr_rows(world) if r["repo_name"] == JS_REPO)
    assert (row["language"], row["number"], row["file_paths"]) == ("JavaScript", 4, pr.file_paths)


def test_the_python_world_is_unchanged_by_the_javascript_repository(world: GitWorld, tmp_path: Path) -> None:
    python = build_git_world(tmp_path / "python")
    assert JS_REPO not in {pr.repo for pr in python.prs}
    shas = {(p.repo, p.number): (p.base_sha, p.head_sha, p.merge_commit_sha) for p in python.prs}
    both = {(p.repo, p.number): (p.base_sha, p.head_sha, p.merge_commit_sha) for p in world.prs}
    assert {key: both[key] for key in shas} == shas and len(both) == len(shas) + 1


def test_the_demo_task_world_puts_it_in_the_newest_hour(tmp_path: Path) -> None:
    task_world = build_task_world(tmp_path, noise_events=5, javascript=True)
    assert [(pr.repo, pr.number) for pr in task_world.prs_in(0)] == [
        ("acme-labs/tinycalc", 12),
        ("globex-oss/yaml-lite", 3),
        (JS_REPO, 4),
    ]
    assert task_world.github.repos[JS_REPO].language == "JavaScript"
    assert task_world.github.repos["acme-labs/tinycalc"].language == "Python"
    assert [(pr.repo, pr.number) for pr in build_task_world(tmp_path / "py", noise_events=5).prs_in(0)] == [
        ("acme-labs/tinycalc", 12),
        ("globex-oss/yaml-lite", 3),
    ]


def test_its_environment_is_npm_ci_and_mocha_on_the_node_image_or_a_reason(
    world: GitWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the patch and environment stages get from the manifests: with the Node image, `npm ci` (the lock file
    is committed) and the mocha adapter; without it, no recipe and the reason the demo prints."""
    monkeypatch.setattr(toolchains, "registry_reachable", lambda url: True)
    pr = world.pr(JS_REPO, 4)
    cache = RepoCache(tmp_path / "cache", world.url_template)
    cache.fetch(JS_REPO, [pr.base_sha])
    found = environment_candidates(cache, JS_REPO, pr.base_sha, pr.src_files, available=lambda tag: tag == NODE_IMAGE)
    assert (found.toolchain, found.problem) == ("node", None)
    recipe = found.recipes[0]
    assert (recipe.base_image, recipe.install_commands[0].split()[:2]) == (NODE_IMAGE, ["npm", "ci"])
    assert recipe.test_command.startswith("npx --no-install mocha")
    missing = environment_candidates(cache, JS_REPO, pr.base_sha, pr.src_files, available=lambda tag: False)
    assert not missing.buildable and missing.recipes == []
    assert missing.problem == "no node toolchain image on this Docker engine (scripts/build-toolchain-image.sh node)"


@pytest.mark.docker
def test_expected_lists_are_what_mocha_says(
    world: GitWorld, tmp_path: Path, docker_client: docker.DockerClient
) -> None:
    require_image(docker_client, NODE_IMAGE, "scripts/build-toolchain-image.sh node")
    if not registry_reachable(get_settings().npm_registry):
        pytest.skip(f"the npm registry ({get_settings().npm_registry}) is unreachable: mocha cannot be installed")
    pr = world.pr(JS_REPO, 4)
    export(world, pr.base_sha, tmp_path / "before", {path: pr.head_tree[path] for path in pr.test_files})
    export(world, pr.merge_commit_sha, tmp_path / "after", {})
    mocha = "npx --no-install mocha --reporter json --reporter-option output=/trees/{0}.json || true"
    script = " && ".join(
        [
            "cd /trees/before",
            "npm ci --no-audit --no-fund --loglevel=error",
            "cp -r node_modules ../after/",
            mocha.format("before"),
            "cd /trees/after",
            mocha.format("after"),
        ]
    )
    volumes = {str(tmp_path): {"bind": "/trees", "mode": "rw"}}
    environment = {}
    if HOST_CA.is_file():
        volumes[str(HOST_CA)] = {"bind": str(HOST_CA), "mode": "ro"}
        environment["NODE_EXTRA_CA_CERTS"] = str(HOST_CA)
    container = docker_client.containers.run(
        NODE_IMAGE, ["bash", "-c", script], volumes=volumes, environment=environment, detach=True
    )
    try:
        assert container.wait(timeout=300)["StatusCode"] == 0, container.logs()[-3000:].decode()
    finally:
        container.remove(force=True)

    def outcomes(name: str) -> dict[str, str]:
        report = json.loads((tmp_path / f"{name}.json").read_text())
        return {t["fullTitle"]: "passed" for t in report["passes"]} | {
            t["fullTitle"]: "failed" for t in report["failures"]
        }

    before, after = outcomes("before"), outcomes("after")
    assert set(after.values()) == {"passed"} and set(before) == set(after)
    assert sorted(t for t in after if before[t] == "failed") == pr.expected_fail_to_pass
    assert sorted(t for t in after if before[t] == "passed") == pr.expected_pass_to_pass
