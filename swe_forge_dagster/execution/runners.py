"""Test runners: how to run a chosen set of test files and read per-test results, one adapter per runner.

A runner adapter knows its default command template (`{tests}` becomes the quoted targets of the
test files: the files themselves, Go packages, CMake targets…; `{report}` the fresh path its
structured report goes to), how to read that report into test ids and outcomes (`execution.reports`,
`execution.junit`), which of a test patch's files it runs, and the command that runs a single test
(the seed's `checks.txt`). Validation and evaluation both pick the adapter from the test command
(`runner_of`), so one parser serves both and a stored command always says how it is read.

Test ids are the form SWE-bench Multilingual lists (pytest node ids, GoogleTest `suite.test`, Go
`TestName/sub`, mocha/jest full titles, Rust `module::test`, Java `Class#method`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from swe_forge_dagster.execution import reports
from swe_forge_dagster.execution.junit import Outcome, parse_junit, worst

JUNIT = "/tmp/junit.xml"
"""The report path written in stored pytest commands; each run substitutes its own fresh path."""
PYTEST = (
    "python -m pytest -p no:cacheprovider --continue-on-collection-errors -o junit_family=xunit1 "
    f"--junitxml={JUNIT} -rA -q {{tests}}"
)
"""The default pytest command: JUnit for our ids, `-rA` so the console log is the one SWE-bench's
log parser reads (a `PASSED <id>` / `FAILED <id> - ...` line per test)."""

GTEST = (
    "cmake build >/dev/null || exit 1; "
    'rc=0; for t in {tests}; do cmake --build build -j"$(nproc)" --target "$t" || {{ rc=1; continue; }}; '
    'b=$(find build -type f -perm -u+x -name "$t" | head -n 1); '
    '[ -n "$b" ] && "$b" --gtest_output="xml:{report}.$t" || rc=1; done; '
    "cat {report}.* > {report} 2>/dev/null; exit $rc"
)
"""CMake + GoogleTest: the build directory is configured again (the image may have been built at another commit,
with other targets), then each test file's target (its stem, as `add_executable(ranges-test ...)`) is rebuilt
(incrementally: the environment image built everything once) and run with an XML report; a target that
does not compile gives no tests, which validation reads as failed."""
GTEST_SINGLE = (
    'for t in {tests}; do cmake --build build --target "$t" && b=$(find build -type f -perm -u+x -name "$t" | '
    'head -n 1) && GTEST_FILTER={id} "$b"; done'
)
GO_TEST = "go test -json -count=1 {tests} > {report}"
MOCHA = "npx --no-install mocha --exit --reporter xunit --reporter-options output={report} {tests}"
JEST = "npx --no-install jest --ci --json --outputFile={report} {tests}"
VITEST = "npx --no-install vitest run --reporter=json --outputFile={report} {tests}"
CARGO = "RUSTC_BOOTSTRAP=1 cargo test --offline {tests} -- -Z unstable-options --format json > {report}"
MAVEN = (
    "find . -type d -path '*/target/surefire-reports' -prune -exec rm -rf {{}} +; "
    "mvn -o -q test -DfailIfNoTests=false -Dsurefire.failIfNoSpecifiedTests=false -Dtest={tests}; "
    "find . -path '*/target/surefire-reports/TEST-*.xml' -exec cat {{}} + > {report}"
)
"""Every module's Surefire reports (a multi-module build writes one folder per module), concatenated."""

_COMMAND = r"(?:^|[\s;&|(])(?:npx (?:--no-install )?|\./node_modules/\.bin/|\S*/)?{}(?=\s|$|;)"
"""A runner named as a command word (after a separator, `npx` or a path), not inside another word or an argument."""
_PYTEST_COMMAND = re.compile(r"(?:^|[\s;&|(])(?:\S*/)?(?:python[\d.]* -m pytest|pytest|py\.test)(?=\s|$)")
_VENDORED = re.compile(r"(^|/)(node_modules|vendor|third_party|3rdparty|gtest|googletest|gmock|googlemock)/")
"""Directories of other projects' code: their test sources are not the repository's tests."""
_JUNITXML = re.compile(r"--junit-?xml[= ](?P<path>'[^']+'|\"[^\"]+\"|\S+)")
_SOURCE_SUFFIXES = {
    "gtest": (".cc", ".cpp", ".cxx", ".c++"),
    "go": ("_test.go",),
    "mocha": (".js", ".mjs", ".cjs", ".ts"),
    "jest": (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx"),
    "vitest": (".js", ".jsx", ".mjs", ".ts", ".tsx", ".mts"),
    "cargo": (".rs",),
    "maven": (".java",),
}


def fill_tests(template: str, files: Iterable[str], report: str | None = None) -> str:
    """The template with `{tests}` replaced by the quoted test files (and `{report}` by `report`): the one way
    every caller fills it.

    Recipes are `str.format` templates (the environment agent's commands are checked that way, so
    any other brace in them is doubled: `find . -exec rm {{}} +`); a command that is not a valid
    format template (a seed or SWE-bench input with literal braces) has the fields replaced as text.
    """
    joined = " ".join(shlex.quote(f) for f in files)
    report = report or JUNIT
    try:
        return template.format(tests=joined, report=report)
    except (KeyError, IndexError, ValueError):
        return template.replace("{tests}", joined).replace("{report}", report)


def _same(test_id: str) -> str:
    return test_id


@dataclass(frozen=True)
class Runner:
    """One test framework: its report parser, its single-test command and how its report path is set."""

    name: str
    parse: Callable[[bytes, Iterable[str]], dict[str, Outcome]]
    single_template: str
    """One test's command: `{id}` the quoted test id, `{tests}` the quoted targets of its files."""
    grading_id: Callable[[str], str] = _same
    """A full test id in the form SWE-bench's log parser for this runner produces (its lists use it)."""
    report_kind: str = "JUnit"
    language: str = "python"
    template: str = PYTEST
    detect: str = r"(?!)"
    """A regex that recognises a command of this runner (`runner_of`)."""
    suffixes: tuple[str, ...] = (".py",)
    targets: Callable[[Sequence[str]], list[str]] = field(default=list)
    """What `{tests}` is given for the test files: the files (pytest, mocha), packages (go), targets (CMake)."""

    def command(self, template: str, files: Iterable[str], report: str) -> tuple[str, str]:
        """(the shell command for `files`, the report path to read).

        `{report}`, or the stored pytest report path `JUNIT`, is replaced by `report` (fresh per
        run). A pytest template that writes its report to a path of its own
        (`--junitxml=/elsewhere.xml`) keeps it, and that path is returned (the caller removes it
        before the run, so a stale file is never read); a template with no report option at all
        gets `JUNIT`, where nothing will be written.
        """
        targets = self.targets(list(files))
        if "{report}" in template:
            return fill_tests(template, targets, report), report
        command = fill_tests(template, targets)
        if JUNIT in command:
            return command.replace(JUNIT, report), report
        own = _JUNITXML.search(command)
        return command, own.group("path").strip("'\"") if own else JUNIT

    def single_test(self, test_id: str, files: Sequence[str] = ()) -> str:
        """The command that runs `test_id` alone (defined in `files`), for `checks.txt` and people."""
        joined = " ".join(shlex.quote(t) for t in self.targets(list(files)))
        return self.single_template.replace("{id}", shlex.quote(test_id)).replace("{tests}", joined)

    def runs(self, path: str) -> bool:
        """Whether this runner runs the test file `path` (a test patch also carries fixtures and data)."""
        name = PurePosixPath(path).name
        if self.name == "pytest":
            return (name.endswith(".py") and name.startswith("test")) or name.endswith("_test.py")
        return name.endswith(self.suffixes) and not _VENDORED.search(path)


def _go_packages(files: Sequence[str]) -> list[str]:
    """`go test` takes packages: the directory of each test file (`./pkg`, `.` for the root)."""
    return list(dict.fromkeys(f"./{parent}" if (parent := str(PurePosixPath(f).parent)) != "." else "." for f in files))


def _cmake_targets(files: Sequence[str]) -> list[str]:
    """A test file's CMake target is its stem (`test/ranges-test.cc` -> `ranges-test`), as most projects name them."""
    return list(dict.fromkeys(PurePosixPath(f).stem for f in files))


def _cargo_targets(files: Sequence[str]) -> list[str]:
    """Integration tests (`tests/x.rs`) are `--test x`; a test in `src/` is in the library's own tests."""
    targets: list[str] = []
    for f in files:
        path = PurePosixPath(f)
        if path.parent.name == "tests" and path.suffix == ".rs":
            targets += ["--test", path.stem]
        elif "--lib" not in targets:
            targets.append("--lib")
    return targets


def _java_classes(files: Sequence[str]) -> list[str]:
    """Surefire's `-Dtest=` takes class names, comma-separated."""
    return [",".join(dict.fromkeys(PurePosixPath(f).stem for f in files))] if files else []


def _pytest_id(test_id: str) -> str:
    """`parse_log_pytest` keeps the first whitespace-delimited token after the status word."""
    return (test_id.split() or [test_id])[0]


PYTEST_RUNNER = Runner(
    name="pytest",
    parse=lambda xml, files: parse_junit(xml, known_files=files),
    single_template="python -m pytest -p no:cacheprovider -q {id}",
    grading_id=_pytest_id,
)
GTEST_RUNNER = Runner(
    name="gtest",
    parse=reports.parse_gtest_xml,
    language="cpp",
    template=GTEST,
    report_kind="GoogleTest XML",
    single_template=GTEST_SINGLE,
    detect=r"--gtest_output=|\bGTEST_FILTER=|(?:^|[\s;&|(])ctest\b",
    suffixes=_SOURCE_SUFFIXES["gtest"],
    targets=_cmake_targets,
)
GO_RUNNER = Runner(
    name="go",
    parse=reports.parse_go_test_json,
    language="go",
    template=GO_TEST,
    report_kind="go test -json",
    single_template="go test -count=1 -v -run {id} {tests}",
    detect=_COMMAND.format("go test"),
    suffixes=_SOURCE_SUFFIXES["go"],
    targets=_go_packages,
)
MOCHA_RUNNER = Runner(
    name="mocha",
    parse=reports.parse_mocha_xunit,
    language="javascript",
    template=MOCHA,
    report_kind="mocha xunit",
    single_template="npx --no-install mocha --exit --fgrep {id} {tests}",
    detect=_COMMAND.format("mocha"),
    suffixes=_SOURCE_SUFFIXES["mocha"],
)
JEST_RUNNER = Runner(
    name="jest",
    parse=reports.parse_jest_json,
    language="javascript",
    template=JEST,
    report_kind="jest JSON",
    single_template="npx --no-install jest --ci -t {id} {tests}",
    detect=_COMMAND.format("jest"),
    suffixes=_SOURCE_SUFFIXES["jest"],
)
VITEST_RUNNER = Runner(
    name="vitest",
    parse=reports.parse_vitest_json,
    language="javascript",
    template=VITEST,
    report_kind="vitest JSON",
    single_template="npx --no-install vitest run -t {id} {tests}",
    detect=_COMMAND.format("vitest"),
    suffixes=_SOURCE_SUFFIXES["vitest"],
)
CARGO_RUNNER = Runner(
    name="cargo",
    parse=reports.parse_libtest,
    language="rust",
    template=CARGO,
    report_kind="libtest JSON",
    single_template="cargo test --offline {tests} -- --exact {id}",
    detect=_COMMAND.format("cargo test"),
    suffixes=_SOURCE_SUFFIXES["cargo"],
    targets=_cargo_targets,
)
MAVEN_RUNNER = Runner(
    name="maven",
    parse=reports.parse_surefire,
    language="java",
    template=MAVEN,
    report_kind="Surefire XML",
    single_template="mvn -o -q test -Dtest={id}",
    detect=_COMMAND.format("mvn") + "|surefire-reports",
    suffixes=_SOURCE_SUFFIXES["maven"],
    targets=_java_classes,
)
RUNNERS = {
    runner.name: runner
    for runner in (
        PYTEST_RUNNER,
        GTEST_RUNNER,
        GO_RUNNER,
        MOCHA_RUNNER,
        JEST_RUNNER,
        VITEST_RUNNER,
        CARGO_RUNNER,
        MAVEN_RUNNER,
    )
}


def runner_for(name: str = "pytest") -> Runner:
    """The adapter named `name`; ValueError names the known ones."""
    try:
        return RUNNERS[name]
    except KeyError:
        raise ValueError(f"unknown test runner {name!r} (known: {', '.join(sorted(RUNNERS))})") from None


def runner_of(command: str) -> Runner:
    """The adapter a test command is read with: pytest when the command runs pytest (whatever its arguments say:
    `-p no:doctest`, `-k "not jest"`, `tests/mocha/`), else the first whose command word is in it, else pytest
    (every command before other languages were supported is a pytest one)."""
    if _PYTEST_COMMAND.search(command):
        return PYTEST_RUNNER
    for runner in RUNNERS.values():
        if runner is not PYTEST_RUNNER and re.search(runner.detect, command):
            return runner
    return PYTEST_RUNNER


def swebench_ids(runner: Runner, full_ids: Iterable[str]) -> list[str]:
    """The ids as SWE-bench lists them (`runner.grading_id`), in order, each once."""
    return list(dict.fromkeys(runner.grading_id(test_id) for test_id in full_ids))


def graded_outcomes(runner: Runner, outcomes: Mapping[str, Outcome]) -> dict[str, Outcome]:
    """Outcomes keyed by SWE-bench's ids. Tests whose ids cut to the same one share it, and the worst
    outcome wins, as in SWE-bench, whose parser keeps the last line for an id and pytest's `-rA`
    summary prints passes first and failures last."""
    graded: dict[str, Outcome] = {}
    for test_id, outcome in outcomes.items():
        key = runner.grading_id(test_id)
        graded[key] = outcome if key not in graded else worst(graded[key], outcome)
    return graded
