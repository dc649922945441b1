"""C++ source read as tokens and statements, enough for GoogleTest's twins (`languages.cpp.twins`) to find a test's
checks.

Not a C++ parser: a lexer that knows C++'s literals (raw strings, encoding prefixes, user-defined suffixes, digit
separators), comments and preprocessor lines (a directive is one token, its continuation lines included), and a
statement splitter that knows where an `if`, `for`, `while`, `switch`, `do` or `try` statement ends. Brackets are
`()`, `[]` and `{}` (a `<` may be a comparison, so templates' are not matched). Every token keeps its offsets in the
text, so a change is made token by token and every other byte of the file is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from swe_forge_dagster.languages.bracket_source import BracketSource, Token

_PREFIX = r"(?:u8|[uUL])?"
_TOKEN = re.compile(
    rf"""(?P<space>[ \t\r\f\v]+|\\\n)
    |(?P<newline>\n)
    |(?P<line_comment>//(?:[^\n\\]|\\.)*)
    |(?P<block_comment>/\*.*?\*/)
    |(?P<raw>{_PREFIX}R"(?P<delim>[^()\\\s"]{{0,16}})\(.*?\)(?P=delim)"(?:[A-Za-z_]\w*)?)
    |(?P<string>{_PREFIX}"(?:[^"\\\n]|\\.)*"(?:[A-Za-z_]\w*)?)
    |(?P<char>{_PREFIX}'(?:[^'\\\n]|\\.)+'(?:[A-Za-z_]\w*)?)
    |(?P<number>\.?\d(?:[eEpP][+-]|'(?=[\w])|[\w.])*)
    |(?P<ident>[^\W\d]\w*)
    |(?P<op>\.\.\.|->\*|<=>|<<=|>>=|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\#\#|[-+*/%&|^<>=!~()\[\]{{}},;.:?\#])
    """,
    re.X | re.S,
)
_DIRECTIVE = re.compile(r"[ \t]*#(?:[^\n\\]|\\.)*", re.S)
CONTROL = frozenset({"if", "for", "while", "switch"})
PLAIN_INT = re.compile(r"(?P<digits>[1-9][0-9]*|0)(?P<suffix>(?:[uU](?:ll|LL|[lLzZ])?|(?:ll|LL|[lLzZ])[uU]?)?)")
"""A decimal integer literal and its suffix (`100`, `7u`, `3ULL`, `0`), no digit separator: the numbers a twin
changes."""


def tokenize(text: str) -> list[Token] | None:
    """`text`'s tokens (comments and spaces dropped), or None when it does not lex as C++."""
    found: list[Token] = []
    at, line_start = 0, True
    while at < len(text):
        if line_start:
            directive = _DIRECTIVE.match(text, at)
            if directive is not None:
                start = text.index("#", at)
                found.append(Token("pp", text[start : directive.end()], start, directive.end()))
                at = directive.end()
                continue
        match = _TOKEN.match(text, at)
        if match is None:
            return None
        kind = match.lastgroup or ""
        if kind == "delim":
            kind = "raw"
        at = match.end()
        if kind == "newline" or (kind == "block_comment" and "\n" in match.group()):
            line_start = True
            continue
        if kind in ("space", "line_comment", "block_comment"):
            continue
        line_start = False
        found.append(Token(kind, match.group(), match.start(), match.end()))
    return found


@dataclass(frozen=True)
class Stmt:
    """A statement of a block: tokens `[start, end)` of `Source.tokens`, its ending `;` included."""

    start: int
    end: int


class Source(BracketSource):
    """A C++ file's text, its tokens, and where each bracket closes."""

    lex = staticmethod(tokenize)

    @cached_property
    def openers(self) -> dict[int, int]:
        """Index of each closing bracket -> index of its opening one."""
        return {close: opening for opening, close in (self.pairs or {}).items()}

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
        """The statements of the block whose `{` is at `open_brace`; a preprocessor directive is one of its own."""
        end = self.close(open_brace)
        found, index = [], open_brace + 1
        while index < end:
            after = self.statement_end(index, end)
            found.append(Stmt(index, after))
            index = after
        return found

    def statement_end(self, index: int, end: int) -> int:
        """The index after the statement starting at `index` (before `end`, its block's `}`)."""
        if self.tokens[index].kind == "pp" or self.is_op(index, ";"):
            return index + 1
        if self.is_op(index, "{"):
            return self.close(index) + 1
        if self.is_word(index, *CONTROL):
            head = index + 1
            while self.is_word(head, "constexpr") or self.tokens[head].kind == "pp":
                head += 1
            if not self.is_op(head, "("):
                return end
            after = self.statement_end(self.close(head) + 1, end)
            if self.is_word(index, "if") and self.is_word(after, "else"):
                return self.statement_end(after + 1, end)
            return after
        if self.is_word(index, "do"):
            index = self.statement_end(index + 1, end)
        elif self.is_word(index, "try") and self.is_op(index + 1, "{"):
            after = self.close(index + 1) + 1
            while (
                self.is_word(after, "catch")
                and self.is_op(after + 1, "(")
                and self.is_op(self.close(after + 1) + 1, "{")
            ):
                after = self.close(self.close(after + 1) + 1) + 1
            return after
        while index < end and not self.is_op(index, ";"):
            index = self.skip(index)
        return min(index + 1, end)

    def split(self, start: int, end: int, *separators: str) -> list[tuple[int, int]]:
        """Tokens `[start, end)` split at the operators `separators` outside brackets."""
        parts, index, first = [], start, start
        while index < end:
            if self.is_op(index, *separators):
                parts.append((first, index))
                first = index + 1
                index += 1
            else:
                index = self.skip(index)
        return [*parts, (first, end)]

    def macro_arguments(self, open_paren: int) -> list[tuple[int, int]]:
        """The arguments of the macro call whose `(` is at `open_paren`, split as the preprocessor splits them: at
        commas outside parentheses only (a comma in `{}` or `[]` separates arguments too)."""
        close = self.close(open_paren)
        parts, depth, first = [], 0, open_paren + 1
        for index in range(open_paren + 1, close):
            if self.is_op(index, "("):
                depth += 1
            elif self.is_op(index, ")"):
                depth -= 1
            elif depth == 0 and self.is_op(index, ","):
                parts.append((first, index))
                first = index + 1
        return [*parts, (first, close)]

    def is_lambda_body(self, brace: int) -> bool:
        """The `{` at `brace` opens a lambda's body: `[...] {`, `[...](...) {`, with specifiers (`mutable`,
        `noexcept`) and a trailing return type between; a `return` there ends the lambda, not the test."""
        index = brace - 1
        while index >= 0 and not self.is_op(index, ")", "]"):
            token = self.tokens[index]
            if token.kind != "ident" and not self.is_op(index, "::", "->", "<", ">", "*", "&", "&&", ","):
                return False
            index -= 1
        if self.is_op(index, ")"):
            index = self.openers[index] - 1
        return self.is_op(index, "]")
