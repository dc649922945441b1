"""Python's import system, as the harness must see it to catch a diff that replaces a module without touching it.

Two ways (`harness.protection`, `harness.module_names`): a second module for a name an existing file answers to,
found first (`module_key`: `import pkg.rounding` finds the package `rounding/__init__.py`, then an extension module
`rounding.cpython-311-x86_64-linux-gnu.so`, before `rounding.py`); and a new top-level module in a directory the
checks import from (`new_modules`: `idna.py` at the root is imported in place of the installed `idna`), whatever
its name. Pack-private; the harness asks the registry.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Iterable
from pathlib import PurePosixPath

from swe_forge_dagster.execution.repo_box import REPO_DIR, exec_demux
from swe_forge_dagster.execution.sandbox import Sandbox
from swe_forge_dagster.languages.python.protection import MODULE_SUFFIXES

_PY_FILE = re.compile(r"(?P<stem>.+?)(?P<ext>\.py|\.pyc|\.pyd|\.so|\.(?:cpython|pypy|abi)[\w.-]*\.so)$")
_PY_ORDER = {".so": 1, ".pyd": 1, ".py": 2, ".pyc": 3}
PACKAGES_SCRIPT = f"cd {REPO_DIR} && find . -name .git -prune -o -name __init__.py -printf '%P\\0'"


def module_key(path: str) -> tuple[str, int] | None:
    """(module name, place in the import order) of `path`: `pkg/rounding/__init__.py` (`pkg/rounding`, 0), an
    extension module 1, `pkg/rounding.py` 2, bytecode 3; None: no import finds it by a module name."""
    python = _PY_FILE.fullmatch(path)
    if python is None:
        return None
    stem, ext = python["stem"], python["ext"]
    if stem == "__init__" or stem.endswith("/__init__"):
        return (stem.removesuffix("__init__").rstrip("/"), 0) if ext == ".py" else None
    return stem, _PY_ORDER.get(ext, 1)


def new_top_level_modules(
    changes: Iterable[tuple[str, str]], roots: Collection[str], existing: Collection[str]
) -> list[str]:
    """New code files that make a new top-level module, whatever its name: the first part of the path below one of
    the import `roots` (repo-relative, '' the root: `languages.python.paths`) is a module file or a directory (a
    package or a namespace package) that was not in the tree before the diff (`existing`, repo-relative)."""
    found = []
    for status, path in changes:
        if status != "A" or not path.endswith(MODULE_SUFFIXES):
            continue  # data, docs, a changelog: nothing an import runs
        for root in roots:
            if root and not path.startswith(f"{root}/"):
                continue
            first, below, _rest = path[len(root) + 1 if root else 0 :].partition("/")
            top = f"{root}/{first}" if root else first
            name = first if below else first.split(".", 1)[0]  # a (namespace) package, or a module file's stem
            if name.isidentifier() and top not in existing:
                found.append(path)
                break
    return found


def new_modules(box: Sandbox, changes: Iterable[tuple[str, str]], roots: Collection[str] | None) -> list[str]:
    """`new_top_level_modules` of the diff's `changes` in the verification `box`, below `roots` (None: every
    directory on the new paths that is not a package, which is stricter)."""
    changes = list(changes)
    roots = roots if roots is not None else _non_package_dirs(box, changes)
    return new_top_level_modules(changes, roots, _existing(box, roots))


def _non_package_dirs(box: Sandbox, changes: Iterable[tuple[str, str]]) -> list[str]:
    """Without the environment's answer (`import_roots`): every directory on the new paths that is not a package
    (has no `__init__.py` after the diff) counts as an import root (stricter)."""
    exit_code, stdout, _ = exec_demux(box, ["bash", "-c", PACKAGES_SCRIPT])
    text = stdout.decode("utf-8", "surrogateescape") if exit_code == 0 else ""
    packages = {str(PurePosixPath(p).parent) for p in text.split("\0") if p}
    dirs = {""} | {str(parent) for _s, path in changes for parent in PurePosixPath(path).parents if str(parent) != "."}
    return sorted(d for d in dirs if d not in packages)


def _existing(box: Sandbox, roots: Collection[str]) -> set[str]:
    """The names right below each root in the snapshot (base, the task's tests, the install's outputs), as paths."""
    script = f"cd {REPO_DIR} && " + " && ".join(
        f"git --literal-pathspecs ls-tree -z --name-only HEAD -- {shlex.quote(root + '/') if root else ''}"
        for root in roots
    )
    exit_code, stdout, _ = exec_demux(box, ["bash", "-c", script]) if roots else (0, b"", b"")
    return {p for p in stdout.decode("utf-8", "surrogateescape").split("\0") if p} if exit_code == 0 else set()
