"""The layout's rules, checked on the source with `ast` (nothing is imported):

- no import cycle between the package's modules (imports inside functions and under
  TYPE_CHECKING count too: a cycle there is still a tangle);
- no import cycle between its packages either (`swe_forge_dagster.X` -> `swe_forge_dagster.Y` when any
  module of X imports any module of Y; top-level modules such as `settings` are nodes of their own):
  `lake` and `settings` build on `common` only, and the wiring of stores and datasets sits above the
  domain packages (`wiring`);
- `harness` imports nothing from `tasks` (both build on `execution`);
- the kernel (`execution`) imports no language pack and nothing built on them (`languages`, `environments`);
- a sandbox setting is written in few files (one specification, composed), and the agent kind is compared as a
  type, never as a string;
- the domain packages never import Dagster (one implementation for the CLI, the assets and the tests);
- no product module imports a test helper, and no test module imports another test module;
- sensors target jobs by name (no `dagster._core`);
- every container listing passes `ignore_removed=True` (a container removed mid-listing must not raise);
- no Python file over 400 lines, and no `fmt: skip` / `fmt: off` comment (the formatter formats every
  line; a file that outgrows the limit is split by meaning), outside generated tables (none today).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
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
    "environments",
    "languages",
    "triage",
    "gym",
    "wiring",
    "agents",
)
MAX_LINES = 400
SOURCE_FOLDERS = (PACKAGE, "tests", "benchmarks", "examples")
GENERATED_TABLES: frozenset[str] = frozenset()
"""Files (repository-relative) that hold generated tables, where a formatter pragma may stay; none today."""


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


def package_of(module: str) -> str:
    """`swe_forge_dagster.lake.catalog` -> `swe_forge_dagster.lake`; a top-level module is its own node."""
    return ".".join(module.split(".")[:2])


def package_graph(module_graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """X -> Y when any module of package X imports any module of package Y (the package itself left out)."""
    graph: dict[str, set[str]] = {}
    for module, deps in module_graph.items():
        if module == PACKAGE:
            continue
        node = package_of(module)
        graph.setdefault(node, set()).update(package_of(d) for d in deps if d != PACKAGE and package_of(d) != node)
    return graph


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


def test_no_import_cycle_between_packages() -> None:
    graph = package_graph(import_graph(REPO_ROOT / PACKAGE))
    assert {f"{PACKAGE}.lake", f"{PACKAGE}.settings", f"{PACKAGE}.definitions"} <= set(graph)
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_package_graph_joins_modules_into_packages() -> None:
    modules = {"p.a.x": {"p.b.y"}, "p.a.z": {"p.a.x", "p.s"}, "p.b.y": {"p.a.z"}, "p.s": set()}
    assert package_graph(modules) == {"p.a": {"p.b", "p.s"}, "p.b": {"p.a"}, "p.s": set()}


def test_lake_and_settings_build_on_common_only() -> None:
    graph = package_graph(import_graph(REPO_ROOT / PACKAGE))
    assert graph[f"{PACKAGE}.lake"] <= {f"{PACKAGE}.common"}
    assert graph[f"{PACKAGE}.settings"] <= {f"{PACKAGE}.common"}
    assert graph[f"{PACKAGE}.common"] == set()


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
    roots = [REPO_ROOT / folder for folder in SOURCE_FOLDERS]
    sizes = {
        str(p.relative_to(REPO_ROOT)): len(p.read_text(encoding="utf-8").splitlines())
        for root in roots
        for p in root.rglob("*.py")
    }
    assert {path: n for path, n in sizes.items() if n > MAX_LINES} == {}


def formatter_pragmas(text: str) -> list[int]:
    """Lines with a `fmt: skip` / `fmt: off` comment (comments only: a string that mentions one is not one)."""
    pragma = re.compile(r"#\s*fmt:\s*(skip|off)\b")
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return [tok.start[0] for tok in tokens if tok.type == tokenize.COMMENT and pragma.search(tok.string)]


def test_the_pragma_finder_reads_comments_only() -> None:
    source = 'x = 1  # fmt: skip\ny = "# fmt: skip"\n# fmt: off\nz = 2  # format: skip is not one\n'
    assert formatter_pragmas(source) == [1, 3]


def test_no_formatter_pragma_outside_generated_tables() -> None:
    found = {
        str(p.relative_to(REPO_ROOT)): lines
        for folder in SOURCE_FOLDERS
        for p in (REPO_ROOT / folder).rglob("*.py")
        if str(p.relative_to(REPO_ROOT)) not in GENERATED_TABLES
        and (lines := formatter_pragmas(p.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_kernel_imports_no_language() -> None:
    """`execution` is handed what it needs (CA variables, an image hook): it never asks the packs or the
    environments built on them, so a pack can use any part of it without a loop."""
    graph = import_graph(REPO_ROOT / PACKAGE)
    above = (f"{PACKAGE}.languages", f"{PACKAGE}.environments")
    wrong = {
        name: sorted(d for d in deps if d.startswith(above))
        for name, deps in graph.items()
        if name.startswith(f"{PACKAGE}.execution")
    }
    assert {k: v for k, v in wrong.items() if v} == {}


def names_used(tree: ast.AST) -> set[str]:
    """Every identifier a module names in code: variables, attributes, keywords, parameters."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif (isinstance(node, ast.keyword) and node.arg) or isinstance(node, ast.arg):
            found.add(node.arg)
    return found


def test_a_sandbox_setting_is_written_in_few_files() -> None:
    """One sandbox specification (`common.sandbox_spec`), composed, not copied field by field: its disk limit is
    named by the spec, the settings that read it, and the sandbox that enforces it."""
    files = [
        str(path.relative_to(REPO_ROOT))
        for path in (REPO_ROOT / PACKAGE).rglob("*.py")
        if "disk_limit" in names_used(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert len(files) <= 3, files


def string_comparisons(tree: ast.AST, words: set[str]) -> list[int]:
    """Lines that compare something with one of `words` as a string (`x == "oracle"`, `x in ("oracle", ...)`)."""

    def is_word(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in words
        return isinstance(node, ast.Tuple | ast.List | ast.Set) and any(is_word(e) for e in node.elts)

    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare) and any(is_word(side) for side in (node.left, *node.comparators))
    ]


def test_the_string_comparison_finder_sees_equality_and_membership() -> None:
    source = 'a = x == "oracle"\nb = x in ("command", "y")\nc = "oracle"\nd = x is Kind.ORACLE\n'
    assert string_comparisons(ast.parse(source), {"oracle", "command"}) == [1, 2]


def test_the_agent_kind_is_never_compared_as_a_string() -> None:
    from swe_forge_dagster.common.agent_kind import AgentKind

    words = {kind.value for kind in AgentKind}
    found = {
        str(path.relative_to(REPO_ROOT)): lines
        for path in (REPO_ROOT / PACKAGE).rglob("*.py")
        if (lines := string_comparisons(ast.parse(path.read_text(encoding="utf-8")), words))
    }
    assert found == {}


def container_listings_without_ignore_removed(tree: ast.AST) -> list[int]:
    """Lines calling `<x>.containers.list(...)` without `ignore_removed=True`.

    docker-py lists ids, then inspects each: a container another lane, run or `--rm` removes between the two makes
    the whole listing raise `NotFound` (a CI run failed so). `ignore_removed=True` skips it instead."""

    def ignores(call: ast.Call) -> bool:
        return any(
            k.arg == "ignore_removed" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in call.keywords
        )

    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "list"
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == "containers"
        and not ignores(node)
    ]


def test_the_listing_finder_sees_a_listing_that_would_raise() -> None:
    source = "a = c.containers.list(all=True)\nb = c.containers.list(ignore_removed=True)\nd = c.images.list()\n"
    assert container_listings_without_ignore_removed(ast.parse(source)) == [1]


def test_every_container_listing_survives_a_container_removed_meanwhile() -> None:
    found = {
        str(path.relative_to(REPO_ROOT)): lines
        for folder in SOURCE_FOLDERS
        for path in (REPO_ROOT / folder).rglob("*.py")
        if (lines := container_listings_without_ignore_removed(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert found == {}
