"""What an agent may change: the diff filter's paths (test code, runner configuration and plumbing, install
outputs) and pytest's sections of shared config files, checked against every SWE-bench gold patch of the fixtures
(real fixes must apply whole). The Docker side is `tests/test_harness_hacks.py`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swe_forge_dagster.harness import HarnessTask, load_inputs
from swe_forge_dagster.harness.protection import (
    filter_diff,
    install_outputs,
    is_protected,
    under_outputs,
)
from swe_forge_dagster.languages.python.modules import new_top_level_modules
from swe_forge_dagster.languages.python.protection import pytest_section

SWEBENCH_FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "swebench"


def section(path: str, body: str = "@@ -0,0 +1 @@\n+x\n") -> str:
    return f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n{body}"


def test_agent_changes_to_test_code_and_pytest_plumbing_are_dropped() -> None:
    protected = [
        "tests/test_rounding.py",
        "conftest.py",
        "src/pkg/conftest.py",
        "pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "pytest.py",
        "_pytest/main.py",
        "pkg/evil.pth",
        "sitecustomize.py",
        "extra_check.sh",
        "evil-1.0.dist-info/entry_points.txt",
        "src/evil.egg-info/entry_points.txt",
        "evil.egg-link",
        "tests/test_new.py",  # test code the task does not own: its test patch brings the tests a fix needs
        "tests/__init__.py",
        "tests/helpers/data.py",
        "pkg/sub/tests/util.py",
        "uuid_test.go",
        "test/unit/helper.js",
        "lib/core.spec.ts",
        "src/__tests__/setup.js",
        "src/test/java/org/x/XTest.java",
        "django/test/testcases.py",  # test support by the rules that split a PR: never in a task's fix
        "sympy/testing/runtests.py",
        "lib/fixtures/data.json",
        "pkg/testdata/golden.txt",
        "src/__mocks__/fs.js",
        "packages/core/node_modules/chai/index.js",  # installed packages at any depth
    ]
    kept = [
        "tinycalc/rounding.py",
        "docs/notes.md",
        "pyproject.toml",
        "tox.ini",
        "testing_utils.py",
        "src/main/java/org/x/X.java",
        "lib/test.js",
    ]
    diff = "".join(section(path) for path in protected + kept)
    filtered, dropped = filter_diff(diff, task_files={"extra_check.sh", "tests/test_rounding.py"})
    assert dropped == protected
    assert [line.split()[-1][2:] for line in filtered.splitlines() if line.startswith("diff --git")] == kept
    assert not is_protected("tinycalc/pytest_helpers.py")
    # pytest's own source is source: only NEW pytest shadows are protected
    for path in ("src/_pytest/python.py", "src/pytest/__init__.py"):
        assert not is_protected(path) and is_protected(path, new=True)
    with pytest.raises(ValueError, match="not a git diff"):
        filter_diff("this is not a diff")


def test_only_a_change_to_the_pytest_section_of_a_shared_config_file_counts() -> None:
    toml = b'[project]\nname = "x"\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    assert pytest_section("pyproject.toml", toml) == pytest_section("pyproject.toml", toml.replace(b'"x"', b'"y"'))
    assert pytest_section("pyproject.toml", toml) != pytest_section("pyproject.toml", toml + b"testpaths = ['t']\n")
    assert pytest_section("pyproject.toml", b"[project]\n") != pytest_section(
        "pyproject.toml", b"[project]\n[tool.pytest]\naddopts = ['-p', 'evil']\n"
    )
    assert pytest_section("pyproject.toml", b"[broken") != pytest_section("pyproject.toml", b"[broken2")
    cfg = b"[metadata]\nname = x\n[tool:pytest]\naddopts = -q\n"
    assert pytest_section("setup.cfg", cfg) == pytest_section("setup.cfg", cfg.replace(b"name = x", b"name = y"))
    assert pytest_section("setup.cfg", cfg) != pytest_section("setup.cfg", cfg + b"  -p evil\n")
    assert pytest_section("tox.ini", b"[tox]\n") != pytest_section("tox.ini", b"[tox]\n [pytest]\naddopts=-p x\n")


def test_no_swebench_gold_patch_touches_a_protected_path() -> None:
    """Real fixes in django/test, sympy/testing, pytest's src/_pytest... must be applied: the oracle can solve them."""
    files = sorted(SWEBENCH_FIXTURES.rglob("*.json*")) if SWEBENCH_FIXTURES.is_dir() else []
    tasks = [item for path in files for item in load_inputs(path, default_image="i") if isinstance(item, HarnessTask)]
    if not tasks:
        pytest.skip("shared SWE-bench fixtures missing")
    assert len({task.task_id for task in tasks}) > 350
    touched = {task.task_id: filter_diff(task.gold_patch, task.protected_files, task.fix_files)[1] for task in tasks}
    assert {task_id: dropped for task_id, dropped in touched.items() if dropped} == {}
    assert sum(task.repo == "pytest-dev/pytest" for task in tasks) > 10  # the src/_pytest fixes are among them


def test_other_runners_configuration_and_new_go_test_files_are_protected() -> None:
    for path in (".mocharc.json", "test/.mocharc.yml", "jest.config.js", "vitest.config.ts", ".cargo/config.toml"):
        assert is_protected(path), path
    assert is_protected("uuid/main_test.go", new=True) and is_protected("uuid/main_test.go")  # new, or test code
    assert not is_protected("config.toml") and not is_protected("lib/core.js")


def test_install_outputs_are_read_from_the_patterns_the_repo_box_writes() -> None:
    """`repo_box.prepare_script` escapes glob characters and anchors each output; the harness reads them back and
    resets the diff's changes under them (node_modules comes from the image, never from the diff)."""
    outputs = ["node_modules", "src/pkg/_version.py", "odd [dir]*?", "pkg.egg-info"]
    escape = r"s/[][*?\\!#]/\\&/g"  # the script's own sed expressions
    escaped = subprocess.run(
        ["sed", "-e", escape, "-e", r"s/ $/\\ /", "-e", "s|^|/|"],
        input="\n".join(outputs) + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    class Box:
        def read_file(self, path: str, max_bytes: int, follow_symlinks: bool) -> bytes:
            assert path == "/repo/.git/info/exclude" and not follow_symlinks
            return ("# git's own comment\n" + escaped).encode()

    found = install_outputs(Box())  # type: ignore[arg-type]
    assert found == outputs
    assert under_outputs("node_modules/mocha/lib/runner.js", found) and under_outputs("odd [dir]*?/x", found)
    assert not under_outputs("node_modules_extra/x.js", found) and not under_outputs("src/pkg/core.py", found)


def test_a_new_top_level_module_is_dropped_whatever_its_name() -> None:
    """Below an import root, a module file or a directory that is new at the top: `math.py` and `markupsafe/` alike
    (any name can be an installed dependency or an optional start-up import); inside an existing package, data,
    docs and a new file in an existing top-level package or namespace package are kept."""
    existing = {"tinycalc", "README.md", "src", "src/ns", "src/pkg"}
    changes = [
        ("A", "math.py"),
        ("A", "markupsafe/__init__.py"),
        ("A", "idna.cpython-311-x86_64-linux-gnu.so"),
        ("A", "src/_distutils_hack/__init__.py"),
        ("A", "src/ns/newmod.py"),  # a namespace package that existed: `ns.newmod`, not a top-level name
        ("A", "tinycalc/math.py"),
        ("A", "notes/new.md"),
        ("A", "changelog.d/1.py"),  # not an identifier: nothing can import it as a top-level name
        ("M", "README.md"),
    ]
    found = new_top_level_modules(changes, ["", "src"], existing)
    shadows = ["math.py", "markupsafe/__init__.py", "idna.cpython-311-x86_64-linux-gnu.so"]
    assert found == [*shadows, "src/_distutils_hack/__init__.py"]
    # with only the root as an import root, `src/` is an existing directory: its new module is not top-level
    assert new_top_level_modules([("A", "src/_distutils_hack/__init__.py")], [""], existing) == []
