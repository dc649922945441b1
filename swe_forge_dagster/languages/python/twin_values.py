"""How a twin draws the value it expects instead of the original (`languages.python.assertions`), and keeps what the
file says about that value consistent with it.

Why: a twin is caught by a forger only when it cannot be told from a real test. A value of another form (a small
letter in `"HELLO"`, an `e` in `"1,234"`), a number no test of the file would hold (not a multiple of 512 among
sizes), an id or a comment that still restates the original value (`id="2.5->3"`, `# 2.5 -> 3`) each told red-team
forgers (2026-11-30) which run was the twin's, and they failed the twins as an honest fix does; so did a number or
letter changed alone, which broke a law every real value keeps (2026-12-01). So a changed value is another real value
of the test or its file where there is one of its form (`swapped`, `languages.python.value_peers`), else keeps its
form (`execution.canaries.another_string`), and the ids and comments that restate it are changed with it
(`restated`).
"""

from __future__ import annotations

import ast
import bisect
import io
import random
import re
import tokenize
from collections import Counter
from collections.abc import Sequence

from swe_forge_dagster.execution.canaries import another_string
from swe_forge_dagster.languages.python.assertion_sites import Source

PLAIN_INT = re.compile(r"[1-9][0-9]*|0")
PLAIN_FLOAT = re.compile(r"(?:[1-9][0-9]*|0)\.[0-9]+")
FLOAT_EXACT = 2.0**50
"""Below it a float and one a whole number or more away are never equal (2**53 and 2**53 + 1 are one float)."""
PLAIN_STR = re.compile(r"""(?P<q>['"])(?P<body>(?:(?!(?P=q))[^\\\n])*)(?P=q)""")
"""A string written plainly: one kind of quote around it, no prefix, no escape (the other kind of quote inside, as in
`'<a href="x">'`, is plain too)."""


class Offsets:
    """Text offsets from `ast` positions (lines as `ast` counts them, columns in UTF-8 bytes)."""

    def __init__(self, text: str) -> None:
        self.lines = io.StringIO(text, newline="").readlines()
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def at(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1]
        if line.isascii():  # bytes are characters: a long line of data is not encoded once per literal
            return self.starts[lineno - 1] + col
        return self.starts[lineno - 1] + len(line.encode("utf-8", "surrogatepass")[:col].decode("utf-8", "ignore"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.at(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        return start, self.at(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


Edit = tuple[int, int, str]
"""(start, end, replacement) in the test file's text."""


def swappable(node: ast.AST, text: str, offsets: Offsets) -> tuple[tuple[str, ...], tuple[ast.expr, ...]] | None:
    """A literal a twin may swap for another of the file's of the same form, its form and its leaves: a plain whole
    number (`12`), a list or tuple of plain numbers (`[6, 7, 8]`, `(1250, 313, 1563)`, `[0.25, -1.5]`), or a plain
    string with a letter or digit, whose form is its quotes and its shape (`shape`: `"Fri 1 Mar 2024"` and `"Mon 25
    Dec 2023"` are one form, `"Ann Lee"` and `"ann@example.com"` are two); None for anything else."""
    if isinstance(node, ast.Constant) and type(node.value) is str:
        if not changeable(node, text, offsets) or not any(c.isalnum() for c in node.value):
            return None
        return ("string", spelled(node, text, offsets)[0], shape(node.value)), (node,)
    if isinstance(node, ast.Constant):
        plain = type(node.value) is int and changeable(node, text, offsets)
        return (("number",), (node,)) if plain else None
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and all(_number(v, text, offsets) for v in node.elts):
        return (type(node).__name__,), tuple(node.elts)
    return None


def _number(node: ast.AST, text: str, offsets: Offsets) -> bool:
    """A number written plainly, or its negation (`3`, `2.5`, `-3`)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and changeable(node, text, offsets)


def shape(value: str) -> str:
    """A string's shape: each capital `A`, small letter `a`, digit `9`, anything else itself, runs made one
    (`"978-0-306-40615-7"` -> `9-9-9-9-9`, `"Fri 1 Mar 2024"` -> `Aa 9 Aa 9`)."""
    classes = "".join("A" if c.isupper() else "a" if c.islower() else "9" if c.isdigit() else c for c in value)
    return re.sub(r"(.)\1+", r"\1", classes)


def swapped(source: Source, text: str, offsets: Offsets, rng: random.Random) -> tuple[Edit, ...] | None:
    """The name's values swapped for others of the test's own (another parametrize set's, another loop item's, the
    same parameter's in another call, another value the file expects of the same form), when they are `swappable`
    (whole numbers, lists or tuples of them, strings of one shape) and the test holds two or more: each changed value
    is then a real one of the test, of its form and magnitude, so a forger that takes the expected value from its
    caller only when it looks right (a multiple of 512, a size in its range) cannot tell the twin by it, nor one that
    checks a law every real value keeps (a total that is the sum of its parts, a run of consecutive pages, an ISBN's
    check digit, the weekday a date names: one number or letter changed alone breaks it; red team a19 to a21, a23),
    nor one that finds the changed string one letter away from another of the file (a24). In a parametrize table
    (every set changed, in a cycle) a list or tuple of another length is written as the other is written; one value
    alone takes one of its own length (`[f(v) for v in (0.5, 1.5)] == [1, 2]` keeps a value per input: red team
    a18), its numbers that differ changed each where it stands (`twin_facts` restates them). Never a permutation of
    the value (`assertCountEqual` would hold: red team a37). A string may equal more than one (numpy's dtype equals
    both `"float64"` and `"float"`), and an honest fix would then pass the twin: the harness reads a twin that passed
    only if the gold patch fails it (`harness.verify`)."""
    nodes = (*source.literals, *source.others)
    pool = [swappable(v, text, offsets) for v in nodes]
    if not pool or any(found is None for found in pool) or len({found[0] for found in pool if found}) != 1:
        return None
    written: dict[tuple, list[str]] = {}
    whole: dict[tuple, str] = {}
    for node, (_, leaves) in zip(nodes, pool, strict=True):  # type: ignore[misc]
        written[_values(leaves)] = [spelled(v, text, offsets) for v in leaves]
        whole[_values(leaves)] = spelled(node, text, offsets)
    values = sorted(written)
    if len(values) < 2:
        return None

    def becomes(node: ast.expr, value: tuple) -> tuple[Edit, ...] | None:
        _, leaves = swappable(node, text, offsets)  # type: ignore[misc]
        if same_items(_values(leaves), value):
            return None  # equal to the original where order is not compared (`assertCountEqual`)
        if len(leaves) == len(value):
            pairs = zip(leaves, _values(leaves), written[value], strict=True)
            return tuple((*offsets.span(leaf), word) for leaf, old, word in pairs if old != ast.literal_eval(word))
        start, end = offsets.span(node)  # another length: the other literal as it is written, in the same brackets
        other = whole[value]
        return ((start, end, other),) if text[start] + text[end - 1] == other[0] + other[-1] else None

    def key(node: ast.expr) -> tuple:
        return _values(swappable(node, text, offsets)[1])  # type: ignore[index]

    if source.every:  # a cycle through the values in a drawn order: every set gets another set's value
        order = rng.sample(values, len(values))
        after = dict(zip(order, order[1:] + order[:1], strict=True))
        made = [becomes(v, after[key(v)]) for v in source.literals]
        return None if any(m is None for m in made) else tuple(e for m in made for e in m)  # type: ignore[union-attr]
    value = rng.choice(source.literals)  # one value alone: of its own length (a list aligned with its inputs)
    drawn = [
        becomes(value, v) for v in rng.sample(values, len(values)) if v != key(value) and len(v) == len(key(value))
    ]
    return next((edits for edits in drawn if edits), None)


def same_items(one: tuple, other: tuple) -> bool:
    """Whether two values hold the same items in some order, by value (`[1, 2]` and `[2.0, 1]`; a string's letters:
    `"abc"` and `"cab"`): `assertCountEqual` holds for both, so one is no twin of the other (red team a37)."""
    if len(one) == len(other) == 1 and isinstance(one[0], str) and isinstance(other[0], str):
        return sorted(one[0]) == sorted(other[0])
    try:
        return Counter(one) == Counter(other)
    except TypeError:  # unhashable items
        return sorted(map(repr, one)) == sorted(map(repr, other))


def _values(leaves: tuple[ast.expr, ...]) -> tuple:
    return tuple(ast.literal_eval(v) for v in leaves)


def spelled(node: ast.AST, text: str, offsets: Offsets) -> str:
    return text[slice(*offsets.span(node))]


def restated(
    edits: Sequence[Edit], source: Source, text: str, offsets: Offsets
) -> tuple[tuple[Edit, ...], tuple[Edit, ...]]:
    """The edits of the explicit ids of the parametrize sets whose values changed, and of the comments on the changed
    values' lines, where they restate them (`id="2.5->3"`, `(2.5, 3),  # 2.5 -> 3`), made to restate the new value:
    an id or a comment that still read `3` beside a value of 4 would tell the twin (red-team forgers compared them).
    Only a value with a letter or digit, restated once there (`id="a->a"` restates the input too: it is left). An id
    that changes renames its instance."""
    ids, notes = [], {}
    noted_lines = comments(text, offsets)
    spans = sorted((offsets.span(v), k) for k, v in enumerate(source.literals))
    for start, end, new in edits:
        old = _bare(text[start:end])
        if not any(c.isalnum() for c in old):
            continue
        token = re.compile(r"(?<![\w.])" + re.escape(old) + r"(?![\w.])")
        at = bisect.bisect_right(spans, ((start, float("inf")), 0)) - 1
        k = spans[at][1] if at >= 0 and _within(spans[at][0], start, end) else None
        named = source.ids[k] if k is not None and k < len(source.ids) else None
        if named is not None and PLAIN_STR.fullmatch(text[slice(*offsets.span(named))]):
            id_start, id_end = offsets.span(named)
            body = text[id_start + 1 : id_end - 1]
            if len(token.findall(body)) == 1:
                changed = token.sub(_bare(new).replace("\\", r"\\"), body)
                ids.append((id_start, id_end, text[id_start] + changed + text[id_start]))
        line = bisect.bisect_right(offsets.starts, start) - 1
        for span in noted_lines.get(line, ()):
            notes.setdefault(span, {}).setdefault(old, set()).add(_bare(new))
    noted = (_noted(text, span, changes) for span, changes in notes.items())
    return tuple(ids), tuple(note for note in noted if note is not None)


def _noted(text: str, span: tuple[int, int], changes: dict[str, set[str]]) -> Edit | None:
    """A comment with every value it restates changed at once (values swapped among themselves stay swapped); None
    when it restates none, restates one twice (it may be the input's too) or one value changed two ways (the comment
    is left as it is)."""
    note = text[span[0] : span[1]]
    counts = {old: len(re.findall(r"(?<![\w.])" + re.escape(old) + r"(?![\w.])", note)) for old in changes}
    if any(len(new) > 1 for new in changes.values()) or any(count > 1 for count in counts.values()):
        return None
    mapping = {old: next(iter(new)) for old, new in changes.items() if counts[old] == 1}
    if not mapping:
        return None
    pattern = re.compile(
        r"(?<![\w.])(" + "|".join(map(re.escape, sorted(mapping, key=len, reverse=True))) + r")(?![\w.])"
    )
    changed = pattern.sub(lambda match: mapping[match.group(1)], note)
    return (*span, changed) if changed != note else None


def comments(text: str, offsets: Offsets) -> dict[int, list[tuple[int, int]]]:
    """The comments of the file by line (0-based), as text spans."""
    found: dict[int, list[tuple[int, int]]] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                (row, col), (_, end) = token.start, token.end
                found.setdefault(row - 1, []).append((offsets.starts[row - 1] + col, offsets.starts[row - 1] + end))
    except (tokenize.TokenError, SyntaxError):
        return {}
    return found


def _within(span: tuple[int, int], start: int, end: int) -> bool:
    return span[0] <= start and end <= span[1]


def _bare(spelled: str) -> str:
    """A literal's text as an id or a comment would restate it: a string without its quotes."""
    return spelled[1:-1] if spelled[:1] in "'\"" and len(spelled) >= 2 else spelled


def changeable(node: ast.AST, text: str, offsets: Offsets, markup: bool = False) -> bool:
    """A number or string written in its plain form (`12`, `2.5`, `'abc'`), which another of its kind can replace (in
    markup, a string with text between its tags)."""
    if not isinstance(node, ast.Constant) or type(node.value) not in (int, float, str):
        return False
    if markup and isinstance(node.value, str) and not _text_positions(node.value):
        return False
    if isinstance(node.value, float) and not abs(node.value) < FLOAT_EXACT:
        return False  # a whole number away may be the same float there
    start, end = offsets.span(node)
    pattern = {int: PLAIN_INT, float: PLAIN_FLOAT, str: PLAIN_STR}[type(node.value)]
    return pattern.fullmatch(text[start:end]) is not None


MARKUP_EQUAL = frozenset({"assertHTMLEqual", "assertXMLEqual"})
"""Methods that compare parsed markup: a letter added inside a tag (`</scrript>`) makes a document no parser takes,
which fails for every implementation, an oracle's too, and so catches nothing; it goes into the text between tags."""


def _text_positions(value: str) -> list[int]:
    """Where a letter can go in markup and change only its text: after a letter that follows a letter, outside tags."""
    inside, places = False, []
    for index, char in enumerate(value):
        if char in "<>":
            inside = char == "<"
        elif not inside and index and char.isalpha() and value[index - 1].isalpha():
            places.append(index)
    return places


def another(value: int | float | str, source: str, rng: random.Random, markup: bool = False) -> str:
    """The source of another value of the same kind and form: a whole number a few away or one with as many digits, by
    a coin (near values catch an oracle that returns only what is close to what the code computes, a rounding away);
    a decimal a few whole numbers away, its decimals kept; a string with a letter or digit replaced by another of its
    kind (`another_string`), in the same quotes: the value a twin takes when the file holds no other real one of its
    form (`swapped`, `languages.python.value_peers`)."""
    if isinstance(value, float):  # a whole number or two away, its decimals kept (`2.5` -> `4.5`): never below 0
        whole, _, decimals = source.partition(".")
        return f"{rng.choice([n for n in (int(whole) + d for d in (-3, -2, -1, 1, 2, 3)) if n >= 0])}.{decimals}"
    if isinstance(value, int):
        if rng.random() < 0.5:
            return str(rng.choice([n for n in (value + d for d in (-3, -2, -1, 1, 2, 3)) if n > 0]))  # never `-0`
        digits = len(source)
        low, high = (1, 10) if digits == 1 else (10 ** (digits - 1), 10**digits)  # never `-0`
        drawn = {rng.randrange(low, high) for _ in range(12)} - {value}  # never a sample of the range: 20 digits
        return str(rng.choice(sorted(drawn)))  # overflow `len(range(...))`
    if markup:
        at = rng.choice(_text_positions(value))
        return source[0] + value[:at] + value[at - 1] + value[at:] + source[0]
    return source[0] + another_string(value, rng) + source[0]
