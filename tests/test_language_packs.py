"""The language packs (`languages`): one module per language, all registered, each one self-sufficient,
and no language's names anywhere else in the product.

The names a language owns are taken from the registry itself (pack names, runner names, the seed's language
names, the root files a pack reads, depends on or recognises a repository by), so a new pack is checked as
soon as it is registered.
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import re
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path, PurePosixPath

import pytest

from swe_forge_dagster import languages
from swe_forge_dagster.languages.pack import LanguagePack
from swe_forge_dagster.languages.registry import (
    DEFAULT_RUNNER,
    is_test_path,
    pack,
    pack_of,
    packs,
    protected,
    root_files,
    runner_for,
    runner_of,
    runners,
)
from tests.support.common import REPO_ROOT

PACKAGE = REPO_ROOT / "swe_forge_dagster"
PACKAGE_NAME = f"{languages.__name__}"
EXEMPT = (PACKAGE / "demo",)
"""Beside the packs and their registry (`languages/`), the demo worlds' data (repositories written in those
languages) may name languages; it still imports them through the registry."""


def language_names() -> tuple[set[str], set[str]]:
    """(words matched as whole string constants, file names matched inside string constants), from the registry.

    Words: pack, runner and seed language names (`go`, `pytest`, `javascript`) and source suffixes (`.py`): short,
    so only a constant that is exactly one of them is a use (`"go"`, not `"go ahead"`). File names: a `.` or `/`
    makes them specific enough to be found inside any constant (`"package.json"` in an f-string, a message or a
    regex): the root files a pack reads, depends on or recognises a repository by, the files its runners' loaders
    read or share with it, the files a distribution's name is read from.
    """
    words: set[str] = set()
    files: set[str] = set()
    for language in packs():
        words |= {language.name, *language.seed_languages, *(runner.name for runner in language.runners)}
        words |= set(language.extensions)
        files |= {*language.manifests, *language.read_files, *language.dependency_files, *language.dist_name_files}
        for probe in language.config_probes.values():
            files |= {*probe.files, *(probe.triggers or ())}
        if language.config_sections is not None:
            files |= set(language.config_sections.files)
    return words, files


INSIDE = ("pytest", "--junitxml", "junit_family")
"""Words specific enough to be found inside any constant, whatever its case (`PYTEST_DISABLE_PLUGIN_AUTOLOAD`, an
option in a command): the default runner's name and its report options, which generic text never holds."""


def inside_markers() -> set[str]:
    """What a constant may not hold anywhere (lower case): `INSIDE`, and what the packs' runners and installs name
    by fixed paths: their stored report paths, the variables their `plugins_off` lines set, their install outputs."""
    found = set(INSIDE)
    for language in packs():
        found |= {name.strip("*").lower() for name in language.install_outputs}
        for runner in language.runners:
            found |= {runner.stored_report.lower()} - {""}
            found |= {m.lower() for m in re.findall(r"[A-Z][A-Z0-9_]{4,}(?==)", runner.plugins_off)}
    return found


def language_path(text: str) -> bool:
    """Whether a constant is a path only a language gives a meaning to: one a pack protects (`conftest.py`,
    `node_modules`, `__pycache__`, `.cargo/config.toml`), or test code by a pack's own conventions (`x_test.go`,
    `a.spec.ts`, `src/test/java/A.java`) and not by the product's generic rules (`tests/`, `fixtures/`)."""
    if not PurePosixPath(text).parts or any(c.isspace() for c in text) or not any(c in text for c in "./_"):
        return False
    if text.startswith("*") and text.endswith(tuple(e for language in packs() for e in language.extensions)):
        return True  # a glob of a language's source files (`*.py`)
    generic = is_test_path(f"{text.strip('/')}/x") and not any(c in text for c in "*.")
    return protected(text, new=True) or (any(language.test_code(text) for language in packs()) and not generic)


def string_constants(tree: ast.AST) -> list[ast.Constant]:
    """Every string constant of a module except docstrings (expression statements: documentation, not knowledge)."""
    documentation = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in documentation
    ]


def named_languages(tree: ast.AST, exempt: Collection[str] = ()) -> list[tuple[int, str]]:
    """(line, what) for every constant of a module that names a language's runner, manifest or path (but the
    constants `exempt`)."""
    words, files = language_names()
    markers = inside_markers()
    found = []
    for node in string_constants(tree):
        if node.value in exempt:
            continue
        text = node.value.replace("\\", "")  # a regex's escapes (`conftest\\.py`) name the file all the same
        named = {node.value} & words or {name for name in files if name in text}
        named = named or {marker for marker in markers if marker in text.lower()}
        if not named:  # a regex's alternatives (`^conftest\\.py$|.*_test\\.go$`) are paths each
            named = {part for part in re.sub(r"[\^$()]", "", text).split("|") if language_path(part)}
        if named:
            found.append((node.lineno, ", ".join(sorted(named))))
    return found


def pack_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) for every import of a module under `languages` other than the registry."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module] if node.module != PACKAGE_NAME else [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        for module in modules:
            if module.startswith(f"{PACKAGE_NAME}.") and module != f"{PACKAGE_NAME}.registry":
                found.append((node.lineno, module))
    return found


def product_modules(*exempt: Path) -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if not any(path.is_relative_to(folder) for folder in (PACKAGE / "languages", *exempt))
    ]


def base_image_packages() -> str:
    """The base image's own Debian packages, as `scripts/build-base-image.sh` includes them: every sandbox's image,
    not a pack's (`environments.toolchain_images` upgrades it to later suites with the same list)."""
    script = (REPO_ROOT / "scripts" / "build-base-image.sh").read_text(encoding="utf-8")
    found = re.search(r"--include=(\S+)", script)
    assert found is not None
    return " ".join(found.group(1).split(","))


def test_no_language_name_outside_its_pack() -> None:
    base = base_image_packages()
    found = [
        f"{path.relative_to(REPO_ROOT)}:{line}: {what}"
        for path in product_modules(*EXEMPT)
        for line, what in named_languages(ast.parse(path.read_text(encoding="utf-8")), exempt={base})
    ]
    assert found == [], "a language's knowledge belongs in its pack (languages/<language>/pack.py):\n" + "\n".join(
        found
    )


def test_no_module_outside_the_packs_imports_a_pack() -> None:
    """Only `languages.registry` answers for the packs: no module outside `languages/` (the demo's included)
    imports a pack, its private modules or the interface module."""
    found = [
        f"{path.relative_to(REPO_ROOT)}:{line}: {module}"
        for path in product_modules()
        for line, module in pack_imports(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == [], "ask `languages.registry` instead:\n" + "\n".join(found)


def test_the_rule_finds_what_it_is_meant_to_find() -> None:
    words, files = language_names()
    assert {"python", "node", "go", "rust", "java", "cpp", "pytest", "mocha", "cargo", "maven", "gtest"} <= words
    assert {"package.json", "go.mod", "Cargo.toml", "pom.xml", "CMakeLists.txt", "pyproject.toml"} <= files
    assert {"pytest.ini", "tox.ini", ".npmrc", "Cargo.lock"} <= files  # the runners' loaders' files
    sample = (
        'x = "go"\ny = f"read {n} from package.json"\n"""A docstring naming pytest and go.mod."""\nz = "go on"\n'
        'a = "conftest.py"\nb = r"^.*_test\\.go$"\nc = "node_modules"\nd = ".py"\ne = "tests/"\nf = "src/app"\n'
        'g = "*.py"\nh = "export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1"\ni = f"{cmd} --junitxml={path}"\nj = "x.egg-info"\n'
        'k = "let the test runners autoload plugins"\n'
    )
    hits = [what for _line, what in sorted(named_languages(ast.parse(sample)))]
    assert hits == [
        *("go", "package.json", "conftest.py", ".*_test.go", "node_modules", ".py", "*.py"),  # not "tests/"
        *("pytest, pytest_disable_plugin_autoload", "--junitxml", ".egg-info"),  # not the generic text
    ]
    imports = "from swe_forge_dagster.languages.python.runner import X\nfrom swe_forge_dagster.languages import node\n"
    imports += (
        "from swe_forge_dagster.languages.registry import pack\nfrom swe_forge_dagster.languages import registry\n"
    )
    assert [module for _line, module in pack_imports(ast.parse(imports))] == [
        "swe_forge_dagster.languages.python.runner",
        "swe_forge_dagster.languages.node",
    ]


def test_every_pack_module_is_registered() -> None:
    modules = [
        importlib.import_module(f"{languages.__name__}.{info.name}.pack")
        for info in pkgutil.iter_modules(languages.__path__)
        if info.ispkg
    ]
    defined = {module.PACK.name for module in modules if isinstance(getattr(module, "PACK", None), LanguagePack)}
    assert defined == {language.name for language in packs()} == {"python", "node", "go", "rust", "java", "cpp"}
    assert len(runners()) == sum(len(language.runners) for language in packs())  # runner names are unique


@pytest.mark.parametrize(
    ("present", "changed", "expected"),
    [
        ({"pyproject.toml"}, ["src/x.py"], "python"),
        ({"package.json"}, ["lib/a.ts"], "node"),
        ({"go.mod"}, ["README.md"], "go"),
        ({"Cargo.toml"}, ["src/lib.rs"], "rust"),
        ({"pom.xml"}, ["src/main/java/A.java"], "java"),
        ({"build.gradle.kts"}, [], "java"),
        ({"CMakeLists.txt"}, ["include/x.h"], "cpp"),
        ({"package.json", "setup.py"}, ["docs/x.js"], "node"),  # the change's language decides
        ({"package.json", "setup.py"}, [], "python"),  # else the order of the registry
        ({"pyproject.toml", "Cargo.toml"}, ["src/lib.rs"], "python"),  # a compiled extension of a Python package
    ],
)
def test_recognition_picks_the_pack_of_the_manifests(present: set[str], changed: list[str], expected: str) -> None:
    found = pack_of(present, changed)
    assert found is not None and found.name == expected
    assert pack_of({"Makefile"}, ["x.c"]) is None
    assert set(pack(expected).manifests) <= set(root_files())


TINY_REPORTS = {
    "pytest": b'<testsuites><testsuite><testcase classname="tests.test_a" name="test_x" file="tests/test_a.py"/>'
    b"</testsuite></testsuites>",
    "mocha": b'<testsuite name="Mocha Tests"><testcase classname="calc" name="adds"/></testsuite>',
    "jest": json.dumps(
        {"testResults": [{"name": "/r/a.test.js", "assertionResults": [{"title": "adds", "status": "passed"}]}]}
    ).encode(),
    "vitest": json.dumps(
        {"testResults": [{"name": "/r/a.test.ts", "assertionResults": [{"title": "adds", "status": "passed"}]}]}
    ).encode(),
    "go": b'{"Action":"run","Package":"x","Test":"TestAdd"}\n{"Action":"pass","Package":"x","Test":"TestAdd"}\n',
    "cargo": b'{"type":"suite","event":"started"}\n{"type":"test","event":"ok","name":"tests::adds"}\n',
    "maven": b'<testsuite><testcase classname="org.x.CalcTest" name="adds"/></testsuite>',
    "gtest": b'<testsuites><testsuite name="Calc"><testcase classname="Calc" name="Adds" result="completed"/>'
    b"</testsuite></testsuites>",
    "django": b"test_adds (calc_tests.tests.CalcTests) ... ok\n",
    "sympy": b"sympy/core/tests/test_calc.py[2]\ntest_adds ok\ntest_subtracts ok   [OK]\n",
}
EXPECTED_IDS = {
    "pytest": "tests/test_a.py::test_x",
    "mocha": "calc adds",
    "jest": "adds",
    "vitest": "a.test.ts > adds",
    "go": "TestAdd",
    "cargo": "tests::adds",
    "maven": "org.x.CalcTest#adds",
    "gtest": "Calc.Adds",
    "django": "test_adds (calc_tests.tests.CalcTests)",
    "sympy": "test_adds",
}


@pytest.mark.parametrize("name", sorted(TINY_REPORTS))
def test_each_runner_reads_a_tiny_report_of_its_own_and_recognises_its_command(name: str) -> None:
    runner = runner_for(name)
    files = ["tests/test_a.py"] if name == "pytest" else ["a.test.ts"] if name == "vitest" else []
    assert runner.parse(TINY_REPORTS[name], files) == {EXPECTED_IDS[name]: "passed"}
    assert runner_of(runner.template) is runner
    assert runner.name in runner.report_kind or runner.report_kind  # every runner says what it reads
    hints = next(language for language in packs() if runner in language.runners).hints
    assert runner.name in hints.runners or runner is DEFAULT_RUNNER


def test_every_runner_is_covered_by_a_tiny_report() -> None:
    assert set(TINY_REPORTS) == set(runners())


def test_toolchain_images_are_declared_by_their_packs_and_built_from_them() -> None:
    for language in packs():
        if language is pack("python"):
            continue
        assert language.images and language.debian_packages, language.name
        shown = subprocess.run(
            [sys.executable, "-m", "swe_forge_dagster.languages", "packages", language.name],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO_ROOT,
        ).stdout.strip()
        assert shown == language.debian_packages
    script = (REPO_ROOT / "scripts" / "build-toolchain-image.sh").read_text(encoding="utf-8")
    assert "swe_forge_dagster.languages" in script
    assert not any(language.debian_packages in script for language in packs() if language.debian_packages)


def test_seed_tasks_get_their_languages_image() -> None:
    base = next(iter(pack("python").images))
    assert pack("go").seed_task_image("1.22", base, True) == "swe-forge-go:trixie"
    assert pack("java").seed_task_image("1.8", base, True) == "swe-forge-java:bookworm"
    assert pack("go").seed_task_image("1.22", "python:3.12-slim", False) is None  # no local image: next pack


def test_a_pack_protects_its_runners_configuration() -> None:
    from swe_forge_dagster.languages.registry import protected

    assert protected("tests/conftest.py") and protected("jest.config.js") and protected(".cargo/config.toml")
    assert protected("pkg/new_test.go", new=True) and not protected("pkg/old_test.go")
    assert not protected("src/app.py") and not protected("README.md")


def test_the_docs_show_the_smallest_pack() -> None:
    """The docs page on adding a language shows it with the smallest registered pack."""
    smallest = min(
        (PACKAGE / "languages" / language.name / "pack.py" for language in packs()),
        key=lambda path: len(path.read_text(encoding="utf-8").splitlines()),
    )
    readme = (REPO_ROOT / "docs" / "adding-a-language.md").read_text(encoding="utf-8")
    assert f"languages/{smallest.parent.name}/pack.py" in readme
