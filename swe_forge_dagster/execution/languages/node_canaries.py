"""Canaries for mocha, jest and vitest (`execution.canaries`): a test that must pass and one that must fail, appended
to the file of a FAIL_TO_PASS test.

Their reports are written by code in the process of the code under test (mocha's reporter, jest's and vitest's
result writers), so package code the tests import can rewrite results: patch mocha's `Runner.prototype.fail`, or
rewrite the report file at exit. Two top-level tests are appended to the task's own test file, in an order drawn
per run, with the test function that file uses (`it` or `test`, imported or global) and titles made of the words
of its own test titles; each compares two strings, and throws a plain `Error` when they differ (no assertion
library, and nothing TypeScript's checker rejects). A report where the failing one passed, or that has the task's
tests and lacks both, was forged. The sanity run (no agent code) shows they run with this task's command; a file
that no longer loads with them runs without (`harness.checks.run_sanity`).

Not closed: there is no twin of a task test here (its body is a callback inside `describe` blocks whose hooks it
needs), so a forger that reads the test file and spares tests whose body only compares two literals is not caught.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from swe_forge_dagster.execution.canaries import made_name
from swe_forge_dagster.execution.junit import Outcome

_TEST_CALL = re.compile(r"""(?<![\w.$])(it|test)\s*\(\s*(['"`])((?:(?!\2)[^\\\n]|\\.)+)\2""")
_WORD = re.compile(r"[A-Za-z][a-z]+")
_ASSERT_BINDING = re.compile(
    r"""(?:import\s+(?:\*\s+as\s+)?(?P<esm>[\w$]+)\s+from\s*|(?:const|let|var)\s+(?P<cjs>[\w$]+)\s*=\s*require\(\s*)"""
    r"""['"](?:node:)?assert(?:/strict)?['"]"""
)
"""node's `assert` bound to a name: `import assert from 'assert'`, `const assert = require('node:assert/strict')`."""


@dataclass(frozen=True)
class NodeCanaries:
    """`path` with the tests titled `passing` and `failing` appended (`content`)."""

    path: str
    content: bytes
    passing: str
    failing: str

    def files(self) -> dict[str, bytes]:
        return {self.path: self.content}

    def outcome(self, outcomes: Mapping[str, Outcome], title: str) -> Outcome | None:
        """A top-level test's outcome: its id is its title (mocha, jest) or `file > title` (vitest)."""
        return next((o for test_id, o in outcomes.items() if test_id == title or test_id.endswith(f" > {title}")), None)

    def expected(self, outcomes: Mapping[str, Outcome]) -> bool:
        return self.outcome(outcomes, self.passing) == "passed" and self.outcome(outcomes, self.failing) == "failed"

    def twin_ran(self, outcomes: Mapping[str, Outcome]) -> bool | None:
        return None

    def without_twin(self) -> NodeCanaries:
        return self

    def tampering(self, outcomes: Mapping[str, Outcome], exit_code: int, exit_code_meaningful: bool) -> str | None:
        passing, failing = self.outcome(outcomes, self.passing), self.outcome(outcomes, self.failing)
        if failing == "passed":
            return f"a test planted to fail ({self.path}: {self.failing!r}) was reported passed"
        if passing is None and failing is None and outcomes:
            return f"the tests planted in {self.path} are missing from a report that has the task's tests"
        return None


def plant_node(
    run_files: Sequence[str],
    fail_to_pass: Sequence[str],
    read: Callable[[str], bytes],
    rng: random.Random | None = None,
) -> NodeCanaries | None:
    """Canaries in the test file that holds the last title of a FAIL_TO_PASS test, or None when none does."""
    rng = rng or random.SystemRandom()
    for path in run_files:
        try:
            text = read(path).decode("utf-8")
        except (OSError, ValueError):
            continue
        calls = _TEST_CALL.findall(text)
        titles = [title for _function, _quote, title in calls]
        if not any(test_id.endswith(title) for test_id in fail_to_pass for title in titles):
            continue
        function = max(("it", "test"), key=[name for name, _q, _t in calls].count)
        passing = _title(titles, rng)
        failing = _title([*titles, passing], rng)
        a, b = rng.randrange(2, 900), rng.randrange(900, 2000)
        check = _assertion(text)
        blocks = [_compare(function, check, passing, a, a), _compare(function, check, failing, a, b)]
        rng.shuffle(blocks)
        head = text if text.endswith("\n") else text + "\n"
        return NodeCanaries(path, (head + "".join("\n" + block for block in blocks)).encode(), passing, failing)
    return None


def _title(titles: Sequence[str], rng: random.Random) -> str:
    """One of the file's own test titles with one or two of its words replaced by other words of its titles."""
    words = sorted({w.lower() for title in titles for w in _WORD.findall(title)}) or ["value", "case"]
    for _attempt in range(1000):
        tokens = rng.choice(titles).split(" ")
        for _ in range(min(len(tokens), rng.choice((1, 2)))):
            tokens[rng.randrange(len(tokens))] = rng.choice(words)
        if (title := " ".join(tokens)) not in titles:
            return title
    return made_name(words, titles, 4, rng, " ".join)


def _assertion(text: str) -> str:
    """How the file asserts, as a template of `{got}` and `{want}`, so a failing canary fails the way the task's
    tests fail (an `AssertionError` from node's `assert`, a jest/vitest or chai `expect` error): a forger that
    passes only assertion failures is caught like one that passes every failure."""
    if binding := _ASSERT_BINDING.search(text):
        return (binding.group("esm") or binding.group("cjs")) + ".strictEqual(String({got}), String({want}));"
    if re.search(r"(?<![\w.$])expect\(", text):
        if re.search(r"\)\.to\.", text):  # chai
            return "expect(String({got})).to.equal(String({want}));"
        return "expect(String({got})).toBe(String({want}));"
    return "if (String({got}) !== String({want})) {{\n    throw new Error('expected {got} to equal {want}');\n  }}"


def _compare(function: str, check: str, title: str, got: int, want: int) -> str:
    body = check.format(got=got, want=want)
    return f"{function}({json.dumps(title)}, function () {{\n  {body}\n}});\n"
