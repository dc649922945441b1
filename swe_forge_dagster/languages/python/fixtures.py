"""The pytest fixtures a test file can see, for twins that change a test's parametrize values
(`languages.python.assertion_sites`).

Why: a fixture that takes a parametrized name gets the twin's value too, and may put it where the code under test
reads it back (`stored(tmp_path, payload)` writes `payload` to a file the test reads): honest code then passes the
twin, and would be called tampering (a red-team helper's false positive, 2026-11-30). So parametrize values change
only when every argument of the test is a parametrized name, a fixture this file or a conftest above it defines, or
one of pytest's own, and no fixture defined there takes the name. A fixture that comes from elsewhere (imported into
the module, a plugin, `pytest_plugins`) could take any name, as could one that calls `request.getfixturevalue` or
reads `request.node.callspec`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

PYTEST_OWN = frozenset(
    {
        "cache",
        "capfd",
        "capfdbinary",
        "caplog",
        "capsys",
        "capsysbinary",
        "doctest_namespace",
        "monkeypatch",
        "pytestconfig",
        "record_property",
        "record_testsuite_property",
        "record_xml_attribute",
        "recwarn",
        "request",
        "testdir",
        "pytester",
        "tmp_path",
        "tmp_path_factory",
        "tmpdir",
        "tmpdir_factory",
    }
)
"""pytest's own fixtures (`pytest --fixtures` on a bare project): none takes a test's parameter."""


@dataclass(frozen=True)
class Fixtures:
    """The fixtures defined in some files: their names, and the names they take."""

    names: frozenset[str] = frozenset()
    args: frozenset[str] = frozenset()

    def __or__(self, other: Fixtures) -> Fixtures:
        return Fixtures(self.names | other.names, self.args | other.args)

    def known(self, name: str) -> bool:
        return name in self.names or name in PYTEST_OWN


NONE = Fixtures()
"""No fixture of its own: what a file with no conftest above it adds."""


READS_ANY_VALUE = frozenset({"getfixturevalue", "callspec", "funcargs"})
"""What reads a test's parameters or fixtures by name at run time (`request.getfixturevalue("x")`,
`request.node.callspec.params["x"]`, `item.funcargs`): a fixture or hook that uses one may carry a parametrized value
where the code reads it back without taking its name (a red-team helper's honest false positive, 2026-12-01)."""


def fixtures_of(trees: Iterable[ast.Module]) -> Fixtures | None:
    """The fixtures these modules (a test file, its conftests) define, or None when one of them may take any name
    (`READS_ANY_VALUE`) or fixtures come from plugins they name (`pytest_plugins`)."""
    names: set[str] = set()
    args: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in READS_ANY_VALUE:
                return None
            if isinstance(node, ast.Name) and node.id == "pytest_plugins":
                return None
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in node.decorator_list:
                    if _fixture(decorator):
                        names.add(_named(decorator) or node.name)
                        args |= {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
    return Fixtures(frozenset(names), frozenset(args))


def _fixture(decorator: ast.expr) -> bool:
    """`@pytest.fixture`, `@fixture`, `@pytest.fixture(...)`, `@pytest_asyncio.fixture`..."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
    return name.endswith("fixture")


def _named(decorator: ast.expr) -> str | None:
    """The name a fixture is requested by when its decorator gives one (`@pytest.fixture(name="x")`)."""
    if isinstance(decorator, ast.Call):
        given = next((k.value for k in decorator.keywords if k.arg == "name"), None)
        if isinstance(given, ast.Constant) and isinstance(given.value, str):
            return given.value
    return None
