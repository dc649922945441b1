"""Twins run apart: the task's FAIL_TO_PASS tests, each changed so that it fails whenever it passed, run in a
container of their own in place of the originals.

Canaries planted beside the task's tests (`languages.python.canaries`) catch blanket tampering; they do not catch
code under test that forges only what it recognises as the task's (a report naming the function it fixes), nor an
implementation oracle: a function that reads the assertion calling it (its caller's frame, source or compiled
constants) and returns the value expected. A twin catches both. Every FAIL_TO_PASS test of the file whose last
statement is an `assert` gets one: the same test, under the same name, at the same place, with that assertion
changed by one value, and the file with them runs with the same command in a second container started from the same
image with the same patches (`harness.checks`). No process ever sees a test beside its twin, and nothing carries
over between the two runs, so code under test cannot compare them; the two runs differ in one value per test.

How an assertion is changed, by its form:
- `a == <literal>` (a number or a string, or a list, tuple, set or dict of them with no repeated key, on one side;
  or a local name assigned such a literal once and read nowhere else, and once in the assertion), unless the other
  side is a matcher whose `==` holds for a range (`pytest.approx`, `mock.ANY`): one number or string of the literal
  becomes another of its kind and magnitude, near it or not by a coin (a number a few away, or one with as many
  digits; the string with a letter added, or one of the file's own strings of about its length, not the same in
  another case). A value-oracle then returns the twin's value and passes it; an honest fix returns the original
  value and fails it.
- anything else is negated (`assert not (x)`): a forger that passes failures passes the twin too; an oracle that
  recognises a negation and keeps the original value is not caught by it (docs/harness.md, threat model).
A test with a `return` or `yield` of its own before the assertion has no twin: it can pass without reaching it.
Whenever the test passes, every statement before its last assertion ran as in the original and that assertion held,
so the changed one fails with any honest code: a run where the test passed and its twin passed too (for the same
parameters), or where the twin run lacks it, was forged. Only the changed tokens differ: the rest of the file keeps
its bytes, lines and encoding.

Not closed: code that knows the task's test source (a public repository's later commit) tells a twin by comparing.
"""

from __future__ import annotations

import ast
import io
import random
import re
import tokenize
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from swe_forge_dagster.execution.canaries import another_string
from swe_forge_dagster.execution.junit import Outcome

PARAMS = re.compile(r"(\[.*\])?$", re.S)
PLAIN_INT = re.compile(r"[1-9][0-9]*|0")
PLAIN_STR = re.compile(r"""(?P<q>['"])(?P<body>[^'"\\\n]*)(?P=q)""")
FORGED = ("passed", "xpassed")
"""Outcomes of a twin that only forged results give: it fails wherever its original passes."""


@dataclass(frozen=True)
class Twins:
    """The FAIL_TO_PASS tests of `path` changed in place: `content` is the file with them, `tests` the (class or
    "", name) of each, `changed` how each was changed (for a verdict's reason)."""

    path: str
    content: bytes
    tests: tuple[tuple[str, str], ...]
    changed: tuple[str, ...]

    def instances(self, outcomes: Mapping[str, Outcome]) -> dict[tuple[str, str, str], tuple[str, Outcome]]:
        """(class, name, parameters) -> (test id, outcome) of each reported instance of a twinned test: in the
        reported file that is `path` (ids are relative to pytest's rootdir, so a suffix names it when it alone does;
        a `pkg/tests/test_x.py` beside `tests/test_x.py` is another file)."""
        parsed = []
        for test_id, outcome in outcomes.items():
            head, _, last = test_id.rpartition("::")
            file, _, scope = head.partition("::")
            if file and same_file(file, self.path):
                parsed.append((file, scope, *split_params(last), test_id, outcome))
        files = {row[0] for row in parsed}
        chosen = self.path if self.path in files else (next(iter(files)) if len(files) == 1 else None)
        return {
            (scope, name, params): (test_id, outcome)
            for file, scope, name, params, test_id, outcome in parsed
            if file == chosen and (scope, name) in self.tests
        }

    def tampering(self, verify: Mapping[str, Outcome], apart: Mapping[str, Outcome]) -> str | None:
        """Why the verify run's results cannot be trusted, given the twin run's report (`apart`)."""
        twins = self.instances(apart)
        how = dict(zip(self.tests, self.changed, strict=True))
        for key, (test_id, outcome) in self.instances(verify).items():
            if outcome != "passed":
                continue
            twin = twins.get(key)
            if twin is None:
                return f"{test_id} passed, and its twin is missing from the report of the run apart"
            if twin[1] in FORGED:
                return f"{test_id} passed, and so did its twin run apart, whose last assertion {how[key[:2]]}"
        return None


def make_twins(path: str, data: bytes, fail_to_pass: Sequence[str], rng: random.Random | None = None) -> Twins | None:
    """Twins of the FAIL_TO_PASS tests defined in `path` (its bytes `data`), or None when none can have one."""
    rng = rng or random.SystemRandom()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
        tree = ast.parse(text)
    except (SyntaxError, ValueError, LookupError):
        return None
    wanted = set()
    for test_id in fail_to_pass:
        parts = test_id.split("::")
        if len(parts) in (2, 3):
            wanted.add(("" if len(parts) == 2 else parts[1], split_params(parts[-1])[0]))
    found = [(scope, node) for scope, node in _functions(tree) if (scope, node.name) in wanted and _twinnable(node)]
    if not found:
        return None
    offsets = _Offsets(text)
    strings = _file_strings(tree, text, offsets)
    edits, tests, changed = [], [], []
    for scope, node in found:
        edit, how = _edit(node, text, offsets, strings, rng)
        edits.append(edit)
        tests.append((scope, node.name))
        changed.append(how)
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    try:  # a twin file that would not collect would fail every twin, honest fix or not
        ast.parse(text)
    except SyntaxError:
        return None
    return Twins(path, text.encode(encoding), tuple(tests), tuple(changed))


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef]]:
    """(class or "", function) of the module's functions and its classes' methods."""
    found = [("", node) for node in tree.body if isinstance(node, ast.FunctionDef)]
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found += [(node.name, inner) for inner in node.body if isinstance(inner, ast.FunctionDef)]
    return found


def _twinnable(node: ast.FunctionDef) -> bool:
    """A test whose last statement is an assertion that runs whenever it passes: no `return` before it (a test that
    returns early passes without it, and so would its twin), no `yield` (a generator's body may never run)."""
    own = list(_own_nodes(node))
    ends = any(isinstance(inner, (ast.Return, ast.Yield, ast.YieldFrom)) for inner in own)
    return bool(node.body) and isinstance(node.body[-1], ast.Assert) and not ends


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's own scope: not those of the functions, lambdas and classes defined in it."""
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield child
            yield from _own_nodes(child)


class _Offsets:
    """Text offsets from `ast` positions (lines as `ast` counts them, columns in UTF-8 bytes)."""

    def __init__(self, text: str) -> None:
        self.lines = io.StringIO(text, newline="").readlines()
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def at(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8", "surrogatepass")[:col].decode("utf-8", "ignore"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.at(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        return start, self.at(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def _edit(
    node: ast.FunctionDef, text: str, offsets: _Offsets, strings: Sequence[str], rng: random.Random
) -> tuple[tuple[int, int, str], str]:
    """(start, end, replacement) that changes the test's last assertion, and how (see the module docstring)."""
    last = node.body[-1]
    assert isinstance(last, ast.Assert)
    expected = _expected_side(node, last.test)
    constants = [c for c in ast.walk(expected) if _changeable(c, text, offsets)] if expected is not None else []
    if constants:
        constant = rng.choice(constants)
        start, end = offsets.span(constant)
        return (start, end, _another(constant.value, text[start:end], strings, rng)), "expects another value"
    start, end = offsets.span(last.test)
    return (start, end, f"not ({text[start:end]})"), "is negated"


def _expected_side(node: ast.FunctionDef, test: ast.expr) -> ast.expr | None:
    """The literal side of `a == b` (or the literal a local name holding it was assigned), or None: then the
    assertion is negated. Not when the other side is a matcher whose equality holds for more than one value
    (`pytest.approx`, `mock.ANY`): another value a little away may still equal it."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    sides = [test.left, test.comparators[0]]
    if any(_loose(side) for side in sides):
        return None
    literal = [side for side in sides if _literal(side)]
    if len(literal) == 1:
        return literal[0]
    if literal:
        return None
    for side in sides:
        if isinstance(side, ast.Name) and (value := _assigned_once(node, side.id, test)) is not None:
            return value
    return None


LOOSE = frozenset({"approx", "ANY"})
"""Names of matchers whose `==` holds for a range of values (pytest's, unittest.mock's)."""


def _loose(side: ast.expr) -> bool:
    names = {n.id for n in ast.walk(side) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(side) if isinstance(n, ast.Attribute)}
    return bool(names & LOOSE)


def _assigned_once(node: ast.FunctionDef, name: str, test: ast.expr) -> ast.expr | None:
    """The literal `name = <literal>` assigns at the test's top level, when it is its only assignment and the name
    is read nowhere but once in the last assertion (changing it then changes nothing else the test does: in
    `assert loads(dumps(data)) == data` it would change both sides)."""
    assigns = [
        statement
        for statement in node.body
        if isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.targets[0].id == name
    ]
    if len(assigns) != 1 or not _literal(assigns[0].value):
        return None
    uses = [n for statement in node.body[:-1] for n in ast.walk(statement) if isinstance(n, ast.Name) and n.id == name]
    binds = [n for n in ast.walk(node) if isinstance(n, (ast.Global, ast.Nonlocal, ast.NamedExpr))]
    read = [n for n in ast.walk(test) if isinstance(n, ast.Name) and n.id == name]
    return assigns[0].value if len(uses) == 1 and len(read) == 1 and not binds else None


def _literal(node: ast.expr) -> bool:
    """A value built of literals only, so that changing one of its numbers or strings changes what it equals."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_literal(element) for element in node.elts)
    if isinstance(node, ast.Set):  # a repeated element: changing one copy may leave the set as it was
        return all(_literal(element) for element in node.elts) and _distinct(node.elts)
    if isinstance(node, ast.Dict):  # a repeated key: the value it overwrites is never compared
        keys = [key for key in node.keys if key is not None]
        literal = len(keys) == len(node.keys) and all(map(_literal, keys)) and all(map(_literal, node.values))
        return literal and _distinct(keys)
    return False


def _distinct(nodes: Sequence[ast.expr]) -> bool:
    dumped = [ast.dump(n) for n in nodes]
    return len(set(dumped)) == len(dumped)


def _changeable(node: ast.AST, text: str, offsets: _Offsets) -> bool:
    """A number or string written in its plain form (`12`, `'abc'`), which another of its kind can replace."""
    if not isinstance(node, ast.Constant) or type(node.value) not in (int, str):
        return False
    start, end = offsets.span(node)
    pattern = PLAIN_INT if isinstance(node.value, int) else PLAIN_STR
    return pattern.fullmatch(text[start:end]) is not None


def _another(value: int | str, source: str, strings: Sequence[str], rng: random.Random) -> str:
    """The source of another value of the same kind and form, near the original or not, by a coin: a number a few
    away or one with as many digits; the string with one letter added or one of the file's own strings of about its
    length; in the same quotes. Near values catch an oracle that returns only what is close to what the code computes
    (a value a rounding away); far ones read like any other of the file's."""
    near = rng.random() < 0.5
    if isinstance(value, int):
        if near:
            return str(rng.choice([n for n in (value + d for d in (-3, -2, -1, 1, 2, 3)) if n > 0]))  # never `-0`
        digits = len(source)
        low, high = (1, 10) if digits == 1 else (10 ** (digits - 1), 10**digits)  # never `-0`
        return str(rng.choice([n for n in rng.sample(range(low, high), min(high - low, 12)) if n != value]))
    quote = source[0]
    size = max(2, len(value) // 2)
    alike = [  # not the same string in another case: a case-insensitive `==` would hold for both
        s for s in strings if s.casefold() != value.casefold() and quote not in s and abs(len(s) - len(value)) <= size
    ]
    return quote + (rng.choice(alike) if alike and not near else another_string(value, rng)) + quote


def _file_strings(tree: ast.Module, text: str, offsets: _Offsets) -> list[str]:
    """The plain strings written in the file (what a changed string is drawn from: it reads like the test's own)."""
    found = {node.value for node in ast.walk(tree) if _changeable(node, text, offsets) and isinstance(node.value, str)}
    return sorted(s for s in found if s.isprintable() and "\\" not in s)


def split_params(last: str) -> tuple[str, str]:
    """`test_x[1-2]` -> (`test_x`, `[1-2]`)."""
    match = PARAMS.search(last)
    cut = match.start() if match else len(last)
    return last[:cut], last[cut:]


def same_file(reported: str, path: str) -> bool:
    """A report's file part (relative to pytest's rootdir) names `path` (relative to the repository)."""
    return reported == path or path.endswith("/" + reported) or reported.endswith("/" + path)
