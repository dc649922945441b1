"""Canary tests: results the code under test cannot forge without being caught.

The code under test runs inside the test process (the tests import it), so it can rewrite outcomes
there: a hook that marks every test passed, a replaced test function, a JUnit report rewritten at
exit, an early `os._exit(0)`. Before the agent's diff is applied, the verification container plants
two tests with unpredictable names among the top-level statements of one of the task's own test
files (so they share its imports, fixtures and module code, and nothing tells them apart from the
task's tests): one must pass and one must fail. After the run, a canary with the wrong outcome, a
canary missing from a report that has the file's other tests, or pytest's exit status 0 while its
report holds a failure (the independent signal: a failing canary makes pytest exit 1) means the
results were tampered with, and the task is `unresolved` with reason `tampered test results`.

In `commands` mode (the seed's shell checks) the canaries run as two more commands: each command
that selects a test of the canaries' file (`path.py::name`) is repeated with the canary's name; the
failing one must exit non-zero, the passing one zero.

Not closed: code that recognises the canaries (it can read the test file as planted, and a canary
does not exercise the package) and forges only the task's tests. The README's threat model says so.
"""

from __future__ import annotations

import ast
import random
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from swe_forge_dagster.execution.junit import Outcome

WORDS = (
    "handles", "returns", "keeps", "accepts", "rejects", "parses", "formats", "rounds", "empty", "nested", "default",
    "value", "values", "input", "output", "result", "missing", "invalid", "large", "small", "unicode", "order",
    "repeated", "single", "multiple", "negative", "zero", "none", "string", "number", "list", "mapping", "edge", "case",
)  # fmt: skip


@dataclass(frozen=True)
class Canaries:
    """Two planted tests in `path` (repo-relative): `passing` must pass, `failing` must fail."""

    path: str
    passing: str
    failing: str

    def outcome(self, outcomes: Mapping[str, Outcome], name: str) -> Outcome | None:
        """The outcome of the canary `name` (matched by its unique name: ids are relative to pytest's rootdir)."""
        return next((o for test_id, o in outcomes.items() if test_id.split("::")[-1] == name), None)


def canary_names(taken: set[str]) -> tuple[str, str]:
    """Two fresh test names that read like the repository's own."""
    rng = random.SystemRandom()
    names: list[str] = []
    while len(names) < 2:
        name = f"test_{'_'.join(rng.sample(WORDS, 3))}_{secrets.randbelow(90) + 10}"
        if name not in taken and name not in names:
            names.append(name)
    return names[0], names[1]


def plant(source: str, path: str) -> tuple[str, Canaries] | None:
    """`source` (a test module) with the two canaries inserted at a random top-level position after its imports;
    None when it is not a module they can go into (does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    body = tree.body
    last_import = max((i for i, node in enumerate(body) if isinstance(node, ast.Import | ast.ImportFrom)), default=-1)
    slots = [node.end_lineno for node in body[last_import:] if node.end_lineno] if last_import >= 0 else []
    slots = slots or [node.end_lineno for node in body if node.end_lineno] or [len(lines)]
    at = random.SystemRandom().choice(slots)
    taken = {node.name for node in body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    passing, failing = canary_names(taken)
    a, b = secrets.randbelow(900) + 100, secrets.randbelow(900) + 1000
    code = f"\n\ndef {passing}():\n    assert {a} == {a}\n\n\ndef {failing}():\n    assert {a} == {b}\n\n"
    return "".join(lines[:at]) + code + "".join(lines[at:]), Canaries(path, passing, failing)


def tampering(
    canaries: Canaries, outcomes: Mapping[str, Outcome], exit_code: int, exit_code_meaningful: bool
) -> str | None:
    """Why the run's results cannot be trusted, or None (see the module docstring)."""
    passing, failing = canaries.outcome(outcomes, canaries.passing), canaries.outcome(outcomes, canaries.failing)
    if failing == "passed":
        return f"a test planted to fail ({canaries.path}::{canaries.failing}) was reported passed"
    if passing is None or failing is None:
        siblings = [test_id for test_id in outcomes if _file_of(test_id) == _file_of(canaries.path)]
        if siblings:  # the file ran, yet the planted tests are gone from the report: it was rewritten
            return f"tests planted in {canaries.path} are missing from a report that has its other tests"
        return None  # the file did not run at all (a collection error): the task's own tests say so
    if exit_code_meaningful and exit_code == 0 and failing == "failed":
        return "pytest exited 0 although its report holds a failing test"
    return None


def _file_of(test_id: str) -> str:
    return re.split(r"::", test_id, maxsplit=1)[0].rsplit("/", 1)[-1]
