"""A real Django row and a real SymPy row of SWE-bench Lite, run with the repositories' own test runners.

Django's tests run with `tests/runtests.py` and SymPy's with `bin/test` (or the runner it calls), chosen from the
repository's files (never from its name), and their ids are SWE-bench's (`test_x (module.Class)`, bare function names).
The rows come from `../shared/fixtures/swebench/django-sdists/` (a release sdist tree with the row reverse-applied) and
`../shared/fixtures/swebench/sympy-trees/` (the row's exact upstream tree) or, where that fixture is absent, SymPy's 1.9
release sdist from PyPI with the row reverse-applied (`benchmarks/rebased_rows.py sdists`, the Django fixture's method),
with their bundles as git remotes and no environment given: `swe-forge validate` must find the environment from the
manifests (no LLM) and give the row's lists id for id, the harness must resolve both with the oracle and neither with
the empty agent, and the task repository we export must be graded by SWE-bench's own `swebench eval`, with its
`parse_log_django` and `parse_log_sympy`. Both rows in one call of each command, so that the tier pays for each step
once.
Needs Docker, `swe-forge-base:bullseye` and PyPI (through the host CA bundle). A row is left out, and named, when
its fixture is absent (SymPy's: when neither its tree is in `../shared` nor its sdist can be re-based from PyPI on
the Lite rows there); the test skips only when no row is left.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import docker
import pytest
import yaml

from swe_forge_dagster.export.swebench import read_instances, write_jsonl
from tests.support.common import EXAMPLES, REPO_ROOT, SHARED_FIXTURES, cli_json, once, require_image, swebench_cli
from tests.support.compiled_hacks import hack_batch
from tests.support.real_red_team import DJANGO_CLASSES, DJANGO_HACKS, SYMPY_CLASSES, SYMPY_HACKS
from tests.support.red_team import bounded

pytestmark = [pytest.mark.docker, pytest.mark.real_repo, pytest.mark.timeout(1500)]  # two rows, every step, cold
SWEBENCH = SHARED_FIXTURES / "swebench"
ROWS = {
    "django__django-15789": ("django-sdists", "django+django-sdists.bundle", "django/django"),
    "sympy__sympy-21614": ("sympy-trees", "sympy+sympy-trees.bundle", "sympy/sympy"),
}
FROM_PYPI = {"sympy__sympy-21614": "sympy/sympy"}
"""Rows re-based on their release sdist from PyPI when their fixture is not in `../shared` (SymPy's history is too
large to bring here; its sdists carry `sympy/testing/runtests.py`, which `bin/test` calls, and the tests)."""
LITE = SWEBENCH / "lite-test-and-multilingual" / "swebench_lite_origin.jsonl"


def from_pypi(root: Path, instance_id: str) -> tuple[Path, Path]:
    """The row re-based on its release sdist, as a user makes one: `benchmarks/rebased_rows.py sdists` (its rows file
    and bundle)."""
    repo, out = FROM_PYPI[instance_id], root / "from-pypi"
    command = [sys.executable, str(REPO_ROOT / "benchmarks" / "rebased_rows.py"), "sdists", "--rows", str(LITE)]
    command += ["--repo", repo, "--out", str(out), "--cache", str(root / "sdists"), instance_id]
    subprocess.run(command, check=True, timeout=600)
    folder = f"{repo.split('/')[1]}-sdists"
    return out / "swebench" / folder / "rows.jsonl", out / "repos" / f"{repo.split('/')[0]}+{folder}.bundle"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> dict:
    require_image(docker_client, "swe-forge-base:bullseye", "scripts/build-base-image.sh swe-forge-base:bullseye")
    root = tmp_path_factory.mktemp("real-own-runners")
    instances, missing = [], []
    for instance_id, (folder, bundle, repo) in ROWS.items():
        rows, remote = SWEBENCH / folder / "rows.jsonl", SHARED_FIXTURES / "repos" / bundle
        if not (rows.is_file() and remote.is_file()) and instance_id in FROM_PYPI and LITE.is_file():
            try:
                rows, remote = from_pypi(root, instance_id)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
                print(f"{instance_id}: its release sdist could not be re-based: {exc}")  # named below, left out
        if not (rows.is_file() and remote.is_file()):
            missing.append(f"{instance_id} ({rows} or {remote})")
            continue
        target = root / "remotes" / f"{repo}.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(remote), str(target)], check=True, timeout=300)
        instances += [i for i in read_instances(rows) if i.instance_id == instance_id]
    if not instances:
        pytest.skip(f"real fixtures missing: {'; '.join(missing)}")
    if missing:
        print(f"left out, fixture missing: {'; '.join(missing)}")
    write_jsonl(instances, root / "rows.jsonl")
    return {"root": root, "instances": {i.instance_id: i for i in instances}}


def cli(world: dict, *args: str) -> dict:
    git_url = f"file://{world['root']}/remotes/{{repo}}.git"
    return cli_json(world["root"] / "home", *args, "--git-url", git_url, SWE_FORGE_START_DATE="2015-01-01")


def validated(world: dict) -> dict:
    """`swe-forge validate` of the rows, once per module: it proves the environments the harness builds after it."""
    return once(world, "rows", lambda: cli(world, "validate", "-i", str(world["root"] / "rows.jsonl")))


def test_django_and_sympy_validate_id_for_id_resolve_and_export_to_swebench(world: dict) -> None:
    rows = str(world["root"] / "rows.jsonl")
    summary = validated(world)
    for row in summary["results"]:
        given = world["instances"][row["instance_id"]]
        assert row["status"] == "valid", (row["instance_id"], row["reason"], row["differences"])
        assert sorted(row["fail_to_pass"]) == sorted(given.FAIL_TO_PASS), row["instance_id"]
        assert sorted(row["pass_to_pass"]) == sorted(given.PASS_TO_PASS), row["instance_id"]
        assert len(row["recipes_tried"]) == 1, row["recipes_tried"]  # the first guess: no ladder, no LLM
    assert {r["instance_id"] for r in summary["results"]} == set(world["instances"])

    oracle = cli(world, "harness", "-i", rows, "--agent", "oracle")
    n = len(world["instances"])
    assert (oracle["total"], oracle["resolved"]) == (n, n), [(r["task_id"], r["error"]) for r in oracle["results"]]
    assert {r["defences"] for r in oracle["results"]} == {"canaries, and twins run apart"}, oracle["results"]
    empty_agent = ("--agent-dir", str(EXAMPLES / "emptyagent"), "--agent-cmd", "python3 -m emptyagent")
    empty = cli(world, "harness", "-i", rows, *empty_agent)
    assert (empty["total"], empty["unresolved"]) == (n, n), [(r["task_id"], r["error"]) for r in empty["results"]]

    repo = world["root"] / "task-repo"
    export = cli(world, "export", "-i", rows, "-o", str(repo), "--format", "swebench-task-repo")
    assert sorted(export["tasks"]) == sorted(world["instances"]) and not export["skipped"], export
    parsers = {d.name: yaml.safe_load((d / "task.yaml").read_text())["log_parser"] for d in (repo / "tasks").iterdir()}
    expected = {"django__django-15789": "parse_log_django", "sympy__sympy-21614": "parse_log_sympy"}
    assert parsers == {i: expected[i] for i in world["instances"]}
    swebench_cli(world["root"], "eval", "swe-forge/tasks", "--gold", "--task-repo", str(repo), "--run-id", "own")
    report = json.loads((world["root"] / "gold.own.json").read_text())
    assert sorted(report["resolved_ids"]) == sorted(world["instances"]), report


SHARES = {
    "django__django-15789": bounded(DJANGO_HACKS, DJANGO_CLASSES, ()),
    "sympy__sympy-21614": bounded(SYMPY_HACKS, SYMPY_CLASSES, ()),
}
"""The extended tier's share of `tests/support/real_red_team.py`'s `django` and `sympy` corpora: a forger per defence
that catches them (the canary planted to fail: the log rewritten after the runner by a child that stopped the shell; the
twins run apart: Django's assertion oracle, SymPy's forger that spares the canaries), so that the real-repository tier
stays in its budget. `benchmarks/red_team.py django sympy` replays every forger (the patched result class, the pass
lines printed at exit and Django's canary-sparing forger as well)."""


@pytest.mark.extended
def test_console_log_forgers_never_resolve(world: dict) -> None:
    """Django's and SymPy's report is their verbose console log, which code under test writes to: before their
    canaries and twins (issue 37), each of these forgers resolved django-15789. Each is caught: the log rewritten
    after the runner by a child that stopped the shell by the canary planted to fail (it forges every failure); the
    function under test reading the assertion that calls it (Django), or sparing the canaries (SymPy), by the twins
    run apart."""
    validated(world)
    for instance_id, inst in world["instances"].items():
        row = json.loads(inst.model_dump_json())
        batch = world["root"] / f"forgers-{instance_id}"
        batch.mkdir()
        instances, agent = hack_batch(batch, row, SHARES[instance_id])
        results = cli(world, "harness", "-i", str(instances), *agent)["results"]
        won = [(r["task_id"], r["status"], r["error"]) for r in results if r["status"] != "unresolved"]
        assert not won, won
        assert all("tampered test results" in (r["error"] or "") for r in results), [r["error"] for r in results]
