"""Why a test failed, read from its runner's report, and the network failures that neither validation nor the
harness may count against a task or an agent (`execution.failures`, `tasks.differences`, `harness.checks`)."""

from __future__ import annotations

import json

from swe_forge_dagster.execution.failures import failure_messages, needs_network
from swe_forge_dagster.execution.patch import SplitPatch
from swe_forge_dagster.execution.suite import SuiteRun
from swe_forge_dagster.harness.checks import CheckRun, sanity_problems, set_aside_unreachable
from swe_forge_dagster.harness.models import CheckResult, HarnessTask
from swe_forge_dagster.languages.registry import runner_for
from swe_forge_dagster.tasks.differences import explain_differences
from swe_forge_dagster.tasks.prove import TaskValidation
from swe_forge_dagster.tasks.validation import Validation

# mocha 10's xunit reporter, as it wrote axios__axios-5085's regression tests offline (trimmed)
MOCHA_XUNIT = b"""<testsuite name="Mocha Tests" tests="2" failures="0" errors="1" skipped="0">
<testcase classname="issues 4999" name="should not fail with query parsing" time="0.012"><failure>\
getaddrinfo EAI_AGAIN postman-echo.com
Error: getaddrinfo EAI_AGAIN postman-echo.com
    at AxiosError.from (file:///repo/lib/core/AxiosError.js:89:14)</failure></testcase>
<testcase classname="issues 5028" name="should handle set-cookie headers as an array" time="0.001">\
<failure message="expected &apos;a=1, b=2&apos; to deeply equal [ &apos;a=1&apos;, &apos;b=2&apos; ]">\
AssertionError</failure></testcase>
</testsuite>"""
GTEST = b"""<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2" failures="1" name="AllTests"><testsuite name="ranges_test" tests="2" failures="1">
<testcase name="join_tuple" status="run" result="completed" classname="ranges_test">\
<failure message="unknown file&#x0A;C++ exception with description &quot;unknown format specifier&quot;" type="">\
</failure></testcase>
<testcase name="format_array" status="run" result="completed" classname="ranges_test" /></testsuite></testsuites>"""


def test_network_failures_are_told_apart_from_wrong_answers() -> None:
    assert needs_network("getaddrinfo ENOTFOUND postman-echo.com")
    assert needs_network('Get "https://x.org": dial tcp: lookup x.org: no such host')
    assert needs_network("urllib3 NameResolutionError: Failed to resolve 'pypi.org'")
    assert not needs_network("AssertionError: expected 1 to equal 2")
    # a build that fetches native sources (matplotlib's freetype, as its setupext says it), and urllib's own error
    mirrors = "['https://downloads.sourceforge.net/project/freetype/freetype2/2.6.1/freetype-2.6.1.tar.gz']"
    assert needs_network(f"error: Failed to download any of the following: {mirrors}.  Please download one")
    assert needs_network("<urlopen error [Errno -3] Temporary failure>") and not needs_network("Failed to build")
    assert not needs_network("connect ECONNREFUSED 127.0.0.1:8080")  # a refused loopback port is the test's own
    assert not needs_network(None)


def test_messages_come_from_the_report_under_the_runners_own_ids() -> None:
    mocha = failure_messages(MOCHA_XUNIT, runner_for("mocha").parse)
    assert set(mocha) == {
        "issues 4999 should not fail with query parsing",
        "issues 5028 should handle set-cookie headers as an array",
    }
    assert needs_network(mocha["issues 4999 should not fail with query parsing"])
    assert "deeply equal" in mocha["issues 5028 should handle set-cookie headers as an array"]
    gtest = failure_messages(GTEST, runner_for("gtest").parse)
    assert list(gtest) == ["ranges_test.join_tuple"] and "unknown format specifier" in gtest["ranges_test.join_tuple"]
    stream = b"\n".join(
        json.dumps(e).encode()
        for e in (
            {"Action": "run", "Test": "TestA"},
            {"Action": "output", "Test": "TestA", "Output": "lookup x: no such host\n"},
            {"Action": "fail", "Test": "TestA"},
            {"Action": "pass", "Test": "TestB"},
        )
    )
    assert failure_messages(stream, runner_for("go").parse) == {"TestA": "lookup x: no such host"}
    assert failure_messages(b"<not xml", runner_for("mocha").parse) == {}


def _check(test_id: str, passed: bool, message: str = "") -> CheckResult:
    return CheckResult(
        command=test_id,
        exit_code=1,
        passed=passed,
        duration_ms=1,
        test_id=test_id,
        outcome="passed" if passed else "failed",
        message=message,
    )


def test_the_harness_sets_aside_checks_that_need_a_host_at_base() -> None:
    task = HarnessTask(
        task_id="axios__axios-5085",
        repo="axios/axios",
        base_commit="a" * 40,
        prompt="p",
        mode="tests",
        fail_to_pass=("f2p", "f2p-net"),
        pass_to_pass=("net", "plain"),
        image="img",
        test_command="npx mocha {tests}",
    )
    sanity = CheckRun(
        [_check("f2p", False, "AssertionError"), _check("f2p-net", False, "getaddrinfo ENOTFOUND x")],
        [_check("net", False, "getaddrinfo EAI_AGAIN postman-echo.com"), _check("plain", True)],
    )
    kept, notes = set_aside_unreachable(task, sanity)
    assert kept.pass_to_pass == ("plain",) and kept.fail_to_pass == ("f2p",)  # FAIL_TO_PASS as PASS_TO_PASS
    assert notes == [
        "f2p-net: needs a network host the sandbox cannot reach (getaddrinfo ENOTFOUND x)",
        "net: needs a network host the sandbox cannot reach (getaddrinfo EAI_AGAIN postman-echo.com)",
    ]
    assert sanity_problems(sanity) == []
    broken = CheckRun([_check("f2p", False), _check("f2p-net", False)], [_check("plain", False, "AssertionError")])
    assert set_aside_unreachable(task, broken) == (task, []) and sanity_problems(broken)


def test_each_difference_from_a_dataset_says_why() -> None:
    def run(outcomes: dict, messages: dict | None = None) -> SuiteRun:
        return SuiteRun(outcomes, 1, "", 1.0, messages=messages or {})

    net = {"net": "getaddrinfo EAI_AGAIN postman-echo.com"}
    before = run({"new": "failed", "net": "failed", "same": "passed"}, net)
    after = [run({"new": "passed", "net": "failed", "same": "passed"}, net) for _ in range(3)]
    verdict = Validation(True, ["new"], ["same"], None, [], [], ["net"])
    result = TaskValidation(
        "axios/axios", "a" * 40, SplitPatch("", "", [], [], []), verdict, "img", True, before, after
    )
    causes = explain_differences(result, runner_for("mocha"), ["new", "net", "same", "gone"], set(), {"new"})
    assert "not in the given FAIL_TO_PASS" in causes["new"]
    assert causes["net"].startswith("before the fix failed, after it failed/failed/failed: needs a network host")
    assert "passes in every run" in causes["same"] and causes["gone"].startswith("never ran here")


def test_a_missing_file_is_not_a_missing_host() -> None:
    """pytest-8365's FAIL_TO_PASS fails with FileNotFoundError, which holds `eNotFound`: not Node's ENOTFOUND."""
    assert not needs_network("FileNotFoundError: [Errno 2] No such file or directory: '/tmp/pytest-of-os/<:*?;>x'")
    assert needs_network("Error: getaddrinfo ENOTFOUND registry.npmjs.org") and needs_network("connect ENETUNREACH")
