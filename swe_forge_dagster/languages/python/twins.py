"""Twins run apart: the task's FAIL_TO_PASS tests, each changed so that it fails whenever it passed, run in a
container of their own in place of the originals.

Canaries planted beside the task's tests (`languages.python.canaries`) catch blanket tampering; they do not catch
code under test that forges only what it recognises as the task's (a report naming the function it fixes), nor an
implementation oracle: a function that reads the assertion calling it (its caller's frame, source or compiled
constants) and returns the value expected. A twin catches both. Every FAIL_TO_PASS test of the file with a top-level
assertion (`assert`, or a unittest method such as `self.assertEqual`) gets one: the same test, under the same name,
at the same place, with the last of its top-level assertions a twin can change changed, and the file with them runs with
the same command in a second container started from the same image with the same patches (`harness.checks`). No
process ever sees a test beside its twin, and nothing carries over between the two runs, so code under test cannot
compare them; the two runs differ in one value or one negation per test. The same holds for every runner of the pack
whose tests are Python functions: pytest's, Django's `runtests.py` and SymPy's `bin/test` (each reads its ids with
its own `ParseId`).

How the assertion is changed, by its form, is `languages.python.assertions`'s: a literal an equality expects
changed by one value, or the assertion negated.
A test with a `return` or `yield` of its own has no twin: it can pass without reaching the assertion.
Whenever the test passes, every statement before that assertion ran as in the original and the assertion held,
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
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.languages.python.assertions import Offsets, edit, twinnable

PARAMS = re.compile(r"(\[.*\])?$", re.S)
TestId = tuple[str | None, str, str, str]
"""A reported test id read as (its file, or None when the runner's ids name none; its class or ""; its name; its
parameters or "")."""
ParseId = Callable[[str], "TestId | None"]
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
    parse_id: ParseId = field(default=lambda test_id: pytest_id(test_id), compare=False, repr=False)
    """How the runner's reports name a test (`pytest_id`; Django's and SymPy's in their runner modules)."""

    def instances(self, outcomes: Mapping[str, Outcome]) -> dict[tuple[str, str, str], tuple[str, Outcome]]:
        """(class, name, parameters) -> (test id, outcome) of each reported instance of a twinned test: in the
        reported file that is `path` (ids are relative to pytest's rootdir, so a suffix names it when it alone does;
        a `pkg/tests/test_x.py` beside `tests/test_x.py` is another file). Ids that name no file match by name (and
        by name alone when they name no class either: SymPy's, and Django's `FAIL: test_x` header when the verdict's
        own line was cut by output); an id that names the test's file or class wins over one that does not."""
        parsed = []
        for test_id, outcome in outcomes.items():
            read = self.parse_id(test_id)
            if read is not None and (read[0] is None or same_file(read[0], self.path)):
                parsed.append((*read, test_id, outcome))
        files = {row[0] for row in parsed if row[0] is not None}
        chosen = self.path if self.path in files else (next(iter(files)) if len(files) == 1 else None)
        found: dict[tuple[str, str, str], tuple[str, Outcome]] = {}
        for file, scope, name, params, test_id, outcome in sorted(parsed, key=lambda row: row[0] is not None):
            if file not in (None, chosen):
                continue
            scopes = [scope] if (scope or file is not None) else [s for s, n in self.tests if n == name]
            for owner in scopes:
                if (owner, name) in self.tests:
                    found[(owner, name, params)] = (test_id, outcome)
        return found

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
                return f"{test_id} passed, and so did its twin run apart, whose assertion {how[key[:2]]}"
        return None


def make_twins(
    path: str,
    data: bytes,
    fail_to_pass: Sequence[str],
    rng: random.Random | None = None,
    parse_id: ParseId | None = None,
) -> Twins | None:
    """Twins of the FAIL_TO_PASS tests (ids as `parse_id` reads them, pytest's by default) defined in `path` (its
    bytes `data`), or None when none can have one."""
    rng = rng or random.SystemRandom()
    parse = parse_id or pytest_id
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
        tree = ast.parse(text)
    except (SyntaxError, ValueError, LookupError):
        return None
    wanted = set()
    for test_id in fail_to_pass:
        read = parse(test_id)
        if read is not None and (read[0] is None or same_file(read[0], path)):
            wanted.add(read[1:3])
    found = [(scope, node) for scope, node in _functions(tree) if (scope, node.name) in wanted and twinnable(node)]
    offsets = Offsets(text)
    edits, tests, changed = [], [], []
    for scope, node in found:
        try:
            change, how = edit(node, text, offsets, rng)
        except ValueError:  # an assertion method with no opposite, and no literal to change
            continue
        edits.append(change)
        tests.append((scope, node.name))
        changed.append(how)
    if not edits:
        return None
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    try:  # a twin file that would not collect would fail every twin, honest fix or not
        ast.parse(text)
    except SyntaxError:
        return None
    return Twins(path, text.encode(encoding), tuple(tests), tuple(changed), parse)


def pytest_id(test_id: str) -> TestId | None:
    """`path::Class::test[params]` read as a `TestId`; None for an id without a test (a collection error's path)."""
    head, _, last = test_id.rpartition("::")
    file, _, scope = head.partition("::")
    return (file, scope, *split_params(last)) if file and "::" not in scope else None


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef]]:
    """(class or "", function) of the module's functions and its classes' methods, each name bound once in its scope:
    a name defined twice (or rebound) is run as its last binding, which a twin of the first would not change."""
    found = []
    for scope, body in [("", tree.body)] + [(n.name, n.body) for n in tree.body if isinstance(n, ast.ClassDef)]:
        bound = Counter(name for statement in body for name in _bound(statement))
        found += [(scope, n) for n in body if isinstance(n, ast.FunctionDef) and bound[n.name] == 1]
    return found


def _bound(statement: ast.stmt) -> list[str]:
    """The names a statement of a module or class body binds there."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    targets = statement.targets if isinstance(statement, ast.Assign) else []
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        targets = [statement.target]
    names = [n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)]
    if isinstance(statement, (ast.If, ast.Try, ast.With, ast.For, ast.While)):  # a definition under a guard
        names += [
            name for inner in ast.iter_child_nodes(statement) if isinstance(inner, ast.stmt) for name in _bound(inner)
        ]
    return names


def split_params(last: str) -> tuple[str, str]:
    """`test_x[1-2]` -> (`test_x`, `[1-2]`)."""
    match = PARAMS.search(last)
    cut = match.start() if match else len(last)
    return last[:cut], last[cut:]


def same_file(reported: str, path: str) -> bool:
    """A report's file part (relative to pytest's rootdir) names `path` (relative to the repository)."""
    return reported == path or path.endswith("/" + reported) or reported.endswith("/" + path)
