"""Per-test outcomes from a JUnit XML report, keyed by the test ids of the runner that wrote it.

Every `<testcase>` element is visited (a `<testsuites>` wrapper, a single `<testsuite>` root and nested suites
alike) and named by an id form: Java's `Class#method` (`"junit"`, as SWE-bench Multilingual lists surefire's tests),
the bare testcase name (`"name"`, Go's `TestX/sub` as gotestsum writes it), or a pack's own function of
(classname, name, file attribute), such as the Python pack's pytest node ids (`languages.python.junit_ids`).

Expected failures are `xfailed`, apart from skips, where a pack names the `type` its runner gives their `<skipped>`
element (`expected_failures`; pytest's `pytest.xfail`): SWE-bench reads them as passing (its `XFAIL`), which only a
run where no agent code runs may grant (`harness.checks`). `xpassed` (an unexpected pass that a report writes as a
pass) is never read from a report: validation marks it from the runner's console, for its lists only
(`Runner.unlisted`).

Duplicate ids: the worst outcome wins (error > failed > xpassed > xfailed > skipped > passed; in between, the order
pytest's `-rA` summary prints them, whose last line for an id SWE-bench's parser keeps). Duplicates come from a runner
writing a second testcase when a failed test also errors in teardown, or from a test being collected twice; in both,
claiming "passed" would overstate what happened. Retries (pytest-rerunfailures, surefire's `flakyFailure`) are not
trusted either: validation detects flakiness by running the suite several times, so run without rerun plugins.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Collection
from typing import Literal

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed"]
Framework = Literal["junit", "name"]
"""The kernel's id forms: Java's `Class#method`, the bare testcase name (Go's `TestX/sub`)."""
CaseId = Callable[[str, str, str | None], str]
"""A pack's id form: (classname, name, the `file` attribute or None) -> the test id."""

_SEVERITY: dict[Outcome, int] = {"passed": 0, "skipped": 1, "xfailed": 2, "xpassed": 3, "failed": 4, "error": 5}
_RESULT_TAGS: dict[str, Outcome] = {"error": "error", "failure": "failed", "skipped": "skipped"}


def parse_junit(
    xml: str | bytes, framework: Framework | CaseId, expected_failures: Collection[str] = ()
) -> dict[str, Outcome]:
    """Map each testcase in a JUnit XML report to its id and outcome (see the module docstring).

    `framework` picks the id form: "junit" (Java/surefire `pkg.ClassTest#method`), "name" (the bare testcase name)
    or a function of (classname, name, file) that a pack gives (`CaseId`). `expected_failures`: the `type`s of a
    `<skipped>` element that mean an expected failure.
    """
    if callable(framework):
        case_id = framework
    elif framework == "junit":
        case_id = _class_and_method
    elif framework == "name":
        case_id = _name
    else:
        raise ValueError(f"unsupported id form {framework!r}: expected 'junit', 'name' or a function")
    root = ET.fromstring(xml)  # stdlib expat: no external entities, bounded entity expansion
    if root.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"not a JUnit report: root element is <{root.tag}>")
    results: dict[str, Outcome] = {}
    for case in root.iter("testcase"):
        classname = case.get("classname", "")
        name = case.get("name", "")
        if not classname and not name:  # the empty testcase a runner writes for a crashed session: no test
            continue
        test_id = case_id(classname, name, case.get("file"))
        outcome = _outcome(case, expected_failures)
        previous = results.get(test_id)
        if previous is None or _SEVERITY[outcome] > _SEVERITY[previous]:
            results[test_id] = outcome
    return results


def worst(a: Outcome, b: Outcome) -> Outcome:
    """The more severe of two outcomes (error > failed > xpassed > xfailed > skipped > passed)."""
    return a if _SEVERITY[a] >= _SEVERITY[b] else b


def _class_and_method(classname: str, name: str, _file: str | None) -> str:
    return f"{classname}#{name}" if classname else name


def _name(_classname: str, name: str, _file: str | None) -> str:
    return name


def _outcome(case: ET.Element, expected_failures: Collection[str]) -> Outcome:
    """The worst result child wins; none means passed; a `<skipped>` of an expected failure's type is `xfailed`."""
    outcome: Outcome = "passed"
    for child in case:
        found = _RESULT_TAGS.get(child.tag)
        if found == "skipped" and child.get("type") in expected_failures:
            found = "xfailed"
        if found is not None and _SEVERITY[found] > _SEVERITY[outcome]:
            outcome = found
    return outcome
