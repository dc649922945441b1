"""The layout's rules, checked on the source with `ast` (nothing is imported):

- no import cycle between the package's modules (imports inside functions and under
  TYPE_CHECKING count too: a cycle there is still a tangle);
- `harness` imports nothing from `tasks` (both build on `execution`);
- the domain packages never import Dagster (one implementation for the CLI, the assets and the tests);
- no product module imports a test helper, and no test module imports another test module;
- sensors target jobs by name (no `dagster._core`);
- no Python file over 400 lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.common import REPO_ROOT

PACKAGE = "swe_forge_dagster"
DOMAIN = (
    "gharchive",
    "github",
    "candidates",
    "llm",
    "tasks",
    "harness",
    "export",
    "lake",
    "common",
    "execution",
    "triage",
    "gym",
)
MAX_LINES = 400


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every absolute module name `path` imports (`from a.b import c` gives `a.b` and `a.b.c`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    files = {module_name(path, package_dir.parent): path for path in package_dir.rglob("*.py")}
    return {name: {dep for dep in imports_of(path) if dep in files and dep != name} for name, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path (first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_in_the_package_or_the_tests() -> None:
    for package in (REPO_ROOT / PACKAGE, REPO_ROOT / "tests"):
        graph = import_graph(package)
        assert len(graph) > 40
        assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_harness_builds_on_execution_not_on_tasks() -> None:
    graph = import_graph(REPO_ROOT / PACKAGE)
    harness = {name: deps for name, deps in graph.items() if name.startswith(f"{PACKAGE}.harness")}
    wrong = {name: sorted(d for d in deps if d.startswith(f"{PACKAGE}.tasks")) for name, deps in harness.items()}
    assert not {k: v for k, v in wrong.items() if v}
    assert any(dep.startswith(f"{PACKAGE}.execution") for deps in harness.values() for dep in deps)


def test_domain_code_does_not_import_dagster() -> None:
    offenders = []
    for domain in DOMAIN:
        for path in (REPO_ROOT / PACKAGE / domain).rglob("*.py"):
            if any(name == "dagster" or name.startswith("dagster.") for name in imports_of(path)):
                offenders.append(str(path.relative_to(REPO_ROOT)))
    assert offenders == []


def test_no_product_module_imports_test_code_and_no_test_imports_another_test() -> None:
    product = [p for folder in (PACKAGE, "benchmarks", "examples") for p in (REPO_ROOT / folder).rglob("*.py")]
    assert not [p for p in product if any(n == "tests" or n.startswith("tests.") for n in imports_of(p))]
    tests = (REPO_ROOT / "tests").rglob("*.py")
    assert not [p.name for p in tests if any(n.startswith(("tests.test_", "tests.conftest")) for n in imports_of(p))]


def test_sensors_name_their_jobs_without_dagster_internals() -> None:
    for path in (REPO_ROOT / PACKAGE / "sensors").rglob("*.py"):
        assert not [n for n in imports_of(path) if n.startswith("dagster._")], path.name


def test_no_python_file_over_the_size_limit() -> None:
    roots = [REPO_ROOT / folder for folder in (PACKAGE, "tests", "benchmarks", "examples")]
    sizes = {
        str(p.relative_to(REPO_ROOT)): len(p.read_text(encoding="utf-8").splitlines())
        for root in roots
        for p in root.rglob("*.py")
    }
    assert {path: n for path, n in sizes.items() if n > MAX_LINES} == {}
