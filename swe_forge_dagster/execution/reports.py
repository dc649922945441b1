"""Per-test outcomes from the structured reports of non-Python test runners, keyed by SWE-bench's ids.

Every parser is `parse_x(report, files) -> {test id: outcome}`; `files` are the test files that were run
(only vitest needs them). An unreadable report raises `ValueError` (`ET.ParseError` is one); a test
missing from the result did not report, and callers treat it as failed (a crashed binary, a package
or target that did not build). Duplicate ids keep the worst outcome (`junit.worst`), as `junit.py` does.

The ids are what the `swebench` package's log parsers (`harness/log_parsers/*.py`, v5.0.2) read from
the console log of the same run, checked against real runs in `tests/test_reports.py`:

- GoogleTest `suite.test` (`Nums/ParamTest.even/0`, `TypedT/1.size`): `c.py:116` `parse_log_googletest`
  reads `[       OK ] suite.test (0 ms)`. For a *failed* parameterized test gtest appends
  `, where GetParam() = 3` to that line and SWE-bench keeps it in the id; the report has the bare id.
- Go `TestX/sub_case`: `go.py:19` `parse_log_gotest` reads `--- PASS: TestX/sub_case (0.00s)`.
- mocha the full title, `describe titles + test title` joined by spaces: `javascript.py:757`
  `parse_log_tap` (axios) reads `ok 1 issues 5028 should handle ...` from mocha's TAP reporter.
- jest the bare test title: `javascript.py:638` `parse_log_jest` (babel, docusaurus) reads `--verbose`
  lines `✓ title (2 ms)`; `titles="path"` gives `A > B > title` as `parse_log_jest_json` (`:662`).
- vitest `file > A > B > title`: `javascript.py:681` `parse_log_vitest` reads vitest's verbose lines
  `✓ dir/x.spec.ts > A > title 1ms`, the file relative to vitest's root.
- Rust the libtest name `tests::x`: `rust.py:16` `parse_log_cargo` reads `test tests::x ... ok`.
- Java `pkg.Class#method`: `java.py:27` `parse_log_maven` takes the id from `-Dtest=`, and the
  Multilingual rows of google/gson use `com.google.gson.stream.JsonWriterTest#testDoubles`.

Titles containing a newline cannot be matched by any console parser (the line is cut); a report keeps
them whole. XML reports are read with the stdlib's expat, and a DOCTYPE is refused, so no entity (let
alone an external one) is ever expanded: no test tool writes one.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath
from typing import Any, Literal
from xml.parsers import expat

from swe_forge_dagster.execution.junit import Outcome, worst

_JUNK_AFTER_ROOT = expat.errors.codes[expat.errors.XML_ERROR_JUNK_AFTER_DOC_ELEMENT]
_XML_RESULTS: dict[str, Outcome] = {"error": "error", "failure": "failed", "skipped": "skipped"}
_SURE_FLAKY: dict[str, Outcome] = {"flakyFailure": "failed", "flakyError": "error"}


def split_xml_documents(report: bytes) -> list[bytes]:
    """The XML documents of a report made by concatenating files (`cat TEST-*.xml > report`).

    Split where expat finds content after the root element closes, not on `<?xml`, so a document that
    contains `<?xml` in a CDATA section or an attribute (a test's failure message) is not cut. An empty
    report has no documents; a truncated or malformed one raises `ValueError`, as does a DOCTYPE.
    """
    documents: list[bytes] = []
    rest = report.lstrip()
    while rest:
        parser = expat.ParserCreate()
        parser.StartDoctypeDeclHandler = _refuse_doctype
        try:
            parser.Parse(rest, True)
        except expat.ExpatError as error:
            if error.code != _JUNK_AFTER_ROOT or parser.ErrorByteIndex <= 0:
                raise ValueError(f"unreadable XML report (document {len(documents) + 1}): {error}") from None
            end = parser.ErrorByteIndex
            documents.append(rest[:end])
            rest = rest[end:].lstrip()
            continue
        documents.append(rest)
        break
    return documents


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
    for case in _xml_testcases(report):
        outcome = _xml_outcome(case)
        if case.get("result") in ("skipped", "suppressed") or case.get("status") == "notrun":
            outcome = worst(outcome, "skipped")
        _record(results, f"{case.get('classname', '')}.{case.get('name', '')}", outcome)
    return results


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
    reports its own, and a forged failure, lose to the worse one). Use Go >= 1.20 to trust the report.
    """
    finished: dict[tuple[str, str], Outcome] = {}
    started: set[tuple[str, str]] = set()
    for line in report.splitlines():
        event = _json_line(line)
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
        _record(results, test, outcome)
    return results


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
    for case in _xml_testcases(_CONTROL_REF.sub(_control_to_private, report)):
        classname, name = case.get("classname", ""), case.get("name", "")
        title = (f"{classname} {name}" if classname else name).translate(_PRIVATE_TO_CONTROL)
        _record(results, title.replace("#", "") if strip_hash else title, _xml_outcome(case))
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
    data = _json_document(report)
    lists: dict[str, Outcome] = {"passes": "passed", "pending": "skipped", "failures": "failed"}
    if not lists.keys() <= data.keys():
        raise ValueError("not a mocha JSON report: no passes/pending/failures")
    results: dict[str, Outcome] = {}
    for key, outcome in lists.items():
        for test in _list(data, key):
            title = _str(test, "fullTitle")
            _record(results, title.replace("#", "") if strip_hash else title, outcome)
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
        title = _str(assertion, "title")
        if titles == "path":
            title = " > ".join([*_ancestors(assertion), title])
        _record(results, title, _jest_status(assertion))
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
        _record(results, " > ".join([shown, *_ancestors(assertion), _str(assertion, "title")]), _jest_status(assertion))
    return results


_LIBTEST_LINE = re.compile(r"test (?P<name>.+?) \.\.\. (?P<result>ok|FAILED|ignored)(?:, .*| <[\d.]+s>)?")
_LIBTEST_EVENTS: dict[str, Outcome] = {"ok": "passed", "failed": "failed", "ignored": "skipped"}


def parse_libtest(report: bytes, files: Iterable[str] = ()) -> dict[str, Outcome]:
    """cargo test's results: libtest's JSON events, or else its text lines; the id is the test's name.

    The runner uses JSON (`RUSTC_BOOTSTRAP=1 cargo test -- -Z unstable-options --format json >
    FILE`): `{"type":"test","event":"ok|failed|ignored","name":"tests::x"}`; a test `started` without
    a result was running when its binary aborted, and is failed. When the report holds any libtest JSON
    event (suite or test), text lines are ignored: they can only come from a test's output.

    The text form (stable `cargo test 2>&1 > FILE`): `test tests::x ... ok|FAILED|ignored[, reason]`,
    as `parse_log_cargo` reads it, accepted only between `running N tests` and that binary's
    `failures:`/`test result:` line, so a failed test's captured output (printed in the failures
    section) cannot add results. Doctests (`src/lib.rs - f (line 3)`) are kept, though SWE-bench's
    `\\S+` never matches them.

    Both are console output: libtest captures only `print!`-family output, so a test that writes to
    the process's stdout directly (`std::io::stdout().write_all`, a child process, fd 1)
    can print fake result lines or JSON events, and a forged pass for a test that never ran is believed.
    """
    events: dict[str, Outcome] = {}
    started: set[str] = set()  # of the current test binary: a binary's suite starts with "suite" "started"
    text: dict[str, Outcome] = {}
    json_mode = in_run = False
    for raw in report.splitlines():
        event = _json_line(raw)
        if event is not None and event.get("type") in ("suite", "test"):
            json_mode = True
            name, kind = event.get("name"), event.get("event")
            if event["type"] == "suite" and kind == "started":
                _flush_unfinished(events, started)
            elif event["type"] == "test" and isinstance(name, str):
                if kind == "started":
                    started.add(name)
                elif (outcome := _LIBTEST_EVENTS.get(str(kind))) is not None:
                    started.discard(name)
                    _record(events, name, outcome)
            continue
        line = raw.decode("utf-8", "replace").rstrip("\r")
        if re.fullmatch(r"running \d+ tests?", line):
            in_run = True
        elif line == "failures:" or line.startswith("test result: "):
            in_run = False
        elif in_run and (match := _LIBTEST_LINE.fullmatch(line)):
            _record(text, match["name"], _LIBTEST_EVENTS[match["result"].lower()])
    _flush_unfinished(events, started)
    return events if json_mode else text


def _flush_unfinished(events: dict[str, Outcome], started: set[str]) -> None:
    """Tests a binary started but never finished: it aborted (or hung and was killed) while they ran."""
    for name in started:
        _record(events, name, "failed")
    started.clear()


def parse_surefire(
    report: bytes, files: Iterable[str] = (), *, style: Literal["maven", "gradle", "junit4"] = "maven"
) -> dict[str, Outcome]:
    """Maven Surefire / Gradle JUnit XML (`TEST-*.xml`, one document per test class, concatenated).

    `style` picks the id form, as SWE-bench Multilingual's Java repositories differ: "maven"
    `pkg.Class#method` (default: `parse_log_maven` takes the id from `-Dtest=`, and gson's and druid's
    rows list `Class#method`; javaparser's list bare class names, which the method ids do not give),
    "gradle" `pkg.Class > method` (`parse_log_gradle_custom`, rxjava, lucene) and "junit4"
    `method(pkg.Class)` (`parse_log_ant`, lombok). `<failure>` is failed, `<error>` error, `<skipped>`
    skipped; surefire's rerun records `flakyFailure`/`flakyError` count as failures, since a test that
    only passed on a retry is not a pass (validation finds flakiness by running the suite again).
    """
    results: dict[str, Outcome] = {}
    for case in _xml_testcases(report):
        classname, name = case.get("classname", ""), case.get("name", "")
        if not classname:
            test_id = name
        elif style == "gradle":
            test_id = f"{classname} > {name}"
        elif style == "junit4":
            test_id = f"{name}({classname})"
        else:
            test_id = f"{classname}#{name}"
        outcome = _xml_outcome(case)
        for child in case:
            if (flaky := _SURE_FLAKY.get(child.tag)) is not None:
                outcome = worst(outcome, flaky)
        _record(results, test_id, outcome)
    return results


def _refuse_doctype(*_args: object) -> None:
    raise ValueError("XML report has a DOCTYPE: refused (no test reporter writes one)")


def _xml_testcases(report: bytes) -> Iterator[ET.Element]:
    """Every `<testcase>` of every JUnit-style document in `report`."""
    for document in split_xml_documents(report):
        root = ET.fromstring(document)  # already checked: one document, no DOCTYPE
        if root.tag not in ("testsuites", "testsuite"):
            raise ValueError(f"not a JUnit-style report: root element is <{root.tag}>")
        yield from root.iter("testcase")


def _xml_outcome(case: ET.Element) -> Outcome:
    """The worst result child wins; none means passed."""
    outcome: Outcome = "passed"
    for child in case:
        if (found := _XML_RESULTS.get(child.tag)) is not None:
            outcome = worst(outcome, found)
    return outcome


def _record(results: dict[str, Outcome], test_id: str, outcome: Outcome) -> None:
    results[test_id] = worst(results[test_id], outcome) if test_id in results else outcome


def _json_line(line: bytes) -> dict[str, Any] | None:
    """One JSON object line of a stream, or None for anything else (text printed between events)."""
    line = line.strip()
    if not line.startswith(b"{"):
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _json_document(report: bytes) -> dict[str, Any]:
    try:
        data = json.loads(report)
    except ValueError as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ValueError(f"unreadable JSON report: {error}") from None
    if not isinstance(data, dict):
        raise ValueError(f"unreadable JSON report: top level is {type(data).__name__}, not an object")
    return data


def _list(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ValueError(f"unreadable report: {key!r} is not a list of objects")
    return value


def _str(item: dict[str, Any], key: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise ValueError(f"unreadable report: a test has no string {key!r}")
    return value


def _ancestors(assertion: dict[str, Any]) -> list[str]:
    value = assertion.get("ancestorTitles") or []
    if not isinstance(value, list) or not all(isinstance(title, str) for title in value):
        raise ValueError("unreadable report: ancestorTitles is not a list of strings")
    return value


def _jest_assertions(report: bytes) -> Iterator[tuple[str, dict[str, Any]]]:
    """(test file as written, assertion result) for every test of a jest/vitest JSON report."""
    data = _json_document(report)
    if "testResults" not in data:
        raise ValueError("not a jest/vitest JSON report: no testResults")
    for suite in _list(data, "testResults"):
        file = str(PurePosixPath(str(suite.get("name", ""))))
        for assertion in _list(suite, "assertionResults"):
            yield file, assertion


def _jest_status(assertion: dict[str, Any]) -> Outcome:
    status = assertion.get("status")
    return "passed" if status == "passed" else "failed" if status == "failed" else "skipped"
