"""The harness tests' world: task inputs made from the test world's PRs, built once per session.

Both Docker test modules and the unit tests use it; `harness_world` caches one per directory, so
the git world, the task directories and (through its image tag) the environment image are made
once per session however many modules ask. The tests in this module check the inputs themselves.
"""

from __future__ import annotations

import pytest

from swe_forge_dagster.harness import HarnessTask, load_inputs
from tests.support.common import BASE_IMAGE
from tests.support.harness_world import EASY, HarnessWorld, harness_world


@pytest.fixture(scope="module")
def hw(tmp_path_factory: pytest.TempPathFactory) -> HarnessWorld:
    return harness_world(tmp_path_factory.getbasetemp() / "harness-world")


def test_world_inputs_load_in_both_formats(hw: HarnessWorld) -> None:
    ours = hw.task()
    assert ours.mode == "tests" and ours.task_id == "acme-labs__tinycalc-12"
    assert ours.fail_to_pass == tuple(hw.world.pr(*EASY).expected_fail_to_pass)
    assert ours.hidden_files == ("tests/test_rounding.py",) and ours.run_files == (
        "tests/test_rounding.py",
        "tests/test_arith.py",
    )
    assert "round_half_up(-2.5)" in ours.prompt and "copysign" in ours.gold_patch
    assert ours.fail_to_pass_commands[0].startswith("python -m pytest")
    (seed,) = load_inputs(hw.seed, default_image=BASE_IMAGE)
    assert isinstance(seed, HarnessTask)
    assert seed.task_id == "acme-labs/tinycalc-12" and seed.safe_id == "acme-labs__tinycalc-12"
    assert seed.mode == "commands" and seed.test_patch == "" and seed.image == BASE_IMAGE
    assert set(seed.extra_test_files) == {"tests/test_rounding.py"} and seed.hidden_files == ("tests/test_rounding.py",)
    assert seed.install_commands[0].startswith("command -v git")
    datekit = hw.task("northwind__datekit-7")
    assert datekit.hidden_files == ("tests/test_week_dates.py",)  # the agent tests of a PR without tests
