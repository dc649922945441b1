"""pytest node ids from a JUnit XML report (`execution.junit` reads the report, this names its testcases).

SWE-bench's FAIL_TO_PASS/PASS_TO_PASS hold pytest node ids (`tests/test_x.py::TestC::test_y[p-1]`),
so the report has to be mapped back to node ids exactly; an id that differs by one character makes a
task unverifiable by the standard harness.

How pytest writes a testcase (`_pytest/junitxml.py`, `mangle_test_address`): the node id is cut at
the first `[`, the part before it is split on `::`, the file path becomes dotted (`/` -> `.`, `.py`
dropped); `classname` is all the pieces but the last joined with `.`, `name` is the last piece plus
the `[params]`. So params (even with `.`, `/` or `::` inside) are always in `name` and never in
`classname`. Mapping back is unambiguous except for where the module ends and the classes start in
`classname`, decided in this order:

1. the `file` attribute, when its dotted form is a prefix of `classname`. pytest writes `file` only
   with `junit_family=xunit1` (the default `xunit2` drops it), so run pytest with
   `-o junit_family=xunit1`. `file` is where the test function is defined, so a test inherited from
   a base class in another module has a `file` that does not match: then it is ignored.
2. `known_files` (e.g. the repository's `*.py` files): the longest one whose dotted form is a prefix
   of `classname`. This also handles directories with dots in their names.
3. Convention: module names are lowercase and class names start with an uppercase letter, so the
   module is everything before the first piece that starts with an uppercase letter. Wrong for
   lowercase class names or capitalized module/directory names; pass `known_files` to be safe.

A collection error is written with an empty `classname` and the dotted module as `name`; it maps to
the file path (`tests/test_x.py`), which is also what SWE-bench would call that entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from swe_forge_dagster.execution.junit import CaseId, Outcome, parse_junit

_SUFFIX = ".py"


XFAIL = "pytest.xfail"
"""The `type` of the `<skipped>` element pytest writes for an expected failure (a non-strict XPASS is written as a
plain pass, a strict one as a failure)."""


def pytest_outcomes(xml: str | bytes, known_files: Iterable[str] | None = None) -> dict[str, Outcome]:
    """Each testcase of pytest's JUnit report by its node id (see the module docstring); xfails are `xfailed`."""
    return parse_junit(xml, pytest_ids(known_files), expected_failures=(XFAIL,))


def pytest_ids(known_files: Iterable[str] | None = None) -> CaseId:
    """The id form of pytest's testcases, `known_files` deciding where a module ends (see the module docstring)."""
    return partial(pytest_id, modules=_dotted_modules(known_files or ()))


def pytest_id(classname: str, name: str, file: str | None = None, modules: dict[str, str] | None = None) -> str:
    """The pytest node id for one testcase; `modules` maps dotted module -> path (see `_dotted_modules`)."""
    file = file.replace("\\", "/") if file else None
    if not classname:  # a collection error: `name` is the dotted module (or a path already)
        if file:
            return file
        return name if name.endswith(_SUFFIX) or "/" in name else name.replace(".", "/") + _SUFFIX
    path, classes = None, ""
    if file and file.endswith(_SUFFIX):
        dotted = file[: -len(_SUFFIX)].replace("/", ".")
        if classname == dotted or classname.startswith(dotted + "."):
            path, classes = file, classname[len(dotted) + 1 :]
    if path is None and modules:
        path, classes = _longest_known_module(classname, modules)
    if path is None:
        pieces = classname.split(".")
        split_at = next((i for i, piece in enumerate(pieces) if piece[:1].isupper()), len(pieces))
        split_at = max(split_at, 1)  # a classname always starts with the module
        path = "/".join(pieces[:split_at]) + _SUFFIX
        classes = ".".join(pieces[split_at:])
    return "::".join([path, *(classes.split(".") if classes else []), name])


def _dotted_modules(files: Iterable[str]) -> dict[str, str]:
    modules = {}
    for file in files:
        file = file.replace("\\", "/").removeprefix("./")
        if file.endswith(_SUFFIX):
            modules[file[: -len(_SUFFIX)].replace("/", ".")] = file
    return modules


def _longest_known_module(classname: str, modules: dict[str, str]) -> tuple[str | None, str]:
    pieces = classname.split(".")
    for split_at in range(len(pieces), 0, -1):
        path = modules.get(".".join(pieces[:split_at]))
        if path is not None:
            return path, ".".join(pieces[split_at:])
    return None, ""
