"""Go twins under the real toolchain (`swe-forge-go:bookworm`'s Go 1.19, `go test -json`, gofmt): on the tiny module of
`tests/support/go_module.py`, whose tests check as the real Go rows' do, the fixed code passes every test and fails
every twin, and the run apart is judged clean; package code forging the report, and an oracle returning what its
caller's assertion expects, pass the twins and are caught by `GoCanaries.apart_tampering`. Every twin, those of the
real rows' tests too, is still gofmt's own formatting. One container runs every case."""

from __future__ import annotations

import random

import docker
import pytest

from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.languages.go.canaries import GoCanaries
from swe_forge_dagster.languages.go.pack import parse_go_test_json
from swe_forge_dagster.languages.go.twins import FileTwins, make_twins
from tests.support.common import require_image
from tests.support.go_module import NAMES, TESTS, write_module
from tests.support.go_rows import MULTI, go_rows, whole_tests

pytestmark = pytest.mark.docker
IMAGE = "swe-forge-go:bookworm"
ENV = "export CGO_ENABLED=0 GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local GOSUMDB=off"
SEEDS = range(3)
HEADER = 'package p\n\nimport (\n\t"testing"\n\n\t"github.com/stretchr/testify/assert"\n)\n\n'


def twins(seed: int) -> FileTwins:
    made = make_twins("calc_test.go", TESTS, set(NAMES), random.Random(seed))
    assert made is not None and sorted(twin.name for twin in made.twins) == sorted(NAMES)
    return made


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> dict[str, object]:
    """Every case's `go test -json` outcomes, and what gofmt -l listed, from one container."""
    require_image(docker_client, IMAGE, "scripts/build-toolchain-image.sh go")
    root = tmp_path_factory.mktemp("go-twins")
    src, out = root / "src", root / "out"
    out.mkdir()
    cases = {"orig": (TESTS, {})}
    for seed in SEEDS:
        cases[f"twins-{seed}"] = (twins(seed).content.decode(), {})
    twinned = cases["twins-0"][0]
    cases |= {
        "forger-orig": (TESTS, {"forger": True}),
        "forger-twins": (twinned, {"forger": True}),
        "oracle-orig": (TESTS, {"oracle": True}),
        "oracle-twins": (twinned, {"oracle": True}),
    }
    for name, (tests, options) in cases.items():
        write_module(src / name, tests, **options)
    if MULTI.is_file():  # the real rows' tests written whole, twinned, for gofmt
        for row in go_rows():
            for test, function in whole_tests(row).items():
                made = make_twins("p_test.go", HEADER + function, {test}, random.Random(1))
                if made is not None:
                    (src / "gofmt" / f"{test}_test.go").parent.mkdir(exist_ok=True)
                    (src / "gofmt" / f"{test}_test.go").write_bytes(made.content)
    script = [ENV]
    for name in cases:
        script.append(
            f"cp -r /src/{name} /w-{name} && cd /w-{name} && go test -json -count=1 . > /out/{name}.json 2>&1"
        )
    script.append("gofmt -l /src/*/calc_test.go /src/gofmt > /out/gofmt.txt 2>&1; true")
    docker_client.containers.run(
        IMAGE,
        ["sh", "-c", "; ".join(script)],
        volumes={str(src): {"bind": "/src", "mode": "ro"}, str(out): {"bind": "/out", "mode": "rw"}},
        network_mode="none",
        remove=True,
    )
    found: dict[str, object] = {name: parse_go_test_json((out / f"{name}.json").read_bytes()) for name in cases}
    found["gofmt"] = (out / "gofmt.txt").read_text()
    found["real"] = sorted(path.name for path in (src / "gofmt").glob("*.go")) if MULTI.is_file() else []
    return found


def outcomes(runs: dict[str, object], case: str) -> dict[str, Outcome]:
    found = runs[case]
    assert isinstance(found, dict)
    return {name: found.get(name, "missing") for name in NAMES}


def judged(seed: int) -> GoCanaries:
    return GoCanaries("calc_test.go", b"", "", "", twins(seed).twins)


def test_the_fixed_code_passes_every_test_and_fails_every_twin(runs: dict[str, object]) -> None:
    verify = outcomes(runs, "orig")
    assert set(verify.values()) == {"passed"}, verify
    for seed in SEEDS:
        apart = outcomes(runs, f"twins-{seed}")
        assert set(apart.values()) == {"failed"}, (seed, apart)
        assert judged(seed).apart_tampering(verify, apart) is None


def test_every_twin_is_gofmt_formatted_the_real_rows_ones_too(runs: dict[str, object]) -> None:
    assert runs["gofmt"] == ""
    assert not MULTI.is_file() or len(runs["real"]) == 3  # gin's three FAIL_TO_PASS tests  # type: ignore[arg-type]


def test_a_forged_report_and_an_implementation_oracle_pass_the_twins_and_are_caught(runs: dict[str, object]) -> None:
    forged_verify, forged_apart = outcomes(runs, "forger-orig"), outcomes(runs, "forger-twins")
    assert set(forged_verify.values()) == set(forged_apart.values()) == {"passed"}
    assert "and its twin run apart passed too" in (judged(0).apart_tampering(forged_verify, forged_apart) or "")
    oracle_verify, oracle_apart = outcomes(runs, "oracle-orig"), outcomes(runs, "oracle-twins")
    assert oracle_verify["TestCountTestify"] == oracle_apart["TestCountTestify"] == "passed"  # it read the twin's value
    reason = judged(0).apart_tampering(oracle_verify, oracle_apart) or ""
    assert reason.startswith("TestCountTestify passed, and its twin run apart passed too"), reason
