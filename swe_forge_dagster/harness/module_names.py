"""A new file that is a second module for a name an existing file answers to, found before it: a shadow, whatever
its name.

An import names a module, not a file: `require('./range')` finds `range` before `range.js`, and jest tries its
`moduleFileExtensions` in order (`js`, `mjs`, `cjs`, `jsx`, `ts`, `tsx`, `json`, `node`), a file before a directory's
`index`; `import pkg.rounding` finds the package `rounding/__init__.py`, then an extension module
`rounding.cpython-311-x86_64-linux-gnu.so`, before `rounding.py`. So a diff that adds `src/range` beside `src/range.js`,
or `pkg/rounding/__init__.py` beside `pkg/rounding.py`, replaces the module the tests import without touching it: the
new one can re-export the real module and patch the test runner on the way. No list of names finds that; the import
system's own order does. A new file is dropped when an existing file (one the diff does not delete) has the same
module name in the same language (the path without the extension an import leaves out, and without a trailing
`index`/`__init__`) and the new one comes first in that language's order. A file that comes after the existing one
(`data.json` beside `data.js`, `index.cjs` beside `index.mjs`, `x.py` beside the package `x/`) shadows nothing and is
kept, as is a module turned into a package when the diff deletes the old file.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

_JS_ORDER = ("", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".json", ".node")
"""Node's exact file first, then jest's default `moduleFileExtensions`, in order."""
_JS_FILE = re.compile(r"(?P<stem>.+?)(?P<ext>\.(?:[cm]?js|jsx|tsx?|json|node))?$")
_PY_FILE = re.compile(r"(?P<stem>.+?)(?P<ext>\.py|\.pyc|\.pyd|\.so|\.(?:cpython|pypy|abi)[\w.-]*\.so)$")
_PY_ORDER = {".so": 1, ".pyd": 1, ".py": 2, ".pyc": 3}


def module_key(path: str) -> tuple[str, str, int] | None:
    """(language, module name, place in that language's order) of `path`, or None when no import finds it.

    `src/range` is ("js", "src/range", 0), `src/range.js` ("js", "src/range", 1), `src/range/index.ts` ("js",
    "src/range", 105); `pkg/rounding/__init__.py` ("py", "pkg/rounding", 0), `pkg/rounding.py` ("py", …, 2)."""
    if (python := _PY_FILE.fullmatch(path)) is not None:
        stem, ext = python["stem"], python["ext"]
        if stem == "__init__" or stem.endswith("/__init__"):
            return ("py", stem.removesuffix("__init__").rstrip("/"), 0) if ext == ".py" else None
        return "py", stem, _PY_ORDER.get(ext, 1)
    if path.endswith((".d.ts", ".pyi")):
        return None  # type declarations and stubs: nothing runs them
    javascript = _JS_FILE.fullmatch(path)
    if javascript is None:
        return None
    stem, ext = javascript["stem"], javascript["ext"] or ""
    if "." in stem.rsplit("/", 1)[-1] and not ext:
        return None  # another kind of file (`README.md`, `setup.cfg`): no import finds it by a module name
    place = _JS_ORDER.index(ext)
    if stem == "index" or stem.endswith("/index"):
        return "js", stem.removesuffix("index").rstrip("/"), 100 + place  # a directory's index: after every file
    return "js", stem, place


def second_modules(changes: Iterable[tuple[str, str]], existing: Collection[str]) -> list[str]:
    """The new files among `changes` ((git status, path)) that an import finds before an `existing` file
    (repo-relative, in the tree before the diff) of the same module name, when the diff does not delete it."""
    changes = list(changes)
    deleted = {path for status, path in changes if status == "D"}
    first: dict[tuple[str, str], int] = {}
    for path in existing:
        if path not in deleted and (key := module_key(path)) is not None and key[1]:
            first[key[:2]] = min(first.get(key[:2], key[2]), key[2])
    found = []
    for status, path in changes:
        key = module_key(path) if status == "A" and path not in existing else None
        if key is not None and key[:2] in first and key[2] < first[key[:2]]:
            found.append(path)
    return found
