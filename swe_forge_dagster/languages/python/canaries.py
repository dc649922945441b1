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
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.languages.python.twins import Twins, make_twins, same_file

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

    def outcome(self, outcomes: Mapping[str, Outcome], name: str) -> Outcome | None:
        """The outcome of the canary `name`, found by its unique name (report ids are relative to pytest's rootdir)."""
        return next((o for test_id, o in outcomes.items() if test_id.rsplit("::", 1)[-1] == name), None)

    def ran(self, outcomes: Mapping[str, Outcome]) -> bool:
        """Whether the module's tests are in the report (a collection error is reported without `::`)."""
        return any("::" in test_id and same_file(test_id.split("::", 1)[0], self.path) for test_id in outcomes)

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


def _words(rng: random.Random, count: int) -> str:
    return "_".join(rng.sample(WORDS, count))


def make_canaries(test_file: str, test_source: str) -> Canaries:
    """A canary module for the directory of `test_file`, importing what `test_source` (its text) imports."""
    rng = random.SystemRandom()
    imports = []
    try:
        for node in ast.parse(test_source).body:
            if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and node.module != "__future__"):
                imports.append(ast.unparse(node))
    except (SyntaxError, ValueError):
        pass
    passing = f"test_{_words(rng, 3)}_{secrets.randbelow(90) + 10}"
    failing = passing
    while failing == passing:
        failing = f"test_{_words(rng, 3)}_{secrets.randbelow(90) + 10}"
    a, b = secrets.randbelow(900) + 100, secrets.randbelow(900) + 1000
    header = "".join(f"try:\n    {line}\nexcept Exception:\n    pass\n" for line in imports)
    source = f"{header}\n\ndef {passing}():\n    assert {a} == {a}\n\n\ndef {failing}():\n    assert {a} == {b}\n"
    path = posixpath.join(posixpath.dirname(test_file), f"test_{_words(rng, 2)}_{secrets.token_hex(3)}.py")
    return Canaries(path, passing, failing, source)


def plant_pytest(
    run_files: Sequence[str], fail_to_pass: Sequence[str], read: Callable[[str], bytes]
) -> Canaries | None:
    """Canaries next to the file of the first FAIL_TO_PASS test (`path.py::name`), with twins of the FAIL_TO_PASS
    tests of every file of the task (`languages.python.twins`) that can have them; None when no FAIL_TO_PASS test
    names a file of the task."""
    files = [f for f in run_files if f.endswith(".py")]
    targets = list(dict.fromkeys(path for test_id in fail_to_pass if (path := test_id.split("::", 1)[0]) in files))
    if not targets:
        return None
    sources = {path: _read(read, path) for path in targets}
    canaries = make_canaries(targets[0], sources[targets[0]].decode("utf-8", "replace"))
    made = [
        make_twins(path, data, [i for i in fail_to_pass if i.startswith(f"{path}::")]) for path, data in sources.items()
    ]
    return replace(canaries, twins=tuple(twins for twins in made if twins is not None))


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
        return f"a test planted to fail ({canaries.path}::{canaries.failing}) was reported passed"
    if passing is None and failing is None:
        others = any(not same_file(test_id.split("::", 1)[0], canaries.path) for test_id in outcomes if "::" in test_id)
        collection_error = any(same_file(test_id, canaries.path) for test_id in outcomes)
        if others and not collection_error:
            return f"the planted module {canaries.path} is missing from a report that has the task's tests"
        return None  # the module did not run (a collection error): the task's own tests say what happened
    if exit_code_meaningful and exit_code == 0 and failing == "failed":
        return "pytest exited 0 although its report holds a failing test"
    return None
