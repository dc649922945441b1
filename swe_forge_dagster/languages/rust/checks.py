"""How a Rust twin changes one check of a test (`languages.rust.twins`): a value it expects, or its sense.

A check is a statement that panics when a condition does not hold:
- `assert_eq!(a, b, ...)`, `assert_ne!(a, b, ...)`, `assert!(c, ...)` (std's, under their own names or `std::`,
  `core::`; `pretty_assertions::assert_eq!` and other crates' namesakes have only their values changed);
- assert_cmd's `Assert` chain, `cmd.assert().success().stdout("...")`: each link after `.assert()` is a check.

A value is changed where the check is an exact equality: one side of `assert_eq!`, or of `assert!(a == b)` (its only
binary operator), the exit code of `.code(N)`, the text of `.stdout("...")` / `.stderr("...")`. The value is a
literal written there, or in a value built of them there (`Some(3)`, `Ok("a")`, `[1, 2]`, `vec![1, 2]`, a tuple,
`&`, `"a".to_string()`, `String::from("a")`), or held by a local (`let want = 3;`, not `mut`) bound once in the same
block and read nowhere else but in the check: a number becomes another nearer zero (a few away, or with as many
digits, by a coin; 0 becomes 1), its base, suffix (`255u8`), grouping (`1_000`) and a float's decimal places kept, so
any type the first fits holds it; a string gains one of its own letters between two of its characters (never inside
an escape; never a byte string, whose length is its type's); `true` and `false` swap. When the test passed, the value
computed was the one expected, so the changed one differs: the twin panics, whatever the code does, unless the code
returns the value the twin expects.

Otherwise the check is negated, written as a test writes the opposite: `assert_eq!` and `assert_ne!` (both call
`PartialEq::eq`, `assert_ne!` panicking when it holds), `==` and `!=`, `<` and `>=`, `>` and `<=` (when `a < b` held,
`partial_cmp` said `Less`, so `a >= b` is false: a NaN cannot make both pass), `!c` for `c` and `c` for `!c`, `!(c)`
around anything else; assert_cmd's `.success()` and `.failure()` (the exit status's `success()`, or not).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from swe_forge_dagster.execution.canaries import of_its_kind
from swe_forge_dagster.languages.rust.source import LITERALS, Source, Stmt

Edit = tuple[int, int, str]
"""(start, end, replacement) in the file's text."""


@dataclass(frozen=True)
class Change:
    """The edits that make a check the twin's, and what they do (for a verdict's reason)."""

    edits: tuple[Edit, ...]
    how: str


@dataclass(frozen=True)
class Site:
    """A statement that may be a check: `block` (its block's statements) at `index`, `body` the indexes of the test
    function's braces (where a local's uses are counted)."""

    block: Sequence[Stmt]
    index: int
    body: tuple[int, int]


_MACROS = frozenset({"assert", "assert_eq", "assert_ne"})
_STD = ((), ("std",), ("core",))
_COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">="})
_FLIPPED = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_BINARY = frozenset({"+", "-", "*", "/", "%", "^", "&", "|", "&&", "||", "<<", ">>", "..", "..=", *_COMPARISONS})
_OPERAND_END = frozenset({"ident", "number", "string", "raw", "char"})
_CMD_LINKS = frozenset({"success", "failure", "code", "stdout", "stderr", "interrupted"})
_INT_SUFFIX = r"_*[iu](?:8|16|32|64|128|size)"


def change(src: Source, site: Site, rng: random.Random) -> Change | None:
    """The twin's change of the statement at `site` when it is a check (see the module docstring), else None."""
    return _macro_check(src, site, rng) or _assert_cmd_check(src, site, rng)


def _macro_check(src: Source, site: Site, rng: random.Random) -> Change | None:
    stmt = site.block[site.index]
    index, path = stmt.head, []
    while src.is_word(index) and src.is_punct(index + 1, "::"):
        path.append(src.tokens[index].text)
        index += 2
    if not (src.is_word(index, *_MACROS) and src.is_punct(index + 1, "!") and src.is_punct(index + 2, "(")):
        return None
    if src.close(index + 2) != stmt.end - 1:
        return None  # `assert!(x).then(...)`, or more after it: not a whole check
    name, std = src.tokens[index].text, tuple(path) in _STD
    arguments = src.split(index + 3, stmt.end - 1, ",")
    if name == "assert":
        if not std:
            return None
        return _assert_check(src, site, arguments[0], rng) if arguments[0][1] > arguments[0][0] else None
    if len(arguments) < 2:
        return None
    if name == "assert_eq":
        sides = [side for side in (arguments[1], arguments[0]) if _values(src, site, *side)]
        if sides:
            return _changed_value(src, site, sides[0], rng)
    if not std:
        return None  # another crate's macro: its `assert_ne!` may not exist
    token, other = src.tokens[index], "assert_ne" if name == "assert_eq" else "assert_eq"
    return Change(((token.start, token.end, other),), f"asserts {other}! where the test asserts {name}!")


def _assert_check(src: Source, site: Site, condition: tuple[int, int], rng: random.Random) -> Change | None:
    first, last = condition
    operators = binary_operators(src, first, last)
    edits: list[Edit]
    wrapped = src.is_punct(first, "!") and src.is_punct(first + 1, "(") and src.close(first + 1) == last - 1
    if len(operators) == 1 and src.tokens[operators[0]].text in _COMPARISONS:
        op = src.tokens[operators[0]]
        if op.text == "==":
            for side in ((operators[0] + 1, last), (first, operators[0])):
                if _values(src, site, *side):
                    return _changed_value(src, site, side, rng)
        edits = [(op.start, op.end, _FLIPPED[op.text])]
    elif not operators and wrapped:
        end = src.tokens[last - 1]  # `!(a && b)` -> `a && b`: parentheses left alone would be `unused_parens`
        edits = [(src.tokens[first].start, src.tokens[first + 2].start, ""), (end.start, end.end, "")]
    elif not operators and src.is_punct(first, "!"):
        edits = [(src.tokens[first].start, src.tokens[first + 1].start, "")]
    elif not operators:
        edits = [(src.tokens[first].start, src.tokens[first].start, "!")]
    else:
        end = src.tokens[last - 1].end
        edits = [(src.tokens[first].start, src.tokens[first].start, "!("), (end, end, ")")]
    old = src.span(first, last)
    offset, new = src.tokens[first].start, old
    for start, end, replacement in sorted(edits, reverse=True):
        new = new[: start - offset] + replacement + new[end - offset :]
    return Change(tuple(edits), f"asserts `{new}` where the test asserts `{old}`")


def _assert_cmd_check(src: Source, site: Site, rng: random.Random) -> Change | None:
    """The last link of an assert_cmd chain (`... .assert().success().stdout("x")`) that can be changed."""
    stmt = site.block[site.index]
    links: list[tuple[int, int]] = []  # (name, open paren) from the last
    index = stmt.end - 1
    while True:
        if not src.is_punct(index, ")"):
            return None
        opening = src.opening(index)
        if not (src.is_word(opening - 1) and src.is_punct(opening - 2, ".")):
            return None
        if src.is_word(opening - 1, "assert"):
            break
        links.append((opening - 1, opening))
        index = opening - 3
    if index != opening + 1 or not links:
        return None  # `.assert(x)`: not assert_cmd's
    if any(src.tokens[name].text not in _CMD_LINKS for name, _ in links):
        return None
    for name, opening in links:
        method = src.tokens[name]
        if method.text in ("success", "failure") and src.close(opening) == opening + 1:
            other = "failure" if method.text == "success" else "success"
            how = f"asserts .{other}() where the test asserts .{method.text}()"
            return Change(((method.start, method.end, other),), how)
        argument = (opening + 1, src.close(opening))
        kinds = {"code": ("number",), "stdout": ("string", "raw"), "stderr": ("string", "raw")}.get(method.text, ())
        if argument[1] == argument[0] + 1 and src.tokens[argument[0]].kind in kinds:
            return _changed_value(src, site, argument, rng)
    return None


def _changed_value(src: Source, site: Site, side: tuple[int, int], rng: random.Random) -> Change | None:
    values = _values(src, site, *side)
    if not values:
        return None
    index = rng.choice(values)
    token = src.tokens[index]
    new = another_literal(token.text, token.kind, rng)
    if new is None:
        return None
    sign = "-" if src.is_punct(index - 1, "-") and token.kind == "number" else ""
    return Change(((token.start, token.end, new),), f"expects {sign}{new} where the test expects {sign}{token.text}")


def _values(src: Source, site: Site | None, first: int, last: int) -> list[int]:
    """Indexes of the literal tokens a value is made of (see the module docstring), or those of the value a local it
    names holds."""
    while first < last and src.is_punct(first, "&", "&&"):
        first += 1
    if last == first + 1:
        if src.is_word(first, "true", "false") or _changeable(src, first):
            return [first]
        held = _held(src, site, src.tokens[first].text) if site is not None and src.is_word(first) else None
        return _values(src, None, *held) if held is not None else []
    if last == first + 2 and src.is_punct(first, "-") and src.tokens[first + 1].kind == "number":
        return [first + 1] if _changeable(src, first + 1) else []
    if last == first + 5 and src.tokens[first].kind in ("string", "raw") and src.is_punct(first + 1, "."):
        converted = src.is_word(first + 2, "to_string", "to_owned") and src.close(first + 3) == first + 4
        return [first] if converted and _changeable(src, first) else []
    single = src.is_word(first, "Some", "Ok", "Err")  # one argument, in parentheses
    if src.is_word(first, "String") and src.is_punct(first + 1, "::") and src.is_word(first + 2, "from"):
        inner, single = first + 3, True
    elif single:
        inner = first + 1
    elif src.is_word(first, "vec") and src.is_punct(first + 1, "!") and src.is_punct(first + 2, "["):
        inner = first + 2
    else:
        inner = first
    if not (src.is_punct(inner, "(", "[") and src.close(inner) == last - 1) or (single and src.is_punct(inner, "[")):
        return []
    repeat = src.split(inner + 1, last - 1, ";")
    if len(repeat) == 2:  # `[x; 3]`
        count = src.tokens[repeat[1][0]] if repeat[1][1] == repeat[1][0] + 1 else None
        positive = count is not None and count.kind == "number" and re.fullmatch(r"[1-9][\d_]*", count.text)
        return _values(src, None, *repeat[0]) if positive else []
    elements = src.split(inner + 1, last - 1, ",")
    if single and len(elements) != 1:
        return []
    return [index for element in elements for index in _values(src, None, *element)]


def _held(src: Source, site: Site | None, name: str) -> tuple[int, int] | None:
    """The value tokens of `let name = value;` (or `let name: T = value;`) among the statements before the check in
    its block, when the test reads `name` nowhere but in the check."""
    if site is None:
        return None
    value = None
    for stmt in site.block[: site.index]:
        if src.is_word(stmt.head, "let") and src.is_word(stmt.head + 1, name):
            equals = stmt.head + 2
            while equals < stmt.end and not src.is_punct(equals, "="):
                equals = src.skip(equals)
            value = (equals + 1, stmt.end) if equals + 1 < stmt.end else None
    uses = [i for i in range(*site.body) if src.is_word(i, name) and not src.is_punct(i - 1, ".")]
    return value if len(uses) == 2 else None


def _changeable(src: Source, index: int) -> bool:
    token = src.tokens[index]
    return token.kind in LITERALS and token.kind != "char" and another_literal(token.text, token.kind) is not None


def another_literal(text: str, kind: str, rng: random.Random | None = None) -> str | None:
    """Another value of the literal `text` (see the module docstring), or None when it cannot be changed safely: a
    byte string (its length is in its type, `&[u8; 2]`, which an array it is compared with must match), a float with
    an exponent or more than six significant digits (which an `f32` might not tell from the first)."""
    rng = rng or random.Random(0)
    if kind == "ident":
        return "false" if text == "true" else "true"
    if kind in ("string", "raw"):
        return None if text.startswith("b") else _another_string(text, rng)  # `b"ab"` is a `&[u8; 2]`: its length
    if kind != "number":
        return None
    if match := re.fullmatch(rf"0([xob])([0-9a-fA-F_]+?)({_INT_SUFFIX})?", text):
        base = {"x": 16, "o": 8, "b": 2}[match.group(1)]
        return "0" + match.group(1) + _another_digits(match.group(2), base, rng) + (match.group(3) or "")
    if match := re.fullmatch(rf"(\d[\d_]*?)({_INT_SUFFIX})?", text):
        return _another_digits(match.group(1), 10, rng) + (match.group(2) or "")
    if match := re.fullmatch(r"(\d+)\.(\d+)(_*f(?:32|64))?", text):
        whole, places = match.group(1), match.group(2)
        if len(str(int(whole + places))) > 6:
            return None
        digits = _another_digits(whole + places, 10, rng).zfill(len(whole + places))
        head = digits[: len(whole)].lstrip("0") or "0"
        return f"{head}.{digits[len(whole) :]}{match.group(3) or ''}"
    return None


def _another_digits(written: str, base: int, rng: random.Random) -> str:
    """The digits `written` (underscores kept in their places from the right) of another number nearer zero: a few
    away or with as many digits, by a coin; 0 becomes 1."""
    digits = written.replace("_", "")
    value, width = int(digits, base), len(digits.lstrip("0")) or 1
    if value == 0:
        new = 1
    else:
        near = [value - step for step in (1, 2, 3) if value - step >= 0]
        same = range(base ** (width - 1), value) if width > 1 else range(1, value)
        new = rng.choice(same) if rng.random() < 0.5 and len(same) > 0 else rng.choice(near)
    text = {16: "{:x}", 8: "{:o}", 2: "{:b}", 10: "{:d}"}[base].format(new)
    text = text.upper() if any(c in "ABCDEF" for c in digits) else text
    text = text.zfill(len(digits)) if digits.startswith("0") and len(digits) > 1 else text
    gaps = [len(written) - 1 - i - written[i + 1 :].count("_") for i, c in enumerate(written) if c == "_"]
    for gap in sorted(set(gaps)):  # digits after the underscore, counted from the right
        if 0 < gap < len(text.replace("_", "")):
            at = len(text) - gap - text[len(text) - gap :].count("_")
            text = text[:at] + "_" + text[at:]
    return text


def _another_string(text: str, rng: random.Random) -> str:
    """The string literal `text` (`r#"..."#` and `c"..."` too) with one of its letters or digits, never one of an
    escape, replaced by another of its kind (`execution.canaries.of_its_kind`: the same length and form, so a forger
    cannot tell the twin by the shape of the value); with none, one of its own letters (else `e`) put between two of
    its characters."""
    opening = re.match(r'([bc]?r?)(#*)"', text)
    assert opening is not None
    prefix, close = opening.group(1), 1 + len(opening.group(2))
    content = text[opening.end() : len(text) - close]
    places, plain, index = [0], [], 0
    while index < len(content):
        if "r" not in prefix and content[index] == "\\":
            escape = re.match(r"\\(?:x..|u\{[^}]*\}|\n\s*|.)", content[index:], re.S)
            index += escape.end() if escape else 1
        else:
            plain.append(content[index])
            index += 1
        places.append(index)
    kinds = [i for i in range(len(places) - 1) if places[i + 1] - places[i] == 1 and content[places[i]] in plain]
    kinds = [places[i] for i in kinds if content[places[i]].isascii() and content[places[i]].isalnum()]
    if kinds:
        at = rng.choice(kinds)
        new = content[:at] + of_its_kind(content[at], "".join(plain), rng) + content[at + 1 :]
        return text[: opening.end()] + new + text[len(text) - close :]
    letters = sorted({c.lower() for c in plain if c.isalpha()}) or ["e"]
    at, letter = rng.choice(places), rng.choice(letters)
    return text[: opening.end()] + content[:at] + letter + content[at:] + text[len(text) - close :]


def binary_operators(src: Source, start: int, end: int) -> list[int]:
    """Indexes of the binary operators (and `as`) of tokens `[start, end)` outside brackets: an operator after an
    operand; a turbofish's `::<...>` is passed over."""
    found, index = [], start
    while index < end:
        if src.is_punct(index, "::") and src.is_punct(index + 1, "<"):
            depth, index = 0, index + 1
            while index < end:
                depth += {"<": 1, ">": -1, ">>": -2}.get(src.tokens[index].text, 0)
                index = src.skip(index)
                if depth <= 0:
                    break
            continue
        token, previous = src.tokens[index], src.tokens[index - 1] if index > start else None
        after_operand = previous is not None and (
            previous.kind in _OPERAND_END or (previous.kind == "punct" and previous.text in (")", "]", "}", "?"))
        )
        operator = (token.kind == "punct" and token.text in _BINARY) or src.is_word(index, "as")
        if operator and after_operand:
            found.append(index)
        index = src.skip(index)
    return found
