"""How a twin changes a test's last top-level assertion (`languages.python.twins`): a plain `assert`, or a unittest
assertion method (`self.assertEqual(...)`: Django's tests, and unittest classes under pytest). Top-level: a statement
of the test's own body, not nested in a block, so it runs whenever the test passes; the last of them that can be
changed, whatever follows it (a test that ends in a call, `result.stdout.fnmatch_lines([...])`, is twinned at the
assertion before).

- Equality with a literal (`a == <literal>`, `self.assertEqual(a, <literal>)` and the other strict-equality methods:
  a number or a string, or a list, tuple, set or dict of them with no repeated key, on one side; or a local name
  assigned such a literal once and read nowhere else, and once in the assertion), unless the other side is a matcher
  whose `==` holds for a range (`pytest.approx`, `mock.ANY`): one number or string of the literal becomes another of
  its kind (a number a few away or with as many digits, by a coin; the string with one of its letters added). A
  value-oracle then returns the twin's value and passes it; an honest fix returns the original value and fails it.
- Anything else is negated where the negation is exact: `x not in y` for `x in y`, `a is not b`, `x` for `not x`,
  `not f(x)`, otherwise `not (...)` (also for `==`: a class may override `__eq__` and inherit another `__ne__`); a
  unittest method becomes the one that asserts the opposite (`assertTrue` and `assertFalse`, `assertIn` and
  `assertNotIn`, `assertHTMLEqual` and `assertHTMLNotEqual`...), and `assertEqual(a, b)` becomes
  `assertFalse((a) == (b))`. A method with no opposite (`assertQuerysetEqual` without a literal, `assertContains`,
  whose opposite takes other arguments) gives no twin.
- A block that must raise (`with pytest.raises(ValueError):`, `with self.assertRaises(KeyError):`) expects an
  unrelated built-in exception (`languages.python.raises`): the block's own exception goes through it.
Whenever the test passed, that assertion ran and held, so the changed one fails there with any honest code.
"""

from __future__ import annotations

import ast
import io
import random
import re
from collections.abc import Iterator, Sequence

from swe_forge_dagster.execution.canaries import another_string
from swe_forge_dagster.languages.python.raises import RAISES_TWIN, raised_type

PLAIN_INT = re.compile(r"[1-9][0-9]*|0")
PLAIN_STR = re.compile(r"""(?P<q>['"])(?P<body>(?:(?!(?P=q))[^\\\n])*)(?P=q)""")
"""A string written plainly: one kind of quote around it, no prefix, no escape (the other kind of quote inside, as in
`'<a href="x">'`, is plain too)."""
STRICT_EQUAL = frozenset(
    {
        "assertEqual",
        "assertEquals",
        "assertListEqual",
        "assertTupleEqual",
        "assertDictEqual",
        "assertSetEqual",
        "assertSequenceEqual",
        "assertMultiLineEqual",
        "assertHTMLEqual",
        "assertXMLEqual",
        "assertCountEqual",
        "assertQuerysetEqual",
        "assertQuerySetEqual",
    }
)
"""unittest's (and Django's) methods that hold only when their two first arguments are equal as values: a literal
changed by one value makes them fail (HTML and XML are compared parsed, and one letter more still differs;
`assertCountEqual` compares as multisets, Django's `assertQuerysetEqual` the queryset, transformed, with the values
given, in order or as multisets: one value more or less than its own count differs either way)."""
OPPOSITE = {
    "assertTrue": "assertFalse",
    "assertIs": "assertIsNot",
    "assertIsNone": "assertIsNotNone",
    "assertIn": "assertNotIn",
    "assertIsInstance": "assertNotIsInstance",
    "assertRegex": "assertNotRegex",
    "assertAlmostEqual": "assertNotAlmostEqual",
    "assertGreater": "assertLessEqual",
    "assertLess": "assertGreaterEqual",
    "assertHTMLEqual": "assertHTMLNotEqual",
    "assertXMLEqual": "assertXMLNotEqual",
    "assertJSONEqual": "assertJSONNotEqual",
}
"""Each unittest (and Django) assertion method and the one that holds exactly when it does not, with the same
arguments."""
OPPOSITE |= {negated: asserted for asserted, negated in list(OPPOSITE.items())}
EQUALITY = {"assertEqual": "==", "assertEquals": "==", "assertNotEqual": "!="}
"""Methods whose opposite is not another method: `assertNotEqual` uses `!=`, which a class may not keep opposite to
its `==` (see `OPPOSITE_OPERATOR`); their twin asserts the comparison false (`assertFalse((a) == (b))`)."""


def asserting_method(statement: ast.stmt) -> ast.Call | None:
    """`self.assertX(...)` as a statement, with a method a twin can change (`STRICT_EQUAL` or `OPPOSITE`), or None."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return None
    func = statement.value.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
        return None
    return statement.value if func.attr in OPPOSITE or func.attr in STRICT_EQUAL or func.attr in EQUALITY else None


def twinnable(node: ast.FunctionDef) -> bool:
    """A test with an assertion among its own statements (not nested in a block: it runs whenever the test passes),
    and no `return` (a test that returns early passes without it, and so would its twin) or `yield` (a generator's body
    may never run)."""
    return bool(_assertions(node))


def _assertions(node: ast.FunctionDef) -> list[int]:
    """The indexes in the test's body of its top-level assertions, last first; [] when it has a `return`/`yield`."""
    if any(isinstance(inner, (ast.Return, ast.Yield, ast.YieldFrom)) for inner in _own_nodes(node)):
        return []
    return [i for i in range(len(node.body) - 1, -1, -1) if _asserts(node.body[i])]


def _asserts(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Assert)
        or asserting_method(statement) is not None
        or raised_type(statement) is not None
    )


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's own scope: not those of the functions, lambdas and classes defined in it."""
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield child
            yield from _own_nodes(child)


class Offsets:
    """Text offsets from `ast` positions (lines as `ast` counts them, columns in UTF-8 bytes)."""

    def __init__(self, text: str) -> None:
        self.lines = io.StringIO(text, newline="").readlines()
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def at(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8", "surrogatepass")[:col].decode("utf-8", "ignore"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.at(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        return start, self.at(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def edit(node: ast.FunctionDef, text: str, offsets: Offsets, rng: random.Random) -> tuple[tuple[int, int, str], str]:
    """(start, end, replacement) that changes the test's last top-level assertion that can be changed, and how (see
    the module docstring). Whenever the test passes, that assertion ran and held: statements after it do not matter
    to the twin, which fails there. ValueError when none can be changed."""
    for index in _assertions(node):
        made = _edit_at(node, index, text, offsets, rng)
        if made is not None:
            return made
    raise ValueError(f"{node.name}: no assertion a twin can change")


def _edit_at(
    node: ast.FunctionDef, index: int, text: str, offsets: Offsets, rng: random.Random
) -> tuple[tuple[int, int, str], str] | None:
    statement = node.body[index]
    before = node.body[:index]
    raised = raised_type(statement)
    if raised is not None:  # a block that must raise: it expects an unrelated exception (`languages.python.raises`)
        start, end = offsets.span(raised)
        return (
            start,
            end,
            RAISES_TWIN[raised.id],
        ), f"expects {RAISES_TWIN[raised.id]} where the test expects {raised.id}"
    call = None if isinstance(statement, ast.Assert) else asserting_method(statement)
    if call is not None:
        method = call.func.attr  # type: ignore[attr-defined]
        sides = call.args[:2] if method in STRICT_EQUAL and len(call.args) >= 2 else []
        expected = _expected_side(before, sides, statement)
    else:
        assert isinstance(statement, ast.Assert)
        expected = _expected_side(before, _compared(statement.test), statement.test)
    constants = [c for c in ast.walk(expected) if _changeable(c, text, offsets)] if expected is not None else []
    markup = call is not None and method in MARKUP_EQUAL
    constants = [c for c in constants if not markup or isinstance(c.value, int) or _text_positions(c.value)]
    if constants:
        constant = rng.choice(constants)
        start, end = offsets.span(constant)
        return (start, end, _another(constant.value, text[start:end], rng, markup)), "expects another value"
    if call is not None and method in EQUALITY:
        return _asserted_false(call, method, text, offsets)
    if call is not None:
        if method not in OPPOSITE:
            return None
        _, end = offsets.span(call.func)
        return (end - len(method), end, OPPOSITE[method]), f"calls {OPPOSITE[method]} instead of {method}"
    assert isinstance(statement, ast.Assert)
    return _negated(statement.test, text, offsets), "is negated"


def _asserted_false(
    call: ast.Call, method: str, text: str, offsets: Offsets
) -> tuple[tuple[int, int, str], str] | None:
    """`self.assertEqual(a, b, ...)` as `self.assertFalse((a) == (b), ...)` (`!=` for `assertNotEqual`): only
    parentheses and the operator are added, so the lines stay; None when the two arguments are not plainly there."""
    if len(call.args) < 2:
        return None
    (first_start, first_end), (second_start, second_end) = offsets.span(call.args[0]), offsets.span(call.args[1])
    gap = text[first_end:second_start]
    if gap.count(",") != 1 or "#" in gap:
        return None
    _, name_end = offsets.span(call.func)
    operator = EQUALITY[method]
    replacement = (
        f"assertFalse{text[name_end:first_start]}({text[first_start:first_end]})"
        f"{gap.replace(',', f' {operator}', 1)}({text[second_start:second_end]})"
    )
    return (name_end - len(method), second_end, replacement), f"asserts `{operator}` false instead of {method}"


def _compared(test: ast.expr) -> list[ast.expr]:
    """The two sides of `a == b`, or [] for any other assertion."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        return [test.left, test.comparators[0]]
    return []


OPPOSITE_OPERATOR = {ast.In: "not in", ast.NotIn: "in", ast.Is: "is not", ast.IsNot: "is"}
"""Comparisons whose opposite the language itself defines, written as a test would write them. Not `==` and `!=`: a
class may override one and inherit the other (a `str` subclass with a case-insensitive `__eq__` keeps `str.__ne__`),
so both `a == b` and `a != b` can hold; `not (a == b)` cannot."""
_OPERATOR_TEXT = re.compile(r"\bnot\s+in\b|\bin\b|\bis\s+not\b|\bis\b")
_BARE = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


def _negated(test: ast.expr, text: str, offsets: Offsets) -> tuple[int, int, str]:
    """The assertion's condition negated as a test writes it where that is exact, so a twin does not read as one:
    `x in y` as `x not in y`, `a is b` as `a is not b`, `not x` as `x`, `f(x)` as `not f(x)`; anything else
    `not (...)` (`a == b` too: see `OPPOSITE_OPERATOR`)."""
    start, end = offsets.span(test)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in OPPOSITE_OPERATOR:
        gap_start, gap_end = offsets.span(test.left)[1], offsets.span(test.comparators[0])[0]
        match = _OPERATOR_TEXT.search(text, gap_start, gap_end)
        if match and "#" not in text[gap_start:gap_end]:
            return match.start(), match.end(), OPPOSITE_OPERATOR[type(test.ops[0])]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        operand_start, _ = offsets.span(test.operand)
        if text[start:operand_start].strip() == "not":
            return start, operand_start, ""
    if isinstance(test, _BARE):
        return start, end, f"not {text[start:end]}"
    return start, end, f"not ({text[start:end]})"


def _expected_side(before: Sequence[ast.stmt], sides: Sequence[ast.expr], assertion: ast.AST) -> ast.expr | None:
    """The literal side of an equality (its two `sides`; or the literal a local name holding it was assigned), or
    None: then the assertion is negated. Not when the other side is a matcher whose equality holds for more than one
    value (`pytest.approx`, `mock.ANY`): another value a little away may still equal it."""
    if len(sides) != 2 or any(_loose(side) for side in sides):
        return None
    literal = [side for side in sides if _literal(side)]
    if len(literal) == 1:
        return literal[0]
    if literal:
        return None
    for side in sides:
        if isinstance(side, ast.Name) and (value := _assigned_once(before, side.id, assertion)) is not None:
            return value
    return None


LOOSE = frozenset({"approx", "ANY"})
"""Names of matchers whose `==` holds for a range of values (pytest's, unittest.mock's)."""


def _loose(side: ast.expr) -> bool:
    names = {n.id for n in ast.walk(side) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(side) if isinstance(n, ast.Attribute)}
    return bool(names & LOOSE)


def _assigned_once(before: Sequence[ast.stmt], name: str, assertion: ast.AST) -> ast.expr | None:
    """The literal `name = <literal>` assigns at the test's top level before the assertion, when it is its only
    assignment there and the name is read nowhere but once in the assertion (changing it then changes nothing else
    the test does before it: in `assert loads(dumps(data)) == data` it would change both sides)."""
    assigns = [
        statement
        for statement in before
        if isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.targets[0].id == name
    ]
    if len(assigns) != 1 or not _literal(assigns[0].value):
        return None
    uses = [n for statement in before for n in ast.walk(statement) if isinstance(n, ast.Name) and n.id == name]
    scope = [*before, assertion]
    binds = [n for part in scope for n in ast.walk(part) if isinstance(n, (ast.Global, ast.Nonlocal, ast.NamedExpr))]
    read = [n for n in ast.walk(assertion) if isinstance(n, ast.Name) and n.id == name]
    return assigns[0].value if len(uses) == 1 and len(read) == 1 and not binds else None


def _literal(node: ast.expr) -> bool:
    """A value built of literals only, so that changing one of its numbers or strings changes what it equals."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_literal(element) for element in node.elts)
    if isinstance(node, ast.Set):  # a repeated element: changing one copy may leave the set as it was
        return all(_literal(element) for element in node.elts) and _distinct(node.elts)
    if isinstance(node, ast.Dict):  # a repeated key: the value it overwrites is never compared
        keys = [key for key in node.keys if key is not None]
        literal = len(keys) == len(node.keys) and all(map(_literal, keys)) and all(map(_literal, node.values))
        return literal and _distinct(keys)
    return False


def _distinct(nodes: Sequence[ast.expr]) -> bool:
    dumped = [ast.dump(n) for n in nodes]
    return len(set(dumped)) == len(dumped)


def _changeable(node: ast.AST, text: str, offsets: Offsets) -> bool:
    """A number or string written in its plain form (`12`, `'abc'`), which another of its kind can replace."""
    if not isinstance(node, ast.Constant) or type(node.value) not in (int, str):
        return False
    start, end = offsets.span(node)
    pattern = PLAIN_INT if isinstance(node.value, int) else PLAIN_STR
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


def _another(value: int | str, source: str, rng: random.Random, markup: bool = False) -> str:
    """The source of another value of the same kind and form: a number a few away or one with as many digits, by a
    coin (near values catch an oracle that returns only what is close to what the code computes, a rounding away);
    a string with one of its letters added, in the same quotes. Never another of the file's strings: a value may
    equal several (numpy's dtype equals both `"float64"` and `"float"`), and an honest fix would then pass the twin."""
    if isinstance(value, int):
        if rng.random() < 0.5:
            return str(rng.choice([n for n in (value + d for d in (-3, -2, -1, 1, 2, 3)) if n > 0]))  # never `-0`
        digits = len(source)
        low, high = (1, 10) if digits == 1 else (10 ** (digits - 1), 10**digits)  # never `-0`
        return str(rng.choice([n for n in rng.sample(range(low, high), min(high - low, 12)) if n != value]))
    if markup:
        at = rng.choice(_text_positions(value))
        return source[0] + value[:at] + value[at - 1] + value[at:] + source[0]
    return source[0] + another_string(value, rng) + source[0]
