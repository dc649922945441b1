"""SymPy's own test runner (`bin/test`), a runner of the Python pack: its command, ids and test files.

SWE-bench runs SymPy's tests as `PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose
<files>` (`TEST_SYMPY`; `-C` turns SymPy's cache off) with the test patch's files as they are, and reads the
console log with `parse_log_sympy`. `bin/test` calls `sympy.test` (`sympy/utilities/runtests.py`), which runs
the `test_*` functions of the files whose path contains a given string.

Its verbose log has a line per test, `test_name ok` / `F` / `E` / `f` (expected to fail) / `s` (skipped), under a
`path.py[count]` line, and a `____ path.py:test_name ____` header per failure in the report at the end. Ids are
the bare function names (`test_sinc`: two files' tests of one name are one id), plus `path.py:test_name` for a
failure's header. The last test of each file shares its line with the file's `[OK]` / `[FAIL]`
(`test_last ok      [OK]`), which `parse_log_sympy` does not read: that test has no outcome (SWE-bench's lists
leave it out), unless it failed (its header gives `path.py:test_last`).

The report is the console log (`> {report} 2>&1`), parsed as SWE-bench parses it: `parse_sympy_log` is
`swebench.harness.log_parsers.python.parse_log_sympy` line for line. Code under test can print lines of that
form, or patch the runner's reporter: so the checks plant canaries (a test function that must pass and one that
must fail, in a new file beside the task's) and run twins of the FAIL_TO_PASS tests apart
(`languages.python.canaries`, `plant_sympy`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import PurePosixPath

from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.execution.runners import Runner, SwebenchLog
from swe_forge_dagster.languages.python.canaries import Canaries, plant_python
from swe_forge_dagster.languages.python.django import COMMAND_START, INTERPRETER, console
from swe_forge_dagster.languages.python.twins import TestId

BIN_TEST = "bin/test"
"""SymPy's test script: a repository whose tree has it and `sympy/utilities/runtests.py` is tested with it."""
RUNTESTS_MODULES = ("sympy/testing/runtests.py", "sympy/utilities/runtests.py")
"""Where SymPy's runner lives (`sympy.testing.runtests` from 1.6, `sympy.utilities.runtests` before, and a shim of the
first from 1.6 on): what `bin/test` calls (through `sympy.test`), with or without the script."""
_WARNINGS = "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning'"
SYMPY_TEST = f"{_WARNINGS} python bin/test -C --verbose {{tests}} > {{report}} 2>&1"
"""SWE-bench's `TEST_SYMPY`, run with the environment's `python` from the repository's root, its log to `{report}`."""
RUNTESTS_CALL = (
    'import sys, importlib, importlib.util as u; a = sys.argv[1:]; k = a.index("-k") if "-k" in a else len(a); '
    'm = "sympy.testing.runtests" if u.find_spec("sympy.testing") else "sympy.utilities.runtests"; '
    "r = importlib.import_module(m).test(*a[:k], kw=a[k + 1 :] or None, verbose=True); "
    "sys.exit(int(not r) if isinstance(r, bool) else r)"
)
"""What `bin/test -C --verbose <paths> [-k <names>]` does, for a tree without the script (a release sdist, which
SymPy ships without `bin/`): the same runner function with the same arguments (`-C` is `SYMPY_USE_CACHE=no`, set
before SymPy is imported; every other option at `bin/test`'s default), and its exit status (a bool up to 1.12, an
exit code after). The runner is taken from its own module, not `sympy.test`, which from 1.13 runs pytest."""
SYMPY_RUNTESTS_TEST = f"{_WARNINGS} SYMPY_USE_CACHE=no python -c '{RUNTESTS_CALL}' {{tests}} > {{report}} 2>&1"
"""`SYMPY_TEST` for a tree without `bin/test`: the same log, read by the same parser."""
SYMPY_COMMAND = COMMAND_START + INTERPRETER + r"(?:(?:\S*/)?bin/test(?=\s|$|;)|'import sys, importlib, importlib\.util)"
"""SymPy's runner run as the command (`bin/test`, `./bin/test`, `python bin/test`, or `RUNTESTS_CALL`), not an
argument of another."""

_FAILURE_HEADER = re.compile(r"(_*) (.*)\.py:(.*) (_*)")
_OUTCOME: dict[str, Outcome] = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error"}


def parse_sympy_log_statuses(log: str) -> dict[str, str]:
    """SWE-bench's `parse_log_sympy`, line for line: id -> `PASSED`/`FAILED`/`ERROR`. A failure's header
    (`___ sympy/x/tests/test_y.py:test_z ___`) fails `sympy/x/tests/test_y.py:test_z`; a line starting `test_` and
    ending ` ok` / ` F` / ` E` gives its first word that outcome."""
    status: dict[str, str] = {}
    for match in _FAILURE_HEADER.findall(log):
        status[f"{match[1]}.py:{match[2]}"] = "FAILED"
    for raw in log.split("\n"):
        line = raw.strip()
        if not line.startswith("test_"):
            continue
        if line.endswith(" E"):
            status[line.split()[0]] = "ERROR"
        if line.endswith(" F"):
            status[line.split()[0]] = "FAILED"
        if line.endswith(" ok"):
            status[line.split()[0]] = "PASSED"
    return status


def parse_sympy_log(report: bytes, files: Iterable[str] = ()) -> dict[str, Outcome]:
    """SymPy's verbose console log (`SYMPY_TEST`'s `{report}`): SWE-bench's ids and their outcomes."""
    text = report.decode("utf-8", errors="replace")
    return {test_id: _OUTCOME[s] for test_id, s in parse_sympy_log_statuses(text).items()}


def sympy_files(files: Sequence[str]) -> list[str]:
    """`bin/test` takes the test files' paths (it runs every test file whose path contains one)."""
    return [f for f in dict.fromkeys(files) if f.endswith(".py")]


def sympy_test_file(path: str) -> bool:
    """A file `sympy.test` collects: `test_*.py` in a `tests` directory."""
    posix = PurePosixPath(path)
    return posix.name.startswith("test_") and posix.name.endswith(".py") and posix.parent.name == "tests"


_NAME = re.compile(r"test_\w*")


def sympy_well_formed(test_id: str) -> bool:
    """A test's id as a passing or failing line gives it: a `test_` function's name (a failure header's
    `path.py:test_x` only ever fails, so no list of tests to pass holds it)."""
    return bool(_NAME.fullmatch(test_id))


def sympy_id(test_id: str) -> TestId | None:
    """A bare name (`test_x`: no file) or a failure header's `path.py:test_x` read as a `TestId`."""
    path, sep, name = test_id.rpartition(":")
    if sep:
        return (path, "", name, "") if path.endswith(".py") and _NAME.fullmatch(name) else None
    return (None, "", test_id, "") if _NAME.fullmatch(test_id) else None


def plant_sympy(run_files: Sequence[str], fail_to_pass: Sequence[str], read: Callable[[str], bytes]) -> Canaries | None:
    """Canaries (test functions, and a third after them: the last test of a file shares its line with the file's
    verdict, where a pass is not read) beside the first file that defines a FAIL_TO_PASS test, and twins of those."""
    return plant_python(run_files, fail_to_pass, read, sympy_id, trailing=True)


SYMPY_RUNNER = Runner(
    name="sympy",
    parse=parse_sympy_log,
    single_template=f"SYMPY_USE_CACHE=no python -c '{RUNTESTS_CALL}' {{tests}} -k {{id}}",
    report_kind="SymPy bin/test console log",
    language="python",
    template=SYMPY_TEST,
    detect=SYMPY_COMMAND,
    suffixes=(".py",),
    targets=sympy_files,
    test_file=sympy_test_file,
    well_formed=sympy_well_formed,
    swebench_log=SwebenchLog("parse_log_sympy", console),
    plant=plant_sympy,
    twins_apart=True,
)
