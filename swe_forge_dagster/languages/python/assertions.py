"""How a twin changes one of a test's assertions (`languages.python.twins`): a plain `assert`, or a unittest
assertion method (`self.assertEqual(...)`: Django's tests, and unittest classes under pytest), at one of the sites
`languages.python.assertion_sites` finds (a statement of the test's body, of a loop of it over literal data, or of a
helper it calls), each of which runs whenever the test passes. A value is changed wherever one can be (the sites in
that order, the test's body last first); else the last assertion of the test's own code that can be is negated.

- Equality with a literal (`a == <literal>`, `self.assertEqual(a, <literal>)` and the other strict-equality methods:
  a number or a string, or a list, tuple, set or dict of them with no repeated key, on one side; or a local name
  assigned such a literal once and read nowhere else, and once in the assertion; or a name the test's data gives,
  its parametrize values, its loop's items or its call's argument), unless the other side is a matcher
  whose `==` holds for a range (`pytest.approx`, `mock.ANY`): the value becomes another real value the test or its
  file expects of the same form, compared with the same kind of thing (`twin_values.swapped`, `value_peers`), else
  one number or string of the literal becomes another of its kind (a number a few away or with as many digits, by a
  coin; the string with a letter or digit replaced by another of its kind: `twin_values.another`). A value-oracle then
  returns the twin's value and passes it; an honest fix returns the original value and fails it.
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
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from swe_forge_dagster.languages.python.assertion_sites import Context, Site, Source, literal, sites
from swe_forge_dagster.languages.python.equality import STRICT_EQUAL
from swe_forge_dagster.languages.python.raises import RAISES_TWIN, raised_type
from swe_forge_dagster.languages.python.twin_values import (
    MARKUP_EQUAL,
    Edit,
    Offsets,
    another,
    changeable,
    restated,
    swapped,
)
from swe_forge_dagster.languages.python.value_peers import (
    compared_alike,
    expected_elsewhere,
    leaf_peers,
    site_subject,
    swapped_own,
    whole_peers,
)

ELSEWHERE = "another the file expects"
"""Where a test's own literal takes its value from when `swapped` finds one of its form (`value_peers`)."""
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


def asserts(statement: ast.stmt) -> bool:
    """A statement a twin can change: `assert`, a unittest assertion method, or a block that must raise."""
    return (
        isinstance(statement, ast.Assert)
        or asserting_method(statement) is not None
        or raised_type(statement) is not None
    )


@dataclass(frozen=True)
class Change:
    """How a twin changes a test: its edits, how it reads (for a verdict's reason), and whether pytest may name the
    twin's instances otherwise (`renames`: a parametrized test's values changed, which its instances are named by)."""

    edits: tuple[Edit, ...]
    how: str
    renames: bool = False
    negated: bool = False
    """The twin asserts the opposite of what the test asserts: a value another test's twin restates into its data
    would make it hold again (`twin_facts`)."""


def edit(
    node: ast.FunctionDef, scope: str, context: Context, text: str, offsets: Offsets, rng: random.Random
) -> Change:
    """The twin of test `node` (of class `scope`, or ""): a value it expects changed at one of its assertion sites
    (`languages.python.assertion_sites`: the test's body last first, its loops, its helpers), since only a changed
    value catches an oracle that returns what its caller compares (parametrize values, which pytest names the
    instances by, only when `context.rename`); else its last own assertion negated. Whenever the test passes, that
    assertion ran and held, so the twin fails there with any honest code. ValueError when none can be changed."""
    found = sites(node, scope, context, asserts)
    for site in found:
        made = _value_change(site, text, offsets, rng, context)
        if made is not None:
            return made
    for site in found:
        if site.own and (negated := _negation(site.statement, text, offsets)) is not None:
            return Change((negated[0],), negated[1], negated=True)
    raise ValueError(f"{node.name}: no assertion a twin can change")


def _value_change(site: Site, text: str, offsets: Offsets, rng: random.Random, context: Context) -> Change | None:
    """Another value where the assertion at `site` reads the one it expects: the exception a raise check expects,
    a literal of the assertion (or one a local name holds; a list or tuple of whole numbers: another the file
    expects, `value_peers`), or the test's data a name is read from (its parametrize values only when its
    instances may be renamed, `context.rename`)."""
    raised = raised_type(site.statement)
    if raised is not None:  # a block that must raise: it expects an unrelated exception (`languages.python.raises`)
        start, end = offsets.span(raised)
        how = f"expects {RAISES_TWIN[raised.id]} where the test expects {raised.id}"
        return Change(((start, end, RAISES_TWIN[raised.id]),), how) if site.own else None
    literals, source, markup = _expected_values(site)
    subject = site_subject(site.statements, site.statement)  # what the expected value is compared with
    # markup is compared parsed, where another document of the file may equal it (its attributes in another order)
    if source is None and len(literals) == 1 and swapped_own(literals[0]) and not markup:
        elsewhere = expected_elsewhere(literals[0], subject, context.module, text, offsets)
        source = Source(literals, False, ELSEWHERE, others=elsewhere) if elsewhere else None
    elif source is not None and not source.every and all(map(swapped_own, literals)) and not markup:
        elsewhere = tuple(o for v in literals for o in expected_elsewhere(v, subject, context.module, text, offsets))
        source = replace(source, others=(*source.others, *elsewhere))
    every = source is not None and source.every
    if source is not None and not markup and (swaps := swapped(source, text, offsets, rng)):
        edits, how = swaps, f"expects another of its own values ({source.where})"
    else:
        source = None if source is not None and source.where == ELSEWHERE else source  # it stood in for `swapped`
        choices = [[(v, c) for c in ast.walk(v) if changeable(c, text, offsets, markup)] for v in literals]
        if not all(choices) if every else not any(choices):
            return None
        roots = (*literals, *compared_alike(subject, context.module))
        wholes = {id(v): w for v in literals if not markup and (w := whole_peers(v, roots, text, offsets))}
        if wholes and (len(wholes) == len(literals) or not every):  # a record's fields change together
            chosen = literals if every else [rng.choice([v for v in literals if id(v) in wholes])]
            edits = tuple(edit for v in chosen for edit in rng.choice(wholes[id(v)]))
        else:
            edits = _leaf_edits(choices, roots, every, markup, text, offsets, rng)
        how = "expects another value" + (f" ({source.where})" if source is not None else "")
    ids, notes = restated(edits, source, text, offsets) if source is not None else ((), ())
    renames = every and source is not None and (source.named or bool(ids))
    return None if renames and not context.rename else Change((*edits, *ids, *notes), how, renames)


def _leaf_edits(
    choices: list[list[tuple[ast.expr, ast.Constant]]],
    roots: tuple[ast.expr, ...],
    every: bool,
    markup: bool,
    text: str,
    offsets: Offsets,
    rng: random.Random,
) -> tuple[Edit, ...]:
    """One number or string of each literal (every set's, or of one) changed: to the one at its place in another
    literal of `roots` (`value_peers.leaf_peers`), a leaf that has one drawn first; else to another of its kind
    (`twin_values.another`; always in markup, where a letter goes between tags)."""
    peers = {}
    for root, leaf in (pair for found in choices for pair in found):
        if not markup and root is not leaf and (real := leaf_peers(root, leaf, roots, text, offsets)):
            peers[id(leaf)] = real

    def pick(found: list[tuple[ast.expr, ast.Constant]]) -> tuple[ast.expr, ast.Constant]:
        return rng.choice([pair for pair in found if id(pair[1]) in peers] or found)

    picked = [pick(found) for found in choices] if every else [pick([p for found in choices for p in found])]
    edits = []
    for _, leaf in picked:
        start, end = offsets.span(leaf)
        new = rng.choice(peers[id(leaf)]) if id(leaf) in peers else another(leaf.value, text[start:end], rng, markup)
        edits.append((start, end, new))
    return tuple(edits)


def _expected_values(site: Site) -> tuple[tuple[ast.expr, ...], Source | None, bool]:
    """The literal values the assertion at `site` expects (its literal side, the literal a local name holds, or the
    test's data a name is read from: then its `Source`), and whether they are markup (`MARKUP_EQUAL`)."""
    statement, before = site.statement, site.statements[: site.index]
    call = None if isinstance(statement, ast.Assert) else asserting_method(statement)
    method = call.func.attr if call is not None else None  # type: ignore[attr-defined]
    if call is not None:
        sides = call.args[:2] if method in STRICT_EQUAL and len(call.args) >= 2 else []
    elif isinstance(statement, ast.Assert):
        sides = _compared(statement.test)
    else:
        return (), None, False  # a block that must raise
    markup = method in MARKUP_EQUAL
    expected = _expected_side(before, sides, statement) if site.own else None
    if expected is not None:
        return (expected,), None, markup
    if len(sides) == 2 and not any(_loose(side) for side in sides):
        found = (site.source(side.id) for side in sides if isinstance(side, ast.Name))
        source = next((s for s in found if s is not None), None)
        if source is not None:
            return source.literals, source, markup
    return (), None, markup


def expected_literals(node: ast.FunctionDef, scope: str, context: Context) -> list[tuple[ast.expr, Source | None]]:
    """Every literal value test `node` expects at one of its assertion sites, with the data it is read from (None:
    the assertion's own): what `twin_facts` changes when another test's twin changed the same fact."""
    return [
        (value, source)
        for site in sites(node, scope, context, asserts)
        for values, source, _ in [_expected_values(site)]
        for value in values
    ]


def _negation(statement: ast.stmt, text: str, offsets: Offsets) -> tuple[Edit, str] | None:
    """The assertion made to hold exactly when it did not: a unittest method's opposite, `assertEqual` asserted
    false, an `assert` negated; None for a method with no opposite."""
    call = asserting_method(statement)
    if call is not None:
        method = call.func.attr  # type: ignore[attr-defined]
        if method in EQUALITY:
            return _asserted_false(call, method, text, offsets)
        if method not in OPPOSITE:
            return None
        _, end = offsets.span(call.func)
        return (end - len(method), end, OPPOSITE[method]), f"calls {OPPOSITE[method]} instead of {method}"
    if isinstance(statement, ast.Assert):
        return _negated(statement.test, text, offsets), "is negated"
    return None


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
    literals = [side for side in sides if literal(side)]
    if len(literals) == 1:
        return literals[0]
    if literals:
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
    if len(assigns) != 1 or not literal(assigns[0].value):
        return None
    uses = [n for statement in before for n in ast.walk(statement) if isinstance(n, ast.Name) and n.id == name]
    scope = [*before, assertion]
    binds = [n for part in scope for n in ast.walk(part) if isinstance(n, (ast.Global, ast.Nonlocal, ast.NamedExpr))]
    read = [n for n in ast.walk(assertion) if isinstance(n, ast.Name) and n.id == name]
    return assigns[0].value if len(uses) == 1 and len(read) == 1 and not binds else None
