"""The C/C++ pack: CMake projects whose tests use GoogleTest, on g++ + cmake + ccache images.

Recipes configure CMake and build everything once with ccache, so a run that touches every file
recompiles only what changed; tests are GoogleTest executables named after their source file. A
CMake project that downloads at configure time (`FetchContent`, `ExternalProject`) cannot be built
in the sandbox. Ids: `suite.test` (`Nums/ParamTest.even/0`, `TypedT/1.size`), as `c.py:116`
`parse_log_googletest` reads `[       OK ] suite.test (0 ms)`; for a *failed* parameterized test
gtest appends `, where GetParam() = 3` to that line and SWE-bench keeps it in the id; the report
has the bare id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from swe_forge_dagster.execution.junit import Outcome, worst
from swe_forge_dagster.execution.recipe import RETOUCH, EnvRecipe
from swe_forge_dagster.execution.reports import record, xml_outcome, xml_testcases
from swe_forge_dagster.execution.runners import Runner, SwebenchLog
from swe_forge_dagster.languages.cpp.canaries import plant_gtest
from swe_forge_dagster.languages.pack import AgentHints, Files, LanguagePack, RunnerHints

OWN_BUILD = (
    'find build -type f ! -user "$(id -u)" ! -name "*.o" ! -name "*.a" ! -perm -u+x '
    '-exec sh -c \'for f; do cp -p "$f" "$f.sf~" && mv -f "$f.sf~" "$f"; done\' sh {{}} + 2>/dev/null; '
)
"""The build's files (not its products) made the test user's (`execution.test_user`): CMake's `configure_file` sets
its outputs' modes, which only their owner may (fmt's failed so: no test ran). As root, nothing to do."""
GTEST = (
    OWN_BUILD + "cmake build >/dev/null || exit 1; "
    'rc=0; for t in {tests}; do cmake --build build -j"$(nproc)" --target "$t" || {{ rc=1; continue; }}; '
    'b=$(find build -type f -perm -u+x -name "$t" | head -n 1); '
    '[ -n "$b" ] && "$b" --gtest_output="xml:{report}.$t" || rc=1; done; '
    "cat {report}.* > {report} 2>/dev/null; exit $rc"
)
"""CMake + GoogleTest: the build directory (the test user's, `OWN_BUILD`) is configured again (the image may have been
built at another commit), then each test file's target (its stem: `add_executable(ranges-test ...)`) is rebuilt
incrementally and run with an XML report; a target that does not compile gives no tests, read as failed."""
GTEST_SINGLE = (
    'for t in {tests}; do cmake --build build --target "$t" && b=$(find build -type f -perm -u+x -name "$t" | '
    'head -n 1) && GTEST_FILTER={id} "$b"; done'
)
CMAKE_CONFIGURE = (
    "cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug $(command -v ccache >/dev/null && "
    "echo -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)"
)


def parse_gtest_xml(report: bytes, files: Iterable[str] = ()) -> dict[str, Outcome]:
    """GoogleTest `--gtest_output=xml:FILE` reports, one document per test binary, concatenated.

    The id is `classname.name`, which is how gtest prints the test (`TypedT/0.size`,
    `Prefix/Suite.test/0`). `result="skipped"` (GTEST_SKIP), `result="suppressed"`/`status="notrun"`
    (DISABLED_ tests) and `<skipped>` are skipped; `<failure>` is failed. gtest writes the file only when
    the binary exits normally, so a crashed binary's tests are missing. Unlike the console log, which a
    test can forge by printing `[       OK ] other.test (0 ms)`, the report is built from gtest's own
    bookkeeping and escapes everything a test prints.
    """
    results: dict[str, Outcome] = {}
    for case in xml_testcases(report):
        outcome = xml_outcome(case)
        if case.get("result") in ("skipped", "suppressed") or case.get("status") == "notrun":
            outcome = worst(outcome, "skipped")
        record(results, f"{case.get('classname', '')}.{case.get('name', '')}", outcome)
    return results


def _cmake_targets(files: Sequence[str]) -> list[str]:
    """A test file's CMake target is its stem (`test/ranges-test.cc` -> `ranges-test`), as most projects name them."""
    return list(dict.fromkeys(PurePosixPath(f).stem for f in files))


GTEST_RUNNER = Runner(
    name="gtest",
    parse=parse_gtest_xml,
    language="cpp",
    template=GTEST,
    report_kind="GoogleTest XML",
    single_template=GTEST_SINGLE,
    detect=r"--gtest_output=|\bGTEST_FILTER=|(?:^|[\s;&|(])ctest\b",
    suffixes=(".cc", ".cpp", ".cxx", ".c++"),
    vendored=("gtest", "googletest", "gmock", "googlemock"),  # a vendored GoogleTest's own tests
    targets=_cmake_targets,
    plant=plant_gtest,
    twins_apart=True,  # `languages.cpp.twins`: the run apart gets a container of its own (`harness.verify`)
    swebench_log=SwebenchLog("parse_log_googletest"),  # the test binaries print `[       OK ] Suite.Test (0 ms)`
)


def cpp_recipes(files: Files, tree: set[str], image: str) -> tuple[list[EnvRecipe], str | None]:
    """A CMake project whose tests use GoogleTest (bundled, or found as a package)."""
    cmake = files.get("CMakeLists.txt", "")
    bundled = any(re.search(r"(^|/)(googletest|gtest)(/|$)", path) for path in tree)
    if not (bundled or re.search(r"GTest|gtest", cmake)):
        return [], "a CMake project without GoogleTest (no other C/C++ test runner is supported yet)"
    build = f'{CMAKE_CONFIGURE} && cmake --build build -j"$(nproc)" && {RETOUCH}'
    return [EnvRecipe((build,), GTEST, image)], None


def dependency_problem(files: Files, tree: set[str]) -> str | None:
    fetched = re.search(
        r"\b(?:FetchContent_Declare|ExternalProject_Add)\s*\([^)]*?\b(?:GIT_REPOSITORY|URL)\s+(\S+)",
        files.get("CMakeLists.txt", ""),
    )
    return f"CMake fetches {fetched.group(1)} at configure time, which the sandbox cannot download" if fetched else None


PACK = LanguagePack(
    name="cpp",
    manifests=("CMakeLists.txt",),
    extensions=(".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".hh"),
    runners=(GTEST_RUNNER,),
    hints=AgentHints(
        title="C/C++",
        image="g++, cmake, make, ccache, git",
        install="CMake with GoogleTest: configure into build/ and build everything once, e.g. `cmake -S . -B build "
        '-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER_LAUNCHER=ccache && cmake --build build -j"$(nproc)"` '
        "(turn on the project's test option if it has one). The runner rebuilds the target named after a test "
        "file's stem and runs it.",
        network="downloads may work",
        runners={
            "gtest": RunnerHints(
                targets="the CMake targets named after the test files' stems",
                naming="test/<name>-test.cc or as the existing tests are named; it runs only if the existing CMake "
                "files build a target named after its stem (e.g. by a glob): new CMake files cannot be added",
                example="test/example-test.cc",
                id_form="Suite.Test",
            )
        },
    ),
    images={"swe-forge-cpp:bookworm": "12", "swe-forge-cpp:trixie": "14"},
    test_code=lambda path: PurePosixPath(path).parts[:1] in (("test",), ("tests",)),  # fmt's test/ and its kind
    test_file_patterns=(r"(?i)(^|/)tests?/.*\.(c|cc|cpp|cxx|c\+\+|h|hh|hpp)$",),  # no file name says so
    dependency_problem=dependency_problem,
    recipes=cpp_recipes,
    written_tests_problem="tests written for a C/C++ project would need CMake targets of their own",
    debian_packages="g++ make cmake ccache",
    compiled=True,
    extends_default=True,
)
