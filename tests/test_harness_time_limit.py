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
from swe_forge_dagster.harness import Harness, HarnessConfig, Status, load_inputs, run_harness
from swe_forge_dagster.harness.sanity import sized_timeout
from tests.support.common import BASE_IMAGE
from tests.support.pytest_task import write_pytest_task

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


def slow_task(tmp_path: Path) -> Path:
    return write_pytest_task(
        tmp_path,
        "slow-co/slowcalc",
        (
            {"slowcalc/__init__.py": "def value():\n    return 0\n"},
            {"slowcalc/__init__.py": "import time\n\ntime.sleep(10)\n\n\ndef value():\n    return 1\n"},
        ),
        {"tests/test_slowcalc.py": SLOW_TESTS},
        ["tests/test_slowcalc.py::test_value"],
        ["tests/test_slowcalc.py::test_fast"],
        "value() should be 1",
    )


@pytest.mark.extended
@pytest.mark.parametrize("limit", [15, 6], ids=["verify-over-the-limit", "sanity-over-the-limit"])
def test_a_run_slower_than_the_configured_limit_is_judged_within_a_limit_sized_from_what_ran(
    docker_client: docker.DockerClient, tmp_path: Path, limit: float
) -> None:
    """15 s: the sanity run (about 9 s) fits and the verification run (about 18 s) gets three times the sanity run's
    time. 6 s: the sanity run itself is stopped by the limit, and is made once more with three times the room (no
    agent code runs there: the limit stopped it, not the task); before, the task ended `sanity_fail`."""
    tasks = slow_task(tmp_path)
    config = HarnessConfig(
        repo_cache_dir=tmp_path / "harness-repos",
        git_url=f"file://{tmp_path}/remotes/{{repo}}.git",
        sandbox=SandboxSpec(image=BASE_IMAGE),
        test_timeout=limit,
        agent="oracle",
    )
    with Harness(config, client=docker_client) as harness:
        (verdict,) = run_harness(load_inputs(tasks, default_image=BASE_IMAGE), config, harness=harness)
    assert verdict.status is Status.RESOLVED, verdict.reason
    assert verdict.test_duration_secs > config.test_timeout  # the sanity run (or, at 15 s, the verify run) took longer
