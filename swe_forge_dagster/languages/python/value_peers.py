"""Where a twin finds another real value for the one it changes: the literals its test file compares for equality.

Why: a value changed by one letter or number breaks whatever law every real value of the file keeps (a total the
sum of its parts, a run of pages, an ISBN's check digit, the weekday a date names), and leaves it one letter away from
the value it was; red-team forgers (a19 to a21, a23, a24) told the twin's run by that. Another value the file
expects, of the same form (`twin_values.swappable`), keeps every such law: only its input no longer matches it.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from swe_forge_dagster.languages.python.equality import equality_sides
from swe_forge_dagster.languages.python.twin_values import Offsets, spelled, swappable


def swapped_own(value: ast.expr) -> bool:
    """A test's own literal a twin swaps for another the file expects (`twin_values.swapped`): a list or tuple, or a
    string. A lone number keeps its coin (a few away, or as many digits): near values catch an oracle that returns
    only what is close to what the code computes."""
    return isinstance(value, (ast.List, ast.Tuple)) or (isinstance(value, ast.Constant) and type(value.value) is str)


def expected_elsewhere(value: ast.expr, module: ast.Module, text: str, offsets: Offsets) -> tuple[ast.expr, ...]:
    """The other literals of `value`'s form (`twin_values.swappable`) that the module compares with what `value` is
    compared with (`compared_alike`): a twin that expects one of them in place of `value` expects a real value, which
    keeps every law the file's values keep (a total the sum of its parts, a run of pages, a check digit), where a
    number or letter changed alone breaks it."""
    form = swappable(value, text, offsets)
    if form is None:
        return ()
    found = []
    for side in compared_alike(value, module):
        other = swappable(side, text, offsets)
        if other is not None and other[0] == form[0]:
            found.append(side)
    return tuple(found)


Subject = tuple[str, str]
ANY: Subject = ("any", "")


def compared_alike(value: ast.expr, module: ast.Module) -> list[ast.expr]:
    """The sides of the module's equalities (`equality.equality_sides`) but `value`, compared with the same kind of
    thing as `value` is: the same function's result, the same attribute, the same key (a local name assigned once
    is what it holds); a value compared with a name of the test's data, or not compared itself, with anything. A
    string the file compares with `url.scheme` is no value for `url.path`: one string said of two fields told a
    red-team forger the twin (a33)."""
    table = _subjects(module)
    mine = table.get(value, ANY)
    return [side for side, theirs in table.items() if side is not value and (ANY in (mine, theirs) or theirs == mine)]


def _subjects(module: ast.Module) -> dict[ast.expr, Subject]:
    """Each side of each equality the module asserts, with what it is compared with."""
    found: dict[ast.expr, Subject] = {}
    scopes = [n for n in ast.walk(module) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for scope in (*scopes, module):
        for node in ast.walk(scope):
            sides = equality_sides(node)
            if sides is None or len(sides) != 2 or sides[0] in found:
                continue
            for side, partner in ((sides[0], sides[1]), (sides[1], sides[0])):
                found[side] = _subject(partner, scope)
    return found


def _subject(partner: ast.expr, scope: ast.AST) -> Subject:
    if isinstance(partner, ast.Name):
        held = [
            n.value
            for n in ast.walk(scope)
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and getattr(n.targets[0], "id", None) == partner.id
        ]
        partner = held[0] if len(held) == 1 else partner
    if isinstance(partner, ast.Call):
        return "call", ast.dump(partner.func)
    if isinstance(partner, ast.Attribute):
        return "attribute", partner.attr
    if isinstance(partner, ast.Subscript):
        return "key", ast.dump(partner.slice)
    return ANY


def leaf_peers(
    root: ast.expr, leaf: ast.Constant, others: Sequence[ast.expr], text: str, offsets: Offsets
) -> list[str]:
    """The spellings of other real values for `leaf`, a number or string inside the literal `root`: the ones at the
    same place (the same dict keys, the same positions in lists or tuples of the same length) in other literals of
    `others`, with the same form and another value (none: an empty list). A dict twin then expects
    `{"name": "Cyd Moss", ...}` where the test expects `{"name": "Ann Lee", ...}`: a name the file holds, not one a
    letter away from the input's (red team a24)."""
    path, form = _path(root, leaf), swappable(leaf, text, offsets)
    if path is None or form is None:
        return []
    found = set()
    for other in others:
        node = _follow(other, path)
        if not isinstance(node, ast.Constant) or node is leaf or node.value == leaf.value:
            continue
        if (same := swappable(node, text, offsets)) is not None and same[0] == form[0]:
            found.add(spelled(node, text, offsets))
    return sorted(found)


Step = tuple[str, object]


def _path(node: ast.AST, leaf: ast.AST) -> list[Step] | None:
    """The steps from `node` to `leaf`: ("item", index, length) in a list or tuple, ("key", key) in a dict."""
    if node is leaf:
        return []
    if isinstance(node, (ast.List, ast.Tuple)):
        for index, item in enumerate(node.elts):
            if (rest := _path(item, leaf)) is not None:
                return [("item", (type(node).__name__, index, len(node.elts))), *rest]
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and (rest := _path(value, leaf)) is not None:
                return [("key", (type(key.value).__name__, key.value)), *rest]
    return None


def _follow(node: ast.AST, path: Sequence[Step]) -> ast.AST | None:
    """Where `path` leads from `node`, when `node` has that structure (the same list or tuple lengths, the key once)."""
    for kind, where in path:
        if kind == "item":
            form, index, length = where  # type: ignore[misc]
            if type(node).__name__ != form or len(node.elts) != length:  # type: ignore[attr-defined]
                return None
            node = node.elts[index]  # type: ignore[attr-defined]
        else:
            if not isinstance(node, ast.Dict):
                return None
            values = [
                value
                for key, value in zip(node.keys, node.values, strict=True)
                if isinstance(key, ast.Constant) and (type(key.value).__name__, key.value) == where
            ]
            if len(values) != 1:
                return None
            node = values[0]
    return node
