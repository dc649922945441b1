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
import subprocess
import sys

import pytest

from swe_forge_dagster import languages
from swe_forge_dagster.languages.pack import LanguagePack
from swe_forge_dagster.languages.registry import (
    DEFAULT_RUNNER,
    pack,
    pack_of,
    packs,
    root_files,
    runner_for,
    runner_of,
    runners,
)
from tests.support.common import REPO_ROOT

PACKAGE = REPO_ROOT / "swe_forge_dagster"
EXEMPT = (PACKAGE / "languages", PACKAGE / "demo")
"""The packs and their registry, and the demo worlds' data (repositories written in those languages)."""


def language_names() -> tuple[set[str], set[str]]:
    """(words matched as whole string constants, file names matched inside string constants), from the registry.

    Words: pack, runner and seed language names (`go`, `pytest`, `javascript`): short, so only a constant that
    is exactly one of them is a use (`"go"`, not `"go ahead"`). File names: a `.` or `/` makes them specific
    enough to be found inside any constant (`"package.json"` in an f-string or a message).
    """
    words: set[str] = set()
    files: set[str] = set()
    for language in packs():
        words |= {language.name, *language.seed_languages, *(runner.name for runner in language.runners)}
        files |= {*language.manifests, *language.read_files, *language.dependency_files}
    return words, files


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


def test_no_language_name_outside_its_pack() -> None:
    words, files = language_names()
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if any(path.is_relative_to(exempt) for exempt in EXEMPT):
            continue
        for node in string_constants(ast.parse(path.read_text(encoding="utf-8"))):
            named = {node.value} & words or {name for name in files if name in node.value}
            if named:
                found.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}: {', '.join(sorted(named))}")
    assert found == [], "a language's knowledge belongs in its pack (languages/<language>/pack.py):\n" + "\n".join(
        found
    )


def test_the_rule_finds_what_it_is_meant_to_find() -> None:
    words, files = language_names()
    assert {"python", "node", "go", "rust", "java", "cpp", "pytest", "mocha", "cargo", "maven", "gtest"} <= words
    assert {"package.json", "go.mod", "Cargo.toml", "pom.xml", "CMakeLists.txt", "pyproject.toml"} <= files
    sample = 'x = "go"\ny = f"read {n} from package.json"\n"""A docstring naming pytest and go.mod."""\nz = "go on"\n'
    hits = [
        n.value for n in string_constants(ast.parse(sample)) if n.value in words or any(f in n.value for f in files)
    ]
    assert hits == ["go", " from package.json"]  # not the docstring, not "go on"


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
