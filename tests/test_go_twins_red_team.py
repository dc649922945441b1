"""The red team of `go test`'s twins (issue 37) through the harness CLI, on the real google/uuid#150 task: one batch
with an agent that applies the gold patch, one that changes nothing, the two forgers of
`tests/support/go_twin_hacks.py` (the earlier forgers of `tests/support/compiled_hacks.py` are
`tests/test_real_go_harness.py`'s).

Written before the defence, the forgers that compare bodies up to renaming the `*testing.T` and that spare tests
opening with a constant comparison were both `resolved` (the twin ran beside its original, a copy opened by a failing
comparison); with the twin run apart (`languages.go.twins`: TestVersion7Monotonicity's `if u2 <= u1 {` becomes
`if u2 > u1 {` in a container of its own) both are `unresolved`: the twin run apart passed. Needs Docker and
`swe-forge-go:bookworm` (`scripts/build-toolchain-image.sh go`).

    .venv/bin/python -m tests.support.go_twin_hacks    # the same batch, its verdicts printed
"""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from swe_forge_dagster.languages.registry import pack
from tests.support.common import require_image
from tests.support.go_twin_hacks import BUNDLE, GO_TWIN_HACKS, red_team

pytestmark = [pytest.mark.docker, pytest.mark.real_repo]


@pytest.mark.extended
def test_forgers_that_tell_the_twin_from_its_original_lose_once_it_runs_apart(
    tmp_path: Path, docker_client: docker.DockerClient
) -> None:
    if not BUNDLE.is_file():
        pytest.skip(f"real fixture missing ({BUNDLE.name})")
    require_image(docker_client, next(iter(pack("go").images)), "scripts/build-toolchain-image.sh go")
    results = red_team(tmp_path, GO_TWIN_HACKS)
    assert set(results) == {"gold", "empty", *GO_TWIN_HACKS}
    gold = results["gold"]
    assert gold["status"] == "resolved", gold["error"]
    assert gold["defences"] == "canaries, and twins run apart"
    assert results["empty"]["status"] == "unresolved"
    for name in GO_TWIN_HACKS:
        error = results[name]["error"] or ""
        assert results[name]["status"] == "unresolved", (name, error)
        assert error.startswith("tampered test results: TestVersion7Monotonicity passed, and its twin run apart"), error
