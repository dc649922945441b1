"""Twins run apart for `go test`: the task's FAIL_TO_PASS tests, each with one check changed so that it fails
whenever the test passes, run in a container of their own in place of the originals (`harness.verify`).

A twin appended beside its original in the same test binary can be told from it: package code (an `init` of the
package under test, which runs in the test binary) can parse the test files and compare bodies. Written in place of
its original, under its name, with only one value or one operator changed, the twin has nothing to be compared with:
no process sees both. The check changed is the last one that runs whenever the test passes (`languages.go.checks`
says how a check is changed): among the statements of the test's body, searched from the last, a check, or a block
that surely runs:
- a `for` loop whose body runs at least once (`for {`; `for i := 0; i < n; i++` with constant bounds, `n` a local
  assigned a number once; a `range` over a non-empty composite literal, or over a name given one once, in the
  function or at the file's top level, and never assigned again in the file): its first pass reaches the check;
- a subtest, `t.Run(name, func(t *testing.T) {...})`: its check fails the subtest, and so the test.
Only statements before anything that can leave the block (`return`, `break`, `continue`, `goto`, outside function
literals) are searched, so the check runs whenever the test passed; the statements before it run as in the original.
A test with no such check has no twin (its canaries still run). The run apart judges the test function's own id
(`TestX`): a subtest's failure fails it, whatever the subtests are named. Only the changed tokens differ: every other
byte of the file is kept, and it is read again after the change (it must lex with its brackets balanced).

Not closed: code that knows the task's test source (a public repository's later commit) tells a twin by comparing; a
negated ordered comparison of a NaN passes with its original (`languages.go.checks`).
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cached_property

from swe_forge_dagster.execution.canaries import NamedTwin
from swe_forge_dagster.languages.go.checks import Change, Site, change, leaves, testify_names
from swe_forge_dagster.languages.go.source import PLAIN_INT, Source, Stmt, test_functions

_ASSIGN = frozenset({"=", ":=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "&^="})
_DEPTH = 6
"""Loops and subtests a search goes into, nested."""


GoTwin = NamedTwin
"""The twin of one test (`execution.canaries.NamedTwin`)."""


@dataclass(frozen=True)
class FileTwins:
    """A test file with the twins of its FAIL_TO_PASS tests written over them (`content`)."""

    path: str
    content: bytes
    twins: tuple[GoTwin, ...]


class _File:
    """What a search needs of the file: its tokens, testify's names, its top-level `var`s."""

    def __init__(self, src: Source) -> None:
        self.src = src
        self.testify = testify_names(src.text)

    @cached_property
    def top_level_vars(self) -> dict[str, tuple[int, int]]:
        """`var name = value` at the file's top level (alone or in a `var (...)` group) -> its value's tokens."""
        src, index = self.src, 0
        found: dict[str, tuple[int, int]] = {}
        while index < len(src.tokens):
            if src.is_word(index, "var"):
                if src.is_op(index + 1, "("):
                    specs = src.split(index + 2, src.close(index + 1), ";")
                else:
                    end = index + 1
                    while end < len(src.tokens) and src.tokens[end].kind != ";":
                        end = src.skip(end)
                    specs = [(index + 1, end)]
                for start, end in specs:
                    value = _var_value(src, start, end)
                    if value is not None:
                        found[src.tokens[start].text] = value
            index = src.skip(index)
        return found


def make_twins(path: str, text: str, names: Collection[str], rng: random.Random | None = None) -> FileTwins | None:
    """The file `path` (its `text`) with a twin in place of each test of `names` it defines that can have one, or
    None when none can."""
    rng = rng or random.SystemRandom()
    src = Source.read(text)
    if src is None:
        return None
    file = _File(src)
    edits: list[tuple[int, int, str]] = []
    twins: list[GoTwin] = []
    for name, (t, body) in sorted(test_functions(src).items()):
        if name not in names:
            continue
        found = _search(file, body, t, (body, src.close(body)), rng, 0)
        if found is not None:
            edits += found.edits
            twins.append(GoTwin(name, found.how))
    if not twins:
        return None
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    if Source.read(text) is None:
        return None
    return FileTwins(path, text.encode(), tuple(twins))


def _search(file: _File, block: int, t: str, body: tuple[int, int], rng: random.Random, depth: int) -> Change | None:
    """The change of the last check of the block at `block` that runs whenever the block runs to its end (in it, or
    in a loop or subtest of it that surely runs), or None."""
    src = file.src
    statements = src.statements(block)
    reachable = 0
    while reachable < len(statements) and not leaves(src, statements[reachable], t, file.testify):
        reachable += 1
    for index in range(min(reachable, len(statements) - 1), -1, -1):
        site = Site(statements, index, t, body, file.testify)
        found = change(src, site, rng)
        if found is None and depth < _DEPTH:
            inner = _inner_block(file, statements, index, t, body)
            if inner is not None:
                found = _search(file, inner[0], inner[1], body, rng, depth + 1)
        if found is not None:
            return found
    return None


def _inner_block(
    file: _File, statements: list[Stmt], index: int, t: str, body: tuple[int, int]
) -> tuple[int, str] | None:
    """(the `{` of a block the statement at `index` surely runs, the `*testing.T` name in it), or None."""
    src, stmt = file.src, statements[index]
    if src.is_word(stmt.start, "for"):
        block = src.block_of(stmt.start, stmt.end)
        if block is not None and _runs_once(file, stmt.start + 1, block, statements[:index], body):
            return block, t
        return None
    # t.Run(name, func(t *testing.T) { ... })
    if not (src.is_word(stmt.start, t) and src.is_op(stmt.start + 1, ".") and src.is_word(stmt.start + 2, "Run")):
        return None
    if not src.is_op(stmt.start + 3, "(") or src.close(stmt.start + 3) + 1 != stmt.end:
        return None
    arguments = src.split(stmt.start + 4, stmt.end - 1, ",")
    if len(arguments) != 2:
        return None
    start, end = arguments[1]
    texts = [token.text for token in src.tokens[start : start + 8]]
    if texts[:2] != ["func", "("] or texts[3:] != ["*", "testing", ".", "T", ")"] or not src.is_word(start + 2):
        return None
    return (start + 8, texts[2]) if src.is_op(start + 8, "{") and src.close(start + 8) + 1 == end else None


def _runs_once(file: _File, start: int, end: int, before: list[Stmt], body: tuple[int, int]) -> bool:
    """Whether the `for` header `[start, end)` surely runs its body once: `for {`, a counting loop between constants,
    or a `range` over a non-empty composite literal (written there, or held by a name never assigned again)."""
    src = file.src
    if start == end:
        return True
    clauses = src.split(start, end, ";")
    if len(clauses) == 3:
        return _counts(src, clauses, before, body)
    ranged = next((i for i in range(start, end) if src.is_word(i, "range")), None)
    if ranged is None or len(clauses) != 1:
        return False
    first, last = ranged + 1, end
    if last == first + 1 and src.tokens[first].kind == "number" and PLAIN_INT.fullmatch(src.tokens[first].text):
        return int(src.tokens[first].text) > 0  # Go 1.22's range over an integer
    if last == first + 1 and src.is_word(first):
        name = src.tokens[first].text
        value = _local_value(src, name, before, body)
        if value is None and not _declared_in(src, name, *body):
            value = file.top_level_vars.get(name)
            if value is not None and _reassigned(src, name, 0, len(src.tokens), value):
                return False
        if value is None:
            return False
        first, last = value
    return _non_empty_composite(src, first, last)


def _counts(src: Source, clauses: list[tuple[int, int]], before: list[Stmt], body: tuple[int, int]) -> bool:
    """`i := A; i < B; ...` (or `<=`, `>`, `>=`, `!=`) whose condition holds at first: A and B numbers, or locals
    assigned one once."""
    (init_start, init_end), (cond_start, cond_end), _ = clauses
    if not (init_end == init_start + 3 and src.is_word(init_start) and src.is_op(init_start + 1, ":=")):
        return False
    counter = src.tokens[init_start].text
    if not (cond_end == cond_start + 3 and src.is_word(cond_start, counter)):
        return False
    low = _number(src, init_start + 2, before, body)
    high = _number(src, cond_start + 2, before, body)
    op = src.tokens[cond_start + 1].text
    if low is None or high is None or src.tokens[cond_start + 1].kind != "op":
        return False
    holds = {"<": low < high, "<=": low <= high, ">": low > high, ">=": low >= high, "!=": low != high}
    return holds.get(op, False)


def _number(src: Source, index: int, before: list[Stmt], body: tuple[int, int]) -> int | None:
    """The integer the token at `index` is, or that a local it names was assigned once before."""
    token = src.tokens[index]
    if token.kind == "ident":
        value = _local_value(src, token.text, before, body)
        if value is None or value[1] != value[0] + 1:
            return None
        token = src.tokens[value[0]]
    return int(token.text) if token.kind == "number" and PLAIN_INT.fullmatch(token.text) else None


def _local_value(src: Source, name: str, before: list[Stmt], body: tuple[int, int]) -> tuple[int, int] | None:
    """The value tokens of `name := x` / `var name = x` among `before` (statements of the block), when `name` is
    declared once in the function and never assigned again."""
    for stmt in before:
        value = _var_value(src, stmt.start + 1, stmt.end) if src.is_word(stmt.start, "var") else None
        sides = src.split(stmt.start, stmt.end, ":=")
        if value is None and len(sides) == 2 and sides[0] == (stmt.start, stmt.start + 1):
            value = sides[1] if src.is_word(stmt.start, name) else None
        elif value is not None and not src.is_word(stmt.start + 1, name):
            value = None
        if value is not None:
            return None if _reassigned(src, name, *body, value) else value
    return None


def _var_value(src: Source, start: int, end: int) -> tuple[int, int] | None:
    """`name [type] = value` (a `var` spec, tokens `[start, end)`) -> its value's tokens; None for several names."""
    if not src.is_word(start) or src.is_op(start + 1, ","):
        return None
    equals = next((i for i in range(start + 1, end) if src.is_op(i, "=")), None)
    return (equals + 1, end) if equals is not None and equals + 1 < end else None


def _declared_in(src: Source, name: str, start: int, end: int) -> bool:
    """`name` is declared or assigned somewhere in tokens `[start, end)` (a local that would shadow a `var`)."""
    return any(src.is_word(i, name) and src.is_op(i + 1, ":=", "=") for i in range(start, end))


def _reassigned(src: Source, name: str, start: int, end: int, value: tuple[int, int]) -> bool:
    """`name` is assigned (or its address taken, or `delete`d from) in tokens `[start, end)`, other than where
    `value` is given it."""
    for index in range(start, end):
        if not src.is_word(index, name) or src.is_op(index - 1, ".") or index == value[0] - 2:
            continue  # a field of that name, or the declaration itself (`name := value`, `var name = value`)
        if src.is_op(index - 1, "&") or (src.tokens[index + 1].kind == "op" and src.tokens[index + 1].text in _ASSIGN):
            return True
        if src.is_op(index - 1, "(") and src.is_word(index - 2, "delete", "clear"):
            return True
    return False


def _non_empty_composite(src: Source, first: int, last: int) -> bool:
    """Tokens `[first, last)` are a composite literal with at least one element."""
    if last <= first or not src.is_op(last - 1, "}"):
        return False
    brace = next((i for i in range(first, last) if src.is_op(i, "{") and src.close(i) == last - 1), None)
    if brace is None or any(src.is_word(i, "func") for i in range(first, brace)):
        return False
    return any(src.tokens[i].kind != ";" for i in range(brace + 1, last - 1))


def twins_by_file(
    texts: Mapping[str, str], names: Collection[str], rng: random.Random | None = None
) -> dict[str, FileTwins]:
    """The twins of the tests `names` in each of the test files `texts` (path -> text) that holds one."""
    made = {path: make_twins(path, text, names, rng) for path, text in texts.items()}
    return {path: twins for path, twins in made.items() if twins is not None}
