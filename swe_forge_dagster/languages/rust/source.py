"""Rust source read as tokens and statements, enough for the twins (`languages.rust.twins`) to find a test's checks.

Not a Rust parser: a lexer that knows Rust's literals (raw, byte and C strings, chars beside lifetimes, numbers with
their suffixes), its comments (block comments nest), and a statement splitter that knows where a block-like
expression (`if`/`else` chains, `match`, `for`, `while`, `loop`, `unsafe`, a bare block) or an item ends without a
`;`. Every token keeps its offsets in the text, so a change is made token by token and every other byte of the file
is kept. `test_functions` finds the `#[test] fn name()` items of a file with the modules (`mod tests { ... }`) they
sit in, which with the file's own place in the crate make the id libtest reports (`tests::name`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import PurePosixPath

from swe_forge_dagster.languages.bracket_source import BracketSource, Token

_TOKEN = re.compile(
    r"""(?P<space>\s+)
    |(?P<line_comment>//[^\n]*)
    |(?P<raw>(?:br|cr|r)(?P<hashes>\#*)"(?:.*?)"(?P=hashes))
    |(?P<string>[bc]?"(?:[^"\\]|\\.)*")
    |(?P<char>b?'(?:[^'\\\n]|\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]{1,8}\}|[^\n]))')
    |(?P<lifetime>'(?:r\#)?[^\W\d]\w*)
    |(?P<number>(?:0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+)(?:_*[iu](?:8|16|32|64|128|size))?
        |\d[\d_]*\.(?![.\w])
        |\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?[\d_]*\d[\d_]*)?(?:_*(?:[iu](?:8|16|32|64|128|size)|f32|f64))?)
    |(?P<ident>(?:r\#)?[^\W\d]\w*)
    |(?P<punct><<=|>>=|\.\.\.|\.\.=|::|->|=>|==|!=|<=|>=|&&|\|\||[-+*/%^&|]=|<<|>>|\.\.
        |[-+*/%^!&|=<>@.,;:\#$?~()\[\]{}])
    """,
    re.X | re.S,
)
_BLOCK_LIKE = frozenset({"if", "match", "while", "for", "loop", "unsafe"})
_ITEMS = frozenset({"fn", "struct", "enum", "union", "impl", "trait", "mod", "macro_rules", "extern"})
_QUALIFIERS = frozenset({"pub", "async", "unsafe", "const", "extern", "default"})
LITERALS = frozenset({"number", "string", "raw", "char"})


def tokenize(text: str) -> list[Token] | None:
    """`text`'s tokens (comments dropped), or None when it does not lex as Rust."""
    found: list[Token] = []
    at = 0
    while at < len(text):
        if text.startswith("/*", at):
            depth, index = 0, at
            while index < len(text):  # block comments nest
                if text.startswith("/*", index):
                    depth, index = depth + 1, index + 2
                elif text.startswith("*/", index):
                    depth, index = depth - 1, index + 2
                    if depth == 0:
                        break
                else:
                    index += 1
            if depth:
                return None
            at = index
            continue
        match = _TOKEN.match(text, at)
        if match is None:
            return None
        kind = match.lastgroup or ""
        if kind == "hashes":
            kind = "raw"
        at = match.end()
        if kind not in ("space", "line_comment"):
            found.append(Token(kind, match.group(), match.start(), match.end()))
    return found


@dataclass(frozen=True)
class Stmt:
    """A statement of a block: tokens `[start, end)` (its `;` left out), `head` the first after its attributes."""

    start: int
    end: int
    head: int


class Source(BracketSource):
    """A Rust file's text, its tokens, and where each bracket closes."""

    lex = staticmethod(tokenize)
    bracket_kind = "punct"

    @cached_property
    def _openers(self) -> dict[int, int]:
        assert self.pairs is not None
        return {close: open_ for open_, close in self.pairs.items()}

    def opening(self, index: int) -> int:
        """The index of the bracket opening the one closing at `index`."""
        return self._openers[index]

    def is_punct(self, index: int, *texts: str) -> bool:
        token = self.tokens[index] if 0 <= index < len(self.tokens) else None
        return token is not None and token.kind == "punct" and token.text in texts

    def is_word(self, index: int, *texts: str) -> bool:
        token = self.tokens[index] if 0 <= index < len(self.tokens) else None
        return token is not None and token.kind == "ident" and (not texts or token.text in texts)

    def skip(self, index: int) -> int:
        """The index after the token at `index`, or after its closing bracket when it opens one."""
        return self.close(index) + 1 if self.is_punct(index, "(", "[", "{") else index + 1

    def split(self, start: int, end: int, *separators: str) -> list[tuple[int, int]]:
        """Tokens `[start, end)` split at the punctuation `separators` outside brackets; a trailing empty part (a
        trailing comma) is left out."""
        parts, index, first = [], start, start
        while index < end:
            if self.is_punct(index, *separators):
                parts.append((first, index))
                first = index + 1
                index += 1
            else:
                index = self.skip(index)
        return [*parts, (first, end)] if first < end or not parts else parts

    def attributes(self, index: int) -> int:
        """The index after the outer attributes (`#[...]`) starting at `index`."""
        while self.is_punct(index, "#") and self.is_punct(index + 1, "["):
            index = self.close(index + 1) + 1
        return index

    def statements(self, open_brace: int) -> list[Stmt]:
        """The statements of the block whose `{` is at `open_brace` (inner attributes left out)."""
        end = self.close(open_brace)
        found, index = [], open_brace + 1
        while index < end:
            if self.is_punct(index, ";"):
                index += 1
                continue
            if self.is_punct(index, "#") and self.is_punct(index + 1, "!") and self.is_punct(index + 2, "["):
                index = self.close(index + 2) + 1
                continue
            start = index
            head = index = self.attributes(index)
            if index >= end:
                break
            index = self._statement_end(index, end)
            found.append(Stmt(start, index, head))
        return found

    def _statement_end(self, index: int, end: int) -> int:
        """The index of the `;` ending the statement at `index`, or after the block that ends it."""
        item = index
        while self.is_word(item, *_QUALIFIERS) or (self.is_punct(item, "(") and self.is_word(item - 1, "pub")):
            item = self.skip(item)
        if self.tokens[item].kind == "string":  # extern "C"
            item += 1
        if self.is_word(item, *_ITEMS):
            return self._until_block_or_semicolon(item, end)
        if self.is_word(index, *_BLOCK_LIKE) or self.is_punct(index, "{") or self._labeled(index):
            after = self.block_like_end(index, end)
            if after >= end or (not self.is_punct(after, ".", "?") and not self.is_word(after, "as")):
                return after
            index = after
        elif self._macro_with_braces(index, end):
            return self.close(self._macro_with_braces(index, end) or 0) + 1
        while index < end and not self.is_punct(index, ";"):
            index = self.skip(index)
        return index

    def _labeled(self, index: int) -> bool:
        return self.tokens[index].kind == "lifetime" and self.is_punct(index + 1, ":")

    def _macro_with_braces(self, index: int, end: int) -> int | None:
        """The `{` of `path::name! { ... }` starting at `index` (a statement that needs no `;`), or None."""
        while self.is_word(index) and self.is_punct(index + 1, "::"):
            index += 2
        if self.is_word(index) and self.is_punct(index + 1, "!") and self.is_punct(index + 2, "{"):
            return index + 2 if index + 2 < end else None
        return None

    def _until_block_or_semicolon(self, index: int, end: int) -> int:
        while index < end and not self.is_punct(index, ";"):
            if self.is_punct(index, "{"):
                return self.close(index) + 1
            index = self.skip(index)
        return index

    def block_of(self, index: int, end: int) -> int | None:
        """The `{` of the block of the block-like expression at `index`: the first `{` after it outside brackets
        (a condition or scrutinee holds no struct literal outside brackets)."""
        if self._labeled(index):
            index += 2
        if self.is_punct(index, "{"):
            return index
        index += 1
        while index < end and not self.is_punct(index, "{", ";"):
            index = self.skip(index)
        return index if self.is_punct(index, "{") else None

    def block_like_end(self, index: int, end: int) -> int:
        """The index after the block-like expression at `index` (an `if` with its `else` chain)."""
        block = self.block_of(index, end)
        if block is None:
            return end
        after = self.close(block) + 1
        while self.is_word(index, "if") and self.is_word(after, "else"):
            index = after + 1
            if self.is_punct(index, "{"):
                return self.close(index) + 1
            block = self.block_of(index, end)
            if block is None:
                return end
            after = self.close(block) + 1
        return after


@dataclass(frozen=True)
class TestFn:
    """A `#[test] fn name()` item: its name, the modules it sits in within its file, the index of its body's `{`, and
    whether it may pass by panicking or never run (`#[should_panic]`, `#[ignore]`): no twin can mirror those."""

    name: str
    modules: tuple[str, ...]
    body: int
    panics_or_ignored: bool


def test_functions(src: Source) -> list[TestFn]:
    """The file's test functions (a `#[test]` attribute, or a path ending in `test` such as `#[tokio::test]`, on an
    `fn` with no parameters), at its top level and in its inline modules, in file order."""
    found: list[TestFn] = []

    def walk(index: int, end: int, modules: tuple[str, ...]) -> None:
        attributes: list[tuple[int, int]] = []
        while index < end:
            if src.is_punct(index, "#") and src.is_punct(index + 1, "["):
                attributes.append((index + 2, src.close(index + 1)))
                index = src.close(index + 1) + 1
                continue
            if src.is_word(index, *_QUALIFIERS) or (src.is_punct(index, "(") and src.is_word(index - 1, "pub")):
                index = src.skip(index)
                continue
            if src.is_word(index, "mod") and src.is_word(index + 1) and src.is_punct(index + 2, "{"):
                walk(index + 3, src.close(index + 2), (*modules, src.tokens[index + 1].text))
                index = src.close(index + 2) + 1
            elif src.is_word(index, "fn") and src.is_word(index + 1) and src.is_punct(index + 2, "("):
                body = src.block_of(src.close(index + 2), end)
                if body is None:
                    return
                unparameterised = src.close(index + 2) == index + 3
                if unparameterised and any(_is_test(src, *attribute) for attribute in attributes):
                    words = {src.tokens[i].text for a, b in attributes for i in range(a, b) if src.is_word(i)}
                    panics = bool(words & {"should_panic", "ignore"})
                    found.append(TestFn(src.tokens[index + 1].text, modules, body, panics))
                index = src.close(body) + 1
            else:
                index = src.skip(index)
            attributes = []

    walk(0, len(src.tokens), ())
    return found


def _is_test(src: Source, start: int, end: int) -> bool:
    """The attribute's tokens `[start, end)` are `test`, or a path ending in `::test` (with arguments or not)."""
    if end == start + 1:
        return src.is_word(start, "test")
    last = end if not src.is_punct(end - 1, ")") else next(i for i in range(start, end) if src.is_punct(i, "("))
    return last - start >= 3 and src.is_word(last - 1, "test") and src.is_punct(last - 2, "::")


def file_modules(path: str) -> tuple[str, ...]:
    """The module path a file's items have in their crate: `src/parse/mod.rs` and `src/parse.rs` -> `parse`;
    the crate roots (`src/lib.rs`, `src/main.rs`, `src/bin/x.rs`) and integration tests (`tests/x.rs`) -> none."""
    parts = PurePosixPath(path).with_suffix("").parts
    if "src" not in parts:
        return ()
    after = list(parts[len(parts) - 1 - parts[::-1].index("src") + 1 :])
    if after[:1] == ["bin"] or after in (["lib"], ["main"]):
        return ()
    return tuple(after[:-1] if after[-1:] == ["mod"] else after)


def names_test(test_id: str, path: str, test: TestFn) -> bool:
    """Whether the libtest id `test_id` (`tests::name`, or a bare `name` for an integration test) names `test` of the
    file at `path`."""
    *modules, name = test_id.split("::")
    if name != test.name:
        return False
    if test.modules:
        return tuple(modules[-len(test.modules) :]) == test.modules
    return tuple(modules) == file_modules(path)
