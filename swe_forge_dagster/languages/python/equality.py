"""Equality as a test asserts it: `a == b`, or a unittest method that holds only when its two first arguments are
equal as values. What twins change (`assertions`), what a fact's row is (`fact_rows`) and where another real value
is found (`value_peers`) all read an assertion's two sides the same way."""

from __future__ import annotations

import ast

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


def equality_sides(node: ast.AST) -> list[ast.expr] | None:
    """The two sides `node` asserts equal (`a == b`; `self.assertEqual(a, b)` and the other `STRICT_EQUAL` methods),
    or None when it asserts no equality."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
        return [node.left, node.comparators[0]]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STRICT_EQUAL:
        return list(node.args[:2]) if len(node.args) >= 2 else None
    return None
