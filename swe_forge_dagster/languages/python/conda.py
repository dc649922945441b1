"""Test dependencies a repository declares only for conda: its CI's environment files, as PyPI installs.

xarray's tests import dask, bottleneck, scipy, cftime, zarr... and skip what is missing; its setup.cfg lists none
of them, its CI installs them from `ci/requirements/environment.yml` (conda-forge), and SWE-bench's environments
were made from that file. Without them hundreds of listed tests are skipped here, and the lists cannot agree.

Which file: any YAML file of the tree (`candidate_files`, outside documentation and hidden folders, at most three
folders deep) that is a conda environment (a mapping with a `dependencies` list); of several, the one with the most
dependencies it does not pin (a `*-min-all-deps.yml` pins every one to its oldest supported version, a
`*-windows.yml` or `doc.yml` has fewer), then the last path (`py37.yml` over `py36.yml`).

Which names: a conda spec's package name (`numpy>=1.17`, `mypy=0.730`, `conda-forge::zarr`) and the entries of its
`pip:` list; `CONDA_ONLY` (the interpreter, pip, and non-Python software that PyPI either lacks or holds an
unrelated project under) are left out, and `PYPI_NAMES` renames the packages whose PyPI distribution has another
name (conda-forge's `matplotlib-base`, `iris`, `pytables`). These two are data about two registries, not a decision
about a repository.

How: each is installed alone after the project, and kept only when its top-level modules import (`OPTIONAL_LOOP`):
a package that does not resolve, does not build here, or installs without the system library it loads (cfgrib
without eccodes raises RuntimeError at import, which `pytest.importorskip` does not catch) is left out, so a test
that skipped without it still skips.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

import yaml

MAX_DEPTH = 3
MAX_FILES = 40
"""At most this many YAML files are read, the shallowest first (a tree of fixtures holds thousands)."""
MAX_FILE_CHARS = 256_000
OUTSIDE = ("doc", "docs", "documentation", "examples", "benchmarks", "asv_bench")
"""Folders whose environment files are not the tests' (a `doc.yml` at the CI's folder is outranked by size)."""
CONDA_ONLY = frozenset(
    {
        "python",
        "pip",
        "hdf5",
        "hdf4",
        "geos",
        "proj",
        "tk",
        "eccodes",
        "openssl",
        "zlib",
        "cmake",
        "make",
        "compilers",
        "c-compiler",
        "cxx-compiler",
        "fortran-compiler",
        "cdms2",
        "pynio",
    }
)
"""conda-forge packages left out: the interpreter and pip, and software PyPI has not (or has another project under
the same name: `geos`, `proj`, `tk`); `lib*` packages (C libraries) are left out by their prefix."""
PYPI_NAMES = {
    "matplotlib-base": "matplotlib",
    "iris": "scitools-iris",
    "pytables": "tables",
    "msgpack-python": "msgpack",
    "python-graphviz": "graphviz",
    "pytorch": "torch",
    "pyqt": "PyQt5",
    "py-xgboost": "xgboost",
}
"""conda-forge name -> the PyPI distribution of the same software."""
_NAME = re.compile(r"(?:[\w.-]+::)?([A-Za-z0-9][A-Za-z0-9._-]*)")
_PIP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def candidate_files(tree: Iterable[str]) -> list[str]:
    """The tree's YAML files that may be conda environments (see the module docstring), sorted."""
    found = []
    for path in tree:
        parts = PurePosixPath(path).parts
        if not path.endswith((".yml", ".yaml")) or len(parts) > MAX_DEPTH + 1:
            continue
        if any(part.startswith(".") or part.lower() in OUTSIDE for part in parts[:-1]):
            continue
        found.append(path)
    return sorted(sorted(found, key=lambda path: (path.count("/"), path))[:MAX_FILES])


def conda_dependencies(files: Mapping[str, str]) -> tuple[str, list[str]] | None:
    """(the chosen environment file, its dependencies as PyPI names, in order), or None when no file is one."""
    best: tuple[int, str, list[str]] | None = None
    for path, text in files.items():
        specs = _dependencies(text)
        if specs is None:
            continue
        unpinned = sum(1 for spec in specs if not re.search(r"[=<>~]", spec))
        if best is None or (unpinned, path) > best[:2]:
            best = (unpinned, path, specs)
    if best is None:
        return None
    names = [name for spec in best[2] if (name := pypi_name(spec)) is not None]
    return best[1], list(dict.fromkeys(names))


def pypi_name(spec: str) -> str | None:
    """The PyPI distribution a conda (or pip) spec names, or None: conda-only software, or text that is no name."""
    match = _NAME.match(spec.strip())
    if match is None:
        return None
    name = match.group(1).lower()
    if name in CONDA_ONLY or name.startswith("lib"):
        return None
    return PYPI_NAMES.get(name, name)


def _dependencies(text: str) -> list[str] | None:
    """The specs of a conda environment file (its `pip:` entries included), or None when it is not one."""
    if len(text) > MAX_FILE_CHARS:
        return None
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError):  # a dated scalar out of range, a deep nesting: not one
        return None
    if not isinstance(data, dict) or not isinstance(data.get("dependencies"), list):
        return None
    specs: list[str] = []
    for item in data["dependencies"]:
        if isinstance(item, str):
            specs.append(item)
        elif isinstance(item, dict) and isinstance(item.get("pip"), list):
            specs += [entry for entry in item["pip"] if isinstance(entry, str) and _PIP_NAME.match(entry.strip())]
    return specs


IMPORTS = (
    "import importlib, importlib.metadata as m, sys\n"
    "d = m.distribution(sys.argv[1])\n"
    "top = (d.read_text('top_level.txt') or '').split() or sorted({f.parts[0].removesuffix('.py') "
    "for f in d.files or () if len(f.parts) > 1 or f.suffix == '.py'})\n"
    "for name in top:\n"
    "    if name.isidentifier() and not name.startswith('_') and not name.endswith(('dist-info', 'data')):\n"
    "        importlib.import_module(name)\n"
)
"""Imports every top-level module of an installed distribution (its `top_level.txt`, else its files); fails when one
does not import."""


def optional_installs(names: Iterable[str]) -> str:
    """A shell fragment (one line, for after the project's install): each of `names` installed alone with `pip
    install` (which an era recipe turns into its resolver, as the project's own install), and uninstalled again
    unless its modules import (`IMPORTS`, isolated from the checkout); never a failure of the install."""
    quoted = " ".join(shlex.quote(name) for name in names)
    if not quoted:
        return ""
    check = shlex.quote(IMPORTS)
    return (
        f'( for p in {quoted}; do if pip install -q "$p" >/dev/null 2>&1 && python -I -c {check} "$p" '
        f'>/dev/null 2>&1; then echo "test dependency $p: installed"; else python -m pip uninstall -q -y "$p" '
        f'>/dev/null 2>&1; echo "test dependency $p: left out"; fi; done; true )'
    )
