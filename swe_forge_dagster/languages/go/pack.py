"""The Go pack: go.mod modules, tested with `go test -json`, on Debian's Go toolchain images.

Recipes compile the test binaries once (`go test -run '^$' ./...`, the build cache stays in the
image); no network for modules (`GOPROXY=off`) unless the module requires some, vendored or not.
A module with requirements and no `vendor/` needs the Go module proxy, probed once per process. The
version wanted is `go.mod`'s `go` line.

Ids: `TestX/sub_case`, as `go.py:19` `parse_log_gotest` reads `--- PASS: TestX/sub_case (0.00s)`.
A NEW `_test.go` file from an agent is dropped: it is compiled into the package's test binary, and a
`TestMain` in it runs the package's tests its own way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath

from swe_forge_dagster.execution.junit import Outcome, worst
from swe_forge_dagster.execution.recipe import RETOUCH, EnvRecipe
from swe_forge_dagster.execution.reports import json_line, record
from swe_forge_dagster.execution.runners import Runner, SwebenchLog, command_word
from swe_forge_dagster.execution.toolchains import registry_reachable, version_numbers
from swe_forge_dagster.languages.go.canaries import go_single_id, plant_go
from swe_forge_dagster.languages.pack import AgentHints, Files, LanguagePack, RunnerHints
from swe_forge_dagster.settings import get_settings

GO_TEST = "go test -json -count=1 {tests} > {report}"


def parse_go_test_json(report: bytes, files: Iterable[str] = ()) -> dict[str, Outcome]:
    """The stream of `go test -json`: one test2json event a line; the id is the `Test` field.

    pass/fail/skip end a test. A test that has `run` but no final action was running when its binary
    died (panic, os.Exit, `-timeout`) and is failed. A package whose build failed (`"Action":"fail"`
    with no `Test` and `FailedBuild`, or go 1.19's plain `FAIL pkg [build failed]` line) has no tests,
    and lines that are not JSON (go's own build errors) are skipped: callers treat its tests as missing.

    Forgery: since Go 1.20 `go test -json` runs the binary with `-test.v=test2json`, which marks the
    testing package's own result lines with a control byte, so a test printing `--- PASS: TestOther`
    only adds output to itself. Older Go (bookworm ships 1.19) parses the plain text, and a test can
    invent results: a pass for a test that never ran is believed (a forged result for a test that then
    reports its own, and a forged failure, lose to the worse one). Neither stops package code that re-runs the
    binary as a child and rewrites its output: the harness's canaries (`languages.go.canaries`) catch that.
    """
    finished: dict[tuple[str, str], Outcome] = {}
    started: set[tuple[str, str]] = set()
    for line in report.splitlines():
        event = json_line(line)
        if event is None or not isinstance(test := event.get("Test"), str) or not test:
            continue
        key = (str(event.get("Package", "")), test)
        action = event.get("Action")
        if action == "run":
            started.add(key)
        elif action in ("pass", "fail", "skip"):
            outcome: Outcome = "passed" if action == "pass" else "failed" if action == "fail" else "skipped"
            finished[key] = worst(finished[key], outcome) if key in finished else outcome
    for key in started - finished.keys():
        finished[key] = "failed"
    results: dict[str, Outcome] = {}
    for (_package, test), outcome in finished.items():
        record(results, test, outcome)
    return results


def _go_packages(files: Sequence[str]) -> list[str]:
    """`go test` takes packages: the directory of each test file (`./pkg`, `.` for the root)."""
    return list(dict.fromkeys(f"./{parent}" if (parent := str(PurePosixPath(f).parent)) != "." else "." for f in files))


def _own_ids(outcomes: Mapping[str, Outcome], files: Mapping[str, str]) -> dict[str, Outcome]:
    """go runs whole packages: the tests of `files` are their `Test…` functions (and those's subtests)."""
    names = {
        name
        for path, text in files.items()
        if path.endswith("_test.go")
        for name in re.findall(r"^func\s+(Test\w*)\s*\(", text, re.MULTILINE)
    }
    return {test_id: o for test_id, o in outcomes.items() if test_id.split("/")[0] in names}


_STDOUT_TO_FILE = re.compile(r"\s*(?<![\d&>])>(?!&)\s*(?:'[^']*'|\"[^\"]*\"|[^\s;&|]+)")
"""A redirection of standard output to a file (`> /tmp/r`), not of another descriptor (`2>&1`, `2> err`)."""


def _go_verbose(command: str) -> str:
    """Our `go test` printing its verbose log (`--- PASS: TestX/sub (0.00s)`), which `parse_log_gotest` reads: `-v`
    for `-json`, and the output left on the console instead of redirected to our report."""
    return _STDOUT_TO_FILE.sub("", command).replace(" -json", " -v")


GO_RUNNER = Runner(
    name="go",
    parse=parse_go_test_json,
    language="go",
    template=GO_TEST,
    report_kind="go test -json",
    single_template="go test -count=1 -v -run {id} {tests}",
    detect=command_word("go test"),
    suffixes=("_test.go",),
    targets=_go_packages,
    own_ids=_own_ids,
    plant=plant_go,
    twins_apart=True,
    single_id=go_single_id,
    swebench_log=SwebenchLog("parse_log_gotest", _go_verbose),
)


def go_requirements(go_mod: str) -> list[str]:
    """The modules `go.mod` requires (single lines and `require ( … )` blocks), minus those replaced by a local path."""
    required: list[str] = []
    in_block = False
    for raw in go_mod.splitlines():
        line = raw.split("//", 1)[0].strip()
        if in_block:
            if line == ")":
                in_block = False
            elif line:
                required.append(line.split()[0])
        elif line.startswith("require ("):
            in_block = True
        elif line.startswith("require "):
            required.append(line.split()[1])
    local = {m.group(1) for m in re.finditer(r"^replace\s+(\S+).*=>\s*\.{1,2}/", go_mod, re.MULTILINE)}
    return [module for module in required if module not in local]


def go_recipes(files: Files, tree: set[str], image: str) -> tuple[list[EnvRecipe], str | None]:
    """The recipe for a Go module: the module proxy when it requires any module, else none at all."""
    proxy = get_settings().goproxy_url if go_requirements(files.get("go.mod", "")) else None
    mode = "vendor" if "vendor/modules.txt" in tree else "mod"
    env = f"export GOFLAGS=-mod={mode} GOPROXY={proxy or 'off'} GOTOOLCHAIN=local GOSUMDB=off CGO_ENABLED=0"
    install = f"{env} && go build ./... && go test -count=1 -run '^$' ./... && {RETOUCH}"
    return [EnvRecipe((install,), f"{env} && {GO_TEST}", image)], None


def declared_version(files: Files) -> tuple[int, ...] | None:
    match = re.search(r"^go\s+(\d+\.\d+)", files.get("go.mod", ""), re.MULTILINE)
    return version_numbers(match.group(1)) if match else None


def dependency_problem(files: Files, tree: set[str]) -> str | None:
    required = go_requirements(files.get("go.mod", ""))
    proxy = get_settings().goproxy_url
    if required and "vendor/modules.txt" not in tree and not registry_reachable(proxy):
        return (
            f"module {required[0]} needs the Go module proxy ({proxy}), "
            "unreachable from the sandbox, and the repository vendors no modules"
        )
    return None


PACK = LanguagePack(
    name="go",
    manifests=("go.mod",),
    extensions=(".go",),
    runners=(GO_RUNNER,),
    hints=AgentHints(
        title="Go",
        image="Debian's Go toolchain, git",
        install="Download the modules while you have network (`go mod download`; a vendor/ directory needs none: "
        "`-mod=vendor`), then compile the test binaries once so the build cache is in the image: "
        "`go build ./... && go test -count=1 -run '^$' ./...`. The tests run offline: put "
        "`export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local GOSUMDB=off CGO_ENABLED=0 && ` in front of the "
        "test command (-mod=vendor for a vendored module).",
        runners={
            "go": RunnerHints(
                targets="the packages of the test files (./pkg)",
                naming="<name>_test.go in the directory of the package it tests (package <pkg> or <pkg>_test)",
                example="pkg/example_test.go",
                id_form="TestName or TestName/sub",
            )
        },
    ),
    images={"swe-forge-go:bookworm": "1.19", "swe-forge-go:trixie": "1.24"},
    read_files=("go.sum", "vendor/modules.txt"),
    dependency_files=("go.mod", "go.sum"),
    dependencies_fixed=True,
    declared_version=declared_version,
    dependency_problem=dependency_problem,
    recipes=go_recipes,
    protects=lambda path, new: new and PurePosixPath(path).name.endswith("_test.go"),
    test_code=lambda path: path.endswith("_test.go"),
    test_file_patterns=(r".*_test\.go",),
    seed_languages=("go",),
    debian_packages="golang-go",
    compiled=True,
    review_signs=(
        (r"\bos\.Args\[0\]", "reads the test binary's name"),
        (r"exec\.Command\(\s*os\.(?:Args\[0\]|Executable)", "runs the test binary again"),
        (r"\bos\.Stdout\s*=(?!=)|\bsyscall\.Dup", "replaces standard output"),
        (r"\*testing\.M\b|\btesting\.(?:Main|MainStart)\b", "takes over the test main"),
        (r"--- (?:PASS|FAIL):|\btest2json\b", "writes test result lines"),
    ),
)
