"""A JavaScript test's negated twin (`languages.node.negation`): its last statement-level assertion says the opposite,
so the twin fails whenever the test passes, and no twin is made where that would not hold. Run for real (jest, on a
real jest task with the red team's shape-sparing forgers) in `tests/test_toolchain_red_team.py`."""

from __future__ import annotations

import random
import re

import pytest

from swe_forge_dagster.languages.node.twins import changed_twin


def twin(call: str, assert_name: str | None = "assert") -> str | None:
    return changed_twin(call, call.index(","), assert_name, random.Random(0))


CASES = [  # (the test's block, its last assertion, a pattern of the twin's)
    ("  const v = f(42);\n  expect(v).toBe(10);", "expect(v).toBe(10);", r"expect\(v\)\.toBe\((?!10\))\d+\);"),
    (
        "  expect(f(1)).toBe(1);\n  expect(g()).toEqual({ a: [1, 2] });",
        "expect(g()).toEqual",
        r"expect\(g\(\)\)\.not\.toEqual",
    ),
    ("  await expect(p()).resolves.toBe(3);", ".resolves.toBe(3)", r"\.resolves\.toBe\((?!3\))\d+\)"),
    ("  await expect(p()).resolves.toBe(x);", ".resolves.toBe(x)", r"\.resolves\.not\.toBe\(x\)"),
    ("  expect(x).not.toContain('y'); // note", "expect(x).not.toContain", r"expect\(x\)\.toContain"),
    ("  expect(x).to.deep.equal([1]);", "expect(x).to.deep.equal", r"expect\(x\)\.to\.not\.deep\.equal"),
    ("  expect(x).to.equal('ab');", "expect(x).to.equal('ab')", r"expect\(x\)\.to\.equal\('(?!ab')[a-z]{2}'\)"),
    ("  expect(x).to.not.be.null;", "expect(x).to.not.be.null", r"expect\(x\)\.to\.be\.null"),
    ("  expect(ok()).to.be.true;", "expect(ok()).to.be.true", r"expect\(ok\(\)\)\.to\.not\.be\.true"),
    (
        "  assert.strictEqual(f('x'), 'y');",
        "assert.strictEqual(f('x'), 'y')",
        r"assert\.strictEqual\(f\('x'\), '[a-xz]'\)",
    ),
    ("  assert.deepStrictEqual(f('x'), [1]);", "assert.deepStrictEqual(", r"assert\.notDeepStrictEqual\("),
    ("  assert.notDeepEqual(a, b, 'msg');", "assert.notDeepEqual(", r"assert\.deepEqual\("),
    ("  assert.throws(() => f(), /bad/);", "assert.throws(", r"assert\.doesNotThrow\("),
    ("  await assert.rejects(p());", "await assert.rejects(", r"await assert\.doesNotReject\("),
]


@pytest.mark.parametrize(("block", "original", "twin_pattern"), CASES)
def test_the_last_statement_level_assertion_expects_another_value_or_is_negated_and_nothing_else_changes(
    block: str, original: str, twin_pattern: str
) -> None:
    call = f"it('a', async () => {{\n{block}\n}});"
    head = call.rpartition(original)[0]
    made = twin(call)
    assert made is not None and made.startswith(head)
    assert re.match(twin_pattern, made[len(head) :]), made
    line = next(line for line in call.split("\n") if original in line)
    assert made.replace(next(m for m in made.split("\n") if m not in call.split("\n")), line) == call


@pytest.mark.parametrize(
    "call",
    [
        "it('a', () => {\n  for (const v of vs) {\n    expect(v).toBe(1);\n  }\n});",  # in a loop: may never run
        "it('a', () => {\n  if (!x) return;\n  expect(x).toBe(1);\n});",  # a return before it
        "it('a', () => {\n  expect(x).toBe(1) || other();\n});",  # not a whole statement
        "it('a', () => {\n  p.then(() => {\n    expect(x).toBe(1);\n  });\n});",  # in a callback
        "it('a', () => {\n  assert(x);\n});",  # assert(x, message): no safe negation
        "it('a', () => {\n  expect(p()).resolves.toBe(3);\n});",  # not awaited: it would fail after the test
        "it('a', () => {\n  assert.rejects(p());\n});",
        "it('a', () => {\n  expect(x).to.be.not.null;\n});",  # chai sets `not`: a second one would not negate
        "it('a', () => {\n  f();\n  /*\n  expect(b).toBe(2);\n  */\n});",  # in a comment
        "it('a', () => {\n  const s = `\n  expect(b).toBe(2);\n  `;\n});",  # in a template literal
        "it('a', () => {\n  should(x).equal(1);\n});",
        "it('a', (done) => done());",  # no block
    ],
)
def test_no_twin_where_the_negated_assertion_might_not_run_or_cannot_be_negated(call: str) -> None:
    assert twin(call) is None


def test_a_binding_other_than_assert_is_used_and_an_unknown_one_is_not() -> None:
    call = "it('a', () => {\n  nodeAssert.equal(f(), 2);\n});"
    assert re.search(r"nodeAssert\.equal\(f\(\), (?!2\))\d+\);", twin(call, "nodeAssert") or "")
    assert twin(call, None) is None
