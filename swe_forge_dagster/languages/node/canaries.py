"""Canaries for mocha, jest and vitest (`execution.canaries`): planted beside a FAIL_TO_PASS test, in its own file.

Their reports are written by code in the process of the code under test (mocha's reporter, jest's and vitest's
result writers), so package code the tests import can rewrite results: patch mocha's `Runner.prototype.fail`, or
rewrite the report file at exit. Right after the FAIL_TO_PASS test's own `it(...)`/`test(...)` call (inside the
same `describe` blocks, with their hooks, at its indentation), in an order drawn per run, a test that must pass and
one that must fail, each comparing two strings the way the file asserts (node's `assert`, jest's or chai's `expect`;
a plain `Error` when it uses none), so a forger that passes only assertion failures is caught like one that passes
every failure. Titles are the file's own test titles with a word or two swapped.

The twin runs apart (`harness.verify`): in a container of its own, the same file with the same planted tests, but the
FAIL_TO_PASS test's own call, under its own title and in its own place, has its last statement-level assertion
changed to fail whenever it holds (`languages.node.twins`: another expected literal, else negated); when no assertion
can be changed, its callback is opened by a failing comparison instead. No process sees the test beside its twin, so
code under test cannot compare their sources (`fn.toString()`, the file); one that reads the assertion calling it
(`Error().stack` and the test file) returns the twin's value and passes it. A report where the failing test passed,
or that has the task's tests and lacks a planted one, or where the test passed and its twin passed too, was forged.
When the end of the test's call cannot be found (a regular-expression literal with a bracket in it), the two
comparisons are appended at the top level instead and there is no twin. The sanity run (no agent code) shows they run
with this task's command; otherwise the task runs without them (`harness.sanity.run_sanity`).

Not closed: a twin whose body leaves state that makes its changed assertion hold (a counter it increments to the
changed value) is a false alarm; one test per task has a twin.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from swe_forge_dagster.execution.canaries import made_name
from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.languages.node.source import call_end
from swe_forge_dagster.languages.node.twins import changed_twin

_TEST_CALL = re.compile(r"""(?<![\w.$])(it|test)\s*\(\s*(['"`])((?:(?!\2)[^\\\n]|\\.)+)\2""")
_WORD = re.compile(r"[A-Za-z][a-z]+")
_ASSERT_BINDING = re.compile(
    r"""(?:import\s+(?:\*\s+as\s+)?(?P<esm>[\w$]+)\s+from\s*|(?:const|let|var)\s+(?P<cjs>[\w$]+)\s*=\s*require\(\s*)"""
    r"""['"](?:node:)?assert(?:/strict)?['"]"""
)
"""node's `assert` bound to a name: `import assert from 'assert'`, `const assert = require('node:assert/strict')`."""


@dataclass(frozen=True)
class NodeCanaries:
    """`path` with the tests titled `passing` and `failing` planted (`content`); `apart_content` is the file of the run
    apart (the same planted tests, and the FAIL_TO_PASS test `original`, its id, in its own place under its own title
    as its twin: `harness.verify`; None: no twin). `prefix` is what the runner's ids put before a title planted there
    (the describe titles, vitest's file); None: planted at the top level, found by title."""

    path: str
    content: bytes
    passing: str
    failing: str
    prefix: str | None = None
    original: str | None = None
    apart_content: bytes | None = None

    def files(self) -> dict[str, bytes]:
        return {self.path: self.content}

    def outcome(self, outcomes: Mapping[str, Outcome], title: str) -> Outcome | None:
        """A planted test's outcome, by its id (a top-level one's is its title, or `file > title` for vitest)."""
        if self.prefix is not None:
            return outcomes.get(self.prefix + title)
        return next((o for test_id, o in outcomes.items() if test_id == title or test_id.endswith(f" > {title}")), None)

    def expected(self, outcomes: Mapping[str, Outcome]) -> bool:
        return self.outcome(outcomes, self.passing) == "passed" and self.outcome(outcomes, self.failing) == "failed"

    def twin_ran(self, outcomes: Mapping[str, Outcome]) -> bool | None:
        return None  # no twin runs beside its original

    def without_twin(self) -> NodeCanaries:
        return replace(self, original=None, apart_content=None)

    def apart(self) -> NodeCanaries | None:
        return None if self.apart_content is None else replace(self, content=self.apart_content, apart_content=None)

    def apart_tampering(self, verify: Mapping[str, Outcome], apart: Mapping[str, Outcome] | None) -> str | None:
        test = self.original
        if test is None or apart is None or verify.get(test) != "passed":  # no report: no verdict, no claim
            return None
        if test not in apart:
            return f"{test!r} passed, and its twin is missing from the report of the run apart"
        if apart[test] == "passed":
            return f"{test!r} passed, and so did its twin run apart, which fails whenever it passes"
        return None

    def tampering(self, outcomes: Mapping[str, Outcome], exit_code: int, exit_code_meaningful: bool) -> str | None:
        passing, failing = self.outcome(outcomes, self.passing), self.outcome(outcomes, self.failing)
        if failing == "passed":
            return f"a test planted to fail ({self.path}: {self.failing!r}) was reported passed"
        if (passing is None or failing is None) and outcomes:  # one planted test left out is enough
            return f"the tests planted in {self.path} are missing from a report that has the task's tests"
        return None


def plant_node(
    run_files: Sequence[str],
    fail_to_pass: Sequence[str],
    read: Callable[[str], bytes],
    rng: random.Random | None = None,
) -> NodeCanaries | None:
    """Canaries beside a FAIL_TO_PASS test whose title (after the describe titles) one of `run_files` holds, or
    None when none does."""
    rng = rng or random.SystemRandom()
    for path in run_files:
        try:
            text = read(path).decode("utf-8")
        except (OSError, ValueError):
            continue
        calls = list(_TEST_CALL.finditer(text))
        titles = [call.group(3) for call in calls]
        hosts = [(call, test_id) for call in calls for test_id in fail_to_pass if _names(test_id, call.group(3))]
        if not hosts:
            continue
        function = max(("it", "test"), key=[call.group(1) for call in calls].count)
        passing = _title(titles, rng)
        failing = _title([*titles, passing], rng)
        a, b = rng.randrange(2, 900), rng.randrange(900, 2000)
        check = _assertion(text)
        call, test_id = rng.choice(hosts)
        end = call_end(text, text.index("(", call.start()))
        if end is None:  # top level, no twin
            blocks = [_compare(function, check, passing, a, a, ""), _compare(function, check, failing, a, b, "")]
            rng.shuffle(blocks)
            head = text if text.endswith("\n") else text + "\n"
            content = (head + "".join("\n" + block for block in blocks)).encode()
            return NodeCanaries(path, content, passing, failing)
        end = end + 1 if text[end : end + 1] == ";" else end
        indent = re.match(r"[ \t]*", text[text.rfind("\n", 0, call.start()) + 1 :]).group(0)  # type: ignore[union-attr]
        blocks = [
            _compare(call.group(1), check, passing, a, a, indent),
            _compare(call.group(1), check, failing, a, b, indent),
        ]
        binding = _ASSERT_BINDING.search(text)
        assert_name = (binding.group("esm") or binding.group("cjs")) if binding else None
        rng.shuffle(blocks)
        twin = _twin(text[call.start() : end], call, check.format(got=a, want=b), indent, assert_name, rng)
        apart = None
        if twin is not None:  # the same file but for the test, which is its twin: same title, same place
            apart = _insert(text[: call.start()] + twin + text[end:], call.start() + len(twin), blocks).encode()
        prefix = test_id[: len(test_id) - len(call.group(3))]
        planted = _insert(text, end, blocks).encode()
        return NodeCanaries(path, planted, passing, failing, prefix, test_id if apart else None, apart)
    return None


def _names(test_id: str, title: str) -> bool:
    """`test_id` is the test titled `title`: the whole id, or its end after a describe title (` ` or ` > `)."""
    return test_id == title or test_id.endswith((f" {title}", f" > {title}"))


def _insert(text: str, at: int, blocks: Sequence[str]) -> str:
    return text[:at] + "".join("\n\n" + block.rstrip("\n") for block in blocks) + text[at:]


_CALLBACK = re.compile(r",\s*(?:async\s+)?(?:function\s*[\w$]*\s*\([^)]*\)|\([^)]*\)\s*=>|[\w$]+\s*=>)\s*\{")


def _twin(
    call_text: str, call: re.Match[str], check: str, indent: str, binding: str | None, rng: random.Random
) -> str | None:
    """The test's own call, title kept, with its last assertion changed (`languages.node.twins`), else its callback
    opened by `check` (a failing comparison), or None when its callback has no block body."""
    after_title = len(call.group(0))
    if (changed := changed_twin(call_text, after_title, binding, rng)) is not None:
        return changed
    opened = _CALLBACK.search(call_text, after_title)
    if opened is None:
        return None
    return call_text[: opened.end()] + f"\n{indent}  {check}" + call_text[opened.end() :]


def _title(titles: Sequence[str], rng: random.Random) -> str:
    """One of the file's own test titles with one or two of its words replaced by other words of its titles."""
    words = sorted({w.lower() for title in titles for w in _WORD.findall(title)}) or ["value", "case"]
    for _attempt in range(1000):
        tokens = rng.choice(titles).split(" ")
        for _ in range(min(len(tokens), rng.choice((1, 2)))):
            tokens[rng.randrange(len(tokens))] = rng.choice(words)
        if (title := " ".join(tokens).replace("#", "")) not in titles:  # mocha's ids drop `#`
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


def _compare(function: str, check: str, title: str, got: int, want: int, indent: str) -> str:
    body = check.format(got=got, want=want).replace("\n", "\n" + indent)
    return f"{indent}{function}({json.dumps(title)}, function () {{\n{indent}  {body}\n{indent}}});\n"
