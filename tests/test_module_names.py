"""A new file that is a second module for a name an existing file answers to is a shadow (`harness.module_names`),
whatever its name. The real run (an extension-less `src/range` beside `src/range.js` on a real jest task) is in
`tests/test_toolchain_red_team.py`."""

from __future__ import annotations

from swe_forge_dagster.harness.module_names import module_name, second_modules

TREE = ["src/range.js", "src/util/index.ts", "pkg/__init__.py", "pkg/rounding.py", "pkg/data/table.csv", "README.md"]


def test_the_module_name_is_what_an_import_writes() -> None:
    assert {module_name(p) for p in ("src/range.js", "src/range", "src/range/index.ts", "src/range.mjs")} == {
        "src/range"
    }
    assert module_name("pkg/rounding/__init__.py") == module_name("pkg/rounding.cpython-311-x86_64-linux-gnu.so")
    assert module_name("pkg/rounding.py") == "pkg/rounding" and module_name("index.js") == ""
    assert module_name("types/range.d.ts") == "types/range.d" and module_name("pkg/rounding.pyi") == "pkg/rounding.pyi"


def test_a_new_file_answering_to_an_existing_module_name_is_dropped() -> None:
    changes = [
        ("A", "src/range"),  # node resolves it before src/range.js
        ("A", "src/util.js"),  # a file before the package directory src/util/
        ("A", "pkg/rounding/__init__.py"),  # a package before pkg/rounding.py
        ("A", "pkg/rounding.so"),  # an extension module before it
        ("A", "src/clamp.js"),  # a new module: kept
        ("A", "pkg/rounding.pyi"),  # a stub: nothing runs it
        ("A", "README"),
        ("M", "src/range.js"),
    ]
    assert second_modules(changes, TREE) == ["src/range", "src/util.js", "pkg/rounding/__init__.py", "pkg/rounding.so"]


def test_a_module_turned_into_a_package_deletes_the_old_file_and_is_kept() -> None:
    changes = [("D", "pkg/rounding.py"), ("A", "pkg/rounding/__init__.py"), ("A", "pkg/rounding/half.py")]
    assert second_modules(changes, TREE) == []
