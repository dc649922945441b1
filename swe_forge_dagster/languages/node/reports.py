"""The Node pack's report parsers: mocha (xunit, JSON), jest and vitest JSON, keyed by SWE-bench's ids.

- mocha the full title, `describe titles + test title` joined by spaces: `javascript.py:757`
  `parse_log_tap` (axios) reads `ok 1 issues 5028 should handle ...` from mocha's TAP reporter.
- jest the bare test title: `javascript.py:638` `parse_log_jest` (babel, docusaurus) reads `--verbose`
  lines `✓ title (2 ms)`; `titles="path"` gives `A > B > title` as `parse_log_jest_json` (`:662`).
- vitest `file > A > B > title`: `javascript.py:681` `parse_log_vitest` reads vitest's verbose lines
  `✓ dir/x.spec.ts > A > title 1ms`, the file relative to vitest's root.

Pack-private (`languages.node` is the pack).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath
from typing import Any, Literal

from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.execution.reports import json_document, json_list, json_str, record, xml_outcome, xml_testcases


def parse_mocha_xunit(report: bytes, files: Iterable[str] = (), *, strip_hash: bool = True) -> dict[str, Outcome]:
    """mocha's `--reporter xunit --reporter-options output=FILE` report; the id is the test's full title.

    mocha writes `classname=test.parent.fullTitle()` and `name=test.title` (lib/reporters/xunit.js:159),
    and `fullTitle()` is the title path joined by single spaces (runnable.js:207), so the full title is
    `classname + " " + name`, or just `name` for a test outside any `describe` (its classname is "").
    A failing hook is a testcase too (`"before all" hook for "x"`), as in the TAP output.

    `strip_hash`: mocha's TAP reporter, whose output SWE-bench reads for mocha repositories, prints
    `test.fullTitle().replace(/#/g, '')` (lib/reporters/tap.js:90), so by default `#` is removed from
    ids to match (`has #1 tag` -> `has 1 tag`). mocha writes a newline or tab in a title raw inside the
    attribute, which XML reads as a space (`parse_mocha_json` keeps it).
    """
    results: dict[str, Outcome] = {}
    for case in xml_testcases(_CONTROL_REF.sub(_control_to_private, report)):
        classname, name = case.get("classname", ""), case.get("name", "")
        title = (f"{classname} {name}" if classname else name).translate(_PRIVATE_TO_CONTROL)
        record(results, title.replace("#", "") if strip_hash else title, xml_outcome(case))
    return results


_CONTROL_REF = re.compile(rb"&#(?:[xX]0*([0-9a-fA-F]{1,2})|0*([0-9]{1,2}));")
_PRIVATE = 0x10FC00  # + a C0 control: a code point of plane 16's private use area, absent from real titles
_PRIVATE_TO_CONTROL = {_PRIVATE + code: code for code in range(0x20)}


def _control_to_private(match: re.Match[bytes]) -> bytes:
    """mocha escapes a control character in a title (an ANSI colour's ESC) as `&#x1B;`, which XML 1.0
    forbids, so expat would reject the whole report; it is read as a stand-in and restored in the id."""
    code = int(match[1], 16) if match[1] is not None else int(match[2])
    if code >= 0x20 or code in (0x9, 0xA, 0xD):
        return match[0]
    return chr(_PRIVATE + code).encode()


def parse_mocha_json(report: bytes, files: Iterable[str] = (), *, strip_hash: bool = True) -> dict[str, Outcome]:
    """mocha's `--reporter json --reporter-option output=FILE` report: `passes`, `failures` (hooks
    included) and `pending`, each test with its `fullTitle`; ids as `parse_mocha_xunit`."""
    data = json_document(report)
    lists: dict[str, Outcome] = {"passes": "passed", "pending": "skipped", "failures": "failed"}
    if not lists.keys() <= data.keys():
        raise ValueError("not a mocha JSON report: no passes/pending/failures")
    results: dict[str, Outcome] = {}
    for key, outcome in lists.items():
        for test in json_list(data, key):
            title = json_str(test, "fullTitle")
            record(results, title.replace("#", "") if strip_hash else title, outcome)
    return results


def parse_jest_json(
    report: bytes, files: Iterable[str] = (), *, titles: Literal["title", "path"] = "title"
) -> dict[str, Outcome]:
    """`jest --json --outputFile=FILE`: `testResults[].assertionResults[]` with `ancestorTitles`,
    `title` and `status`.

    `titles="title"` (default) gives the bare test title, as `parse_log_jest` reads it from `--verbose`
    (jest prints the describe blocks as indented headers and only the title on the result line), which
    SWE-bench uses for babel/babel and facebook/docusaurus. Tests with the same title in different
    describe blocks then share an id, and the worst outcome wins. `titles="path"` gives
    `A > B > title`, the form of `parse_log_jest_json` (swebench's `JEST_JSON_JQ_TRANSFORM` joins
    `ancestorTitles` and `title` with " > "; used for one immutable-js task). jest's own `fullName`
    joins with spaces and is neither. Status passed -> passed, failed -> failed, anything else
    (pending, skipped, todo, disabled) -> skipped; a test file that failed to load has no assertions.
    Note that `--verbose` prints a skipped test as `○ skipped title`, so SWE-bench's id of a skipped
    test carries a `skipped ` prefix; skipped tests are never graded.
    """
    results: dict[str, Outcome] = {}
    for _file, assertion in _jest_assertions(report):
        title = json_str(assertion, "title")
        if titles == "path":
            title = " > ".join([*_ancestors(assertion), title])
        record(results, title, _jest_status(assertion))
    return results


def parse_vitest_json(report: bytes, files: Iterable[str] = ()) -> dict[str, Outcome]:
    """`vitest run --reporter=json --outputFile=FILE`, jest's shape; the id is `file > A > B > title`.

    That is the line `parse_log_vitest` reads from `--reporter=verbose` (checked with vitest 3.2:
    `✓ packages/x/__tests__/a.spec.ts > suite > title 2ms`): unlike jest, vitest prints the test file
    and every describe title. The report has the file's absolute path; its id part is the run test file
    (from `files`, relative to the repository, which is vitest's root) that the path ends with, or the
    path as written when none does. Statuses map as in `parse_jest_json` (skipped, todo -> skipped).
    """
    known = [f.removeprefix("./") for f in files]
    results: dict[str, Outcome] = {}
    for file, assertion in _jest_assertions(report):
        matches = [f for f in known if file == f or file.endswith("/" + f)]
        shown = max(matches, key=len) if matches else file
        record(
            results, " > ".join([shown, *_ancestors(assertion), json_str(assertion, "title")]), _jest_status(assertion)
        )
    return results


def _ancestors(assertion: dict[str, Any]) -> list[str]:
    value = assertion.get("ancestorTitles") or []
    if not isinstance(value, list) or not all(isinstance(title, str) for title in value):
        raise ValueError("unreadable report: ancestorTitles is not a list of strings")
    return value


def _jest_assertions(report: bytes) -> Iterator[tuple[str, dict[str, Any]]]:
    """(test file as written, assertion result) for every test of a jest/vitest JSON report."""
    data = json_document(report)
    if "testResults" not in data:
        raise ValueError("not a jest/vitest JSON report: no testResults")
    for suite in json_list(data, "testResults"):
        file = str(PurePosixPath(str(suite.get("name", ""))))
        for assertion in json_list(suite, "assertionResults"):
            yield file, assertion


def _jest_status(assertion: dict[str, Any]) -> Outcome:
    status = assertion.get("status")
    return "passed" if status == "passed" else "failed" if status == "failed" else "skipped"
