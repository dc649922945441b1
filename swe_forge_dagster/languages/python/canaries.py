"""Canary tests: results the code under test cannot forge without being caught.

The code under test runs inside the test process (the tests import it), so it can rewrite outcomes
there: a hook that marks every test passed, a replaced test function, a JUnit report rewritten at
exit, an early `os._exit(0)`. Right before the checks run, a new test module with an unpredictable
name is written next to the first FAIL_TO_PASS test file: it has that file's imports (so it loads
the same code, and the same conftest files apply) and two tests with unpredictable names, one that
must pass and one that must fail. In `tests` mode it runs in the same pytest session as the task's
tests; afterwards, a planted test reported with the wrong outcome, the module missing from a report
that has the task's tests, or pytest's exit status 0 while its report holds a failure (the
independent signal: the failing canary makes pytest exit 1) means the results were tampered with,
and the task is `unresolved` with reason `tampered test results`. In `commands` mode (the seed's
shell checks: an exit code is all they have) the failing canary runs as one more command, built
from a FAIL_TO_PASS command by selecting the canary instead of the task's test; it must exit non-zero.

The canaries are a separate module, never an edit of the task's files, so they cannot change how
those collect or run. The sanity run (base + tests, no agent code) runs them too: a task whose
canaries do not give their expected outcomes there (a `-k` in its test command, `python_functions`
that do not match `test_*`, a directory that does not collect) runs without canaries.

Code that recognises these canaries (it can list the planted module) and forges only the task's tests, or reads the
assertion that calls it, is caught by the twins of the task's own FAIL_TO_PASS tests, run apart in a container of
their own in place of their originals (`languages.python.twins`; `apart` and `apart_tampering` below).

Pack-private to the Python pack (`languages.python`); the harness calls it for runners that run in process.
"""

from __future__ import annotations

import ast
import posixpath
import random
import re
import secrets
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from swe_forge_dagster.execution.canaries import NAME_WORD, made_name
from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.languages.python.fixtures import Fixtures, fixtures_of
from swe_forge_dagster.languages.python.twins import ParseId, TestId, Twins, make_twins, pytest_id, same_file

WORDS = (
    "handles",
    "returns",
    "keeps",
    "accepts",
    "rejects",
    "parses",
    "formats",
    "rounds",
    "empty",
    "nested",
    "default",
    "value",
    "values",
    "input",
    "output",
    "result",
    "missing",
    "invalid",
    "large",
    "small",
    "unicode",
    "order",
    "repeated",
    "single",
    "multiple",
    "negative",
    "zero",
    "none",
    "string",
    "number",
    "list",
    "mapping",
    "edge",
    "case",
)


@dataclass(frozen=True)
class Canaries:
    """A planted module `path` (repo-relative): its test `passing` must pass, `failing` must fail."""

    path: str
    passing: str
    failing: str
    source: str
    twins: tuple[Twins, ...] = ()
    """The task's FAIL_TO_PASS tests changed in place (`languages.python.twins`), for the run apart."""
    in_place: bool = False
    """These are the run apart's canaries: `files` writes the twins over their originals."""
    parse_id: ParseId = field(default=lambda test_id: pytest_id(test_id), compare=False, repr=False)
    """How the runner's reports name a test (pytest's `path::name`, Django's `name (module.Class)`, SymPy's name)."""

    def outcome(self, outcomes: Mapping[str, Outcome], name: str) -> Outcome | None:
        """The outcome of the canary `name`, found by its unique name (report ids are relative to pytest's rootdir)."""
        return next((o for test_id, o in outcomes.items() if (self.parse_id(test_id) or "")[2:3] == (name,)), None)

    def planted(self, test_id: str) -> bool:
        """Whether a reported test is one of the canaries: in their file, or (ids naming no file) by name."""
        read = self.parse_id(test_id)
        if read is None:
            return False
        return same_file(read[0], self.path) if read[0] is not None else read[2] in (self.passing, self.failing)

    def expected(self, outcomes: Mapping[str, Outcome]) -> bool:
        """Both canaries reported with their own outcome (checked at sanity, where no agent code runs)."""
        return self.outcome(outcomes, self.passing) == "passed" and self.outcome(outcomes, self.failing) == "failed"

    def files(self) -> dict[str, bytes]:
        """What to write before a run: the canary module, and in the run apart the test files with their twins."""
        planted = {self.path: self.source.encode()}
        if self.in_place:
            planted |= {twins.path: twins.content for twins in self.twins}
        return planted

    def twin_ran(self, outcomes: Mapping[str, Outcome]) -> bool | None:
        return None  # no twin runs beside its original

    def without_twin(self) -> Canaries:
        return replace(self, twins=(), in_place=False)

    def apart(self) -> Canaries | None:
        return replace(self, in_place=True) if self.twins else None

    def apart_tampering(self, verify: Mapping[str, Outcome], apart: Mapping[str, Outcome] | None) -> str | None:
        if apart is None:  # no report: no verdict (`harness.verify`), no claim
            return None
        return next((why for twins in self.twins if (why := twins.tampering(verify, apart))), None)

    def tampering(self, outcomes: Mapping[str, Outcome], exit_code: int, exit_code_meaningful: bool) -> str | None:
        return tampering(self, outcomes, exit_code, exit_code_meaningful)


def own_words(test_file: str, test_source: str) -> list[str]:
    """The words of the file's own test names and module name (`test_round_half_up` -> half, round, up): the canaries
    are named from them, as the Node, Go and C++ canaries are, so no list of words of ours tells them apart."""
    names = [*re.findall(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\(", test_source, re.M), posixpath.basename(test_file)]
    found = {word.lower() for name in names for word in NAME_WORD.findall(name.removesuffix(".py"))}
    return sorted(found - {"test", "tests", "py"}) or list(WORDS)


def make_canaries(
    test_file: str,
    test_source: str,
    unittest_base: str | None = None,
    trailing: bool = False,
    exists: Callable[[str], bool] = lambda path: False,
) -> Canaries:
    """A canary module for the directory of `test_file`, importing what `test_source` (its text) imports: two test
    functions, or with `unittest_base` (`module.Class`, e.g. Django's `django.test.SimpleTestCase`) two methods of a
    class of it, for runners that collect only test cases; `trailing`: a third passing function after them, which
    nothing reads (SymPy's log prints a file's last test on the line of the file's verdict, where a pass is not
    read). Named from the file's own words (`own_words`); `exists` says which module paths are taken.

    Its imports are each kept from failing the module, whatever they raise (`BaseException`: package code that
    raised pytest's `Failed` while the canary module imported it made a collection error, which used to leave the
    run unjudged by its canaries: red team `c4-canary-collection-error`)."""
    rng = random.SystemRandom()
    words = own_words(test_file, test_source)
    taken = re.findall(r"def\s+(\w+)", test_source)
    imports = []
    try:
        for node in ast.parse(test_source).body:
            if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and node.module != "__future__"):
                imports.append(ast.unparse(node))
    except (SyntaxError, ValueError):
        pass

    def snake(chosen: list[str]) -> str:  # a number as tests have them, when the file has few words to draw from
        return "test_" + "_".join(chosen) + (f"_{rng.randrange(2, 100)}" if len(words) < 6 else "")

    def test_name() -> str:
        name = made_name(words, taken, 3, rng, snake)
        taken.append(name)
        return name

    passing, failing = test_name(), test_name()
    a, b = secrets.randbelow(900) + 100, secrets.randbelow(900) + 1000
    header = "".join(f"try:\n    {line}\nexcept BaseException:\n    pass\n" for line in imports)
    if unittest_base is None:
        body = f"def {passing}():\n    assert {a} == {a}\n\n\ndef {failing}():\n    assert {a} == {b}\n"
        if trailing:
            body += f"\n\ndef {test_name()}():\n    assert {b} == {b}\n"
    else:
        module, _, base = unittest_base.rpartition(".")
        name = made_name(words, taken, 2, rng, lambda chosen: "".join(w.capitalize() for w in chosen)) + "Tests"
        body = (
            f"from {module} import {base} as _{name}Base\n\n\nclass {name}(_{name}Base):\n"
            f"    def {passing}(self):\n        self.assertEqual({a}, {a})\n\n"
            f"    def {failing}(self):\n        self.assertEqual({a}, {b})\n"
        )
    folder, size = posixpath.dirname(test_file), 8
    path = test_file
    while path == test_file or exists(path):  # a name taken: more words (a few draws each), then a number
        path = posixpath.join(folder, made_name(words, [], size // 4, rng, snake) + ".py")
        size += 1
        if size > 24:  # a million numbers: taken only by chance, which `exists` cannot rule out for ever
            path = posixpath.join(folder, f"{made_name(words, [], 2, rng, snake)}_{secrets.randbelow(10**6)}.py")
            break

    return Canaries(path, passing, failing, f"{header}\n\n{body}")


def plant_pytest(
    run_files: Sequence[str], fail_to_pass: Sequence[str], read: Callable[[str], bytes], rename: bool = True
) -> Canaries | None:
    """Canaries next to the file of the first FAIL_TO_PASS test (`path.py::name`), with twins of the FAIL_TO_PASS
    tests of every file of the task (`languages.python.twins`) that can have them; None when no FAIL_TO_PASS test
    names a file of the task. `rename`: whether a twin may change what pytest names a test's instances by (its
    parametrize values); not when the twin run selects them by those names (the seed's commands)."""
    return plant_python(run_files, fail_to_pass, read, pytest_id, rename=rename)


def plant_python(
    run_files: Sequence[str],
    fail_to_pass: Sequence[str],
    read: Callable[[str], bytes],
    parse_id: ParseId,
    unittest_base: str | None = None,
    trailing: bool = False,
    rename: bool = True,
    described: bool = False,
) -> Canaries | None:
    """`plant_pytest` for any runner of Python test functions whose ids `parse_id` reads: the files that host a
    FAIL_TO_PASS test are those its id names, or (ids that name no file, SymPy's) those that define a function of its
    name; canaries next to the first (test cases of `unittest_base` for runners that collect only those), twins in
    each (`described`: the runner names a test by its docstring's first line, which a twin then keeps). None when
    no FAIL_TO_PASS test is hosted by a file of the task."""
    files = [f for f in run_files if f.endswith(".py")]
    sources = {path: _read(read, path) for path in files}
    targets = [path for path in files if any(_hosts(path, sources[path], parse_id(i)) for i in fail_to_pass)]
    if not targets:
        return None
    canaries = make_canaries(
        targets[0], sources[targets[0]].decode("utf-8", "replace"), unittest_base, trailing, _exists(read)
    )
    conftests = {path: _conftests(path, read) for path in targets}  # before `read` names a parsed id below
    hosts = Counter(
        read[2]
        for i in fail_to_pass
        if (read := parse_id(i)) is not None and read[0] is None
        for path in targets
        if _hosts(path, sources[path], read)
    )
    twinnable = [i for i in fail_to_pass if not ((read := parse_id(i)) and read[0] is None and hosts[read[2]] > 1)]
    made = [
        make_twins(path, sources[path], twinnable, None, parse_id, rename, conftests[path], described)
        for path in targets
    ]
    return replace(canaries, twins=tuple(twins for twins in made if twins is not None), parse_id=parse_id)


def _conftests(path: str, read: Callable[[str], bytes]) -> Fixtures | None:
    """The fixtures of the conftest.py files above `path` (`languages.python.fixtures`)."""
    folders, folder = [], posixpath.dirname(path)
    while True:
        folders.append(folder)
        if not folder:
            break
        folder = posixpath.dirname(folder)
    trees = []
    for folder in folders:
        try:
            source = read(posixpath.join(folder, "conftest.py"))
        except Exception:  # none there (each reader says so its own way: b"", OSError, KeyError...)
            continue
        try:
            trees.append(ast.parse(source))
        except (SyntaxError, ValueError):
            return None  # a conftest that cannot be read as Python: any fixture may take any name
    return fixtures_of(trees)


def _hosts(path: str, source: bytes, read: TestId | None) -> bool:
    if read is None:
        return False
    if read[0] is not None:
        return same_file(read[0], path)
    return re.search(rb"^\s*def %s\(" % re.escape(read[2].encode()), source, re.M) is not None


def _exists(read: Callable[[str], bytes]) -> Callable[[str], bool]:
    def exists(path: str) -> bool:  # the harness's reader gives b"" for a file that is not there
        try:
            return bool(read(path))
        except Exception:  # a reader that cannot find it says so its own way (OSError, KeyError...)
            return False

    return exists


def _read(read: Callable[[str], bytes], path: str) -> bytes:
    try:
        return read(path)
    except (OSError, ValueError):
        return b""


def tampering(
    canaries: Canaries, outcomes: Mapping[str, Outcome], exit_code: int, exit_code_meaningful: bool
) -> str | None:
    """Why the run's results cannot be trusted by its planted tests, or None (see the module docstring); the twins
    judge a run by the run apart's (`apart_tampering`)."""
    passing, failing = canaries.outcome(outcomes, canaries.passing), canaries.outcome(outcomes, canaries.failing)
    if failing == "passed":
        return f"a test planted to fail ({canaries.path}: {canaries.failing}) was reported passed"
    if failing is None and passing is not None:  # dropped from the report rather than turned into a pass
        return f"a test planted to fail ({canaries.path}: {canaries.failing}) is missing beside the one planted to pass"
    if passing is None and failing is None:
        others = any(not canaries.planted(test_id) for test_id in outcomes if canaries.parse_id(test_id) is not None)
        collection_error = any(same_file(test_id, canaries.path) for test_id in outcomes)
        if others and collection_error:  # its imports cannot fail it, and it collected at sanity: code made it fail
            return f"the planted module {canaries.path} failed to collect beside the task's tests, as it did not before"
        if others:
            return f"the planted module {canaries.path} is missing from a report that has the task's tests"
        return None  # nothing of the task's ran either (a broken session): the task's own checks say what happened
    if exit_code_meaningful and exit_code == 0 and failing == "failed":
        return "the test runner exited 0 although its report holds a failing test"
    return None
