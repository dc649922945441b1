"""How a JavaScript import finds a module by name, for the harness's shadowing rule (`harness.module_names`).

`require('./range')` finds `range` before `range.js`, and jest tries its `moduleFileExtensions` in order (`js`,
`mjs`, `cjs`, `jsx`, `ts`, `tsx`, `json`, `node`), a file before a directory's `index`: a diff that adds `src/range`
beside `src/range.js` replaces the module the tests import without touching it. Pack-private; the harness asks the
registry.
"""

from __future__ import annotations

import re

_JS_ORDER = ("", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".json", ".node")
"""Node's exact file first, then jest's default `moduleFileExtensions`, in order."""
_JS_FILE = re.compile(r"(?P<stem>.+?)(?P<ext>\.(?:[cm]?js|jsx|tsx?|json|node))?$")


def module_key(path: str) -> tuple[str, int] | None:
    """(module name, place in the resolution order) of `path`: `src/range` (`src/range`, 0), `src/range.js` 1,
    `src/range/index.ts` 105 (a directory's index after every file); None: no import finds it by a module name."""
    if path.endswith(".d.ts"):
        return None  # type declarations: nothing runs them
    javascript = _JS_FILE.fullmatch(path)
    if javascript is None:
        return None
    stem, ext = javascript["stem"], javascript["ext"] or ""
    if "." in stem.rsplit("/", 1)[-1] and not ext:
        return None  # another kind of file (`README.md`, `setup.cfg`): no import finds it by a module name
    place = _JS_ORDER.index(ext)
    if stem == "index" or stem.endswith("/index"):
        return stem.removesuffix("index").rstrip("/"), 100 + place  # a directory's index: after every file
    return stem, place
