"""A fact a twin changes is changed wherever the test file restates it (`languages.python.twins`).

Why: a test file often states one fact more than once: the same input and expected value in one test's parametrize
table, in another's loop, in a helper's call, in a spot check, in a comment or a docstring (`(2.5, 3)`,
`check(2.5, 3)`, `assert round_half_up(value=2.5) == 3`, `# 2.5 -> 3`). A twin changes one site per test, so the twin
file held two answers for one input, and red-team forgers (a2, 2026-11-30; a10 to a18, 2026-12-01) that scanned their
caller's file for such a conflict told the twin's run by it: they answered the original's run from their caller's
frame and failed the twins as an honest fix does. So a value a twin changes is changed, the same way, wherever the
file restates it where no twinned test can read it, and a test whose own twin would give a fact another value takes
the first one's instead.

A fact is a value in its row (`languages.python.fact_rows`). It is restated:

- where a test expects it (`assertions.expected_literals`: a value only compared, never handed to code, which could
  carry it to a twinned test through shared state, nor computed with: `assert identity((2, 1)) == (2, 1)` keeps its
  input); in a test with no twin, also inside its `with` blocks (`self.subTest`); never in a test whose twin is a
  negation (a restated value would make it hold again for an honest fix); a parametrized test's sets only where a
  run does not select instances by name;
- in free text, once a line where the line names the fact's inputs too: comments (not an encoding declaration),
  docstrings (but the first line of a twinned test's under a runner that names tests by it: Django's), assertion
  messages (read only once an assertion failed), and the explicit ids of tests that have no twin.

Not restated (open): a fact held by a module-level name or a fixture (a twinned test may read it), and relations
between facts (`f(-x) == -f(x)`).
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from swe_forge_dagster.languages.python.assertion_sites import Context, Source
from swe_forge_dagster.languages.python.assertions import expected_literals
from swe_forge_dagster.languages.python.equality import STRICT_EQUAL
from swe_forge_dagster.languages.python.fact_rows import Changed, Fact, Rows
from swe_forge_dagster.languages.python.twin_values import (
    PLAIN_FLOAT,
    PLAIN_STR,
    Edit,
    changeable,
    comments,
    restated,
)

TestKey = tuple[str, str]
NO_SOURCE = Source((), False, "")
CODING = re.compile(r"^#.*?coding[:=]")
"""An encoding declaration (PEP 263): a comment of the first two lines that changes how the file is read."""


@dataclass
class Restated:
    """The edits that restate changed facts elsewhere, the tests whose instances they rename (a parametrized test's
    sets named by their values), and the tests they changed (by where, for a twin's reason)."""

    edits: list[Edit] = field(default_factory=list)
    renamed: set[TestKey] = field(default_factory=set)
    changed: dict[TestKey, str] = field(default_factory=dict)


def conflicting(found: Sequence[Changed], facts: Mapping[Fact, Changed]) -> bool:
    """A test's change would give a fact another value than an earlier test's twin gave it."""
    return any(c.fact in facts and facts[c.fact].new != c.new for c in found)


def restate(
    facts: Mapping[Fact, Changed],
    tests: Mapping[TestKey, ast.FunctionDef],
    twinned: tuple[Iterable[TestKey], Iterable[TestKey], Iterable[TestKey]],
    context: Context,
    rows: Rows,
    taken: Sequence[Edit],
    described: bool = False,
) -> Restated:
    """The changed `facts` restated, the same way, where the module docstring says, but where an edit already is
    (`taken`). `tests`: the module's test functions; `twinned`: those that have a twin, those whose own twin changed
    a fact another way (they get one here when a value they expect is restated), and those whose twin is a negation
    (nothing they read is changed: a restated value would make the negation hold again for an honest fix).
    `described`: the runner names a test by its docstring's first line, which stays then."""
    done = Restated()
    if not facts:
        return done
    spans = [(start, end) for start, end, _ in taken]
    later, negated = set(twinned[1]), set(twinned[2])
    twins = set(twinned[0]) | later
    for key, node in tests.items():
        if key in negated:
            continue
        groups: dict[int, tuple[Source, dict[tuple[int, int], Edit]]] = {}
        for source, constant in _places(key, node, twins, context, rows):
            fact = rows.fact(constant)
            start, end = rows.offsets.span(constant)
            if fact not in facts or _overlaps(spans, start, end):
                continue
            spelled = _spelled(facts[fact].new, rows.text[start:end])  # type: ignore[index]
            if spelled is not None:
                groups.setdefault(id(source), (source or NO_SOURCE, {}))[1][start, end] = (start, end, spelled)
        for source, spelled_at in groups.values():
            edits = sorted(spelled_at.values())
            ids, notes = restated(edits, source, rows.text, rows.offsets)
            renaming = source.every and (source.named or bool(ids))  # any test's: a run may select it by name
            renames = renaming and key in twins
            extra = [*edits, *ids, *notes]
            if (renaming and not context.rename) or any(_overlaps(spans, a, b) for a, b, _ in extra):
                continue
            done.edits += extra
            spans += [(a, b) for a, b, _ in extra]
            done.renamed |= {key} if renames else set()
            if not source.every and key in later:  # one changed set of a parametrized test leaves others passing
                where = source.where or "in its assertion"
                done.changed.setdefault(key, f"expects another value ({where}, as another test of its file states it)")
    for start, end, said in _free_text(tests, twins, twins if described else set(), rows, context.rename):
        edit = _said_again(said, list(facts.values()))
        if edit is not None and not _overlaps(spans, start, end):
            done.edits.append((start, end, edit))
            spans.append((start, end))
    return done


def _places(
    key: TestKey, node: ast.FunctionDef, twins: set[TestKey], context: Context, rows: Rows
) -> Iterator[tuple[Source | None, ast.Constant]]:
    """Where a test may restate a fact: the values it expects (`assertions.expected_literals`: values only compared,
    never handed to code, which could carry them to a twinned test through shared state); in a test with no twin
    that no code names, also those it expects inside `with` blocks (`self.subTest(...)`), which have no twin."""
    seen = node if key in twins or _named(node.name, rows.tree) else _unwrapped(node)
    try:
        expected = expected_literals(seen, key[0], context)  # type: ignore[arg-type]
    except (ValueError, RecursionError):
        expected = []
    for value, source in expected:
        for constant in ast.walk(value):
            if isinstance(constant, ast.Constant) and changeable(constant, rows.text, rows.offsets):
                yield source, constant


def _unwrapped(node: ast.AST) -> ast.AST:
    """A copy of a function (or loop) whose `with` blocks are spliced into the block around them, at any depth of its
    loops: the same statement nodes, in other lists."""
    copied = copy.copy(node)
    copied.body = list(_spliced(node.body))  # type: ignore[attr-defined]
    return copied


def _spliced(statements: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    for statement in statements:
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            yield from _spliced(statement.body)
        else:
            yield _unwrapped(statement) if isinstance(statement, ast.For) else statement  # type: ignore[misc]


def _named(name: str, tree: ast.Module) -> bool:
    """Whether any code of the module names `name` (a call of the test, `self.test_x()`, a reference)."""
    return any(
        (isinstance(n, ast.Name) and n.id == name) or (isinstance(n, ast.Attribute) and n.attr == name)
        for n in ast.walk(tree)
    )


def _free_text(
    tests: Mapping[TestKey, ast.FunctionDef], twins: set[TestKey], named: set[TestKey], rows: Rows, ids: bool
) -> Iterator[tuple[int, int, str]]:
    """(start, end, text) of the file's comments (not an encoding declaration or a `#!` line), its docstrings (but the
    first line of those of the tests `named` by it), and the explicit ids of tests with no twin when instances may be
    renamed (`ids`; a run that selects them by name would not find them) (a string's text without its quotes: only
    plain strings)."""
    for line, spans in comments(rows.text, rows.offsets).items():
        for start, end in spans:
            said = rows.text[start:end]
            if line >= 2 or not (said.startswith("#!") or CODING.match(said)):
                yield start, end, said
    by_docstring = {id(node) for key, node in tests.items() if key in named}
    for node in ast.walk(rows.tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                for start, end, said in _plain_string(first.value, rows):
                    if id(node) in by_docstring:  # from the line after its first line of text on
                        cut = said.find("\n", len(said) - len(said.lstrip()))
                        start, said = (start + cut, said[cut:]) if cut >= 0 else (end, "")
                    yield start, end, said
    for node in ast.walk(rows.tree):  # assertion messages: read only once the assertion failed
        for message in _messages(node):
            if isinstance(message, ast.Constant):
                yield from _plain_string(message, rows)
            elif isinstance(message, ast.JoinedStr):  # an f-string, whole: its expressions run only on failure too
                start, end = rows.offsets.span(message)
                yield start, end, rows.text[start:end]
    for key, node in tests.items():
        if key in twins or not ids:  # an id names an instance: a twinned test's keep their names, but where its
            continue  # values changed
        for decorator in node.decorator_list:
            for keyword in (k for n in ast.walk(decorator) if isinstance(n, ast.Call) for k in n.keywords):
                if keyword.arg in ("ids", "id"):
                    for string in ast.walk(keyword.value):
                        if isinstance(string, ast.Constant):
                            yield from _plain_string(string, rows)


def _messages(node: ast.AST) -> list[ast.expr]:
    """An assertion's message: `assert x, "..."`, a unittest method's `msg=` or its argument after the two compared."""
    if isinstance(node, ast.Assert):
        return [node.msg] if node.msg is not None else []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.startswith("assert"):
        given = [k.value for k in node.keywords if k.arg == "msg"]
        return given + (node.args[2:3] if node.func.attr in STRICT_EQUAL else [])
    return []


def _plain_string(node: ast.Constant, rows: Rows) -> Iterator[tuple]:
    if isinstance(node.value, str):
        start, end = rows.offsets.span(node)
        spelled = rows.text[start:end]
        quote = spelled[:3] if spelled[:3] in ('"""', "'''") else spelled[:1]
        if quote in ('"""', "'''", '"', "'") and spelled.endswith(quote) and "\\" not in spelled:
            yield start + len(quote), end - len(quote), spelled[len(quote) : -len(quote)]


def _said_again(said: str, facts: Sequence[Changed]) -> str | None:
    """Free text with each changed fact a line of it states (every input named, the old value once in that line:
    a docstring's table states one fact a row) stating the new value."""
    lines = said.splitlines(keepends=True)
    for fact in facts:
        for k, line in enumerate(lines):
            if not fact.old.strip() or not all(_token(i).search(line) for i in fact.inputs):
                continue
            found = _token(fact.old).findall(line)
            if len(found) == 1 and not any(_token(fact.old).search(i) for i in fact.inputs):  # the input's own part
                lines[k] = _token(fact.old).sub(fact.new_said.replace("\\", r"\\"), line)
    changed = "".join(lines)
    return changed if changed != said else None


def _token(text: str) -> re.Pattern[str]:
    """`text` as a whole token: not part of a longer word or number (`3` is not in `13`, `0.3`, `3.5` or `-3`; a
    sentence's full stop may follow it)."""
    before = r"(?<![\w\-])(?<!\d\.)" if text[:1] != "-" else r"(?<![\w\-])"
    return re.compile(before + re.escape(text) + r"(?!\w|\.\d)")


def _overlaps(spans: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    return any(a < end and start < b for a, b in spans)


def _spelled(bare: str, old: str) -> str | None:
    """The new value written as the literal it replaces is (its quotes, a float's point), or None when it cannot
    be."""
    if old[:1] in "'\"":
        spelled = old[0] + bare + old[0]
        return spelled if PLAIN_STR.fullmatch(spelled) else None
    try:
        number = Fraction(bare)
    except ValueError:
        return None
    if PLAIN_FLOAT.fullmatch(old):  # `3.0` restating a whole `3` that became `5`: `5.0`
        return f"{number.numerator}.0" if number.denominator == 1 else bare if "." in bare else None
    return str(number.numerator) if number.denominator == 1 else None  # `3` restating `3.0` that became `5.0`: `5`
