"""A new file that an import finds before an existing module of the same name is a shadow (`harness.module_names`),
whatever its name; one found after it shadows nothing. The real run (an extension-less `src/range` beside
`src/range.js` on a real jest task) is in `tests/test_toolchain_red_team.py`."""

from __future__ import annotations

from swe_forge_dagster.harness.module_names import second_modules
from swe_forge_dagster.languages.registry import module_key

TREE = [
    "src/range.js",
    "src/util/index.ts",
    "lib/index.mjs",
    "data/table.js",
    "pkg/__init__.py",
    "pkg/rounding.py",
    "pkg/helpers/__init__.py",
    "README.md",
]


def test_the_module_key_is_what_an_import_writes_and_where_it_comes_in_the_order() -> None:
    assert module_key("src/range") == ("node", "src/range", 0)
    assert module_key("src/range.js") == ("node", "src/range", 1)
    assert module_key("src/range/index.ts") == ("node", "src/range", 105)
    assert module_key("pkg/rounding/__init__.py") == ("python", "pkg/rounding", 0)
    assert module_key("pkg/rounding.cpython-311-x86_64-linux-gnu.so") == ("python", "pkg/rounding", 1)
    assert module_key("pkg/rounding.py") == ("python", "pkg/rounding", 2)
    assert module_key("types/range.d.ts") is None and module_key("pkg/rounding.pyi") is None
    assert module_key("README.md") is None and module_key("setup.cfg") is None


def test_a_new_file_found_before_an_existing_module_of_its_name_is_dropped() -> None:
    changes = [
        ("A", "src/range"),  # node resolves it before src/range.js
        ("A", "src/util.js"),  # a file before the directory's index
        ("A", "pkg/rounding/__init__.py"),  # a package before pkg/rounding.py
        ("A", "pkg/rounding.so"),  # an extension module before it
        ("A", "src/clamp.js"),  # a new module: kept
        ("A", "lib/index.cjs"),  # after index.mjs in jest's order: kept
        ("A", "data/table.json"),  # after table.js: kept
        ("A", "pkg/helpers.py"),  # the package pkg/helpers/ comes first: kept
        ("A", "pkg/rounding.pyi"),  # a stub: nothing runs it
        ("A", "README"),
        ("M", "src/range.js"),
    ]
    assert second_modules(changes, TREE) == ["src/range", "src/util.js", "pkg/rounding/__init__.py", "pkg/rounding.so"]


def test_a_module_turned_into_a_package_deletes_the_old_file_and_is_kept() -> None:
    changes = [("D", "pkg/rounding.py"), ("A", "pkg/rounding/__init__.py"), ("A", "pkg/rounding/half.py")]
    assert second_modules(changes, TREE) == []
