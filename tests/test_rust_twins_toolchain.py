"""cargo's twins under the real toolchain (`swe-forge-rust:bookworm`'s Rust 1.63, `cargo test` with libtest's JSON, as
the cargo runner runs it): on the crate of `tests/support/rust_crate.py`, whose tests check in every form a twin
changes, the fixed code passes every test and every twin compiles and fails, whatever seed drew its value, and the run
apart is judged clean; a `clamp` whose result says it equals every number passes the twins that expect another number
from it, and `CargoCanaries.apart_tampering` catches it. One container runs every case."""

from __future__ import annotations

import random

import docker
import pytest

from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.languages.rust.canaries import CargoCanaries
from swe_forge_dagster.languages.rust.pack import parse_libtest
from swe_forge_dagster.languages.rust.twins import FileTwins, make_twins
from tests.support.common import require_image
from tests.support.rust_crate import EXPECT_ANOTHER_CLAMP, NAMES, TESTS, write_crate

pytestmark = pytest.mark.docker
IMAGE = "swe-forge-rust:bookworm"
SEEDS = range(3)
COMMAND = "RUSTC_BOOTSTRAP=1 cargo test --offline --test calc -- -Z unstable-options --format json"


def twins(seed: int) -> FileTwins:
    made = make_twins("tests/calc.rs", TESTS, NAMES, random.Random(seed))
    assert made is not None and sorted(twin.name for twin in made.twins) == sorted(NAMES)
    return made


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> dict[str, dict[str, Outcome]]:
    """Every case's libtest outcomes, from one container (one target directory, so the crate builds once per case)."""
    require_image(docker_client, IMAGE, "scripts/build-toolchain-image.sh rust")
    root = tmp_path_factory.mktemp("rust-twins")
    src, out = root / "src", root / "out"
    out.mkdir()
    cases = {"orig": (TESTS, False), **{f"twins-{seed}": (twins(seed).content.decode(), False) for seed in SEEDS}}
    cases |= {"always-equal-orig": (TESTS, True), "always-equal-twins": (twins(0).content.decode(), True)}
    for name, (tests, always_equal) in cases.items():
        write_crate(src / name, tests, always_equal)
    script = [
        f"cp -r /src/{name} /w-{name} && cd /w-{name} && CARGO_TARGET_DIR=/target {COMMAND} > /out/{name}.json"
        f" 2> /out/{name}.err"
        for name in cases
    ]
    docker_client.containers.run(
        IMAGE,
        ["sh", "-c", "; ".join([*script, "true"])],
        volumes={str(src): {"bind": "/src", "mode": "ro"}, str(out): {"bind": "/out", "mode": "rw"}},
        network_mode="none",
        remove=True,
    )
    found = {name: parse_libtest((out / f"{name}.json").read_bytes()) for name in cases}
    for name, outcomes in found.items():
        assert outcomes, (name, (out / f"{name}.err").read_text()[-3000:])  # it built, and libtest reported
    return found


def outcomes(runs: dict[str, dict[str, Outcome]], case: str) -> dict[str, Outcome]:
    return {name: runs[case].get(name, "missing") for name in NAMES}


def judged(seed: int) -> CargoCanaries:
    return CargoCanaries("tests/calc.rs", b"", "", "", twins(seed).twins)


def test_the_fixed_code_passes_every_test_and_fails_every_twin(runs: dict[str, dict[str, Outcome]]) -> None:
    verify = outcomes(runs, "orig")
    assert set(verify.values()) == {"passed"}, verify
    for seed in SEEDS:
        apart = outcomes(runs, f"twins-{seed}")
        assert set(apart.values()) == {"failed"}, (seed, apart)  # each twin built, ran and panicked at its check
        assert judged(seed).apart_tampering(verify, apart) is None


def test_an_always_equal_value_passes_the_twins_expecting_another_number_and_is_caught(
    runs: dict[str, dict[str, Outcome]],
) -> None:
    verify, apart = outcomes(runs, "always-equal-orig"), outcomes(runs, "always-equal-twins")
    for name in EXPECT_ANOTHER_CLAMP:  # wrong above the range, but equal to whatever the test expects
        assert verify[name] == apart[name] == "passed", name
    assert verify["differs"] == "failed"  # `assert_ne!` asks the same `eq`, which says equal
    assert apart["same_either_way"] == apart["in_a_table"] == "failed"  # a negated twin: `assert_ne!` sees it too
    reason = judged(0).apart_tampering(verify, apart) or ""
    assert reason.startswith(f"{EXPECT_ANOTHER_CLAMP[0]} passed, and its twin run apart passed too"), reason
