"""Twins run apart: the task's FAIL_TO_PASS tests, each changed so that it fails whenever it passed, run in a
container of their own in place of the originals.

Canaries planted beside the task's tests (`languages.python.canaries`) catch blanket tampering; they do not catch
code under test that forges only what it recognises as the task's (a report naming the function it fixes), nor an
implementation oracle: a function that reads the assertion calling it (its caller's frame, source or compiled
constants) and returns the value expected. A twin catches both. Every FAIL_TO_PASS test of the file with an assertion
that runs whenever it passes (`languages.python.assertion_sites`: one of its own statements, one of a loop of it over
literal data, one of a helper it calls) gets one: the same test, under the same name, at the same place, with a value
it expects changed where the value is read from (the assertion, a local name, its parametrize data, its loop's items,
its call's argument: `languages.python.assertions`, drawn to look real by `languages.python.twin_values`), else its
last own assertion negated; and the file with them runs with the same command in a second container started from
the same image with the same patches (`harness.checks`). A twin that changed a test's parametrize values may rename
its instances (pytest names them by their values): they are paired with the originals by their order, when every
instance passed in the verify run (`Twins.renamed`). No
process ever sees a test beside its twin, and nothing carries over between the two runs, so code under test cannot
compare them; the two runs differ in one value or one negation per test. The same holds for every runner of the pack
whose tests are Python functions: pytest's, Django's `runtests.py` and SymPy's `bin/test` (each reads its ids with
its own `ParseId`).

How the assertion is changed, by its form, is `languages.python.assertions`'s: a literal an equality expects
changed by one value, or the assertion negated.
A test with a `return` or `yield` of its own has no twin: it can pass without reaching the assertion.
Whenever the test passes, every statement before that assertion ran as in the original and the assertion held,
so the changed one fails with any honest code: a run where the test passed and its twin passed too (for the same
parameters), or where the twin run lacks it, was forged. Only the changed tokens differ (and the ids and comments
that restate a changed value): the rest of the file keeps its bytes, lines and encoding.

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
from swe_forge_dagster.languages.python.assertion_sites import Context
from swe_forge_dagster.languages.python.assertions import edit
from swe_forge_dagster.languages.python.fact_rows import Changed, Fact, Rows
from swe_forge_dagster.languages.python.fixtures import NONE, Fixtures, fixtures_of
from swe_forge_dagster.languages.python.twin_facts import conflicting, restate
from swe_forge_dagster.languages.python.twin_values import Offsets

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
    renamed: frozenset[tuple[str, str]] = frozenset()
    """Tests whose parametrize values the twin changed: pytest names their instances by those values, so a twin's
    instances may be named otherwise than the originals; they are paired by their order (the same, as the sets are
    the same in number and order)."""

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
        originals = self.instances(verify)
        for key, (test_id, outcome) in originals.items():
            if outcome != "passed":
                continue
            if key[:2] in self.renamed and not _all_passed(key, originals):
                if (why := _more_passed(key, originals, twins)) is not None:
                    return f"{test_id} passed, and {why}, whose assertion {how[key[:2]]}"
                continue  # a set that did not pass may pass as a twin (an xfail given another's value): unpaired
            twin = _paired(key, originals, twins) if key[:2] in self.renamed else twins.get(key)
            if twin is None:
                return f"{test_id} passed, and its twin is missing from the report of the run apart"
            if twin[1] in FORGED:
                return f"{test_id} passed, and so did its twin run apart, whose assertion {how[key[:2]]}"
        return None


def _all_passed(key: tuple[str, str, str], originals: Mapping) -> bool:
    """Every instance of the test of `key` passed in the verify run: only then are its renamed twins paired by order,
    which a runner that reorders its report (pytest-randomly, xdist) could otherwise pair wrongly."""
    return all(outcome == "passed" for k, (_, outcome) in originals.items() if k[:2] == key[:2])


def _more_passed(key: tuple[str, str, str], originals: Mapping, twins: Mapping) -> str | None:
    """Whether more of a renamed test's twins passed than its instances that did not pass in the verify run, when the
    two runs report as many: then a twin of an instance that passed passed too, whatever the order of the reports (a
    table with an expected failure is not paired by order, and a forger that passed every twin went unread: red team
    a36)."""
    mine = [outcome for k, (_, outcome) in originals.items() if k[:2] == key[:2]]
    theirs = [outcome for k, (_, outcome) in twins.items() if k[:2] == key[:2]]
    passed = sum(outcome in FORGED for outcome in theirs)
    if len(mine) != len(theirs) or passed <= sum(outcome != "passed" for outcome in mine):
        return None
    return f"{passed} of the {len(mine)} twins of its test's instances passed run apart, more than failed before them"


def _paired(key: tuple[str, str, str], originals: Mapping, twins: Mapping) -> tuple[str, Outcome] | None:
    """The twin of instance `key` of a renamed test: the one at its place among the test's instances in the run apart,
    when the two runs report as many."""
    mine = [k for k in originals if k[:2] == key[:2]]
    theirs = [k for k in twins if k[:2] == key[:2]]
    return twins[theirs[mine.index(key)]] if len(mine) == len(theirs) else None


def make_twins(
    path: str,
    data: bytes,
    fail_to_pass: Sequence[str],
    rng: random.Random | None = None,
    parse_id: ParseId | None = None,
    rename: bool = True,
    fixtures: Fixtures | None = NONE,
    described: bool = False,
) -> Twins | None:
    """Twins of the FAIL_TO_PASS tests (ids as `parse_id` reads them, pytest's by default) defined in `path` (its
    bytes `data`), or None when none can have one. `rename`: whether a twin may change a test's parametrize values,
    which pytest names its instances by (not when the twin run selects instances by name). `fixtures`: those of the
    test's conftests (`languages.python.fixtures`; its own module's are added here). `described`: the runner names a
    test by its docstring's first line (unittest's verbose runner: Django's), which then stays."""
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
    functions = {(scope, node.name): node for scope, node in _functions(tree)}
    own = fixtures_of([tree])
    context = Context(tree, functions, None if own is None or fixtures is None else own | fixtures, rename)
    offsets = Offsets(text)
    rows = Rows(tree, text, offsets)
    edits, tests, changed, renamed, deferred, negated = [], [], [], [], [], []
    facts: dict[Fact, Changed] = {}
    for (scope, name), node in functions.items():
        if (scope, name) not in wanted:
            continue
        try:
            change = edit(node, scope, context, text, offsets, rng)
        except ValueError:  # no assertion site, or an assertion method with no opposite and no value to change
            continue
        if any(a < d and c < b for a, b, _ in change.edits for c, d, _ in edits):
            continue  # two tests changing the same data (a helper's call shared by both): the first keeps it
        found = rows.changed(change.edits)
        if conflicting(found, facts):
            deferred.append((scope, name))  # another twin changed the same fact another way: restated from it below
            continue
        facts.update((c.fact, c) for c in found if c.fact not in facts)
        edits += change.edits
        tests.append((scope, name))
        changed.append(change.how)
        renamed += [(scope, name)] if change.renames else []
        negated += [(scope, name)] if change.negated else []
    everyone = {key: node for key, node in functions.items() if key[1].startswith("test")}
    restatements = restate(facts, everyone, (tests, deferred, negated), context, rows, edits, described)
    edits += restatements.edits
    for key, how in restatements.changed.items():
        tests.append(key)
        changed.append(how)
    renamed += [key for key in restatements.renamed if key in tests]
    if not edits:
        return None
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    try:  # a twin file that would not collect would fail every twin, honest fix or not
        ast.parse(text)
    except SyntaxError:
        return None
    return Twins(path, text.encode(encoding), tuple(tests), tuple(changed), parse, frozenset(renamed))


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
    if isinstance(statement, (ast.Import, ast.ImportFrom)):  # `from helpers import check` rebinds a `def check`
        return [(alias.asname or alias.name).partition(".")[0] for alias in statement.names]
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
