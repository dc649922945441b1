"""What the twin makers of the brace languages (Go, Rust, C++) share about a lexed file: its tokens, where each
bracket closes, and the text of a span of tokens.

Why one place: each language lexes its own way (Go inserts semicolons, Rust has lifetimes and raw strings, C++ has
preprocessor lines), but bracket matching and spans are the same, and three copies drifted apart once already.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar, Self

OPEN = {"(": ")", "[": "]", "{": "}"}


@dataclass(frozen=True)
class Token:
    """A token: its kind (the language's lexer names them), its text and its offsets in the source."""

    kind: str
    text: str
    start: int
    end: int


class BracketSource:
    """A file's text and its tokens; subclasses give their lexer (`lex`) and the kind their brackets have."""

    lex: ClassVar[Callable[[str], list[Token] | None]]
    bracket_kind: ClassVar[str] = "op"

    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.tokens = tokens

    @classmethod
    def read(cls, text: str) -> Self | None:
        """`text` lexed, or None when it does not lex or its brackets do not balance."""
        tokens = cls.lex(text)
        if tokens is None:
            return None
        source = cls(text, tokens)
        return source if source.pairs is not None else None

    @cached_property
    def pairs(self) -> dict[int, int] | None:
        """Index of each opening bracket -> index of its closing one (None: unbalanced)."""
        stack: list[int] = []
        pairs: dict[int, int] = {}
        for index, token in enumerate(self.tokens):
            if token.kind != self.bracket_kind:
                continue
            if token.text in OPEN:
                stack.append(index)
            elif token.text in (")", "]", "}"):
                if not stack or OPEN[self.tokens[stack[-1]].text] != token.text:
                    return None
                pairs[stack.pop()] = index
        return None if stack else pairs

    def close(self, index: int) -> int:
        """The index of the bracket closing the one at `index`."""
        assert self.pairs is not None
        return self.pairs[index]

    def span(self, start: int, end: int) -> str:
        """The source text of tokens `[start, end)`."""
        return self.text[self.tokens[start].start : self.tokens[end - 1].end] if end > start else ""
