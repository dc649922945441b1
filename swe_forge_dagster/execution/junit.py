"""Per-test outcomes from a JUnit XML report, keyed by the test ids SWE-bench uses.

SWE-bench's FAIL_TO_PASS/PASS_TO_PASS hold pytest node ids (`tests/test_x.py::TestC::test_y[p-1]`),
so the report has to be mapped back to node ids exactly; an id that differs by one character makes a
task unverifiable by the standard harness.

How pytest writes a testcase (`_pytest/junitxml.py`, `mangle_test_address`): the node id is cut at
the first `[`, the part before it is split on `::`, the file path becomes dotted (`/` -> `.`, `.py`
dropped); `classname` is all the pieces but the last joined with `.`, `name` is the last piece plus
the `[params]`. So params (even with `.`, `/` or `::` inside) are always in `name` and never in
`classname`. Mapping back is unambiguous except for where the module ends and the classes start in
`classname`, decided in this order:

1. the `file` attribute, when its dotted form is a prefix of `classname`. pytest writes `file` only
   with `junit_family=xunit1` (the default `xunit2` drops it), so run pytest with
   `-o junit_family=xunit1`. `file` is where the test function is defined, so a test inherited from
   a base class in another module has a `file` that does not match: then it is ignored.
2. `known_files` (e.g. the repository's `*.py` files): the longest one whose dotted form is a prefix
   of `classname`. This also handles directories with dots in their names.
3. Convention: module names are lowercase and class names start with an uppercase letter, so the
   module is everything before the first piece that starts with an uppercase letter. Wrong for
   lowercase class names or capitalized module/directory names; pass `known_files` to be safe.

A collection error is written with an empty `classname` and the dotted module as `name`; it maps to
the file path (`tests/test_x.py`), which is also what SWE-bench would call that entry.

Duplicate ids: the worst outcome wins (error > failed > skipped > passed). Duplicates come from
pytest writing a second testcase when a failed test also errors in teardown, or from a test being
collected twice; in both, claiming "passed" would overstate what happened. Retries
(pytest-rerunfailures, surefire's `flakyFailure`) are not trusted either: validation detects
flakiness by running the suite several times, so run without rerun plugins (`-p no:rerunfailures`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import Literal

Outcome = Literal["passed", "failed", "error", "skipped"]
Framework = Literal["nodeid", "junit", "name"]
"""The id forms: a pytest node id, Java's `Class#method`, the bare testcase name (Go's `TestX/sub`)."""

_SEVERITY: dict[Outcome, int] = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
_RESULT_TAGS: dict[str, Outcome] = {"error": "error", "failure": "failed", "skipped": "skipped"}


def parse_junit(
    xml: str | bytes,
    framework: Framework | str = "nodeid",
    *,
    known_files: Iterable[str] | None = None,
) -> dict[str, Outcome]:
    """Map each testcase in a JUnit XML report to its id and outcome (see the module docstring).

    `framework` picks the id form: "nodeid" (pytest's `path.py::Class::test[param]`), "junit" (Java/surefire
    `pkg.ClassTest#method`, as in SWE-bench Multilingual) or "name" (Go's bare `TestName/subtest`, as
    written by gotestsum and used by SWE-bench Multilingual). Works with a `<testsuites>` wrapper, a
    single `<testsuite>` root and nested suites, because every `<testcase>` element is visited.
    """
    if framework not in ("nodeid", "junit", "name"):
        raise ValueError(f"unsupported id form {framework!r}: expected 'nodeid', 'junit' or 'name'")
    root = ET.fromstring(xml)  # stdlib expat: no external entities, bounded entity expansion
    if root.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"not a JUnit report: root element is <{root.tag}>")
    modules = _dotted_modules(known_files or ())
    results: dict[str, Outcome] = {}
    for case in root.iter("testcase"):
        classname = case.get("classname", "")
        name = case.get("name", "")
        if not classname and not name:  # pytest's empty testcase for the test an INTERNALERROR killed: no test
            continue
        if framework == "nodeid":
            test_id = pytest_id(classname, name, case.get("file"), modules)
        elif framework == "junit":
            test_id = f"{classname}#{name}" if classname else name
        else:
            test_id = name
        outcome = _outcome(case)
        previous = results.get(test_id)
        if previous is None or _SEVERITY[outcome] > _SEVERITY[previous]:
            results[test_id] = outcome
    return results


def pytest_id(classname: str, name: str, file: str | None = None, modules: dict[str, str] | None = None) -> str:
    """The pytest node id for one testcase; `modules` maps dotted module -> path (see `_dotted_modules`)."""
    file = file.replace("\\", "/") if file else None
    if not classname:  # a collection error: `name` is the dotted module (or a path already)
        if file:
            return file
        return name if name.endswith(".py") or "/" in name else name.replace(".", "/") + ".py"
    path, classes = None, ""
    if file and file.endswith(".py"):
        dotted = file[: -len(".py")].replace("/", ".")
        if classname == dotted or classname.startswith(dotted + "."):
            path, classes = file, classname[len(dotted) + 1 :]
    if path is None and modules:
        path, classes = _longest_known_module(classname, modules)
    if path is None:
        pieces = classname.split(".")
        split_at = next((i for i, piece in enumerate(pieces) if piece[:1].isupper()), len(pieces))
        split_at = max(split_at, 1)  # a classname always starts with the module
        path = "/".join(pieces[:split_at]) + ".py"
        classes = ".".join(pieces[split_at:])
    return "::".join([path, *(classes.split(".") if classes else []), name])


def worst(a: Outcome, b: Outcome) -> Outcome:
    """The more severe of two outcomes (error > failed > skipped > passed)."""
    return a if _SEVERITY[a] >= _SEVERITY[b] else b


def _dotted_modules(files: Iterable[str]) -> dict[str, str]:
    modules = {}
    for file in files:
        file = file.replace("\\", "/").removeprefix("./")
        if file.endswith(".py"):
            modules[file[: -len(".py")].replace("/", ".")] = file
    return modules


def _longest_known_module(classname: str, modules: dict[str, str]) -> tuple[str | None, str]:
    pieces = classname.split(".")
    for split_at in range(len(pieces), 0, -1):
        path = modules.get(".".join(pieces[:split_at]))
        if path is not None:
            return path, ".".join(pieces[split_at:])
    return None, ""


def _outcome(case: ET.Element) -> Outcome:
    """The worst result child wins; none means passed (pytest writes xfail as <skipped>)."""
    outcome: Outcome = "passed"
    for child in case:
        found = _RESULT_TAGS.get(child.tag)
        if found is not None and _SEVERITY[found] > _SEVERITY[outcome]:
            outcome = found
    return outcome
