"""A new file that is a second module for a name an existing file answers to, found before it: a shadow, whatever
its name.

An import names a module, not a file: `require('./range')` finds `range` before `range.js`; `import pkg.rounding`
finds the package `rounding/__init__.py` before `rounding.py`. So a diff that adds `src/range` beside `src/range.js`,
or `pkg/rounding/__init__.py` beside `pkg/rounding.py`, replaces the module the tests import without touching it: the
new one can re-export the real module and patch the test runner on the way. No list of names finds that; the import
system's own order does. Each language pack declares its order (`LanguagePack.module_key`, asked through
`registry.module_key`: the module name an import writes, the path without the extension it leaves out and without
a trailing `index`/`__init__`, and the file's place in the order); a pack that declares none has no shadowing rules.
A new file is dropped when an existing file (one the diff does not delete) has the same module name in the same
language and the new one comes first in that language's order. A file that comes after the existing one
(`data.json` beside `data.js`, `x.py` beside the package `x/`) shadows nothing and is kept, as is a module turned
into a package when the diff deletes the old file.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from swe_forge_dagster.languages.registry import module_key


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
