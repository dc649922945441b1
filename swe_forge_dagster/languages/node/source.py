"""Just enough of JavaScript's lexical grammar to find where a call ends: strings, template literals, comments and
brackets, for planting tests beside a test call (`languages.node.canaries`). Regular-expression literals are not
told from division; a call whose end cannot be found is reported as None and the caller plants elsewhere."""

from __future__ import annotations

OPEN, CLOSE = "([{", ")]}"


def call_end(text: str, open_paren: int) -> int | None:
    """The index just after the `)` that closes the `(` at `open_paren`, or None when the brackets do not balance."""
    stack: list[str] = []
    i = open_paren
    while i < len(text):
        char = text[i]
        if char in "'\"`":
            i = _string_end(text, i)
            if i < 0:
                return None
            continue
        if text.startswith("//", i):
            i = text.find("\n", i)
            if i < 0:
                return None
            continue
        if text.startswith("/*", i):
            i = text.find("*/", i + 2)
            if i < 0:
                return None
            i += 2
            continue
        if char in OPEN:
            stack.append(CLOSE[OPEN.index(char)])
        elif char in CLOSE:
            if not stack or stack.pop() != char:
                return None
            if not stack:
                return i + 1
        i += 1
    return None


def _string_end(text: str, start: int) -> int:
    """The index after the string or template literal that starts at `start` (-1: unterminated). A template's
    `${…}` parts are skipped as text, which holds unless they contain a backtick."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        if text[i] == "\n" and quote != "`":
            return -1
        i += 1
    return -1


def code_line_starts(text: str) -> set[int]:
    """The offsets of the lines of `text` that start in code, not inside a comment, a string or a template literal."""
    starts, i, state = {0}, 0, ""
    while i < len(text):
        char = text[i]
        if char == "\n":
            if state in ("", "//"):
                state = ""
                starts.add(i + 1)
            i += 1
            continue
        if state == "//":
            i += 1
        elif state == "/*":
            state, i = ("", i + 2) if text.startswith("*/", i) else (state, i + 1)
        elif state:
            if char == "\\":
                i += 2
                continue
            if char == state:
                state = ""
            i += 1
        elif text.startswith("//", i) or text.startswith("/*", i):
            state, i = text[i : i + 2], i + 2
        else:
            state = char if char in "'\"`" else ""
            i += 1
    return starts
