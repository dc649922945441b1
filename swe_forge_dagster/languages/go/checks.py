"""How a Go twin changes one check of a test (`languages.go.twins`): a value it expects, or its sense.

A check is a statement that reports a failure when a condition does not hold:
- `if <cond> { ... t.Errorf(...) }` (no `else`), whose block reports (`Error`, `Errorf`, `Fatal`, `Fatalf`, `Fail`,
  `FailNow` on the test's `*testing.T`, or testify's `assert.Fail`) before it can leave by `return`, `break`,
  `continue`, `goto` or a `Skip`; an `if` may open with a statement (`if got := f(x); got != 3 {`);
- a testify call on the test's `*testing.T` (`assert.Equal(t, 3, got)`, `require.NoError(t, err)`, ...; the package
  under the name the file imports it by).

A value is changed where the check is an exact equality: one side of a `!=` among the `||`-joined terms of the
condition, an argument of `!reflect.DeepEqual(a, b)` there, the expected or actual value of testify's `Equal` or
`Exactly`, the length of `Len`, the message of `EqualError`. The value is an integer (decimal) or a string without
escapes, written there, or in a composite literal written there (`[]string{"a", "b"}`: one of its values, never a
key), or held by a local name assigned it once in the same block and read nowhere else but in the check: one number
becomes another nearer zero (a few away, or one with as many digits, by a coin; 0 becomes 1), so it fits any type the
first fits and the file still compiles; one string has a letter or digit replaced by another of its kind
(`another_string`). When the test passed, the check's expected value was the one computed, so the changed one
differs: the twin reports, whatever the code does, unless the code returns the value the twin expects (an oracle that
reads the test it runs in).

Otherwise the check is negated, written as a test writes the opposite: `!=` and `==`, `<` and `>=`, `!ok` and `ok`
(De Morgan's laws across `||` and `&&`: `err != nil || got != want` -> `err == nil && got == want`), `!(...)` around
anything else; testify's method and its opposite (`Equal`/`NotEqual`, `NoError`/`Error`, `True`/`False`, `Nil`/
`NotNil`, `Empty`/`NotEmpty`, `Zero`/`NotZero`, `Contains`/`NotContains`, ...). Go has no operator overloading, so
`==` and `!=` are exact opposites; an ordered comparison of a floating-point NaN is not (both `x < y` and `x >= y` are
false), and such a twin passes with the original: a false alarm this leaves open.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from swe_forge_dagster.execution.canaries import another_string
from swe_forge_dagster.languages.go.source import PLAIN_INT, Source, Stmt

REPORTS = frozenset({"Error", "Errorf", "Fatal", "Fatalf", "Fail", "FailNow"})
ESCAPES = ("return", "break", "continue", "goto")
_OPPOSITES = {
    "Equal": "NotEqual",
    "True": "False",
    "Nil": "NotNil",
    "NoError": "Error",
    "Empty": "NotEmpty",
    "Zero": "NotZero",
    "Contains": "NotContains",
    "Regexp": "NotRegexp",
    "Panics": "NotPanics",
    "Subset": "NotSubset",
}
"""testify's assertions and the one that fails exactly when it holds (both fail when they cannot tell, e.g. a
`Contains` on a value that holds nothing), with the same arguments; all in testify since 1.2."""
OPPOSITE = _OPPOSITES | {b: a for a, b in _OPPOSITES.items()}
OPPOSITE |= {f"{a}f": f"{b}f" for a, b in list(OPPOSITE.items())}
EXPECTED = {"Equal": (1, 2), "Exactly": (1, 2), "Len": (2,), "EqualError": (2,)}
"""testify's exact assertions -> the arguments (after the `*testing.T`, 0) holding a value a twin may change."""
EXPECTED |= {f"{name}f": places for name, places in list(EXPECTED.items())}
_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
_FLIPPED = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_BINARY = frozenset({"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "&^", "&&", "||", *_COMPARISONS})
_OPERAND_END = frozenset({"ident", "number", "string", "raw", "rune"})


@dataclass(frozen=True)
class Site:
    """A statement that may be a check: `block` (its block's statements) at `index`, `t` the `*testing.T` in scope,
    `body` the indexes of the test function's braces, `testify` the names the file gives testify's packages."""

    block: Sequence[Stmt]
    index: int
    t: str
    body: tuple[int, int]
    testify: Mapping[str, str]


Edit = tuple[int, int, str]
"""(start, end, replacement) in the file's text."""


@dataclass(frozen=True)
class Change:
    """The edits that make a check the twin's, and what they do (for a verdict's reason)."""

    edits: tuple[Edit, ...]
    how: str


def change(src: Source, site: Site, rng: random.Random) -> Change | None:
    """The twin's change of the statement at `site` when it is a check (see the module docstring), else None."""
    stmt = site.block[site.index]
    if src.is_word(stmt.start, "if"):
        return _if_check(src, site, rng)
    return _testify_check(src, site, rng)


def _if_check(src: Source, site: Site, rng: random.Random) -> Change | None:
    stmt = site.block[site.index]
    block = src.block_of(stmt.start, stmt.end)
    if block is None or src.close(block) + 1 != stmt.end or not reports_first(src, block, site.t, site.testify):
        return None  # an `else`, or a block that may leave without reporting
    header = src.split(stmt.start + 1, block, ";")
    if len(header) > 2:
        return None
    init, cond = (header[0] if len(header) == 2 else None), header[-1]
    for first, last in src.split(*cond, "||"):
        parts = src.split(first, last, *_COMPARISONS)
        if len(parts) == 2 and src.is_op(parts[0][1], "!=") and not src.split(first, last, "&&")[1:]:
            sides = [parts[1], parts[0]]
        elif src.is_op(first, "!") and _call_of(src, first + 1, last, "reflect", "DeepEqual"):
            arguments = src.split(first + 5, last - 1, ",")
            sides = arguments if len(arguments) == 2 else []
        else:
            continue
        for side in sides:
            if (edit := _changed_value(src, site, side, init, rng)) is not None:
                return edit
    edits = _negated(src, *cond)
    offset, text = src.tokens[cond[0]].start, src.span(*cond)
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[: start - offset] + replacement + text[end - offset :]
    return Change(tuple(edits), f"reports when `{text}` where the test reports when `{src.span(*cond)}`")


def reports_first(src: Source, block: int, t: str, testify: Mapping[str, str]) -> bool:
    """The block at `block` reports a failure on the `*testing.T` named `t` before anything in it can leave it or
    skip: when the test passed, it never ran."""
    for stmt in src.statements(block):
        tokens = src.tokens
        if src.is_word(stmt.start, t) and src.is_op(stmt.start + 1, "."):
            method = tokens[stmt.start + 2].text if stmt.start + 2 < stmt.end else ""
            if method in REPORTS and _whole_call(src, stmt.start + 3, stmt.end):
                return True
            if method.startswith("Skip"):
                return False
        failed = src.is_word(stmt.start + 2, "Fail", "FailNow") and src.is_word(stmt.start + 4, t)
        if tokens[stmt.start].text in testify and src.is_op(stmt.start + 1, ".") and failed:
            return True
        if src.escapes(stmt.start, stmt.end, ESCAPES):
            return False
    return False


def leaves(src: Source, stmt: Stmt, t: str, testify: Mapping[str, str]) -> bool:
    """Whether the statement can leave its block (`return`, `break`, `continue`, `goto`) in a test that passes: not
    when it does so only in the block of an `if` that first reports a failure (`if err != nil { t.Error(err);
    continue }`), which a passing test never ran."""
    if not src.escapes(stmt.start, stmt.end, ESCAPES):
        return False
    block = src.block_of(stmt.start, stmt.end) if src.is_word(stmt.start, "if") else None
    if block is None or src.close(block) + 1 != stmt.end or src.escapes(stmt.start, block, ESCAPES):
        return True
    return not reports_first(src, block, t, testify)


def _whole_call(src: Source, open_paren: int, end: int) -> bool:
    return src.is_op(open_paren, "(") and src.close(open_paren) + 1 == end


def _call_of(src: Source, start: int, end: int, package: str, function: str) -> bool:
    """Tokens `[start, end)` are exactly `package.function(...)`."""
    return (
        src.is_word(start, package)
        and src.is_op(start + 1, ".")
        and src.is_word(start + 2, function)
        and _whole_call(src, start + 3, end)
    )


def _testify_check(src: Source, site: Site, rng: random.Random) -> Change | None:
    stmt = site.block[site.index]
    start, tokens = stmt.start, src.tokens
    if not (tokens[start].text in site.testify and src.is_op(start + 1, ".") and src.is_word(start + 2)):
        return None
    if not _whole_call(src, start + 3, stmt.end):
        return None
    method = tokens[start + 2].text
    arguments = src.split(start + 4, stmt.end - 1, ",")
    if not src.is_word(arguments[0][0], site.t) or arguments[0][1] != arguments[0][0] + 1:
        return None
    for place in EXPECTED.get(method, ()):
        edit = _changed_value(src, site, arguments[place], None, rng) if place < len(arguments) else None
        if edit is not None:
            return edit
    if method in OPPOSITE:
        name = tokens[start + 2]
        return Change(
            ((name.start, name.end, OPPOSITE[method]),), f"asserts {OPPOSITE[method]} where the test asserts {method}"
        )
    return None


def _changed_value(
    src: Source, site: Site, side: tuple[int, int], init: tuple[int, int] | None, rng: random.Random
) -> Change | None:
    """`side` (a comparison's operand, an assertion's argument) with one of its values changed, or the value of the
    local name it is changed (assigned once, in the `if`'s opening statement or earlier in the block, and read nowhere
    else but in this check); None when it holds none."""
    first, last = side
    if last == first + 1 and src.is_word(first):
        held = _held(src, site, src.tokens[first].text, init)
        if held is None:
            return None
        first, last = held
    values = _values(src, first, last)
    if not values:
        return None
    token = src.tokens[rng.choice(values)]
    new = _another(token.text, token.kind, rng)
    return Change(((token.start, token.end, new),), f"expects {new} where the test expects {token.text}")


def _held(src: Source, site: Site, name: str, init: tuple[int, int] | None) -> tuple[int, int] | None:
    """The value tokens a local `name` is given once (by the `if`'s opening `a, b := x, y`, or a statement
    `name := x` / `var name = x` of the block before the check), when every other use of it is in the check."""
    stmt = site.block[site.index]
    if init is not None:
        assigned = _assignment(src, *init)
        if assigned is not None and name in assigned:
            uses = _uses(src, name, *site.body)
            outside = [u for u in uses if not stmt.start <= u < stmt.end]
            cond_uses = [u for u in uses if init[1] < u < stmt.end and not _in_block(src, stmt, u)]
            return assigned[name] if not outside and len(cond_uses) == 1 else None
    for earlier in site.block[: site.index]:
        assigned = _assignment(src, earlier.start, earlier.end)
        if assigned is None or list(assigned) != [name]:
            continue
        uses = _uses(src, name, *site.body)
        declared = [u for u in uses if earlier.start <= u < earlier.end]
        in_check = [u for u in uses if stmt.start <= u < stmt.end and not _in_block(src, stmt, u)]
        others = [u for u in uses if not (earlier.start <= u < earlier.end or stmt.start <= u < stmt.end)]
        return assigned[name] if len(declared) == 1 and len(in_check) == 1 and not others else None
    return None


def _in_block(src: Source, stmt: Stmt, index: int) -> bool:
    """The token at `index` is in the block of the `if` statement `stmt` (its report), not its header."""
    block = src.block_of(stmt.start, stmt.end) if src.is_word(stmt.start, "if") else None
    return block is not None and block < index


def _assignment(src: Source, start: int, end: int) -> dict[str, tuple[int, int]] | None:
    """`a, b := x, y` or `var a = x` (tokens `[start, end)`) -> each name and the tokens of its value."""
    if src.is_word(start, "var"):
        names = [start + 1]
        equals = start + 2 if src.is_op(start + 2, "=") else start + 3
        if not src.is_word(start + 1) or not src.is_op(equals, "="):
            return None
        values = [(equals + 1, end)]
    else:
        sides = src.split(start, end, ":=")
        if len(sides) != 2:
            return None
        targets = src.split(*sides[0], ",")
        if any(b != a + 1 or not src.is_word(a) for a, b in targets):
            return None
        names, values = [a for a, _ in targets], src.split(*sides[1], ",")
    if len(names) != len(values):
        return None
    return {src.tokens[n].text: value for n, value in zip(names, values, strict=True)}


def _uses(src: Source, name: str, start: int, end: int) -> list[int]:
    """Indexes of `name` as an identifier in tokens `[start, end)` (not a field: `x.name`)."""
    return [i for i in range(start, end) if src.is_word(i, name) and not src.is_op(i - 1, ".")]


def _values(src: Source, first: int, last: int) -> list[int]:
    """Indexes of the integer and plain string tokens a value is made of: the value itself (`3`, `-3`, `"a"`), or
    the values of a composite literal (`T{"a", K: 3, {4}}`: never a key), recursively."""
    if last == first + 1 and _changeable(src, first):
        return [first]
    if last == first + 2 and src.is_op(first, "-") and src.tokens[first + 1].kind == "number":
        return [first + 1] if _changeable(src, first + 1) else []
    if last <= first or not src.is_op(last - 1, "}"):
        return []
    brace = next((i for i in range(first, last) if src.is_op(i, "{") and src.close(i) == last - 1), None)
    if brace is None or any(src.is_word(i, "func") for i in range(first, brace)):
        return []  # a function literal's body is no value
    if _binary_operators(src, first, brace):
        return []  # `a + T{1}`: not the composite alone
    found = []
    for element_start, element_end in src.split(brace + 1, last - 1, ",", ";"):
        keyed = src.split(element_start, element_end, ":")
        found += _values(src, *keyed[-1]) if len(keyed) <= 2 else []
    return found


def _changeable(src: Source, index: int) -> bool:
    token = src.tokens[index]
    if token.kind == "number":
        return PLAIN_INT.fullmatch(token.text) is not None
    if token.kind == "string":
        return "\\" not in token.text
    return token.kind == "raw" and "\r" not in token.text


def _another(text: str, kind: str, rng: random.Random) -> str:
    """Another value of the kind of literal `text`: a number nearer zero, a few away or with as many digits, by a
    coin (0 becomes 1): any integer type that held the first holds it; a string with a letter or digit replaced by
    another of its kind."""
    if kind != "number":
        return text[0] + another_string(text[1:-1], rng) + text[-1]
    value = int(text)
    if value == 0:
        return "1"
    near = [value - step for step in (1, 2, 3) if value - step >= 0]
    same = range(10 ** (len(text) - 1), value) if len(text) > 1 else range(1, value)
    if rng.random() < 0.5 and len(same) > 0:
        return str(rng.choice(same))
    return str(rng.choice(near))


def _negated(src: Source, start: int, end: int) -> list[Edit]:
    """Edits that negate the condition `[start, end)`: De Morgan across its `||` (or else its `&&`) terms."""
    for joiner, other in (("||", "&&"), ("&&", "||")):
        terms = src.split(start, end, joiner)
        if len(terms) > 1:
            edits = [(src.tokens[a - 1].start, src.tokens[a - 1].end, other) for a, _ in terms[1:]]  # the joiners
            for term in terms:
                edits += _negated_term(src, *term)
            return edits
    return _negated_term(src, start, end)


def _negated_term(src: Source, start: int, end: int) -> list[Edit]:
    """Edits that negate one term: flip its one comparison, drop its `!`, put `!` before an operand, else `!(...)`."""
    first, last = src.tokens[start], src.tokens[end - 1]
    binary = _binary_operators(src, start, end)
    if len(binary) == 1 and src.tokens[binary[0]].text in _FLIPPED:
        op = src.tokens[binary[0]]
        return [(op.start, op.end, _FLIPPED[op.text])]
    if not binary and src.is_op(start, "!"):
        return [(first.start, src.tokens[start + 1].start, "")]
    if not binary:
        return [(first.start, first.start, "!")]
    return [(first.start, first.start, "!("), (last.end, last.end, ")")]


def _binary_operators(src: Source, start: int, end: int) -> list[int]:
    """Indexes of the binary operators of tokens `[start, end)` outside brackets (an operator after an operand)."""
    found, index = [], start
    while index < end:
        token = src.tokens[index]
        previous = src.tokens[index - 1] if index > start else None
        after_operand = previous is not None and (
            previous.kind in _OPERAND_END or (previous.kind == "op" and previous.text in (")", "]", "}"))
        )
        if token.kind == "op" and token.text in _BINARY and after_operand:
            found.append(index)
        index = src.skip(index)
    return found


def testify_names(text: str) -> dict[str, str]:
    """The names a file gives testify's `assert` and `require` packages (its imports) -> which it is."""
    names = {}
    for alias, package in re.findall(
        r'(?m)^\s*(?:import\s+)?(\w+\s+)?"github\.com/stretchr/testify/(assert|require)"', text
    ):
        names[(alias or package).strip()] = package
    return names
