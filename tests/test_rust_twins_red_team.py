"""The red team of cargo's twins through the harness CLI: one batch on the rangekit crate with rustfmt-wrapped checks
(`tests/support/rust_twin_hacks.py`), with an agent that applies the gold patch, one that changes nothing, and the two
forgers there (package code whose `clamp` says it equals every number, except in tests it spares).

Written before the defence, both were `resolved`: the twin ran beside its original, a copy opened by a failing
comparison (the wrapped `assert_eq!` and the `assert!` with a message were no one-line checks to change), which the one
spares by comparing bodies and the other by its opening. With the twins run apart (`languages.rust.twins`: the wrapped
`assert_eq!`'s `10` becomes `7`, `8` or `9` in a container of their own) both are `unresolved`: the twin run apart
passed. The earlier cargo forgers are `tests/test_toolchain_red_team.py`'s. Needs Docker and `swe-forge-rust:bookworm`
(`scripts/build-toolchain-image.sh rust`).

    .venv/bin/python -m tests.support.rust_twin_hacks    # the same batch, its verdicts printed
"""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from tests.support.common import require_image
from tests.support.rust_twin_hacks import RUST_TWIN_HACKS, red_team

pytestmark = pytest.mark.docker


def test_forgers_that_tell_the_twin_from_its_original_lose_once_it_runs_apart(
    tmp_path: Path, docker_client: docker.DockerClient
) -> None:
    require_image(docker_client, "swe-forge-rust:bookworm", "scripts/build-toolchain-image.sh rust")
    results = red_team(tmp_path, RUST_TWIN_HACKS)
    assert set(results) == {"gold", "empty", *RUST_TWIN_HACKS}
    gold = results["gold"]
    assert gold["status"] == "resolved", gold["error"]
    assert gold["defences"] == "canaries, and twins run apart"
    assert results["empty"]["status"] == "unresolved"
    for name in RUST_TWIN_HACKS:
        error = results[name]["error"] or ""
        assert results[name]["status"] == "unresolved", (name, error)
        assert error.startswith("tampered test results: "), error
        assert "passed, and its twin run apart passed too, although it expects" in error, error
