"""Compiled extensions: a Python repository whose install builds C, C++, Cython or Fortran code needs a compiler, the
interpreter's headers and pkg-config in its environment, which the base images do not carry (they are minimal
Debian systems with Python). scikit-learn, matplotlib, astropy and pandas build their extensions in place at install
time (`numpy.distutils`, `cythonize`, `extension_helpers.get_extensions`, meson-python); without a compiler the
install fails at numpy's `_configtest.c` or setuptools' `build_ext`, and the ladder falls to environments that
cannot import the package.

Decided from the repository's files, never from its name: sources a compiler reads (`.pyx`, `.c`, `.cpp`, `.f90`
...) outside test and documentation folders, and a build that compiles them (setup.py's `Extension`/`ext_modules`/
`cythonize`/`configuration`, a build backend or build requirement that exists to compile). Then the environment's
first step installs the build tools from the image's own Debian suite (so the compiler is of the era of the
Python that suite carries), once: the environment image keeps them and the extensions built in /repo (its install
outputs), and every task of that environment reuses both (`environments.environment`). The build's seconds are
the install step's, which the environment records.

Pack-private (`languages.python` is the pack).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from swe_forge_dagster.languages.python.pyproject import build_system

COMPILED_SOURCE = re.compile(r"\.(pyx|c|cc|cpp|cxx|f|f90|f95)$", re.IGNORECASE)
"""Files a compiler (or Cython, then a compiler) reads."""
NOT_BUILT = re.compile(r"(^|/)(_?tests?|testing|test_?data|docs?|examples?|benchmarks?|\.[^/]+)/")
"""Folders whose sources an install does not build (test data, documentation, hidden tool folders)."""
BUILDS_IN_SETUP_PY = re.compile(
    r"\bExtension\s*\(|\bext_modules\b|\bcythonize\s*\(|\bget_extensions\s*\(|\bnumpy\.distutils\b"
    r"|\bconfiguration\s*\(|\bsetup_extensions\b|\bbuild_ext\b|\bget_package_info\s*\("
)
"""What a setup.py that compiles says (setuptools' `Extension`, numpy.distutils' `configuration`, astropy's
`extension_helpers.get_extensions` and astropy_helpers' `get_package_info`, matplotlib's `setupext`)."""
COMPILING_BUILD = re.compile(
    r"^(cython|numpy|oldest-supported-numpy|extension-helpers|pybind11|meson-python|mesonpy|scikit-build"
    r"|scikit-build-core|cffi|pythran)\b",
    re.IGNORECASE,
)
"""Build requirements and backends (pyproject's `[build-system]`) that exist to compile."""
BUILD_TOOLS_PACKAGES = "build-essential gfortran python3-dev pkg-config"
"""Debian's compilers (C, C++, Fortran for scipy-era code), the interpreter's headers and pkg-config."""
BUILD_TOOLS = (
    '(command -v cc >/dev/null 2>&1 && [ -n "$(find /usr/include -name Python.h -print -quit)" ] || '
    "(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "
    f"{BUILD_TOOLS_PACKAGES} >/dev/null && rm -rf /var/lib/apt/lists/*))"
)
"""The first install step of an environment whose install compiles: a no-op where a compiler and Python's headers
are already there (an environment image built on one that has them). In parentheses: an exported task joins the
steps with `&&`, and a bare `||` would run the apt step after an earlier step failed."""


def compiles(manifests: Mapping[str, str], tree: set[str]) -> bool:
    """Whether installing this repository builds compiled extensions (see the module docstring)."""
    sources = any(COMPILED_SOURCE.search(path) and not NOT_BUILT.search(f"/{path}") for path in tree)
    if not sources:
        return False
    if BUILDS_IN_SETUP_PY.search(manifests.get("setup.py") or ""):
        return True
    return any(COMPILING_BUILD.match(requirement.strip()) for requirement in _build_system(manifests))


def _build_system(manifests: Mapping[str, str]) -> list[str]:
    """pyproject's build requirements and its build backend's module."""
    build = build_system(manifests.get("pyproject.toml"))
    return [*build.requires, *([build.backend] if build.backend else [])]


SETUP_PY_BUILD_IMPORTS = {"numpy": re.compile(r"\bnumpy\b"), "scipy": re.compile(r"\bimport scipy\b|\bfrom scipy\b")}
"""Build requirements a setup.py names by importing them (numpy.distutils' `Configuration`, `numpy.get_include()`)."""


def build_requirements(manifests: Mapping[str, str], tree: set[str]) -> list[str] | None:
    """What a compiled project with no `[build-system]` needs installed before its setup.py runs, or None (not
    compiled, or pyproject declares its build requirements, which an isolated build installs): setuptools and wheel,
    what setup.py imports to build (numpy, scipy), and Cython when there are `.pyx` sources (the repository keeps
    no generated C: its build cythonizes). Installed first, then the project without build isolation, as the
    projects' own instructions of the time say (`pip install numpy scipy cython; pip install --no-build-isolation
    -e .`)."""
    if not compiles(manifests, tree) or _build_system(manifests):
        return None
    setup_py = manifests.get("setup.py") or ""
    found = ["setuptools", "wheel", *(name for name, used in SETUP_PY_BUILD_IMPORTS.items() if used.search(setup_py))]
    if any(path.endswith(".pyx") and not NOT_BUILT.search(f"/{path}") for path in tree):
        found.append("cython")
    return found


def with_build_tools(install_commands: tuple[str, ...]) -> tuple[str, ...]:
    """The install steps with the build tools installed first."""
    return (BUILD_TOOLS, *install_commands)
