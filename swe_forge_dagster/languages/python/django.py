"""Django's own test runner (`tests/runtests.py`), a runner of the Python pack: its command, ids and labels.

SWE-bench runs Django's suite as `./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 <labels>`
(`TEST_DJANGO`; Django before 1.9 has no `--parallel`: `TEST_DJANGO_NO_PARALLEL`) and reads the console log with
`parse_log_django`. Its labels are the test patch's files with `tests/` and `.py` cut and `/` made `.`
(`get_test_directives`: `tests/utils_tests/test_html.py` -> `utils_tests.test_html`).

Ids are what unittest's verbose runner prints before ` ... ok`: `test_x (module.Class)`, on Python 3.11 and later
`test_x (module.Class.test_x)` (unittest added the method to the description), and for a test with a docstring
its first line (the verbose runner prints `test_x (module.Class)` on one line and the docstring line with the
verdict on the next). SWE-bench ran Django before 5.0 on Python 3.9 or earlier and 5.0 on 3.11, so a task of
Django 4.2 run on Python 3.11 gets the other form of each id than SWE-bench's lists (`without_method` maps one to
the other).

The report is the console log (`> {report} 2>&1`), parsed as SWE-bench parses it: `parse_django_log` is
`swebench.harness.log_parsers.python.parse_log_django` line for line (importing swebench's harness loads docker
and 1,500 modules). Code under test can print lines of that form, or patch unittest's result class: so the checks
plant canaries (a `SimpleTestCase` with a test that must pass and one that must fail, in a new module beside the
task's) and run twins of the FAIL_TO_PASS tests apart (`languages.python.canaries`, `plant_django`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from itertools import pairwise
from pathlib import PurePosixPath

from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.execution.runners import Runner, SwebenchLog
from swe_forge_dagster.languages.python.canaries import Canaries, plant_python
from swe_forge_dagster.languages.python.twins import TestId

RUNTESTS = "tests/runtests.py"
"""Django's test runner script: a repository whose tree has it (and `django/__init__.py`) is tested with it."""
DJANGO_TEST = "python tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 {tests} > {report} 2>&1"
"""SWE-bench's `TEST_DJANGO`, run with the environment's `python` from the repository's root, its log to `{report}`."""
DJANGO_TEST_NO_PARALLEL = "python tests/runtests.py --verbosity 2 {tests} > {report} 2>&1"
"""SWE-bench's `TEST_DJANGO_NO_PARALLEL`, for Django before 1.9 (its runtests.py has no `--parallel`)."""

PYTHON36_DESCRIPTIONS = (
    "printf '%s\\n' \"import unittest.case as c; c.TestCase.shortDescription = lambda self: "
    '(self._testMethodDoc or str()).split(chr(10))[0].strip() or None" '
    "> \"$(python -c 'import site; print(site.getsitepackages()[0])')/swe_forge_unittest_descriptions.pth\""
)
"""An install step that makes the environment's unittest describe tests as Python 3.6 did. A verbose run names a
test with a docstring by the docstring's first line; Python 3.6 took that line as it is, so a docstring that starts
on the line after its quotes gave no description and the test kept its name (`test_x (m.C)`), while 3.7 and later
strip the docstring first and name it by its text. A project whose oldest Python is 3.6 or older was listed by
SWE-bench on that Python (Django 3.0 to 3.2), and no interpreter that old runs here: this `.pth` line, run at every
start of the environment's Python, gives its lists' ids on a newer one. It changes no outcome, only the name."""
OLDEST_NEW_DESCRIPTIONS = (3, 7)
"""The first Python whose unittest strips a docstring before taking its first line."""


def description_setup(oldest_python: tuple[int, int] | None) -> tuple[str, ...]:
    """The install steps that make test names those of the project's oldest Python (`PYTHON36_DESCRIPTIONS` when it
    is older than 3.7); none when its oldest Python describes tests as today's do, or it declares none."""
    return (PYTHON36_DESCRIPTIONS,) if oldest_python is not None and oldest_python < OLDEST_NEW_DESCRIPTIONS else ()


_ENV = r"(?:\w+=(?:'[^']*'|\"[^\"]*\"|\S*)\s+)*"
COMMAND_START = r"(?:^|[;&|(])\s*" + _ENV
"""Where a command starts: the line's start or a shell separator, then any `NAME=value` assignments."""
INTERPRETER = r"(?:(?:\S*/)?(?:python[\d.]*|coverage run)(?:\s+-\S+)*\s+)?"
"""`python`, `python3.9 -u`, `coverage run` (SWE-bench's older specs) before a script, or nothing (`./script`)."""
DJANGO_COMMAND = COMMAND_START + INTERPRETER + r"(?:\S*/)?tests/runtests\.py(?=\s|$|;)"
"""`tests/runtests.py` run as the command (`./tests/runtests.py`, `python tests/runtests.py`), not an argument of
another (`pytest tests/runtests.py`)."""

_PASS_SUFFIXES = (" ... ok", " ... OK", " ...  OK")
_INTERRUPTED = (
    r"^(.*?)\s\.\.\.\sTesting\ against\ Django\ installed\ in\ ((?s:.*?))\ silenced\)\.\nok$",
    r"^(.*?)\s\.\.\.\sInternal\ Server\ Error:\ \/(.*)\/\nok$",
    r"^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$",
)
_OUTCOME: dict[str, Outcome] = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped"}


def parse_django_log_statuses(log: str) -> dict[str, str]:
    """SWE-bench's `parse_log_django`, line for line: id -> `PASSED`/`FAILED`/`ERROR`/`SKIPPED`.

    `test_x (m.C) ... ok` passes, `... skipped 'why'` skips, `... FAIL` / `... ERROR` and the report's
    `FAIL: test_x (m.C)` / `ERROR: test_x (m.C)` headers fail; a line starting `ok` passes the last test that
    printed ` ... ` (output between the test's name and its verdict). `expected failure` and `unexpected
    success` are not read, as in SWE-bench."""
    status: dict[str, str] = {}
    prev_test = None
    for raw in log.split("\n"):
        line = raw.strip()
        if "--version is equivalent to version" in line:
            status["--version is equivalent to version"] = "PASSED"
        if " ... " in line:
            prev_test = line.split(" ... ")[0]
        for suffix in _PASS_SUFFIXES:
            if line.endswith(suffix):
                if line.strip().startswith("Applying sites.0002_alter_domain_unique...test_no_migrations"):
                    line = line.split("...", 1)[-1].strip()  # SWE-bench's fix for django__django-7188
                status[line.rsplit(suffix, 1)[0]] = "PASSED"
                break
        if " ... skipped" in line:
            status[line.split(" ... skipped")[0]] = "SKIPPED"
        if line.endswith(" ... FAIL"):
            status[line.split(" ... FAIL")[0]] = "FAILED"
        if line.startswith("FAIL:"):
            status[line.split()[1].strip()] = "FAILED"
        if line.endswith(" ... ERROR"):
            status[line.split(" ... ERROR")[0]] = "ERROR"
        if line.startswith("ERROR:"):
            status[line.split()[1].strip()] = "ERROR"
        if line.lstrip().startswith("ok") and prev_test is not None:
            status[prev_test] = "PASSED"
    for pattern in _INTERRUPTED:  # a long multi-line print between a test's ` ... ` and its `ok`
        for match in re.finditer(pattern, log, re.MULTILINE):
            status[match.group(1)] = "PASSED"
    return status


def parse_django_log(report: bytes, files: Iterable[str] = ()) -> dict[str, Outcome]:
    """Django's verbose console log (`DJANGO_TEST`'s `{report}`): SWE-bench's ids and their outcomes."""
    text = report.decode("utf-8", errors="replace")
    return {test_id: _OUTCOME[s] for test_id, s in parse_django_log_statuses(text).items()}


def django_labels(files: Sequence[str]) -> list[str]:
    """runtests.py's labels for test files, as SWE-bench's `get_test_directives` makes them: `tests/` and `.py` cut,
    `/` made `.` (`tests/forms_tests/tests/test_x.py` -> `forms_tests.tests.test_x`). Only Python files: a label
    of a data file (`templates.x.html`) is no module and fails the run."""
    labels = []
    for path in files:
        if not path.endswith(".py"):
            continue
        label = path[: -len(".py")]
        label = label[len("tests/") :] if label.startswith("tests/") else label
        labels.append(label.replace("/", "."))
    return list(dict.fromkeys(labels))


_NOT_LABELS = frozenset({"tests/runtests.py", "tests/test_sqlite.py", "tests/urls.py"})
"""Files under tests/ that runtests.py uses itself (the script, its settings, the root urlconf)."""


def django_test_file(path: str) -> bool:
    """A module runtests.py's discovery collects (`test*.py`, so `tests.py` too) under `tests/`. SWE-bench passes every
    file of the test patch (`ordering.models` too); a module with no test case adds no test."""
    name = PurePosixPath(path).name
    return path.startswith("tests/") and name.startswith("test") and name.endswith(".py") and path not in _NOT_LABELS


_BARE_NAME = re.compile(r"test\w*")
_UNITTEST_ID = re.compile(r"(?P<method>\w+) \((?P<cls>[\w.]+?)(?:\.(?P=method))?\)")
"""unittest's description: `test_x (module.Class)`, or from Python 3.11 `test_x (module.Class.test_x)`."""


def without_method(test_id: str) -> str:
    """An id in the form unittest printed before Python 3.11 (`test_x (m.C.test_x)` -> `test_x (m.C)`); any other id
    (a docstring's line) as it is. SWE-bench's lists of Django before 5.0 have this form."""
    match = _UNITTEST_ID.fullmatch(test_id)
    return f"{match['method']} ({match['cls']})" if match else test_id


def described(log: str) -> dict[str, str]:
    """`test_x (m.C)` -> the docstring line the verbose log gives as its id, for each test printed so. Python 3.6 (and
    2.7) print a docstring that starts on the line after its quotes not at all, Python 3.7 and later its first text
    line: SWE-bench ran Django 3.0 to 3.2 on 3.6, so its lists name such tests `test_x (m.C)` where a run on a newer
    Python names them by their docstring; this map relates the two forms of one run's ids."""
    lines = [line.strip() for line in log.split("\n")]
    return {
        name: following.split(" ... ")[0]
        for name, following in pairwise(lines)
        if _UNITTEST_ID.fullmatch(name) and " ... " in following
    }


def django_id(test_id: str) -> TestId | None:
    """`test_x (module.Class)` (or `(module.Class.test_x)`) read as a `TestId`, its file the module's under `tests/`
    (`utils_tests.test_html` -> `tests/utils_tests/test_html.py`); a bare `test_x`, which `parse_log_django` reads
    from a `FAIL: test_x (module.Class)` header (its first word) when output cut the verdict's own line, names no
    file or class; a docstring's line names no test: None."""
    if _BARE_NAME.fullmatch(test_id):
        return (None, "", test_id, "")
    match = _UNITTEST_ID.fullmatch(test_id)
    module, _, cls = match["cls"].rpartition(".") if match else ("", "", "")
    return (f"tests/{module.replace('.', '/')}.py", cls, match["method"], "") if match and module else None


def plant_django(
    run_files: Sequence[str], fail_to_pass: Sequence[str], read: Callable[[str], bytes]
) -> Canaries | None:
    """Canaries as a `django.test.SimpleTestCase` (runtests.py collects test cases only; no database) in a new module
    beside the first FAIL_TO_PASS test's, and twins of the FAIL_TO_PASS tests (`self.assertEqual(...)` and the like
    changed, `languages.python.assertions`)."""
    return plant_python(
        run_files, fail_to_pass, read, django_id, unittest_base="django.test.SimpleTestCase", described=True
    )


def django_single_id(test_id: str) -> str:
    """The label that runs one test (`m.C.test_x`) from its id; a docstring's line names no test and is kept (the
    single-test command then cannot select it)."""
    match = _UNITTEST_ID.fullmatch(test_id)
    return f"{match['cls']}.{match['method']}" if match else test_id


def django_well_formed(test_id: str) -> bool:
    """An id Django's verbose log can give: `test_x (m.C)` or a docstring's first line, one stripped line that holds
    no verdict of its own."""
    return bool(test_id) and test_id == test_id.strip() and "\n" not in test_id and " ... " not in test_id


_STDOUT_TO_FILE = re.compile(r"\s*(?<![\d&>])>(?!&)\s*(?:'[^']*'|\"[^\"]*\"|[^\s;&|]+)")
"""A redirection of standard output to a file (`> /tmp/r`), not of another descriptor (`2>&1`, `2> err`)."""


def console(command: str) -> str:
    """Our command with its log on the console (the redirection to the report removed; `2>&1` stays), which is the
    log SWE-bench's eval script hands its parser."""
    return _STDOUT_TO_FILE.sub("", command)


DJANGO_RUNNER = Runner(
    name="django",
    parse=parse_django_log,
    single_template="python tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 {id}",
    report_kind="Django runtests.py console log",
    language="python",
    template=DJANGO_TEST,
    detect=DJANGO_COMMAND,
    suffixes=(".py",),
    targets=django_labels,
    test_file=django_test_file,
    well_formed=django_well_formed,
    single_id=django_single_id,
    swebench_log=SwebenchLog("parse_log_django", console),
    plant=plant_django,
    twins_apart=True,
)
