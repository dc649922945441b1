"""Era-true Node environments (issue 22 item 1 for npm): a package without a lock file resolves as of its commit
with npm's `before`, when the registry's publish times can be trusted.

Fast: the host asks a registry twin on 127.0.0.1 whether a packument has `time.created`; which commits get an era
recipe (old, no lock file npm reads, a registry to trust); the era steps run by bash as one `&&` line with stand-in
`npm` and `node` on PATH (`npm_config_before` reaches the install alone). Docker: a 2021 mocha package built for
real against the npm registry this machine reaches, whose publish times are rewritten (no `time.created`): no era
recipe, today's releases, which need a newer Node than Debian's 18 (today's mocha does not start on it), so the
environment is built on the newest LTS from npm; its tests pass, and nothing of the resolution stays in the
image's environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.era import RESOLUTION_VAR
from swe_forge_dagster.execution.recipe import RUNTIME_FILE, EnvRecipe
from swe_forge_dagster.execution.repo_box import write_tree_archive
from swe_forge_dagster.execution.runtime_record import runtime_record
from swe_forge_dagster.execution.toolchains import registry_reachable
from swe_forge_dagster.languages.node import pack as node
from swe_forge_dagster.languages.node.era import RECORD_SCRIPT, dates_plausible
from swe_forge_dagster.languages.node.pack import PACK
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


@pytest.fixture
def npm_twin() -> Iterator[str]:
    """A registry on 127.0.0.1 that serves packuments: `mocha` with real publish times, `chai` with rewritten ones
    (no `time.created`, as the registry this machine reaches), anything else 404."""
    packuments = {
        "/mocha": {"name": "mocha", "time": {"created": "2011-11-29T01:17:21.112Z", "8.3.0": "2021-02-11T00:00:00Z"}},
        "/chai": {"name": "chai", "time": {"2.4.2": "2024-02-27T00:00:00Z"}},
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(packuments[self.path]).encode() if self.path in packuments else b"{}"
            self.send_response(200 if self.path in packuments else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def era(files: dict[str, str], tree: set[str], committed: datetime | None = OLD) -> list[EnvRecipe]:
    assert PACK.era_recipes is not None
    return PACK.era_recipes(files, tree, IMAGE, committed)


def test_the_registry_is_asked_whether_its_publish_times_can_be_trusted(npm_twin: str) -> None:
    assert dates_plausible("mocha", npm_twin) and not dates_plausible("chai", npm_twin)
    assert not dates_plausible("left-pad", npm_twin)  # 404
    assert not dates_plausible("mocha", "http://127.0.0.1:9")  # nothing answers: no era, today's releases
    assert not dates_plausible("$(reboot)", npm_twin)  # not a package name: never asked


def test_an_old_package_without_a_lock_file_gets_an_era_recipe_first(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    monkeypatch.setattr(node, "dates_plausible", lambda name: asked.append(name) or True)  # the twin test above
    (recipe,) = era(FILES, set(FILES))
    date, install = recipe.install_commands
    assert date.startswith(f"export {RESOLUTION_VAR}=2021-03-01T12:00:00Z ") and asked == ["mocha"]  # the runner
    assert install.startswith(f'npm_config_before="${RESOLUTION_VAR}" npm install ')  # the install's alone
    assert install.endswith(f"sh {RECORD_SCRIPT}")
    assert era(FILES, {*FILES, "package-lock.json"}) == [] and era(FILES, {*FILES, "yarn.lock"}) == []  # pinned
    assert len(era(FILES, {*FILES, "pnpm-lock.yaml"})) == 1  # npm install does not read pnpm's lock
    assert era(FILES, set(FILES), datetime.now(UTC)) == [] and era(FILES, set(FILES), None) == []  # young, unknown
    monkeypatch.setattr(node, "dates_plausible", lambda name: False)
    assert era(FILES, set(FILES)) == []  # a registry whose times are rewritten: today's releases only


def test_the_era_steps_give_before_to_the_install_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The era recipe's steps, run by bash as one `&&` line (as an exported task joins them), with `npm` and `node`
    stand-ins on PATH: the install sees `npm_config_before`, the shell after it does not."""
    monkeypatch.setattr(node, "dates_plausible", lambda name: True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(
        f'#!/bin/sh\ncase "$1" in -v) echo 10.9.9;; *) echo "before=$npm_config_before" > {tmp_path}/installed;; esac\n'
    )
    (bin_dir / "node").write_text("#!/bin/sh\necho v20.20.2\n")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    (recipe,) = era(FILES, set(FILES))
    script = " && ".join([*recipe.install_commands, 'echo "after=${npm_config_before:-}"'])
    script = script.replace(RECORD_SCRIPT, str(tmp_path / "record")).replace(RUNTIME_FILE, str(tmp_path / "runtime"))
    script = script.replace("mkdir -p /.swe-forge-env", f"mkdir -p {tmp_path}")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", script], env=env, check=True, timeout=30, capture_output=True, text=True)
    assert (tmp_path / "installed").read_text().strip() == "before=2021-03-01T12:00:00Z"
    assert done.stdout.strip() == "after="
    record = dict(line.split("=", 1) for line in (tmp_path / "runtime").read_text().splitlines())
    assert record == {
        "node-version": "20.20.2",
        "npm-version": "10.9.9",
        "resolution-date": "2021-03-01T12:00:00Z",
        "rung": "manifest-era",
    }


@pytest.mark.docker
def test_a_2021_package_on_this_registry_installs_todays_releases_on_a_node_they_run_on(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    if not registry_reachable(get_settings().npm_registry):
        pytest.skip(f"the npm registry ({get_settings().npm_registry}) is unreachable")
    cache, sha = dated_repo(tmp_path, FILES, OLD.isoformat())
    sandbox = sandbox_config(build=True, image=BASE_IMAGE, ca_bundle=HOST_CA if HOST_CA.is_file() else None)
    executor = TaskExecutor(docker_client, cache, sandbox)
    found = find_manifest_environment(executor, "o/r", sha, ["test/add.test.js"])
    assert found.recipe is not None and found.image is not None, found.problem
    if dates_plausible("mocha"):  # a registry with real publish times: 2021's mocha, on Debian's Node
        assert found.rung == "manifest-era" and not found.tried, found.tried
        assert runtime_record(executor.client, found.image)["resolution-date"] == "2021-03-01T12:00:00Z"
    else:  # this machine's registry rewrites them: today's releases, which need more than Debian's Node 18: the
        # next image of the ladder, trixie's Node 20 (its base image built on first need) or the newest LTS
        images = ("swe-forge-node:trixie", "swe-forge-node:26")
        assert found.rung == "manifest" and found.recipe.base_image in images, found.recipe
        assert all(attempt.startswith("swe-forge-node:bookworm: npm install") for attempt in found.tried)
        assert any("Node.js v18" in attempt for attempt in found.tried), found.tried
    env = docker_client.images.get(found.image).attrs["Config"].get("Env") or []
    assert not any(v.startswith(("npm_config_before=", f"{RESOLUTION_VAR}=")) for v in env), env
    archive = write_tree_archive(cache, "o/r", sha, tmp_path / "tree.tar")
    run = executor.run_tests(found.image, archive, [], found.recipe, ["test/add.test.js"], 300)
    assert run.outcomes == {"add adds": "passed"}, run.error
