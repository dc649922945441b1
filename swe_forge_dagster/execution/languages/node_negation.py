"""A JavaScript test's twin that fails whenever the test passes: its last statement-level assertion negated.

A twin opened by a comparison of two literals fails before its copied body runs, and a forger in the test process
can tell it from the task's tests by that shape (two strings, two numbers, values no package function returned).
The negated twin reads like the test itself: the same calls, the same values, the same matcher; only its last
assertion at the body's top level says the opposite (`expect(x).toBe(y)` -> `expect(x).not.toBe(y)`, chai's
`expect(x).to.equal(y)` -> `expect(x).to.not.equal(y)`, node's `assert.strictEqual` -> `assert.notStrictEqual`).
When the test passes, every assertion of its body held, so the twin's negated one fails; a forger that passes
failures, or that passes assertions about values the package returned, passes both, and a report with both passed
was forged. A forger that also fails the negated assertion must tell the twin from the test by reading and comparing
their sources: that stays open (README, threat model).

The assertion must run whenever the test passes: it is a statement of the callback's own block (not in a loop,
branch or callback), with no `return` before it, ending its line. Otherwise there is no negated twin and the
planter falls back to the opening comparison (`node_canaries`).
"""

from __future__ import annotations

import re

from swe_forge_dagster.execution.languages.node_source import call_end

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
_STATEMENT_END = re.compile(r"[ \t]*;?[ \t]*(?://[^\n]*)?(?:\n|$)")


def negated_twin(call_text: str, callback_from: int, assert_name: str | None) -> str | None:
    """`call_text` (a test's `it(...)`/`test(...)` call, already renamed) with the last assertion of its callback's
    block negated, or None when no assertion there can be (see the module docstring). `callback_from`: where to look
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
    for line in re.finditer(rf"^{re.escape(indent)}(?=\S)", body, re.M):
        negation = _negate_at(body, line.end(), assert_name)
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


def _negate_at(body: str, at: int, assert_name: str | None) -> tuple[int, int, str] | None:
    """(start, end, negated text) of the assertion statement that starts at `at` and ends its line, or None."""
    if expect := _EXPECT.match(body, at):
        end = call_end(body, expect.end() - 1)
        chain = _CHAIN.match(body, end) if end is not None else None
        if end is None or chain is None:
            return None
        stop = _expression_end(body, chain.end())
        if stop is None:
            return None
        mods, rest, after = chain.group("mods"), chain.group("rest"), chain.end()
        if chain.group("not"):  # expect(x).not.toBe(y) -> expect(x).toBe(y)
            negated = mods + rest
        elif rest == ".to" and body.startswith(".not.", after):  # chai: expect(x).to.not.equal(y)
            negated, after = mods + rest, after + len(".not")
        elif rest == ".to":  # chai: expect(x).to.equal(y) -> expect(x).to.not.equal(y)
            negated = mods + ".to.not"
        else:
            negated = mods + ".not" + rest
        return at, stop, body[at:end] + negated + body[after:stop]
    if assert_name and (node := re.compile(rf"{re.escape(assert_name)}\.(\w+)\(").match(body, at)):
        if node.group(1) not in _NODE_NEGATIONS:
            return None
        end = call_end(body, node.end() - 1)
        if end is None or _STATEMENT_END.match(body, end) is None:
            return None
        negated = f"{assert_name}.{_NODE_NEGATIONS[node.group(1)]}("
        return at, end, negated + body[node.end() : end]
    return None


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
