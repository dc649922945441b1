"""What of a Python repository an agent may not change: pytest's configuration, plugins and what shadows them.

Pack-private (`languages.python` is the pack); `harness.protection` applies it (see its docstring).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import PurePosixPath

PROTECTED_NAMES = frozenset(
    {"conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "sitecustomize.py", "usercustomize.py"}
)
SHADOW_NAMES = frozenset({"pytest.py", "pytest", "_pytest"})
"""New files or directories with these names shadow the real pytest (protected only when new)."""
METADATA_SUFFIXES = (".dist-info", ".egg-info")
PYTEST_SECTION_FILES = frozenset({"pyproject.toml", "setup.cfg", "tox.ini"})
"""Files whose change is dropped only when it changes their pytest section."""
CONFIG_FILES = PYTEST_SECTION_FILES | {"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml"}
"""Every file pytest can take its configuration from (reset when its effective configuration changed)."""
MODULE_SUFFIXES = (".py", ".pyc", ".so", ".pyd")
CONFIG_TRIGGERS = CONFIG_FILES | {"setup.py"}
"""A change to one of these makes the harness ask pytest for its effective configuration again."""


def protects(path: str, new: bool) -> bool:
    """Whether an agent's change to `path` is dropped: conftest and pytest's config files, `.pth`, bytecode and
    package metadata (plugins pytest loads), and a NEW `pytest.py`/`pytest/`/`_pytest/` (pytest's own source and
    sympy/testing/pytest.py are ordinary files when they exist at base)."""
    pure = PurePosixPath(path)
    return (
        pure.name in PROTECTED_NAMES
        or pure.name.endswith((".pth", ".egg-link", ".pyc", ".pyo"))  # bytecode: pytest loads a matching one
        or "__pycache__" in pure.parts
        or any(part.endswith(METADATA_SUFFIXES) for part in pure.parts)
        or (new and any(part in SHADOW_NAMES for part in pure.parts))
    )


TEST_FILE_PATTERNS = (r"test_.*\.py", r".*_tests?\.py", r"tests?\.py", r"conftest\.py", r"(?i)(^|/)specs?/.*\.py$")
"""Test files by pytest's and unittest's naming (`test_x.py`, `x_test.py`, `tests.py`, `conftest.py`) and Python
code in a `spec/` folder: a PR's changes to them are its tests (`registry.is_test_path`)."""


def test_code(path: str) -> bool:
    """pytest's default test files (`test_*.py`, `*_test.py`) and everything in a `tests` directory (its
    `__init__.py`, helpers, data); the product's rules (`registry.is_test_path`) add `test/` and `testing/`."""
    pure = PurePosixPath(path)
    return "tests" in pure.parts[:-1] or (
        pure.suffix == ".py" and (pure.name.startswith("test_") or pure.name.endswith("_test.py"))
    )


def pytest_section(name: str, text: bytes | None) -> object:
    """What of a `pyproject.toml` / `setup.cfg` / `tox.ini` configures pytest (comparable with `==`).

    pyproject: the parsed `[tool.pytest*]` table. ini files: the raw lines of every `[pytest]` or
    `[tool:pytest]` section, in order (raw, so no parser difference with pytest's can hide a
    change). A file that does not parse counts by its whole text.
    """
    if text is None:
        return None
    if name == "pyproject.toml":
        try:
            return tomllib.loads(text.decode("utf-8")).get("tool", {}).get("pytest")
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            return ("unparseable", text)
    lines, inside = [], False
    for line in text.decode("utf-8", "surrogateescape").splitlines():
        header = re.match(r"\s*\[([^\]]*)\]", line)
        if header:
            inside = header.group(1).strip().lower() in ("pytest", "tool:pytest")
        if inside:
            lines.append(line)
    return lines or None
