"""Real merged changes of a Go module and of a Rust crate through the Dagster task partition.

google/uuid#150 (squash-merged as a2b2b32, from the bundle in `../shared/fixtures/repos/`) fixes the monotonicity
of version 7 UUIDs and changes `TestVersion7Monotonicity`. The module needs only the standard library, so the
environment comes from its manifests on the Go toolchain image (`go test -json`, no module proxy), with no
agent call; validation must find exactly that test as FAIL_TO_PASS, in the form SWE-bench Multilingual uses for
Go (`TestName`), and the exported task must record its runner. Needs Docker and `swe-forge-go:bookworm`
(`scripts/build-toolchain-image.sh go`).

dtolnay/itoa#68 (merge 73a7c03): a crate whose optional dependency (no-panic) and dev-dependency (criterion) come
from crates.io, which the sandbox cannot reach here. It must be rejected at the patch stage, naming them, before
any LLM call of the task stages (no problem statement written, no quality judgement, no agent): only the
classification that chose the PR was paid for. No Docker needed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import docker
import pytest

from swe_forge_dagster.demo.twins.openai_twin_script import forced_tool_name, tool_schemas
from swe_forge_dagster.export.swebench import read_instances, validate_instance
from swe_forge_dagster.languages.registry import pack
from tests.support.common import BASE_IMAGE, SHARED_FIXTURES, require_image
from tests.support.real_task import RealChange, run_real_change

pytestmark = [pytest.mark.docker, pytest.mark.real_repo]
BUNDLE = SHARED_FIXTURES / "repos" / "google+uuid.bundle"
ITOA_BUNDLE = SHARED_FIXTURES / "repos" / "dtolnay+itoa.bundle"
GO_IMAGE = next(iter(pack("go").images))
STATEMENT = (
    "UUIDs made by `NewV7` in quick succession are not always increasing: two UUIDs created within the same "
    "millisecond can compare out of order, although version 7 UUIDs are meant to sort by creation time. "
    "Consecutive `NewV7` results must be strictly increasing."
)
CHANGE = RealChange(
    "google/uuid",
    150,
    "a2b2b32373ff0b1a312b7fdf6d38a977099698a6",
    "Go",
    STATEMENT,
    head_ref="fix-v7-monotonicity",
    license="BSD-3-Clause",
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> dict[str, Any]:
    if not BUNDLE.is_file():
        pytest.skip(f"real fixture missing ({BUNDLE.name})")
    require_image(docker_client, GO_IMAGE, "scripts/build-toolchain-image.sh go")
    root = tmp_path_factory.mktemp("real-go-task")
    return run_real_change(root, BUNDLE, CHANGE, {"SWE_FORGE_DOCKER_IMAGE": BASE_IMAGE})


def test_a_real_go_change_becomes_a_task_from_its_manifests(built: dict[str, Any]) -> None:
    (row,) = built["rows"]
    assert built["outcome"] == {CHANGE.task_id: True}, row
    assert row["status"] == "accepted", (row["stage"], row["reason"])
    assert row["recipe_source"] == "manifest" and not built["agent_calls"]  # no LLM for environment or tests
    settings = built["settings"]
    (inst,) = read_instances(settings.layout.datasets / "swe_dataset.jsonl")
    assert inst.FAIL_TO_PASS == ["TestVersion7Monotonicity"]
    assert len(inst.PASS_TO_PASS) > 100 and all(t.startswith(("Test", "Fuzz")) for t in inst.PASS_TO_PASS)
    assert not validate_instance(inst) and inst.language == "Go"
    environment = json.loads((Path(settings.output_dir) / CHANGE.task_id / "environment.json").read_text())
    assert environment["runner"] == "go" and environment["image"].startswith("swe-forge-go:")
    assert "go test -json" in environment["test_command"]


ITOA = RealChange(
    "dtolnay/itoa",
    68,
    "73a7c03e23852fd51f9eb1ff6caa44bdb956dbed",
    "Rust",
    "Formatting 128-bit integers is slow.",
    license="MIT OR Apache-2.0",
)


def test_a_crate_that_needs_crates_io_is_rejected_before_any_task_llm_call(tmp_path: Path) -> None:
    if not ITOA_BUNDLE.is_file():
        pytest.skip(f"real fixture missing ({ITOA_BUNDLE.name})")
    built = run_real_change(tmp_path, ITOA_BUNDLE, ITOA, {"SWE_FORGE_DOCKER_IMAGE": BASE_IMAGE})
    (row,) = built["rows"]
    assert (row["status"], row["stage"]) == ("rejected", "patch"), row["reason"]
    assert "criterion" in row["reason"] and "no-panic" in row["reason"] and "crates.io" in row["reason"]
    asked = [forced_tool_name(r.json or {}) or sorted(tool_schemas(r.json or {})) for r in built["requests"]]
    assert not {"write_problem_statement", "score_task"} & {name for name in asked if isinstance(name, str)}
    assert not built["agent_calls"] and not read_instances_or_none(built["settings"])


def read_instances_or_none(settings: object) -> list:
    path = settings.layout.datasets / "swe_dataset.jsonl"  # type: ignore[attr-defined]
    return read_instances(path) if path.is_file() and path.read_text().strip() else []
