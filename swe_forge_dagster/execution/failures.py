"""Why a test failed, as its report says, and whether the reason is a network host the sandbox cannot reach.

Sandboxes run without network (validation, the harness's checks) or with a registry only, so a test
that calls an internet host fails there whatever the code does: that is neither a broken task nor
a wrong fix, and both validation and the harness say so instead (`needs_network`). The message is
taken from the runner's own report: the XML reports (JUnit, GoogleTest, mocha xunit, Surefire)
carry it on the `<failure>`/`<error>` element, and each testcase is mapped to its id by the runner's
own parser, so ids here are exactly the outcomes' ids; Go's JSON stream carries the test's output.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable

from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.execution.reports import split_xml_documents

MAX_MESSAGE = 600
NETWORK_ERRORS = re.compile(
    r"(?-i:\b(?:ENOTFOUND|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH)\b)|getaddrinfo|Name or service not known|"
    r"Temporary failure in name resolution|Network is unreachable|No address associated with hostname|"
    r"Could not resolve host|nodename nor servname|dial tcp: lookup|no such host|"
    r"Failed to establish a new connection|NameResolutionError|urlopen error|Failed to download any of the following",
    re.IGNORECASE,
)
"""Node's error codes as whole upper-case words (`FileNotFoundError` is no `ENOTFOUND`), the rest in any case; the
last two are what a build that fetches native sources says when the host is unreachable (urllib's error, and
matplotlib's setupext after trying each mirror of freetype's tarball)."""


def needs_network(message: str | None) -> bool:
    """Whether a failure message is a host that could not be resolved or reached (not a refused loopback port)."""
    return bool(message and NETWORK_ERRORS.search(message))


def failure_messages(
    report: bytes, parse: Callable[[bytes, Iterable[str]], dict[str, Outcome]], files: Iterable[str] = ()
) -> dict[str, str]:
    """Test id -> the failure or error text of each test that did not pass (best effort: {} when unreadable)."""
    text = report.lstrip()
    try:
        if text.startswith((b"<", b"\xef\xbb\xbf<")):
            return _xml_messages(report, parse, list(files))
        return _go_messages(report)
    except (ET.ParseError, ValueError, KeyError, TypeError, RecursionError):
        return {}


def _xml_messages(
    report: bytes, parse: Callable[[bytes, Iterable[str]], dict[str, Outcome]], files: list[str]
) -> dict[str, str]:
    messages: dict[str, str] = {}
    for document in split_xml_documents(report):
        root = ET.fromstring(document)
        for suite in [root, *root.iter("testsuite")]:
            for case in suite.findall("testcase"):
                problem = next((child for child in case if child.tag in ("failure", "error")), None)
                if problem is None:
                    continue
                wrapper = ET.Element("testsuite", suite.attrib if suite.tag == "testsuite" else {})
                wrapper.append(case)
                ids = list(parse(ET.tostring(wrapper), files))
                message = (problem.get("message") or "") + "\n" + (problem.text or "")
                for test_id in ids:
                    messages.setdefault(test_id, message.strip()[:MAX_MESSAGE])
    return messages


def _go_messages(report: bytes) -> dict[str, str]:
    """`go test -json`: the output lines of each test that failed."""
    output: dict[str, list[str]] = {}
    failed: set[str] = set()
    for line in report.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        test = event.get("Test") if isinstance(event, dict) else None
        if not test:
            continue
        if event.get("Action") == "output":
            output.setdefault(test, []).append(str(event.get("Output", "")))
        elif event.get("Action") == "fail":
            failed.add(test)
    return {test: "".join(output.get(test, []))[-MAX_MESSAGE:].strip() for test in failed}
