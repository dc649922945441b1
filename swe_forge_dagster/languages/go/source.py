"""Go source read as tokens and statements, enough for the twins (`languages.go.twins`) to find a test's checks.

Not a Go parser: a lexer that knows Go's literals, comments and automatic semicolons (a newline after an identifier,
a literal, `return`, `)`, `]`, `}`, `++` or `--` ends a statement), and a statement splitter that knows where the
header of an `if`, `for`, `switch` or `select` ends (its block's `{` is the first one at its level whose `}` ends the
statement: a composite literal in a `range` clause, `[]struct{...}{...}`, is passed over). Every token keeps its
offsets in the text, so a change is made token by token and every other byte of the file is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from swe_forge_dagster.languages.bracket_source import BracketSource, Token

_TOKEN = re.compile(
    r"""(?P<space>[ \t\r]+)
    |(?P<newline>\n)
    |(?P<line_comment>//[^\n]*)
    |(?P<block_comment>/\*.*?\*/)
    |(?P<raw>`[^`]*`)
    |(?P<string>"(?:[^"\\\n]|\\.)*")
    |(?P<rune>'(?:[^'\\\n]|\\.)+')
    |(?P<number>0[xX][\da-fA-F_]*\.?[\da-fA-F_]*(?:[pP][+-]?\d[\d_]*)?i?|0[bBoO][\d_]+i?
        |(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?i?)
    |(?P<ident>[^\W\d]\w*)
    |(?P<op><<=|>>=|&\^=|\.\.\.|&&|\|\||<-|\+\+|--|==|!=|<=|>=|:=|[-+*/%&|^]=|<<|>>|&\^|[-+*/%&|^<>=!~()\[\]{},;.:])
    """,
    re.X | re.S,
)
_ENDS_LINE = {"ident", "number", "string", "raw", "rune"}
_ENDS_LINE_OPS = {")", "]", "}", "++", "--"}
COMPOUND = frozenset({"if", "for", "switch", "select"})
PLAIN_INT = re.compile(r"[1-9][0-9]*|0")


def tokenize(text: str) -> list[Token] | None:
    """`text`'s tokens (comments dropped, automatic semicolons added), or None when it does not lex as Go."""
    found: list[Token] = []
    at = 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            return None
        kind, value = match.lastgroup or "", match.group()
        at = match.end()
        breaks = kind == "newline" or (kind in ("block_comment", "line_comment") and "\n" in value)
        if breaks or (kind == "line_comment" and at == len(text)):
            if found and _ends_line(found[-1]):
                found.append(Token(";", "", match.start(), match.start()))
            continue
        if kind in ("space", "line_comment", "block_comment"):
            continue
        if kind == "op" and value == ";":
            kind = ";"
        found.append(Token(kind, value, match.start(), match.end()))
    if found and _ends_line(found[-1]):
        found.append(Token(";", "", len(text), len(text)))
    return found


def _ends_line(token: Token) -> bool:
    if token.kind in _ENDS_LINE:
        return token.kind != "ident" or token.text not in _NOT_ENDING
    return token.kind == "op" and token.text in _ENDS_LINE_OPS


_NOT_ENDING = frozenset(
    {"func", "if", "for", "switch", "select", "else", "go", "defer", "var", "const", "type", "struct", "interface"}
    | {"map", "chan", "case", "default", "range", "package", "import"}
)
"""Keywords after which a newline inserts no semicolon (Go inserts one only after `break`, `continue`, `fallthrough`
and `return` among its keywords)."""


@dataclass(frozen=True)
class Stmt:
    """A statement of a block: tokens `[start, end)` of `Source.tokens` (its ending semicolon left out)."""

    start: int
    end: int


class Source(BracketSource):
    """A Go file's text, its tokens, and where each bracket closes."""

    lex = staticmethod(tokenize)

    def is_op(self, index: int, *texts: str) -> bool:
        token = self.tokens[index] if 0 <= index < len(self.tokens) else None
        return token is not None and token.kind == "op" and token.text in texts

    def is_word(self, index: int, *texts: str) -> bool:
        token = self.tokens[index] if 0 <= index < len(self.tokens) else None
        return token is not None and token.kind == "ident" and (not texts or token.text in texts)

    def skip(self, index: int) -> int:
        """The index after the token at `index`, or after its closing bracket when it opens one."""
        return self.close(index) + 1 if self.is_op(index, "(", "[", "{") else index + 1

    def statements(self, open_brace: int) -> list[Stmt]:
        """The statements of the block whose `{` is at `open_brace`."""
        end = self.close(open_brace)
        found, index = [], open_brace + 1
        while index < end:
            if self.tokens[index].kind == ";":
                index += 1
                continue
            start = index
            while self.is_word(index) and self.is_op(index + 1, ":"):
                index += 2  # a label: `outer: for ... {`
            if self.is_word(index, *COMPOUND):
                index = self.compound_end(index, end)
            while index < end and self.tokens[index].kind != ";":
                index = self.skip(index)
            found.append(Stmt(start, index))
        return found

    def block_of(self, start: int, end: int) -> int | None:
        """The index of the `{` opening the block of the `if`/`for`/`switch`/`select` header starting at `start`
        (None when there is none before `end`): the first `{` at the header's level whose `}` ends the statement."""
        index = start + 1
        while index < end:
            if self.is_op(index, "{"):
                after = self.close(index) + 1
                if after >= end or self.tokens[after].kind == ";" or self.is_word(after, "else"):
                    return index
                index = after
            else:
                index = self.skip(index)
        return None

    def compound_end(self, start: int, end: int) -> int:
        """The index after an `if` (with its `else` chain), `for`, `switch` or `select` statement at `start`."""
        block = self.block_of(start, end)
        if block is None:
            return end
        after = self.close(block) + 1
        if self.is_word(start, "if") and self.is_word(after, "else"):
            if self.is_word(after + 1, "if"):
                return self.compound_end(after + 1, end)
            return self.close(after + 1) + 1 if self.is_op(after + 1, "{") else end
        return after

    def split(self, start: int, end: int, *separators: str) -> list[tuple[int, int]]:
        """Tokens `[start, end)` split at the operators `separators` outside brackets."""
        parts, index, first = [], start, start
        semicolon = ";" in separators  # written or inserted: a token of its own kind
        while index < end:
            if self.is_op(index, *separators) or (semicolon and self.tokens[index].kind == ";"):
                parts.append((first, index))
                first = index + 1
                index += 1
            else:
                index = self.skip(index)
        return [*parts, (first, end)]

    def escapes(self, start: int, end: int, words: tuple[str, ...]) -> bool:
        """Whether tokens `[start, end)` hold one of `words` (`return`, `break`...) outside the bodies of function
        literals (a `return` there ends the literal, not the test)."""
        index = start
        while index < end:
            if self.is_word(index, "func") and self.is_op(index + 1, "("):
                body = self._literal_body(index, end)
                if body is not None:
                    index = self.close(body) + 1
                    continue
            if self.is_word(index, *words):
                return True
            index += 1
        return False

    def _literal_body(self, func: int, end: int) -> int | None:
        """The `{` of the body of the function literal whose `func` is at `func`, or None (a function type)."""
        index = self.close(func + 1) + 1
        while index < end and not self.is_op(index, "{", ")", ",", ";", "]", "}", "="):
            index = self.skip(index)
        return index if self.is_op(index, "{") else None


def test_functions(source: Source) -> dict[str, tuple[str, int]]:
    """The file's top-level `func TestX(t *testing.T) {` -> (the name of its `*testing.T`, its body's `{` index)."""
    found: dict[str, tuple[str, int]] = {}
    tokens, index = source.tokens, 0
    while index < len(tokens):
        if source.is_word(index, "func") and source.is_word(index + 1) and source.is_op(index + 2, "("):
            params = source.close(index + 2)
            body = params + 1
            if source.is_op(body, "{") and _is_testing_t(source, index + 3, params):
                found[tokens[index + 1].text] = (tokens[index + 3].text, body)
        index = source.skip(index)
    return found


def _is_testing_t(source: Source, start: int, end: int) -> bool:
    """Tokens `[start, end)` are `name *testing.T`."""
    texts = [token.text for token in source.tokens[start:end]]
    return len(texts) == 5 and source.is_word(start) and texts[1:] == ["*", "testing", ".", "T"]
