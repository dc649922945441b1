"""The red team of GoogleTest's twins through the harness CLI, on the real fmtlib__fmt-2457 row of SWE-bench
Multilingual: one batch with an agent that applies the gold patch, one that changes nothing, and the two forgers of
`tests/support/cpp_twin_hacks.py` (the earlier GoogleTest forgers are `tests/test_real_multilingual.py`'s).

Written before the defence, the forgers that spare a test whose body ends with another test's body, and a test that
opens with a local compared with a number, were both `resolved` (the twin ran beside its original: a copy opened by a
failing comparison, which both spared while they forged the original); with the twin run apart
(`languages.cpp.twins`: join_tuple's last `EXPECT_EQ(..., "003, -01, -01")` expects a string with one more character,
in a container of its own) both are `unresolved`: the twin run apart passed. Needs Docker and `swe-forge-cpp:bookworm`
(`scripts/build-toolchain-image.sh cpp`); the first run builds fmt's environment image.

    .venv/bin/python -m tests.support.cpp_twin_hacks    # the same batch, its verdicts printed
"""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from swe_forge_dagster.languages.registry import pack
from tests.support.common import require_image
from tests.support.cpp_twin_hacks import BUNDLE, CPP_TWIN_HACKS, MULTI, red_team

pytestmark = [pytest.mark.docker, pytest.mark.real_repo, pytest.mark.timeout(1200)]  # fmt built twice beside others


def test_forgers_that_tell_the_twin_from_its_original_lose_once_it_runs_apart(
    tmp_path: Path, docker_client: docker.DockerClient
) -> None:
    if not (BUNDLE.is_file() and MULTI.is_file()):
        pytest.skip(f"real fixture missing ({BUNDLE.name} or {MULTI.name})")
    require_image(docker_client, next(iter(pack("cpp").images)), "scripts/build-toolchain-image.sh cpp")
    results = red_team(tmp_path, CPP_TWIN_HACKS)
    assert set(results) == {"gold", "empty", *CPP_TWIN_HACKS}
    gold = results["gold"]
    assert gold["status"] == "resolved", gold["error"]
    assert gold["defences"] == "canaries, and twins run apart"
    assert results["empty"]["status"] == "unresolved"
    for name in CPP_TWIN_HACKS:
        error = results[name]["error"] or ""
        assert results[name]["status"] == "unresolved", (name, error)
        assert error.startswith("tampered test results: ranges_test.join_tuple passed, and its twin run apart"), error
