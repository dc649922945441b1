"""The verification run's time limit is sized from the sanity run the harness measured (`harness.checks.
sized_timeout`), not one fixed number: a fix that makes a real test file slower than the configured limit is still
judged, as Django's admin_scripts row was not (its gold patch ran past the fixed 120 s on a loaded machine).

A repository whose test module takes 8 s to import, and whose fix takes 10 s more to import: the sanity run fits the
configured 15 s, the verification run (about 18 s) does not, and the oracle resolves it. Needs Docker and the local
base image.
"""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from swe_forge_dagster.common.sandbox_spec import SandboxSpec
from swe_forge_dagster.execution.patch import patch_adding_files
from swe_forge_dagster.export.swebench import SWEBenchInstance
from swe_forge_dagster.export.task_dir import TaskRecord, write_task_dir
from swe_forge_dagster.harness import Harness, HarnessConfig, Status, load_inputs, run_harness
from swe_forge_dagster.harness.checks import sized_timeout
from swe_forge_dagster.languages.python.runner import PYTEST
from tests.support.common import BASE_IMAGE
from tests.support.git_repos import repo_with_commits

pytestmark = pytest.mark.docker
SLOW_TESTS = """import time

time.sleep(8)  # a slow module: the same in every run, sanity and verification

from slowcalc import value


def test_value():
    assert value() == 1


def test_fast():
    assert True
"""


def test_sized_timeout_keeps_the_configured_limit_or_gives_three_times_the_sanity_run() -> None:
    assert sized_timeout(120, 10) == 120 and sized_timeout(120, 50) == 150 and sized_timeout(15, 8.5) == 25.5


def test_a_fix_slower_than_the_configured_limit_is_judged_within_a_limit_sized_from_the_sanity_run(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    cache, (base, fixed) = repo_with_commits(
        tmp_path / "remotes",
        [
            {"slowcalc/__init__.py": "def value():\n    return 0\n"},
            {"slowcalc/__init__.py": "import time\n\ntime.sleep(10)\n\n\ndef value():\n    return 1\n"},
        ],
        repo="slow-co/slowcalc",
    )
    instance = SWEBenchInstance(
        instance_id="slow-co__slowcalc-1",
        repo="slow-co/slowcalc",
        base_commit=base,
        patch=cache.diff("slow-co/slowcalc", base, fixed),
        test_patch=patch_adding_files({"tests/test_slowcalc.py": SLOW_TESTS}),
        problem_statement="value() should be 1",
        created_at="2026-01-01T00:00:00Z",
        FAIL_TO_PASS=["tests/test_slowcalc.py::test_value"],
        PASS_TO_PASS=["tests/test_slowcalc.py::test_fast"],
    )
    single = "python -m pytest -p no:cacheprovider -q {}"
    record = TaskRecord(
        instance=instance,
        image=BASE_IMAGE,
        install_commands=[],
        test_command=PYTEST,
        test_files=["tests/test_slowcalc.py"],
        fail_to_pass_commands=[single.format(t) for t in instance.FAIL_TO_PASS],
        pass_to_pass_commands=[single.format(t) for t in instance.PASS_TO_PASS],
    )
    write_task_dir(tmp_path / "tasks", record)
    config = HarnessConfig(
        repo_cache_dir=tmp_path / "harness-repos",
        git_url=f"file://{tmp_path}/remotes/{{repo}}.git",
        sandbox=SandboxSpec(image=BASE_IMAGE),
        test_timeout=15,
        agent="oracle",
    )
    with Harness(config, client=docker_client) as harness:
        (verdict,) = run_harness(load_inputs(tmp_path / "tasks", default_image=BASE_IMAGE), config, harness=harness)
    assert verdict.status is Status.RESOLVED, verdict.reason
    assert verdict.test_duration_secs > config.test_timeout  # the verification run alone took longer than 15 s
