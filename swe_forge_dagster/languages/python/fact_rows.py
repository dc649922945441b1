"""What a fact of a test file is, for restating one a twin changed (`languages.python.twin_facts`).

A fact is a value in its row: the other values of the tuple or list it is an item of, the other arguments of the call
it is an argument of (keywords too; a `pytest.param`'s positional ones only), the arguments of the call it is compared
with (`f(2.5) == 3`, `assertEqual(f(2.5), 3)`), the key it is the value of, or the literal sequence an aligned list is
compared over (`[f(v) for v in (0.5, 2.5)] == [1, 3]`); and its place in that row. Numbers are compared as numbers
(`3` and `3.0` state one fact): a forger that compared them so told a twin that changed one spelling only.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from swe_forge_dagster.languages.python.equality import STRICT_EQUAL
from swe_forge_dagster.languages.python.twin_values import Edit, Offsets

Value = tuple[str, str]
Fact = tuple[int, tuple[Value, ...], Value]
"""(the value's place in its row, the row's other values, the value), each value as (its kind, its canonical form)."""


@dataclass(frozen=True)
class Changed:
    """A fact a twin changed: its new value as written (a string without its quotes), and how free text would state
    its inputs and its old value."""

    fact: Fact
    new: str
    inputs: tuple[str, ...]
    old: str
    new_said: str


class Rows:
    """The facts of a module's literals (module docstring)."""

    def __init__(self, tree: ast.Module, text: str, offsets: Offsets) -> None:
        self.tree = tree
        self.parent = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        self.constants = {offsets.span(n): n for n in ast.walk(tree) if isinstance(n, ast.Constant)}
        self.text, self.offsets = text, offsets

    def fact(self, constant: ast.Constant) -> Fact | None:
        found = self._row_of(constant)
        return found[0] if found is not None else None

    def _row_of(self, constant: ast.Constant) -> tuple[Fact, list[ast.expr], ast.AST] | None:
        element: ast.AST = constant
        parent = self.parent.get(element)
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub):
            element, parent = parent, self.parent.get(parent)
        if isinstance(parent, ast.keyword) and parent.arg is not None:  # `f(x, expected=3)`: the call's row
            parent = self.parent.get(parent)
        aligned = _aligned(element, parent, self.parent.get(parent)) if parent is not None else None
        row, at = aligned if aligned is not None else _row(element, parent)
        if row is None:
            return None
        others = tuple(_value(n) for k, n in enumerate(row) if k != at)
        value = _value(element)
        if value is None or not others or None in others:
            return None
        return (at, others, value), row, element  # type: ignore[return-value]

    def changed(self, edits: Iterable[Edit]) -> list[Changed]:
        """The facts the edits change."""
        found = []
        for start, end, new in edits:
            constant = self.constants.get((start, end))
            if constant is None or (row := self._row_of(constant)) is None:
                continue
            fact, cells, element = row
            inputs = tuple(_said(cell) for cell in cells if cell is not element)
            sign = "-" if element is not constant else ""  # `-3` made `-5`: free text says `-5`
            bare = _bare(new, constant)
            found.append(Changed(fact, bare, inputs, _said(element), sign + bare))
        return found


def _row(element: ast.AST, parent: ast.AST | None) -> tuple[list[ast.expr] | None, int]:
    """The row a value is stated in (module docstring), and its place there."""
    if isinstance(parent, (ast.Tuple, ast.List)):
        return _placed(parent.elts, element)
    if isinstance(parent, ast.Compare) and len(parent.ops) == 1 and isinstance(parent.ops[0], ast.Eq):
        return _compared_with([parent.left, parent.comparators[0]], element)
    if isinstance(parent, ast.Call):
        method = parent.func.attr if isinstance(parent.func, ast.Attribute) else None
        if method in STRICT_EQUAL and len(parent.args) >= 2 and any(a is element for a in parent.args[:2]):
            return _compared_with(parent.args[:2], element)
        return _placed(_arguments(parent), element)
    if isinstance(parent, ast.Dict):
        at = next((k for k, v in enumerate(parent.values) if v is element), None)
        key = parent.keys[at] if at is not None else None
        return ([key, element], 1) if key is not None else (None, 0)  # type: ignore[list-item]
    return None, 0


def _aligned(element: ast.AST, sequence: ast.AST, compared: ast.AST | None) -> tuple[list[ast.expr], int] | None:
    """`[f(v) for v in (0.5, 2.5)] == [1, 3]`, `list(map(f, [0.5, 2.5])) == [1, 3]`: an item of a literal sequence
    compared with an expression over one literal sequence of its length states a fact of the item at its place there
    (the row (2.5, 3)); None otherwise."""
    if not isinstance(sequence, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in sequence.elts):
        return None
    if isinstance(compared, ast.Compare) and len(compared.ops) == 1 and isinstance(compared.ops[0], ast.Eq):
        sides = [compared.left, compared.comparators[0]]
    elif (
        isinstance(compared, ast.Call)
        and isinstance(compared.func, ast.Attribute)
        and compared.func.attr in STRICT_EQUAL
    ):
        sides = list(compared.args[:2])
    else:
        return None
    if len(sides) != 2 or not any(side is sequence for side in sides):
        return None
    other = sides[1] if sides[0] is sequence else sides[0]
    if isinstance(other, (ast.List, ast.Tuple)):
        return None  # two literals compared: no computation between them
    size = len(sequence.elts)
    inputs = [n for n in ast.walk(other) if isinstance(n, (ast.List, ast.Tuple)) and len(n.elts) == size]
    if len(inputs) != 1 or any(isinstance(e, ast.Starred) for e in inputs[0].elts):
        return None
    at = next(k for k, item in enumerate(sequence.elts) if item is element)
    return [inputs[0].elts[at], sequence.elts[at]], 1


def _placed(row: Sequence[ast.expr], element: ast.AST) -> tuple[list[ast.expr] | None, int]:
    at = next((k for k, item in enumerate(row) if item is element), None)
    if at is None or any(isinstance(item, ast.Starred) for item in row):
        return None, 0
    return list(row), at


def _compared_with(sides: Sequence[ast.expr], element: ast.AST) -> tuple[list[ast.expr] | None, int]:
    """`f(a, b) == value`, `f(a, x=b) == value`: the row (a, b, value)."""
    other = sides[1] if sides[0] is element else sides[0]
    if not isinstance(other, ast.Call) or any(isinstance(a, ast.Starred) for a in other.args):
        return None, 0
    arguments = _arguments(other)
    return ([*arguments, element], len(arguments)) if arguments else (None, 0)  # type: ignore[list-item]


def _arguments(call: ast.Call) -> list[ast.expr]:
    """A call's values in order, its keywords' after its positional ones (`f(2.5)` and `f(value=2.5)` state one
    input); none for `**kwargs`; a `pytest.param`'s positional ones only (its `id` and `marks` are no input)."""
    if any(k.arg is None for k in call.keywords):
        return []
    param = isinstance(call.func, ast.Attribute) and call.func.attr == "param"
    return [*call.args, *([] if param else [k.value for k in call.keywords])]


def _value(node: ast.AST) -> Value | None:
    try:
        value = ast.literal_eval(node)  # type: ignore[arg-type]
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    try:
        if type(value) in (int, float):
            return "number", str(Fraction(value))
        return type(value).__name__, repr(value)
    except (ValueError, OverflowError):  # nan, inf; an int too long to print
        return None


def _said(node: ast.AST) -> str:
    """How free text states a literal: a string's text, a number as Python writes it."""
    try:
        value = ast.literal_eval(node)  # type: ignore[arg-type]
        return value if isinstance(value, str) else repr(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return ""


def _bare(new: str, constant: ast.Constant) -> str:
    return new[1:-1] if isinstance(constant.value, str) else new
