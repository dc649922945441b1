"""Twins run apart for GoogleTest: the task's FAIL_TO_PASS tests, each with one check changed so that it fails
whenever the test passes, run in a container of their own in place of the originals (`harness.verify`).

A twin appended beside its original in the same test binary can be told from it: library code linked into the binary
(a static initializer or destructor) can read the test file and compare bodies, and forge only the test whose body
is not a copy of another's. Written in place of its original (`TEST(suite, name)` or `TEST_F`, under its name, in its
place) with one value or one macro name changed, the twin has nothing to be compared with: no process sees both.

The check changed is the last GoogleTest assertion among the statements of the test's body (or of a bare `{ ... }`
block in it, which surely runs) that runs whenever the test passes: statements after anything that can leave the body
(`return`, `co_return`, `goto`, `GTEST_SKIP`, outside a lambda's body) are not searched, nor any statement inside a
preprocessor conditional (`#ifdef _WIN32`: it may not be compiled here) or holding a directive. The check is, in
order of preference:
- changed in value where it is an exact equality that holds: the expected or actual value of `EXPECT_EQ`/`ASSERT_EQ`,
  `EXPECT_STREQ`, `EXPECT_DOUBLE_EQ`/`EXPECT_FLOAT_EQ` (a number only), or a side of the one `==` of
  `EXPECT_TRUE(a == b)`, when that side is a literal: a decimal integer (its suffix kept: `100u` -> `98u`) becomes one
  nearer zero, a few away or with as many digits, by a coin (0 becomes 1), so it fits any type the first fit; a
  string literal (raw, prefixed or concatenated too) gains one of its own letters (or, with none, one of its own
  characters) at a place no escape sequence runs on from;
- else negated, by its macro's opposite: `EQ`/`NE`, `TRUE`/`FALSE`, `LT`/`GE`, `GT`/`LE`, `STREQ`/`STRNE`,
  `STRCASEEQ`/`STRCASENE`, `NO_THROW`/`ANY_THROW`, for `EXPECT_` and `ASSERT_` alike.
When the test passed, every check held, so the changed one does not: the twin fails whatever the code does, unless
the code computes the value the twin expects (an oracle that reads its caller) or a type's `!=` is not the negation of
its `==`. A test with no such check (only `EXPECT_THAT`, `EXPECT_NEAR`, a helper of its own, a check in a loop) has no
twin. Only the changed tokens differ: every other byte of the file is kept, and it is read again after the change.

Not closed: code that knows the task's test source (a public repository's later commit) tells a twin by comparing;
a negated `EQ`/`LT`/`GT` needs the operands' `!=`/`>=`/`<=`, which a type of a project built before C++20 may lack
(the twin does not compile, its tests are missing from the run apart: a false alarm).
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from swe_forge_dagster.execution.canaries import NamedTwin, of_its_kind
from swe_forge_dagster.languages.cpp.source import PLAIN_INT, Source, Stmt

_LEAVES = frozenset({"return", "co_return", "goto", "GTEST_SKIP"})
_CHECK = re.compile(r"(?P<kind>EXPECT|ASSERT)_(?P<what>\w+)")
_PAIRS = {"EQ": "NE", "TRUE": "FALSE", "LT": "GE", "GT": "LE", "STREQ": "STRNE", "STRCASEEQ": "STRCASENE"}
OPPOSITE = _PAIRS | {b: a for a, b in _PAIRS.items()} | {"NO_THROW": "ANY_THROW", "ANY_THROW": "NO_THROW"}
"""A GoogleTest assertion (after `EXPECT_`/`ASSERT_`) -> the one that fails exactly when it holds, same arguments."""
ARITY = {"TRUE": 1, "FALSE": 1, "NO_THROW": 1, "ANY_THROW": 1}
VALUES = {"EQ": ("number", "string"), "STREQ": ("string",), "DOUBLE_EQ": ("number",), "FLOAT_EQ": ("number",)}
"""Exact equalities -> the kinds of literal a twin may change in them."""
_LOWER_THAN_EQUALITY = frozenset({"!=", "&&", "||", "?", ":", "&", "|", "^", ",", "=", "<=>"})
_ALTERNATIVE_WORDS = frozenset({"and", "or", "bitand", "bitor", "xor", "not_eq", "and_eq", "or_eq", "xor_eq"})
_DEPTH = 6
"""Nested `{ ... }` blocks a search goes into."""


GtestTwin = NamedTwin
"""The twin of one test (`execution.canaries.NamedTwin`)."""


@dataclass(frozen=True)
class FileTwins:
    """A test file with the twins of its FAIL_TO_PASS tests written over them (`content`)."""

    path: str
    content: bytes
    twins: tuple[GtestTwin, ...]


@dataclass(frozen=True)
class _Change:
    edit: tuple[int, int, str]
    how: str


def gtest_tests(src: Source) -> dict[str, int]:
    """The file's `TEST(suite, name) {` and `TEST_F(fixture, name) {` -> the index of the `{` of its body; a name
    defined twice (in two branches of an `#if`) is left out: which one runs is not the file's to say."""
    found: dict[str, int] = {}
    twice: set[str] = set()
    tokens = src.tokens
    for index in range(len(tokens) - 6):
        if not (src.is_word(index, "TEST", "TEST_F") and src.is_op(index + 1, "(") and src.is_op(index + 5, ")")):
            continue
        if (
            src.is_word(index + 2)
            and src.is_op(index + 3, ",")
            and src.is_word(index + 4)
            and src.is_op(index + 6, "{")
        ):
            test_id = f"{tokens[index + 2].text}.{tokens[index + 4].text}"
            twice |= {test_id} if test_id in found else set()
            found[test_id] = index + 6
    return {test_id: body for test_id, body in found.items() if test_id not in twice}


def make_twins(path: str, text: str, names: Collection[str], rng: random.Random | None = None) -> FileTwins | None:
    """The file `path` (its `text`) with a twin in place of each test of `names` (`suite.test`) it defines that can
    have one, or None when none can."""
    rng = rng or random.SystemRandom()
    src = Source.read(text)
    if src is None:
        return None
    edits: list[tuple[int, int, str]] = []
    twins: list[GtestTwin] = []
    for name, body in sorted(gtest_tests(src).items()):
        found = _search(src, body, rng, 0) if name in names else None
        if found is not None:
            edits.append(found.edit)
            twins.append(GtestTwin(name, found.how))
    if not twins:
        return None
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    if Source.read(text) is None:
        return None
    return FileTwins(path, text.encode(), tuple(twins))


def twins_by_file(
    texts: Mapping[str, str], names: Collection[str], rng: random.Random | None = None
) -> dict[str, FileTwins]:
    """The twins of the tests `names` in each of the test files `texts` (path -> text) that holds one."""
    made = {path: make_twins(path, text, names, rng) for path, text in texts.items()}
    return {path: twins for path, twins in made.items() if twins is not None}


def _search(src: Source, brace: int, rng: random.Random, depth: int) -> _Change | None:
    """The change of the last check of the block at `brace` that runs whenever the block runs to its end, or None."""
    statements = src.statements(brace)
    conditional = _conditional(src, statements)
    if conditional is None:
        return None  # its `#if`s do not balance within the block
    reachable = next((i for i, stmt in enumerate(statements) if _leaves(src, stmt)), len(statements))
    for index in range(min(reachable, len(statements) - 1), -1, -1):
        stmt = statements[index]
        if conditional[index]:
            continue
        directive = any(src.tokens[i].kind == "pp" for i in range(stmt.start, stmt.end))
        found = _check(src, stmt, rng) if index < reachable and not directive else None
        if found is None and src.is_op(stmt.start, "{") and depth < _DEPTH:
            found = _search(src, stmt.start, rng, depth + 1)
        if found is not None:
            return found
    return None


def _conditional(src: Source, statements: list[Stmt]) -> list[bool] | None:
    """For each statement, whether it sits inside a preprocessor conditional of the block; None when they do not
    balance there."""
    depth, found = 0, []
    for stmt in statements:
        token = src.tokens[stmt.start]
        directive = re.match(r"#\s*(\w+)", token.text) if token.kind == "pp" else None
        if directive is not None and directive.group(1) in ("if", "ifdef", "ifndef"):
            depth += 1
        elif directive is not None and directive.group(1) == "endif":
            depth -= 1
            if depth < 0:
                return None
        found.append(depth > 0 or directive is not None)
    return found if depth == 0 else None


def _leaves(src: Source, stmt: Stmt) -> bool:
    """The statement can leave the test before its end (`return`, `goto`, `GTEST_SKIP`...) outside a lambda's body."""
    index = stmt.start
    while index < stmt.end:
        if src.is_op(index, "{") and src.is_lambda_body(index):
            index = src.close(index) + 1
            continue
        if src.is_word(index, *_LEAVES):
            return True
        index += 1
    return False


def _check(src: Source, stmt: Stmt, rng: random.Random) -> _Change | None:
    """The twin's change of a GoogleTest assertion statement (`EXPECT_EQ(a, b) << "why";`), or None."""
    name = src.tokens[stmt.start]
    matched = _CHECK.fullmatch(name.text) if name.kind == "ident" else None
    if matched is None or not src.is_op(stmt.start + 1, "("):
        return None
    after = src.close(stmt.start + 1) + 1
    if not (src.is_op(after, "<<") or (src.is_op(after, ";") and after + 1 == stmt.end)):
        return None
    what, arguments = matched.group("what"), src.macro_arguments(stmt.start + 1)
    if what in VALUES and len(arguments) == 2:
        found = _changed_value(src, arguments, VALUES[what], rng)
        if found is not None:
            return found
    if what == "TRUE" and len(arguments) == 1:
        sides = _equality_sides(src, *arguments[0])
        found = _changed_value(src, sides, ("number", "string"), rng) if sides else None
        if found is not None:
            return found
    opposite = OPPOSITE.get(what)
    if opposite is None or len(arguments) != ARITY.get(what, 2):
        return None
    new = f"{matched.group('kind')}_{opposite}"
    return _Change((name.start, name.end, new), f"asserts {new} where the test asserts {name.text}")


def _equality_sides(src: Source, first: int, last: int) -> list[tuple[int, int]]:
    """The two operands of `a == b` (tokens `[first, last)`, in parentheses or not) when `==` is its one operator of
    the lowest precedence at its level; else none."""
    first, last = _unwrapped(src, first, last)
    index = first
    while index < last:
        token = src.tokens[index]
        if (token.kind == "op" and token.text in _LOWER_THAN_EQUALITY) or src.is_word(index, *_ALTERNATIVE_WORDS):
            return []
        index = src.skip(index)
    sides = src.split(first, last, "==")
    return sides if len(sides) == 2 and all(end > start for start, end in sides) else []


def _unwrapped(src: Source, first: int, last: int) -> tuple[int, int]:
    while last - first >= 2 and src.is_op(first, "(") and src.close(first) == last - 1:
        first, last = first + 1, last - 1
    return first, last


def _changed_value(
    src: Source, sides: list[tuple[int, int]], kinds: tuple[str, ...], rng: random.Random
) -> _Change | None:
    """One literal of a side of an equality changed (a side that is all literal: `3`, `-3`, `"a" "b"`), or None."""
    candidates = [index for side in sides for index in _literals(src, *side, kinds)]
    if not candidates:
        return None
    token = src.tokens[rng.choice(candidates)]
    new = another_number(token.text, rng) if token.kind == "number" else another_literal(token.text, rng)
    return _Change((token.start, token.end, new), f"expects {new} where the test expects {token.text}")


def _literals(src: Source, first: int, last: int, kinds: tuple[str, ...]) -> list[int]:
    """Indexes of the literal tokens a side is made of, of `kinds`: one decimal integer (after a `-` too), or one or
    more adjacent string literals; none when the side is anything else."""
    first, last = _unwrapped(src, first, last)
    if src.is_op(first, "-") and last == first + 2:
        first += 1
    if last == first + 1 and src.tokens[first].kind == "number":
        return [first] if "number" in kinds and PLAIN_INT.fullmatch(src.tokens[first].text) else []
    strings = [i for i in range(first, last) if src.tokens[i].kind in ("string", "raw")]
    return strings if "string" in kinds and last > first and len(strings) == last - first else []


def another_number(text: str, rng: random.Random) -> str:
    """Another decimal integer literal, nearer zero (a few away, or with as many digits, by a coin; 0 becomes 1), its
    suffix kept: any integer type that held the first holds it."""
    matched = PLAIN_INT.fullmatch(text)
    assert matched is not None
    digits, suffix = matched.group("digits"), matched.group("suffix")
    value = int(digits)
    if value == 0:
        return "1" + suffix
    near = [value - step for step in (1, 2, 3) if value - step >= 0]
    same = range(10 ** (len(digits) - 1), value) if len(digits) > 1 else range(1, value)
    if rng.random() < 0.5 and len(same) > 0:
        return f"{rng.choice(same)}{suffix}"
    return f"{rng.choice(near)}{suffix}"


_STRING = re.compile(r'(?P<head>(?:u8|[uUL])?")(?P<body>(?:[^"\\\n]|\\.)*)(?P<tail>".*)', re.S)
_RAW = re.compile(r'(?P<head>(?:u8|[uUL])?R"(?P<delim>[^(]*)\()(?P<body>.*)(?P<tail>\)(?P=delim)".*)', re.S)
_UNIT = re.compile(r"\\(?:x[0-9a-fA-F]+|[0-7]{1,3}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)|.", re.S)
_NEVER_ADDED = frozenset("\"'\\?()")


def another_literal(text: str, rng: random.Random) -> str:
    """A string literal token (`"a\\tb"`, `u8"x"`, `R"(x)"`, with a user-defined suffix too) with one of its letters or
    digits replaced by another of its kind (`execution.canaries.of_its_kind`: the same length and form), never one a
    numeric escape before it would run on; with none, one more character: one of its own letters, else one of its own
    characters (never a quote, a backslash, `?` or a parenthesis), else
    `e`; put before a character or a simple escape's end, never after a numeric escape it would run on."""
    raw = _RAW.fullmatch(text)
    matched = raw or _STRING.fullmatch(text)
    assert matched is not None
    body = matched.group("body")
    units = [m.group() for m in _UNIT.finditer(body)] if raw is None else list(body)
    plain = [u for u in units if len(u) == 1]
    kinds = [  # a letter or digit of its own, never one a numeric escape before it would run on
        i
        for i, u in enumerate(units)
        if len(u) == 1 and u.isascii() and u.isalnum() and not (i and units[i - 1][1:2] in tuple("xuU01234567"))
    ]
    if kinds:
        at = rng.choice(kinds)
        new = "".join(units[:at]) + of_its_kind(units[at], "".join(plain), rng) + "".join(units[at + 1 :])
        return matched.group("head") + new + matched.group("tail")
    letters = (
        sorted({u for u in plain if u.isalpha()})
        or sorted({u for u in plain if u not in _NEVER_ADDED and not u.isspace()})
        or ["e"]
    )
    places = [0] + [i + 1 for i, u in enumerate(units) if len(u) == 1 or (len(u) == 2 and u[1] not in "01234567")]
    at = rng.choice(places)
    new = "".join(units[:at]) + rng.choice(letters) + "".join(units[at:])
    return matched.group("head") + new + matched.group("tail")
