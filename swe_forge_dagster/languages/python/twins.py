"""Twin canaries: a copy of one of the task's own FAIL_TO_PASS tests that must fail whenever that test passes.

The planted canaries (`languages.python.canaries`) catch blanket tampering, but they do not exercise the package: code
under test that forges only the failures it recognises as the task's (a report naming the function it fixes, a test of
the task's module) passes them by. A twin closes that: one FAIL_TO_PASS test of the task, a module-level function
whose last statement is an `assert`, is copied with its decorators (its parametrization too) under a new name made
from the words of the file's own test names, with that last assertion negated, and put in the task's test file
itself, right after its original (a test method of a class, `file::TestX::test_y`, in the same class), in the sanity
and verify runs. It has the same module, fixtures, helpers, imports and shape as the task's tests, and runs where
its original ran, before the file's later tests: appended at the end, it once saw what they left in a shared build
folder and passed beside an honest fix (sphinx-8721's `test_viewcode_epub_default`, sphinx-8801's
`test_uninitialized_attributes`: the gold patches were called tampering).
The last assertion is changed so that it fails whenever it held: `assert x == 10` expects another literal
(`assert x == 13`; a string gains a letter), so a value whose `__eq__` always says yes passes the twin too and is
caught; any other assertion is negated. Whenever the original passes, every statement before the last assertion ran
as in the original and the assertion held, so the twin must fail at its changed one; a run that reports the original
passed and its twin passed too (for the same parameters), or that has the original and not the twin, was forged. A
twin that the sanity run does not collect (the task's test command selects by name, say) is not used.

Not closed: a forger that reads the test file and recognises two tests that differ only in their last assertion.
"""

from __future__ import annotations

import ast
import io
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from swe_forge_dagster.execution.canaries import another_string
from swe_forge_dagster.execution.junit import Outcome

PARAMS = re.compile(r"(\[.*\])?$", re.S)


@dataclass(frozen=True)
class Twin:
    """`name` in `path` (in class `scope`, or at module level when empty) is `original` with its last assertion
    changed to fail; `content` is the file with the twin added (its own bytes, whatever their encoding, and the
    twin)."""

    path: str
    original: str
    name: str
    content: bytes
    scope: str = ""

    def pairs(self, outcomes: Mapping[str, Outcome]) -> list[tuple[str, Outcome, Outcome | None]]:
        """(the original's id, its outcome, its twin's outcome for the same parameters) for each reported original."""
        mine = {}
        for test_id, outcome in outcomes.items():
            head, _, last = test_id.rpartition("::")
            file, _, scope = head.partition("::")
            name, params = _split(last)
            if file and _same_file(file, self.path) and scope == self.scope and name in (self.original, self.name):
                mine[(name, params)] = (test_id, outcome)
        return [
            (test_id, outcome, (mine.get((self.name, params)) or (None, None))[1])
            for (name, params), (test_id, outcome) in mine.items()
            if name == self.original
        ]

    def ran(self, outcomes: Mapping[str, Outcome]) -> bool:
        """Every reported instance of the original has a twin in the report (checked at sanity: no agent code)."""
        found = self.pairs(outcomes)
        return bool(found) and all(twin is not None for _id, _o, twin in found)

    def tampering(self, outcomes: Mapping[str, Outcome]) -> str | None:
        """Why the results of a run cannot be trusted, by the twin, or None."""
        for test_id, outcome, twin in self.pairs(outcomes):
            if outcome != "passed":
                continue
            if twin is None:
                return f"the twin of {test_id} is missing from a report that has it"
            if twin == "passed":
                return f"{test_id} passed and so did its twin, whose last assertion fails whenever it holds"
        return None


def make_twin(path: str, data: bytes, fail_to_pass: Sequence[str], rng: random.Random | None = None) -> Twin | None:
    """A twin of one FAIL_TO_PASS test defined in `path` (its bytes `data`), or None when none can have one."""
    rng = rng or random.SystemRandom()
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return None
    scopes: dict[str, list[ast.FunctionDef]] = {"": [n for n in tree.body if isinstance(n, ast.FunctionDef)]}
    scopes |= {
        node.name: [n for n in node.body if isinstance(n, ast.FunctionDef)]
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }
    wanted = set()
    for test_id in fail_to_pass:
        parts = test_id.split("::")
        if len(parts) in (2, 3):
            wanted.add(("" if len(parts) == 2 else parts[1], _split(parts[-1])[0]))
    candidates = [
        (scope, node)
        for scope, nodes in scopes.items()
        for node in nodes
        if (scope, node.name) in wanted and node.body and isinstance(node.body[-1], ast.Assert) and not _yields(node)
    ]
    if not candidates:
        return None
    scope, original = rng.choice(sorted(candidates, key=lambda found: (found[0], found[1].name)))
    taken = [n.name for nodes in scopes.values() for n in nodes]
    name = _new_name(original.name, taken, rng)
    twin = ast.parse(ast.unparse(original)).body[0]
    assert isinstance(twin, ast.FunctionDef) and isinstance(twin.body[-1], ast.Assert)
    twin.name = name
    last = twin.body[-1]
    last.test = _changed(last.test, rng)
    lines = io.StringIO(data.decode("utf-8", "surrogateescape"), newline="").readlines()  # as `ast` counts lines
    end = original.end_lineno or len(lines)
    indent = " " * original.col_offset
    block = "".join(indent + line if line.strip() else line for line in ast.unparse(twin).splitlines(keepends=True))
    gap = "\n\n" if scope else "\n\n\n"
    text = "".join(lines[:end]).rstrip("\n") + gap + block + gap + "".join(lines[end:]).lstrip("\n")
    return Twin(path, original.name, name, text.encode("utf-8", "surrogateescape"), scope)


def _changed(test: ast.expr, rng: random.Random) -> ast.expr:
    """`x == <literal>` expecting another literal of its kind, else `not (test)`."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        sides = [test.left, test.comparators[0]]
        literal = [i for i, side in enumerate(sides) if _plain_literal(side)]
        if len(literal) == 1:
            old = sides[literal[0]]
            assert isinstance(old, ast.Constant)
            if isinstance(old.value, int):
                new: object = old.value + rng.randrange(100, 1000)  # far from a count the body adds to
            else:
                new = another_string(old.value, rng)
            sides[literal[0]] = ast.Constant(value=new)
            return ast.Compare(left=sides[0], ops=test.ops, comparators=[sides[1]])
    return ast.UnaryOp(op=ast.Not(), operand=test)


def _plain_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, str)


def _split(last: str) -> tuple[str, str]:
    """`test_x[1-2]` -> (`test_x`, `[1-2]`)."""
    match = PARAMS.search(last)
    cut = match.start() if match else len(last)
    return last[:cut], last[cut:]


def _yields(node: ast.FunctionDef) -> bool:
    return any(isinstance(inner, (ast.Yield, ast.YieldFrom)) for inner in ast.walk(node))


def _new_name(original: str, taken: Sequence[str], rng: random.Random) -> str:
    """A test name made of the words of the file's own test names, like theirs, not one of them."""
    words = [w for name in taken if name.startswith("test") for w in name.split("_")[1:] if w.isidentifier()]
    words = words or original.split("_")[1:] or ["case"]
    size = max(2, min(5, len(original.split("_")) - 1))
    for attempt in range(1000):
        chosen = [rng.choice(words) for _ in range(size + attempt // 100)]
        name = "_".join(["test", *chosen])
        if name not in taken:
            return name
    return f"{original}_{rng.randrange(10**6)}"


def _same_file(reported: str, path: str) -> bool:
    return reported == path or path.endswith("/" + reported) or reported.endswith("/" + path)
