"""Twins run apart for `cargo test`: the task's FAIL_TO_PASS tests, each with one check changed so that it fails
whenever the test passes, run in a container of their own in place of the originals (`harness.verify`).

A twin beside its original in the same test binary can be told from it: package code runs in that binary (a static
constructor, the function under test itself) and can read the test files and compare bodies, or spare a test that
opens with a comparison of two constants. Written in place of its original, under its name (libtest's id is the
function's module path and name), with one value or one operator changed, the twin has nothing to be compared with:
no process sees both. The check changed is the last one that runs whenever the test passes (`languages.rust.checks`
says how a check is changed): among the statements of the test's body, searched from the last, a check, or a block
that surely runs:
- a bare block, an `unsafe` block, a `loop`;
- a `for` loop over a non-empty array or `vec![...]` literal (or a local bound once to one, not `mut`), or a range of
  two integer literals that holds a value (`0..3`, `1..=1`), possibly behind `&`, `.iter()`, `.into_iter()`,
  `.enumerate()`, `.rev()`: its first pass reaches the check.
Only statements before anything that can leave the block are searched (a `return` outside nested `fn` items; in a
loop or block, `break` and `continue` too), so the check runs whenever the test passed; a `?` leaves only with an
`Err`, which fails the test. A check under an attribute (`#[cfg(...)]`) may not be compiled, and is passed over.
Tests marked `#[should_panic]` or `#[ignore]` get no twin (a panic is their pass). Only the changed tokens differ:
every other byte of the file is kept, and it is read again after the change (it must lex with its brackets balanced).

Not closed: code that knows the task's test source (a public repository's later commit) tells a twin by comparing; a
test with no check to change (a helper of its own, a trait bound checked at compile time) has none.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from swe_forge_dagster.execution.canaries import NamedTwin
from swe_forge_dagster.languages.rust.checks import Change, Edit, Site, change
from swe_forge_dagster.languages.rust.source import Source, Stmt, names_test, test_functions

_DEPTH = 4
"""Blocks and loops a search goes into, nested."""
_THROUGH = frozenset({"iter", "into_iter", "enumerate", "rev"})
"""Iterator methods that keep an iterable non-empty."""


RustTwin = NamedTwin
"""The twin of one test (`execution.canaries.NamedTwin`)."""


@dataclass(frozen=True)
class FileTwins:
    """A test file with the twins of its FAIL_TO_PASS tests written over them (`content`, the original text with
    `edits` applied)."""

    path: str
    content: bytes
    edits: tuple[Edit, ...]
    twins: tuple[RustTwin, ...]


def make_twins(path: str, text: str, test_ids: Collection[str], rng: random.Random | None = None) -> FileTwins | None:
    """The file `path` (its `text`) with a twin in place of each test of `test_ids` (libtest ids) it defines that can
    have one, or None when none can."""
    rng = rng or random.SystemRandom()
    src = Source.read(text)
    if src is None:
        return None
    edits: list[Edit] = []
    twins: list[RustTwin] = []
    for test in test_functions(src):
        ids = sorted(test_id for test_id in test_ids if names_test(test_id, path, test))
        if not ids or test.panics_or_ignored:
            continue
        found = _search(src, test.body, (test.body, src.close(test.body)), rng, 0)
        if found is not None:
            edits += found.edits
            twins += [RustTwin(test_id, found.how) for test_id in ids]
    if not twins:
        return None
    content = apply(text, edits)
    if Source.read(content) is None:
        return None
    return FileTwins(path, content.encode(), tuple(edits), tuple(twins))


def apply(text: str, edits: Sequence[Edit]) -> str:
    """`text` with `edits` (offsets in `text`) made."""
    for start, end, replacement in sorted(edits, key=lambda edit: (edit[0], edit[1]), reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def twins_by_file(
    texts: Mapping[str, str], test_ids: Collection[str], rng: random.Random | None = None
) -> dict[str, FileTwins]:
    """The twins of the tests `test_ids` in each of the files `texts` (path -> text) that holds one."""
    made = {path: make_twins(path, text, test_ids, rng) for path, text in sorted(texts.items())}
    return {path: twins for path, twins in made.items() if twins is not None}


def _search(src: Source, block: int, body: tuple[int, int], rng: random.Random, depth: int) -> Change | None:
    """The change of the last check of the block at `block` that runs whenever it is entered and the test passes."""
    stmts = src.statements(block)
    escapes = ("return",) if depth == 0 else ("return", "break", "continue")
    limit = next((k for k, stmt in enumerate(stmts) if _leaves(src, stmt, escapes)), len(stmts))
    for index in range(limit - 1, -1, -1):
        stmt = stmts[index]
        if any(src.is_word(i) for i in range(stmt.start, stmt.head)):
            continue  # under an attribute (`#[cfg(...)]`): it may not be compiled in
        found = change(src, Site(stmts, index, body), rng)
        if found is not None:
            return found
        inner = _surely_runs(src, stmts, index) if depth < _DEPTH else None
        if inner is not None and (found := _search(src, inner, body, rng, depth + 1)) is not None:
            return found
    return None


def _leaves(src: Source, stmt: Stmt, escapes: tuple[str, ...]) -> bool:
    """Whether the statement holds one of `escapes` outside nested `fn` items (whose `return` leaves them only)."""
    index = stmt.head
    while index < stmt.end:
        if src.is_word(index, "fn") and src.is_word(index + 1) and src.is_punct(index + 2, "("):
            inner = src.block_of(src.close(index + 2), stmt.end)
            index = src.close(inner) + 1 if inner is not None else stmt.end
            continue
        if src.is_word(index, *escapes):
            return True
        index += 1
    return False


def _surely_runs(src: Source, stmts: Sequence[Stmt], index: int) -> int | None:
    """The `{` of a block the statement surely enters (see the module docstring), or None."""
    stmt = stmts[index]
    head = stmt.head
    if src.tokens[head].kind == "lifetime" and src.is_punct(head + 1, ":"):
        head += 2  # a label
    if src.is_punct(head, "{") and src.close(head) + 1 == stmt.end:
        return head
    if src.is_word(head, "unsafe", "loop") and src.is_punct(head + 1, "{") and src.close(head + 1) + 1 == stmt.end:
        return head + 1
    if not src.is_word(head, "for"):
        return None
    block = src.block_of(head, stmt.end)
    if block is None or src.close(block) + 1 != stmt.end:
        return None
    keyword = head + 1
    while keyword < block and not src.is_word(keyword, "in"):
        keyword = src.skip(keyword)
    return block if keyword < block and _non_empty(src, stmts[:index], keyword + 1, block) else None


def _non_empty(src: Source, before: Sequence[Stmt], first: int, last: int) -> bool:
    """Tokens `[first, last)` are an iterable that yields at least once (see the module docstring)."""
    while first < last and src.is_punct(first, "&", "&&"):
        first += 1
    while last - first > 4 and src.is_punct(last - 1, ")") and src.is_punct(last - 2, "("):
        if not (src.is_word(last - 3, *_THROUGH) and src.is_punct(last - 4, ".")):
            return False
        last -= 4
    if src.is_punct(first, "(") and src.close(first) == last - 1:
        first, last = first + 1, last - 1
    range_at = next((i for i in range(first, last) if src.is_punct(i, "..", "..=")), None)
    if range_at is not None:
        low, high = _integer(src, first, range_at), _integer(src, range_at + 1, last)
        inclusive = src.is_punct(range_at, "..=")
        return low is not None and high is not None and (low <= high if inclusive else low < high)
    if last == first + 1 and src.is_word(first):
        bound = [s for s in before if src.is_word(s.head, "let") and src.is_word(s.head + 1, src.tokens[first].text)]
        if not bound or not src.is_punct(bound[-1].head + 2, "="):
            return False  # `let mut`, a type, a pattern: not known to stay as written
        first, last = bound[-1].head + 3, bound[-1].end
    if src.is_word(first, "vec") and src.is_punct(first + 1, "!"):
        first += 2
    if not (src.is_punct(first, "[") and src.close(first) == last - 1):
        return False
    repeat = src.split(first + 1, last - 1, ";")
    if len(repeat) == 2:
        count = _integer(src, *repeat[1])
        return count is not None and count > 0
    return last - 1 > first + 1


def _integer(src: Source, first: int, last: int) -> int | None:
    """The integer literal tokens `[first, last)` are (`-3`, `10usize`), or None."""
    negative = src.is_punct(first, "-")
    if last != first + 1 + negative or src.tokens[last - 1].kind != "number":
        return None
    match = re.fullmatch(r"(\d[\d_]*?)(?:_*[iu](?:8|16|32|64|128|size))?", src.tokens[last - 1].text)
    return None if match is None else (-1 if negative else 1) * int(match.group(1).replace("_", ""))
