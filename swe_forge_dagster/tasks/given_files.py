"""Which of a test patch's files a dataset's lists were made from: the files that host its given ids.

A dataset's FAIL_TO_PASS / PASS_TO_PASS come from the test files its own command ran, which need not be every
file the test patch touches: SWE-bench Multilingual's axios-5085 lists only tests of
`test/unit/regression/bugs.js`, while its test patch also adds a test to `test/unit/core/AxiosHeaders.js`. Running
both here finds that file's tests too, and the lists re-derived by `swe-forge validate` are then longer than the
dataset's for a reason that has nothing to do with the environment.

So a dataset row is re-proven on the files that host at least one of its given ids, when every given id is hosted
by one of them: a file that hosts none of them was not run by the dataset (or none of its tests passed there in
either state), so its tests cannot belong to the lists being checked. When some given id is hosted by no file
(ids of a form read from no file: a Go test name, a django `test_x (module.Class)`), every file is run, as before.

How a file hosts an id, by the id's own form, not by a runner's name:
- a path id (`tests/test_x.py::test_y[1]`) names its file before `::`;
- a title id (mocha, jest, vitest: `issues 5028 should handle ...`) ends with one of the file's string literals,
  the `it`/`test` title, as the whole id or after a space (a suite title and a space, or vitest's `> `).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

_LITERAL = re.compile(r"""'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`""")
"""A quoted string on one line ('…' or "…"), or a whole template literal: where a test title is written. A template
with `${…}` is matched whole and then left out (its text is not the title), so it never swallows what follows."""
MIN_TITLE = 4
"""Shorter literals (`'a'`, `'id'`) end too many titles to say which file a test is in."""


def literals(text: str) -> set[str]:
    """The string literals of a source file's text that could be a test's title (escapes left as written)."""
    found = set()
    for match in _LITERAL.finditer(text):
        value = next(group for group in match.groups() if group is not None)
        if match.group(3) is not None and "${" in value:
            continue
        value = value.replace("\\'", "'").replace('\\"', '"').strip()  # `doesn\'t` is titled `doesn't`
        if len(value) >= MIN_TITLE:
            found.add(value)
    return found


def hosts(path: str, titles: set[str], test_id: str) -> bool:
    """Whether the file at `path`, with string literals `titles`, holds the test `test_id`."""
    if "::" in test_id:
        return test_id.split("::", 1)[0] == path
    return any(test_id == title or test_id.endswith(" " + title) for title in titles)


def files_of_given_ids(files: Sequence[str], ids: Iterable[str], text_of: Callable[[str], str]) -> list[str]:
    """The files of `files` that host a given id, in their order, when together they host every id; else `files`.

    `text_of(path)`: the file's text with the test patch applied (or near enough: its base text and added lines).
    """
    given = [test_id for test_id in ids if test_id]
    if not given or len(files) < 2:
        return list(files)
    titles = {path: literals(text_of(path)) for path in files}
    kept = [path for path in files if any(hosts(path, titles[path], test_id) for test_id in given)]
    if not kept or not all(any(hosts(path, titles[path], test_id) for path in kept) for test_id in given):
        return list(files)
    return kept
