"""GoogleTest twins under the real toolchain: `swe-forge-cpp:bookworm`'s g++ and the GoogleTest fmt bundles
(`test/gtest/gmock-gtest-all.cc`; the image has none of its own), one container for every case.

On the tiny library of `tests/support/cpp_project.py`, whose tests check as fmt's do, the honest code passes every
test and fails every twin, and the run apart is judged clean; library code that rewrites the XML report at exit, and
an always-equal value, pass twins and are caught by `GtestCanaries.apart_tampering`. The twins of the real fmt rows'
FAIL_TO_PASS tests compile where their originals do (fmt's headers and tests at each row's base commit)."""

from __future__ import annotations

import random
import subprocess

import docker
import pytest

from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.languages.cpp.canaries import GtestCanaries
from swe_forge_dagster.languages.cpp.pack import parse_gtest_xml
from swe_forge_dagster.languages.cpp.twins import FileTwins, make_twins
from tests.support.common import require_image
from tests.support.cpp_project import MAIN, NAMES, TESTS, VALUE_TWINS, write_project
from tests.support.cpp_rows import BUNDLE, MULTI, clone, fail_to_pass, fmt_rows, patched_test_files

pytestmark = pytest.mark.docker
IMAGE = "swe-forge-cpp:bookworm"
SEEDS = range(3)
CXX = "g++ -std=c++17 -O0 -pthread -w"


def twins(seed: int) -> FileTwins:
    made = make_twins("calc_test.cc", TESTS, set(NAMES), random.Random(seed))
    assert made is not None and sorted(twin.name for twin in made.twins) == sorted(NAMES)
    return made


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> dict[str, object]:
    """Every case's GoogleTest outcomes, and the real rows' syntax checks (original, twin) -> exit status."""
    if not (MULTI.is_file() and BUNDLE.is_file()):
        pytest.skip("the fmt bundle (its GoogleTest) or SWE-bench Multilingual missing")
    require_image(docker_client, IMAGE, "scripts/build-toolchain-image.sh cpp")
    root = tmp_path_factory.mktemp("cpp-twins")
    src, out = root / "src", root / "out"
    out.mkdir()
    git_dir = clone(root / "fmt.git")
    rows = fmt_rows()
    archive = ["git", "--git-dir", str(git_dir), "archive", "--format=tar", rows[0]["base_commit"], "test/gtest"]
    src.mkdir()
    subprocess.run(f"{' '.join(archive)} | tar -x -C {src}", shell=True, check=True)
    (src / "main.cc").write_text(MAIN)
    twinned = twins(0).content.decode()
    cases = {"orig": (TESTS, "honest")} | {f"twins-{seed}": (twins(seed).content.decode(), "honest") for seed in SEEDS}
    cases |= {
        "forger-orig": (TESTS, "forger"),
        "forger-twins": (twinned, "forger"),
        "equal-orig": (TESTS, "always-equal"),
        "equal-twins": (twinned, "always-equal"),
    }
    for name, (tests, library) in cases.items():
        write_project(src / name, tests, library)
    gtest = "-I/src/test/gtest"
    script = [f"cd /tmp && {CXX} {gtest} -c /src/test/gtest/gmock-gtest-all.cc /src/main.cc"]
    for name in cases:
        script.append(
            f"{CXX} {gtest} -I/src/{name} /src/{name}/calc.cc /src/{name}/calc_test.cc gmock-gtest-all.o main.o "
            f"-o /tmp/{name} && /tmp/{name} --gtest_output=xml:/out/{name}.xml > /out/{name}.log 2>&1"
        )
    syntax = []
    for row in rows:  # the real rows: the test file as the run reads it, and its twin, against fmt at the base
        tree = src / row["instance_id"]
        tree.mkdir()
        subprocess.run(
            f"git --git-dir {git_dir} archive --format=tar {row['base_commit']} include test | tar -x -C {tree}",
            shell=True,
            check=True,
        )
        ((path, text),) = patched_test_files(row, git_dir).items()
        made = make_twins(path, text, set(fail_to_pass(row)), random.Random(0))
        assert made is not None
        (tree / path).write_text(text)
        (tree / f"{path}.twin.cc").write_bytes(made.content)
        flags = f"-I/src/{row['instance_id']}/include -I/src/{row['instance_id']}/test/gtest"
        for kind, file in (("orig", path), ("twin", f"{path}.twin.cc")):
            case = f"{row['instance_id']}-{kind}"
            syntax.append(case)
            script.append(
                f"{CXX} -fsyntax-only {flags} -I/src/{row['instance_id']}/test /src/{row['instance_id']}/{file} "
                f"> /out/{case}.log 2>&1; echo $? > /out/{case}.rc"
            )
    docker_client.containers.run(
        IMAGE,
        ["sh", "-c", "; ".join(script)],
        volumes={str(src): {"bind": "/src", "mode": "ro"}, str(out): {"bind": "/out", "mode": "rw"}},
        network_mode="none",
        remove=True,
    )
    found: dict[str, object] = {}
    for name in cases:
        report = out / f"{name}.xml"
        found[name] = parse_gtest_xml(report.read_bytes()) if report.is_file() else {}
    found["syntax"] = {case: (out / f"{case}.rc").read_text().strip() for case in syntax}
    return found


def outcomes(runs: dict[str, object], case: str) -> dict[str, Outcome]:
    found = runs[case]
    assert isinstance(found, dict)
    return {name: found.get(name, "missing") for name in NAMES}


def judged(seed: int) -> GtestCanaries:
    return GtestCanaries("calc_test.cc", b"", "", "", twins(seed).twins)


def test_the_honest_code_passes_every_test_and_fails_every_twin(runs: dict[str, object]) -> None:
    verify = outcomes(runs, "orig")
    assert set(verify.values()) == {"passed"}, verify
    for seed in SEEDS:
        apart = outcomes(runs, f"twins-{seed}")
        assert set(apart.values()) == {"failed"}, (seed, apart)
        assert judged(seed).apart_tampering(verify, apart) is None


def test_the_real_rows_twins_compile_as_their_originals_do(runs: dict[str, object]) -> None:
    syntax = runs["syntax"]
    assert syntax == {f"{row['instance_id']}-{kind}": "0" for row in fmt_rows() for kind in ("orig", "twin")}


def test_a_forged_report_and_an_always_equal_value_pass_the_twins_and_are_caught(runs: dict[str, object]) -> None:
    forged_verify, forged_apart = outcomes(runs, "forger-orig"), outcomes(runs, "forger-twins")
    assert set(forged_verify.values()) == set(forged_apart.values()) == {"passed"}
    assert "and its twin run apart passed too" in (judged(0).apart_tampering(forged_verify, forged_apart) or "")
    equal_verify, equal_apart = outcomes(runs, "equal-orig"), outcomes(runs, "equal-twins")
    assert set(equal_verify.values()) == {"passed"}, equal_verify
    # the twins that expect another value pass with it; the negated ones fail, as for honest code
    assert {name for name, outcome in equal_apart.items() if outcome == "passed"} == set(VALUE_TWINS), equal_apart
    reason = judged(0).apart_tampering(equal_verify, equal_apart) or ""
    assert reason.startswith(f"{sorted(VALUE_TWINS)[0]} passed, and its twin run apart passed too"), reason
