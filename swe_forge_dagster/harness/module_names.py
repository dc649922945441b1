"""A new file that is a second module for a name an existing file already answers to: a shadow, whatever its name.

An import names a module, not a file: `require('./range')` finds `range` before `range.js`, and jest tries its
`moduleFileExtensions` in order; `import pkg.rounding` finds the package `rounding/__init__.py` and the extension
module `rounding.cpython-311-x86_64-linux-gnu.so` before `rounding.py`. So a diff that adds `src/range` beside
`src/range.js`, or `pkg/rounding/__init__.py` beside `pkg/rounding.py`, replaces the module the tests import without
touching it: the new one can re-export the real module and patch the test runner on the way. No list of names finds
that; the module's name does. A new file whose module name (its path without the extension an import leaves out, and
without a trailing `index`/`__init__`) is the module name of a file the tree already has, and that the diff does not
delete, is dropped. A fix that turns a module into a package deletes the old file, and is kept.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

_IMPORT_SUFFIX = re.compile(r"\.(?:[cm]?[jt]sx?|json|node|py|pyc|pyd|so|(?:cpython|pypy|abi)[\w.-]*\.so)$")
"""What an import leaves out of a file's name: JavaScript/TypeScript and JSON (Node, jest, vitest), Python source,
bytecode and extension modules (with their ABI tags). Not type stubs (`.pyi`, `.d.ts`): nothing runs them."""
_PACKAGE_FILE = re.compile(r"/(?:index|__init__)$")


def module_name(path: str) -> str:
    """The name an import of `path` uses, relative to the repository: `src/range.js`, `src/range` and
    `src/range/index.ts` are all `src/range`; `pkg/rounding/__init__.py` and `pkg/rounding.py` are `pkg/rounding`."""
    name = _IMPORT_SUFFIX.sub("", path)
    return _PACKAGE_FILE.sub("", "/" + name)[1:] if "/" in name else ("" if name in ("index", "__init__") else name)


def second_modules(changes: Iterable[tuple[str, str]], existing: Collection[str]) -> list[str]:
    """The new files among `changes` ((git status, path)) whose module name an `existing` file (repo-relative, in the
    tree before the diff) already has, when the diff neither deletes that file nor is the file itself."""
    changes = list(changes)
    deleted = {path for status, path in changes if status == "D"}
    names: dict[str, set[str]] = {}
    for path in existing:
        if path not in deleted:
            names.setdefault(module_name(path), set()).add(path)
    found = []
    for status, path in changes:
        if status != "A":
            continue
        name = module_name(path)
        if name and names.get(name, set()) - {path}:
            found.append(path)
    return found
