"""Era-true Node environments (issue 22 item 1 for npm): a package without a lock file resolves as of its commit
with npm's `before`, when the registry's publish times can be trusted.

Fast: which commits get an era recipe (old, no lock file, a dependency to ask about); the date step run by bash
with a stand-in `npm` and `node` on PATH (the registry answers `time.created`: `npm_config_before` is the commit's
date; it does not: today's releases, and the record says why). Docker: a 2021 mocha package built for real
against the npm registry this machine reaches, whose publish times are rewritten (no `time.created`): the
environment installs today's releases, which need a newer Node than Debian's 18 (today's mocha does not start on
it), so it is built on the newest LTS from npm; its tests pass, and the image's labels say which and why.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.execution.languages.node import PACK
from swe_forge_dagster.execution.languages.node_era import NOT_PLAUSIBLE, RECORD_SCRIPT, probe_package
from swe_forge_dagster.execution.recipe import RUNTIME_FILE
from swe_forge_dagster.execution.repo_box import write_tree_archive
from swe_forge_dagster.execution.runtime_record import runtime_record
from swe_forge_dagster.execution.sandbox import SandboxConfig
from swe_forge_dagster.execution.toolchains import registry_reachable
from swe_forge_dagster.settings import get_settings
from swe_forge_dagster.tasks.manifest_env import find_manifest_environment
from swe_forge_dagster.tasks.prove import TaskExecutor
from tests.support.common import BASE_IMAGE
from tests.support.dated_repo import dated_repo

OLD = datetime(2021, 3, 1, 12, tzinfo=UTC)
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
PACKAGE = {
    "name": "tiny",
    "version": "1.0.0",
    "scripts": {"test": "mocha"},
    "devDependencies": {"mocha": "*"},
}
FILES = {
    "package.json": json.dumps(PACKAGE),
    "index.js": "module.exports = (a, b) => a + b;\n",
    "test/add.test.js": (
        "const assert = require('assert');\nconst add = require('../index.js');\n"
        "describe('add', () => { it('adds', () => assert.strictEqual(add(1, 2), 3)); });\n"
    ),
}
IMAGE = "swe-forge-node:bookworm"


def era(files: dict[str, str], tree: set[str], committed: datetime | None = OLD) -> list:
    assert PACK.era_recipes is not None
    return PACK.era_recipes(files, tree, IMAGE, committed)


def test_an_old_package_without_a_lock_file_gets_an_era_recipe_first() -> None:
    (recipe,) = era(FILES, set(FILES))
    date, install = recipe.install_commands
    assert "npm view mocha time.created" in date and "npm_config_before" in date
    assert install.startswith("npm install ") and install.endswith(f"sh {RECORD_SCRIPT}")
    assert era(FILES, {*FILES, "package-lock.json"}) == [] and era(FILES, {*FILES, "yarn.lock"}) == []  # pinned
    assert era(FILES, set(FILES), datetime.now(UTC)) == [] and era(FILES, set(FILES), None) == []  # young, unknown
    assert era({"package.json": json.dumps({"devDependencies": {}})}, set()) == []  # nothing to resolve
    assert probe_package({"devDependencies": {"$(reboot)": "1", "Mocha": "1", "@scope/x": "1"}}) == "@scope/x"


@pytest.mark.parametrize(
    ("created", "before", "rung"),
    [
        ("2011-11-29T00:00:00.000Z", "2021-03-01T12:00:00Z", "manifest-era"),
        ("", "", "manifest"),  # the registry's times are rewritten
    ],
    ids=["plausible", "rewritten"],
)
def test_the_date_step_uses_before_only_when_the_registry_can_be_trusted(
    tmp_path: Path, created: str, before: str, rung: str
) -> None:
    """The era recipe's steps, run by bash as one `&&` line (as an exported task joins them), with `npm` and `node`
    stand-ins on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(
        f'#!/bin/sh\ncase "$1" in view) echo "{created}";; -v) echo 10.9.9;; *) echo "before=$npm_config_before"'
        f" > {tmp_path}/installed;; esac\n"
    )
    (bin_dir / "node").write_text("#!/bin/sh\necho v20.20.2\n")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    (recipe,) = era(FILES, set(FILES))
    script = " && ".join(recipe.install_commands)
    script = script.replace(RECORD_SCRIPT, str(tmp_path / "record")).replace(RUNTIME_FILE, str(tmp_path / "runtime"))
    script = script.replace("mkdir -p /.swe-forge-env", f"mkdir -p {tmp_path}")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    subprocess.run(["bash", "-c", script], env=env, check=True, timeout=30)
    assert (tmp_path / "installed").read_text().strip() == f"before={before}"
    record = dict(line.split("=", 1) for line in (tmp_path / "runtime").read_text().splitlines())
    assert record["rung"] == rung and record["node-version"] == "20.20.2" and record["npm-version"] == "10.9.9"
    assert record["resolution-date"] == (before or "none")
    assert ("resolution-note" in record) == (not before)


@pytest.mark.docker
def test_a_2021_package_on_this_registry_installs_todays_releases_and_says_why(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    if not registry_reachable(get_settings().npm_registry):
        pytest.skip(f"the npm registry ({get_settings().npm_registry}) is unreachable")
    cache, sha = dated_repo(tmp_path, FILES, OLD.isoformat())
    sandbox = SandboxConfig(image=BASE_IMAGE, ca_bundle=HOST_CA if HOST_CA.is_file() else None)
    executor = TaskExecutor(docker_client, cache, sandbox)
    found = find_manifest_environment(executor, "o/r", sha, ["test/add.test.js"])
    assert found.recipe is not None and found.image is not None, found.problem
    assert "npm_config_before" in found.recipe.install_commands[0]  # an era recipe
    record = runtime_record(executor.client, found.image)
    assert record["node-version"] and record["npm-version"], record
    if record["rung"] == "manifest-era":  # a registry with real publish times: 2021's mocha, on Debian's Node
        assert record["resolution-date"] == "2021-03-01T12:00:00Z" and not found.tried, record
    else:  # this machine's registry rewrites them: today's releases, and why; today's mocha needs more than Node 18
        assert record["resolution-date"] == "none" and record["resolution-note"] == NOT_PLAUSIBLE, record
        assert found.rung == "manifest" and found.recipe.base_image == "swe-forge-node:26", found.recipe
        (on_18,) = found.tried
        assert on_18.startswith("swe-forge-node:bookworm: ") and "Node.js v18" in on_18
    archive = write_tree_archive(cache, "o/r", sha, tmp_path / "tree.tar")
    run = executor.run_tests(found.image, archive, [], found.recipe, ["test/add.test.js"], 300)
    assert run.outcomes == {"add adds": "passed"}, run.error
