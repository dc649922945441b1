"""Where a twin finds another real value for the one it changes: the literals its test file compares for equality.

Why: a value changed by one letter or number breaks whatever law every real value of the file keeps (a total the
sum of its parts, a run of pages, an ISBN's check digit, the weekday a date names), and leaves it one letter away from
the value it was; red-team forgers (a19 to a21, a23, a24) told the twin's run by that. Another value the file
expects, of the same form (`twin_values.swappable`), keeps every such law: only its input no longer matches it.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Sequence

from swe_forge_dagster.languages.python.assertion_sites import literal
from swe_forge_dagster.languages.python.equality import equality_sides
from swe_forge_dagster.languages.python.twin_values import Offsets, same_items, spelled, swappable


def swapped_own(value: ast.expr) -> bool:
    """A test's own literal a twin swaps for another the file expects (`twin_values.swapped`): a list or tuple, or a
    string. A lone number keeps its coin (a few away, or as many digits): near values catch an oracle that returns
    only what is close to what the code computes."""
    return isinstance(value, (ast.List, ast.Tuple)) or (isinstance(value, ast.Constant) and type(value.value) is str)


def expected_elsewhere(
    value: ast.expr, subject: Subject, module: ast.Module, text: str, offsets: Offsets
) -> tuple[ast.expr, ...]:
    """The other literals of `value`'s form (`twin_values.swappable`) that the module's assertions compare with
    `subject` (`compared_alike`): a twin that expects one of them in place of `value` expects a real value, which
    keeps every law the file's values keep (a total the sum of its parts, a run of pages, a check digit), where a
    number or letter changed alone breaks it."""
    form = swappable(value, text, offsets)
    if form is None:
        return ()
    found = []
    for side in compared_alike(subject, module):
        other = swappable(side, text, offsets) if side is not value else None
        if other is not None and other[0] == form[0]:
            found.append(side)
    return tuple(found)


Subject = tuple[str, str]
ANY: Subject = ("any", "")
BUILTINS = frozenset(dir(builtins))
"""What a value is compared with when that cannot be told (a name of the test's data, a name bound twice)."""


def site_subject(statements: Sequence[ast.stmt], assertion: ast.stmt) -> Subject:
    """What the equality `assertion` asserts compares its expected side with (its literal, or a name of the test's
    data: the other side), resolving a local name assigned once among `statements` (the block it stands in)."""
    sides = _asserted(assertion)
    if sides is None:
        return ANY
    plain = [side for side in sides if not isinstance(side, ast.Name) and not literal(side)]
    partner = plain[0] if len(plain) == 1 else sides[0] if literal(sides[1]) else sides[1]
    return _subject(partner, ast.Module(body=list(statements), type_ignores=[]))


def compared_alike(subject: Subject, module: ast.Module) -> list[ast.expr]:
    """The sides of the equalities the module asserts (`assert a == b`, `self.assertEqual(a, b)`: never an `if`'s
    test, red team a39) that are compared with `subject`: the same function's or method's result, the same
    attribute, the same key, the same place of an unpacked result (a local name assigned once is what it holds).
    None when `subject` is `ANY`: a value compared with what cannot be told takes no other. A string the file
    compares with `url.scheme` is no value for `url.path` (a33), nor a given name for a family name (a38)."""
    if subject == ANY:
        return []
    return [side for side, theirs in _subjects(module).items() if theirs == subject]


def _subjects(module: ast.Module) -> dict[ast.expr, Subject]:
    """Each side of each equality the module asserts, with what it is compared with; read once per module (a twin
    of each test of a large file asks again)."""
    cached = getattr(module, "_swe_forge_subjects", None)
    if cached is None:
        cached = _read_subjects(module)
        module._swe_forge_subjects = cached  # type: ignore[attr-defined]
    return cached


def _read_subjects(module: ast.Module) -> dict[ast.expr, Subject]:
    found: dict[ast.expr, Subject] = {}
    scopes = [n for n in ast.walk(module) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for scope in (*scopes, module):
        for node in ast.walk(scope):
            sides = _asserted(node)
            if sides is None or sides[0] in found:
                continue
            for side, partner in ((sides[0], sides[1]), (sides[1], sides[0])):
                found[side] = _subject(partner, scope)
    return found


def _asserted(node: ast.AST) -> list[ast.expr] | None:
    """The two sides of an equality `node` asserts (an `assert`, or a strict-equality method's call)."""
    if isinstance(node, ast.Assert):
        return equality_sides(node.test)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return equality_sides(node.value)
    return None


def _subject(partner: ast.expr, scope: ast.AST) -> Subject:
    """What `partner` is, read as a kind (`_kind`); a local name, what it holds (`_held`)."""
    return _held(partner.id, scope) if isinstance(partner, ast.Name) else _kind(partner)


def _kind(node: ast.expr) -> Subject:
    """A call by its function's or method's name (`parse(x).given()` is `.given`: its receiver and inputs are not
    what it is; red team a42), an attribute, a key; `ANY` otherwise."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):  # `str(x)`, `len(x)`: what they are given is what they are
            return ANY if func.id in BUILTINS else ("call", func.id)
        return "call", f".{func.attr}" if isinstance(func, ast.Attribute) else ast.dump(func)
    if isinstance(node, ast.Attribute):
        return "attribute", node.attr
    if isinstance(node, ast.Subscript):
        return "key", ast.dump(node.slice)
    return ANY


def _held(name: str, scope: ast.AST) -> Subject:
    """What a local name assigned once in `scope` holds: the kind of its value, or its place in an unpacked one
    (`first, last = split(x)`: `split`'s second)."""
    held: list[Subject] = []
    for node in ast.walk(scope):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == name:
            held.append(_kind(node.value))
        elif isinstance(target, (ast.Tuple, ast.List)):
            names = [getattr(element, "id", None) for element in target.elts]
            if name in names:
                kind = _kind(node.value)
                held.append(ANY if kind == ANY else (f"{kind[0]}, unpacked", f"{kind[1]}[{names.index(name)}]"))
    return held[0] if len(held) == 1 else ANY


def whole_peers(
    root: ast.expr, others: Sequence[ast.expr], text: str, offsets: Offsets
) -> list[tuple[tuple[int, int, str], ...]]:
    """Other real values for the dict, list or tuple literal `root` as a whole: for each literal of `others` with
    its structure (the same keys, the same lengths, every number or string of the same form, anything else equal),
    the edits that make `root` read as it. A record's fields then change together: one field swapped alone broke
    what the fields say of each other (initials of the names: red team a41)."""
    if not isinstance(root, (ast.Dict, ast.List, ast.Tuple)):
        return []
    leaves = [(leaf, path) for leaf in ast.walk(root) if isinstance(leaf, ast.Constant) and (path := _path(root, leaf))]
    found = []
    for other in others:
        if other is root:
            continue
        edits = []
        for leaf, path in leaves:
            node = _follow(other, path)
            if not isinstance(node, ast.Constant):
                break
            same = swappable(leaf, text, offsets)
            if node.value == leaf.value and type(node.value) is type(leaf.value):
                continue
            theirs = swappable(node, text, offsets)
            if same is None or theirs is None or same[0] != theirs[0]:
                break
            edits.append((*offsets.span(leaf), spelled(node, text, offsets)))
        else:
            if edits and _size(other) == _size(root) and not _reordered(root, other):
                found.append(tuple(edits))
    return found


def _reordered(one: ast.AST, other: ast.AST) -> bool:
    """Two lists or tuples of the same items in another order (`assertCountEqual` holds for both: red team a37)."""
    if not isinstance(one, (ast.List, ast.Tuple)) or not isinstance(other, (ast.List, ast.Tuple)):
        return False
    try:
        return same_items(tuple(map(ast.literal_eval, one.elts)), tuple(map(ast.literal_eval, other.elts)))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def _size(node: ast.AST) -> int:
    return sum(1 for _ in ast.walk(node))


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
    """The steps from `node` to `leaf`: ("item", (form, index, length)) in a list or tuple, ("key", (type, key)) in a
    dict; None when `leaf` is not in `node` (or sits under a key that is no constant)."""
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
