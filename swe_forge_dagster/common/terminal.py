"""Text from outside made inert before a console prints it.

Why: the commands print strings that agents and repositories control (agent output in a
harness reason, test ids, task and instance ids, PR titles in a query result). Rich reads `[...]`
in a printed string as markup, so `[/x]` raises a MarkupError (a crashed harness, no summary) and
`[green]resolved[/]` prints a forged verdict; a terminal obeys escape sequences, so an ESC or CSI
in a reason can recolour the screen, move the cursor or rewrite lines already printed; a newline
in an id can fake a line of its own, and bidirectional overrides can reorder what is shown.

So every outside string goes through here: `plain` spells out each control character (C0, DEL,
C1, which include ESC and the 8-bit CSI), each bidi control and line separator as a visible escape (`\\x1b`,
`\\n`, `\\u202e`), and the result is printed either as a `rich.text.Text` (`inert`: never parsed
for markup or emoji) or, inside a markup string, escaped (`markup_safe`). The text stays
readable and greppable; it just cannot act on the terminal.
"""

from __future__ import annotations

import unicodedata

from rich.markup import escape
from rich.style import Style
from rich.text import Text

_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_UNICODE_CONTROLS = _BIDI_CONTROLS | frozenset("\u2028\u2029")  # and the line and paragraph separators


def _visible(char: str) -> str:
    if char in _UNICODE_CONTROLS:
        return f"\\u{ord(char):04x}"
    if unicodedata.category(char) == "Cc":
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char, f"\\x{ord(char):02x}")
    return char


_TABLE = {code: _visible(chr(code)) for code in (*range(0x20), *range(0x7F, 0xA0), *map(ord, _UNICODE_CONTROLS))}


def plain(value: object, *, multiline: bool = False) -> str:
    """`value` with every control character spelled out (`\\x1b`, ...): one line, or with `multiline`
    its lines kept and every line after the first indented, so none can pose as a line of our own."""
    if not multiline:
        return str(value).translate(_TABLE)
    return "\n  ".join(line.translate(_TABLE) for line in str(value).splitlines())


def inert(value: object, style: str | Style = "", *, multiline: bool = False) -> Text:
    """`value` as a rich `Text` (no markup, no emoji codes), control characters spelled out."""
    return Text(plain(value, multiline=multiline), style=style)


def markup_safe(value: object) -> str:
    """`value` for an f-string that rich parses as markup: control characters spelled out, `[` escaped."""
    return escape(plain(value))
