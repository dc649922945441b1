"""Shared pieces of the report parsers of the language packs: XML documents and testcases, JSON lines.

Every parser is `parse_x(report, files) -> {test id: outcome}`, in its language pack
(`languages.<pack>`), keyed by the ids SWE-bench's log parser for that language reads
(`harness/log_parsers/<language>.py`, v5.0.2). An unreadable report raises `ValueError`
(`ET.ParseError` is one); a test missing from the result did not report, and callers treat it as
failed (a crashed binary, a package or target that did not build). Duplicate ids keep the worst
outcome (`record`, `junit.worst`), as `junit.py` does.

Titles containing a newline cannot be matched by any console parser (the line is cut); a report keeps
them whole. XML reports are read with the stdlib's expat, and a DOCTYPE is refused, so no entity (let
alone an external one) is ever expanded: no test tool writes one.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any
from xml.parsers import expat

from swe_forge_dagster.execution.junit import Outcome, worst

_JUNK_AFTER_ROOT = expat.errors.codes[expat.errors.XML_ERROR_JUNK_AFTER_DOC_ELEMENT]
_XML_RESULTS: dict[str, Outcome] = {"error": "error", "failure": "failed", "skipped": "skipped"}


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


def _refuse_doctype(*_args: object) -> None:
    raise ValueError("XML report has a DOCTYPE: refused (no test reporter writes one)")


def xml_testcases(report: bytes) -> Iterator[ET.Element]:
    """Every `<testcase>` of every JUnit-style document in `report`."""
    for document in split_xml_documents(report):
        root = ET.fromstring(document)  # already checked: one document, no DOCTYPE
        if root.tag not in ("testsuites", "testsuite"):
            raise ValueError(f"not a JUnit-style report: root element is <{root.tag}>")
        yield from root.iter("testcase")


def xml_outcome(case: ET.Element) -> Outcome:
    """The worst result child wins; none means passed."""
    outcome: Outcome = "passed"
    for child in case:
        if (found := _XML_RESULTS.get(child.tag)) is not None:
            outcome = worst(outcome, found)
    return outcome


def record(results: dict[str, Outcome], test_id: str, outcome: Outcome) -> None:
    results[test_id] = worst(results[test_id], outcome) if test_id in results else outcome


def json_line(line: bytes) -> dict[str, Any] | None:
    """One JSON object line of a stream, or None for anything else (text printed between events)."""
    line = line.strip()
    if not line.startswith(b"{"):
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def json_document(report: bytes) -> dict[str, Any]:
    try:
        data = json.loads(report)
    except ValueError as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ValueError(f"unreadable JSON report: {error}") from None
    if not isinstance(data, dict):
        raise ValueError(f"unreadable JSON report: top level is {type(data).__name__}, not an object")
    return data


def json_list(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ValueError(f"unreadable report: {key!r} is not a list of objects")
    return value


def json_str(item: dict[str, Any], key: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise ValueError(f"unreadable report: a test has no string {key!r}")
    return value
