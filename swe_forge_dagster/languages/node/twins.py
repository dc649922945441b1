"""A JavaScript test's twin that fails whenever the test passes: its last statement-level assertion changed.

A twin opened by a comparison of two literals fails before its copied body runs, and a forger in the test process
can tell it from the task's tests by that shape (two strings, two numbers, values no package function returned).
This twin reads like the test itself: the same calls, the same values, the same matcher; only its last assertion at
the body's top level expects something else:
- an equality whose expected value is a number or a plain string literal expects another one
  (`expect(x).toBe(10)` -> `expect(x).toBe(13)`; chai's `.to.equal`, node's `assert.strictEqual(x, 'a')`): a forger
  that passes failing equalities, or that passes assertions about values the package returned, passes the twin too;
- any other assertion is negated (`expect(x).toEqual(y)` -> `expect(x).not.toEqual(y)`, chai's `.to.not.`, node's
  `assert.notDeepStrictEqual`): a forger that passes failures passes both; one that knows negation (passes
  positive assertions and fails negated ones) is caught only by the changed-value form.
When the test passes, every assertion of its body held, so the twin's changed one fails, and a report with both
passed was forged. A forger that tells the twin from the test by comparing their sources (same body, one value
changed; which one is the task's it must guess, since the twin is planted before or after it) stays open
(docs/harness.md, threat model).

The assertion must run whenever the test passes: it is a statement of the callback's own block (not in a loop,
branch or callback), with no `return` before it, ending its line. Otherwise there is no negated twin and the
planter falls back to the opening comparison (`languages.node.canaries`).
"""

from __future__ import annotations

import random
import re

from swe_forge_dagster.execution.canaries import another_string, split_top_level
from swe_forge_dagster.languages.node.source import call_end, code_line_starts

_CALLBACK = re.compile(r",\s*(?:async\s+)?(?:function\s*[\w$]*\s*\([^)]*\)|\([^)]*\)\s*=>|[\w$]+\s*=>)\s*\{")
_EXPECT = re.compile(r"(?:await\s+)?expect\(")
_CHAIN = re.compile(r"(?P<mods>(?:\.(?:resolves|rejects))?)(?P<not>\.not)?(?P<rest>\.(?:to\w*)\b)")
_NODE_NEGATIONS = {
    "strictEqual": "notStrictEqual",
    "deepStrictEqual": "notDeepStrictEqual",
    "equal": "notEqual",
    "deepEqual": "notDeepEqual",
    "match": "doesNotMatch",
    "throws": "doesNotThrow",
    "rejects": "doesNotReject",
}
_NODE_NEGATIONS |= {negated: plain for plain, negated in _NODE_NEGATIONS.items()}
_EQUALITY = re.compile(
    r"\.(?:toBe|toEqual|toStrictEqual|toHaveLength|toHaveBeenCalledTimes|to\.(?:deep\.)?(?:equal|eql))\("
)
"""Matchers that hold for exactly one expected value (jest's and chai's)."""
_NODE_EQUALITIES = frozenset({"strictEqual", "equal", "deepEqual", "deepStrictEqual"})
_LITERAL = re.compile(r"""\s*(?:(?P<number>-?\d{1,9})|(?P<quote>['"])(?P<text>[^'"\\\n]*)(?P=quote))\s*""")
_STATEMENT_END = re.compile(r"[ \t]*;?[ \t]*(?://[^\n]*)?(?:\n|$)")


def changed_twin(call_text: str, callback_from: int, assert_name: str | None, rng: random.Random) -> str | None:
    """`call_text` (a test's `it(...)`/`test(...)` call, already renamed) with the last assertion of its callback's
    block changed, or None when no assertion there can be (see the module docstring). `callback_from`: where to look
    for the callback (after the title); `assert_name`: the name node's `assert` is bound to in the file."""
    opened = _CALLBACK.search(call_text, callback_from)
    if opened is None:
        return None
    body_start = opened.end()
    body_end = call_end(call_text, body_start - 1)
    if body_end is None:
        return None
    body = call_text[body_start : body_end - 1]
    indent = _body_indent(body)
    if indent is None:
        return None
    chosen: tuple[int, int, str] | None = None
    code = code_line_starts(body)
    for line in re.finditer(rf"^{re.escape(indent)}(?=\S)", body, re.M):
        if line.start() not in code:
            continue  # inside a comment or a multi-line string
        negation = _change_at(body, line.end(), assert_name, rng)
        if negation is not None:
            chosen = negation
    if chosen is None:
        return None
    start, end, replacement = chosen
    if re.search(r"\breturn\b", body[:start]):
        return None
    new_body = body[:start] + replacement + body[end:]
    return call_text[:body_start] + new_body + call_text[body_end - 1 :]


def _body_indent(body: str) -> str | None:
    for line in body.split("\n"):
        if line.strip():
            return re.match(r"[ \t]*", line).group(0)  # type: ignore[union-attr]
    return None


def _change_at(body: str, at: int, assert_name: str | None, rng: random.Random) -> tuple[int, int, str] | None:
    """(start, end, changed text) of the assertion statement that starts at `at` and ends its line, or None."""
    if expect := _EXPECT.match(body, at):
        end = call_end(body, expect.end() - 1)
        chain = _CHAIN.match(body, end) if end is not None else None
        if end is None or chain is None:
            return None
        stop = _expression_end(body, chain.end())
        if stop is None:
            return None
        mods, rest, after = chain.group("mods"), chain.group("rest"), chain.end()
        statement = body[at:stop]
        awaited = statement.startswith("await")
        if (mods or ".eventually" in statement) and not awaited:
            return None  # an unawaited promise assertion fails after the test: nothing to change safely
        chai_not = rest == ".to" and body.startswith(".not.", after)
        if ".not" in body[after + (len(".not") if chai_not else 0) : stop]:
            return None  # chai sets `not` (`.to.be.not.null`): another would not negate it
        equality = _EQUALITY.match(body, chain.start("rest"))
        if not chain.group("not") and equality and (changed := _changed_argument(body, equality.end() - 1, 0, rng)):
            closed = call_end(body, equality.end() - 1) or stop
            return at, stop, body[at : equality.end() - 1] + changed + body[closed:stop]
        if chain.group("not"):  # expect(x).not.toBe(y) -> expect(x).toBe(y)
            negated = mods + rest
        elif chai_not:  # chai: expect(x).to.not.equal(y)
            negated, after = mods + rest, after + len(".not")
        elif rest == ".to":  # chai: expect(x).to.equal(y) -> expect(x).to.not.equal(y)
            negated = mods + ".to.not"
        else:
            negated = mods + ".not" + rest
        return at, stop, body[at:end] + negated + body[after:stop]
    if assert_name and (node := re.compile(rf"(?:await\s+)?{re.escape(assert_name)}\.(\w+)\(").match(body, at)):
        if node.group(1) not in _NODE_NEGATIONS:
            return None
        if node.group(1) in ("rejects", "doesNotReject") and not body.startswith("await", at):
            return None
        end = call_end(body, node.end() - 1)
        if end is None or _STATEMENT_END.match(body, end) is None:
            return None
        if node.group(1) in _NODE_EQUALITIES and (changed := _changed_argument(body, node.end() - 1, 1, rng)):
            return at, end, body[at : node.end() - 1] + changed
        negated = body[at : node.start(1)] + f"{_NODE_NEGATIONS[node.group(1)]}("
        return at, end, negated + body[node.end() : end]
    return None


def _changed_argument(body: str, open_paren: int, index: int, rng: random.Random) -> str | None:
    """The arguments of the call whose `(` is at `open_paren`, up to its `)`, with argument `index` (the expected
    value) changed to another literal of its kind, when it is an integer or a plain string literal; else None."""
    end = call_end(body, open_paren)
    if end is None:
        return None
    arguments = split_top_level(body[open_paren + 1 : end - 1])
    if arguments is None or index >= len(arguments):
        return None
    literal = _LITERAL.fullmatch(arguments[index])
    if literal is None:
        return None
    if literal.group("number") is not None:
        new = str(int(literal.group("number")) + rng.randrange(100, 1000))  # far from a count the body adds to
    else:
        text = literal.group("text")
        new = literal.group("quote") + another_string(text, rng) + literal.group("quote")
    start, stop = (
        literal.span("number")
        if literal.group("number") is not None
        else (literal.start("quote"), literal.end("text") + 1)
    )
    arguments[index] = arguments[index][:start] + new + arguments[index][stop:]
    return "(" + ",".join(arguments) + ")"


def _expression_end(body: str, at: int) -> int | None:
    """The end of a matcher chain's calls and properties from `at` (`(y)`, `.true`), when the statement then ends
    its line; None otherwise."""
    while True:
        if body[at : at + 1] == "(":
            end = call_end(body, at)
            if end is None:
                return None
            at = end
        elif prop := re.match(r"\.[\w$]+", body[at:]):
            at += prop.end()
        else:
            break
    return at if _STATEMENT_END.match(body, at) else None
