"""Where a test's assertions run whenever it passes, and where the values they compare come from: what a twin
(`languages.python.twins`) changes.

Why: a twin that negates an assertion (`assert not (f(x) == expected)`) fails with honest code, and so does an
implementation oracle that reads the value `expected` holds in its caller's frame and returns it: the oracle passes
the original and fails its twin exactly as an honest fix does. Only a twin whose expected *value* changed tells them
apart (the oracle returns the twin's value and passes it). A red-team oracle of 2026-11-30 resolved a task whose
expected values came from `@pytest.mark.parametrize` (its twins were negations), and one whose assertions were all in
loops and helpers (it had no twin). So a twin changes the literal data an expected value is read from, wherever the
test's own code holds it:

- the assertion itself, or a local name assigned a literal once (`languages.python.assertions`);
- the argument values of the test's `@pytest.mark.parametrize`, in every parameter set, so that every instance is a
  twin (pytest names an instance by its values, so the twin's instances may be named otherwise: they are paired with
  the originals by their order, `Change.renames`);
- one item of a loop over literal data (`for text, expected in [("a", 1), ...]:`);
- the argument a test passes to a helper of its module that compares that parameter (`check("a", 1)`), at the call.

A site is a block whose statements run whenever the test passes, so that its assertion ran and held: the test's body;
the body of a loop of the test's body over a non-empty literal, with no `break` or `continue`; the body of a helper (a
function of the module, or a method of the test's class, bound once, undecorated, with no `return` or `yield`) called
as a statement of the test's body. The helper's own statements are never changed (other tests call it too), only the
value the test passes it. A name's data is changed only when the name is read once, in the assertion, and nowhere
before it on the way there: changing it then changes what the assertion expects and nothing the test did before.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from swe_forge_dagster.languages.python.fixtures import NONE, Fixtures


@dataclass(frozen=True)
class Source:
    """The literal values a name takes from the test's data (`literals`), and whether a twin changes each of them
    (`every`: a parametrized test's instances, each a test of its own) or one (a loop's items, a call's argument)."""

    literals: tuple[ast.expr, ...]
    every: bool
    where: str
    others: tuple[ast.expr, ...] = ()
    """Values of the same data that are not the name's here (the same parameter in the test's other calls of the
    helper): a twin may give the name one of them, a value the test itself holds."""
    ids: tuple[ast.expr | None, ...] = ()
    """Each parametrize set's explicit id (`pytest.param(..., id="...")`, `ids=[...]`), when it has one."""
    named: bool = False
    """pytest names the instances by these values (a set with no explicit id)."""


@dataclass(frozen=True)
class Context:
    """What a test's twin may look at beyond the test: its module, the module's functions and methods bound once
    (`functions`, by (class or "", name)), the fixtures it and its conftests define (`languages.python.fixtures`;
    None: fixtures it cannot see may take any name), and whether a twin may rename a test's instances (`rename`)."""

    module: ast.Module
    functions: Mapping[tuple[str, str], ast.FunctionDef]
    fixtures: Fixtures | None = NONE
    rename: bool = True


@dataclass(frozen=True)
class Site:
    """An assertion, the `index`th statement of a block (`statements`) that runs whenever the test passes. `own`: the
    block is the test's own code, which a twin may change in place (not a helper's). `earlier`: what runs before the
    block on the way there. `bindings`: the names whose values come from literal data."""

    statements: tuple[ast.stmt, ...]
    index: int
    own: bool
    earlier: tuple[ast.AST, ...] = ()
    bindings: Mapping[str, Source] = field(default_factory=dict)

    @property
    def statement(self) -> ast.stmt:
        return self.statements[self.index]

    def source(self, name: str) -> Source | None:
        """The data `name` takes, when the assertion reads it once and nothing before it on the way reads or binds
        it (changing the data then changes what the assertion expects, and nothing else the test did)."""
        bound = self.bindings.get(name)
        if bound is None:
            return None
        before = (*self.earlier, *self.statements[: self.index])
        if any(_names(part, name) for part in before):
            return None
        uses = [use for part in _compared_parts(self.statement) for use in _names(part, name)]
        rebinds = any(
            isinstance(n, (ast.Global, ast.Nonlocal, ast.NamedExpr)) or (isinstance(n, ast.arg) and n.arg == name)
            for part in (*before, self.statement)
            for n in ast.walk(part)
        )
        return bound if len(uses) == 1 and isinstance(uses[0].ctx, ast.Load) and not rebinds else None


def _compared_parts(statement: ast.stmt) -> list[ast.AST]:
    """What an assertion compares, not its message (`assert a == b, f"{b}"`, `self.assertEqual(a, b, msg)`): a message
    is read only once the assertion failed."""
    if isinstance(statement, ast.Assert):
        return [statement.test]
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        return list(statement.value.args[:2])
    return [statement]


def _names(node: ast.AST, name: str) -> list[ast.Name]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name]


def sites(node: ast.FunctionDef, scope: str, context: Context, asserts: Callable[[ast.stmt], bool]) -> list[Site]:
    """The test's assertion sites (statements `asserts` says a twin can change): its body's (last first), its loops'
    (last first), then its helpers'; none for a test with a `return` or `yield` of its own (it can pass without
    reaching them)."""
    if not straight(node):
        return []
    parameters = _parametrized(node, context)
    body = tuple(node.body)
    found = [Site(body, i, True, (), parameters) for i in reversed(range(len(body))) if asserts(body[i])]
    for i in reversed(range(len(body))):
        loop = body[i]
        if isinstance(loop, ast.For) and (items := _loop_items(loop, body[:i], node)) is not None:
            bound = {name: source for name, source in parameters.items() if not _names(loop.target, name)}
            bound |= _loop_bindings(loop.target, items)
            block = tuple(loop.body)
            earlier = (*body[:i], loop.iter)
            found += [Site(block, j, True, earlier, bound) for j in reversed(range(len(block))) if asserts(block[j])]
    calls = [call for statement in body if (call := _helper_call(statement, scope, context.functions, node))[0]]
    for helper, bindings in calls:
        given = {  # the same parameter's values in the test's other calls of the helper
            name: tuple(s.literals[0] for h, b in calls if h is helper and (s := b.get(name)) and s is not source)
            for name, source in bindings.items()
        }
        bindings = {name: replace(source, others=given[name]) for name, source in bindings.items()}
        block = tuple(helper.body)  # type: ignore[union-attr]
        found += [Site(block, j, False, (), bindings) for j in reversed(range(len(block))) if asserts(block[j])]
    return found


def straight(node: ast.FunctionDef) -> bool:
    """No `return` or `yield` of the function's own: its body runs to its end whenever it returns normally."""
    return not any(isinstance(inner, (ast.Return, ast.Yield, ast.YieldFrom)) for inner in own_nodes(node))


def own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's own scope: not those of the functions, lambdas and classes defined in it."""
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield child
            yield from own_nodes(child)


def literal(node: ast.expr) -> bool:
    """A value built of literals only, so that changing one of its numbers or strings changes what it equals."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(literal(element) for element in node.elts)
    if isinstance(node, ast.Set):  # a repeated element: changing one copy may leave the set as it was
        return all(literal(element) for element in node.elts) and _distinct(node.elts)
    if isinstance(node, ast.Dict):  # a repeated key: the value it overwrites is never compared
        keys = [key for key in node.keys if key is not None]
        plain = len(keys) == len(node.keys) and all(map(literal, keys)) and all(map(literal, node.values))
        return plain and _distinct(keys)
    return False


def _distinct(nodes: Sequence[ast.expr]) -> bool:
    """No two equal as values (`1`, `1.0` and `True` are one key), nor as written."""
    dumped = [ast.dump(n) for n in nodes]
    try:
        values = [ast.literal_eval(n) for n in nodes]
        return len(set(values)) == len(values) and len(set(dumped)) == len(dumped)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):  # not hashable, or not a literal
        return len(set(dumped)) == len(dumped)


def _parametrized(node: ast.FunctionDef, context: Context) -> dict[str, Source]:
    """The test's arguments that `@pytest.mark.parametrize` gives literal values, each parameter set's: not when the
    values go to fixtures (`indirect`, or a fixture that takes the same name: a fixture that writes the value where
    the code under test reads it back would carry the twin's value there too), nor for a name two decorators give."""
    fixtures = context.fixtures
    if fixtures is None:
        return {}
    given: Counter[str] = Counter()
    found: dict[str, Source] = {}
    for decorator in node.decorator_list:
        if not (isinstance(decorator, ast.Call) and _called(decorator) == "parametrize"):
            continue
        names = _argnames(decorator.args[0] if decorator.args else _keyword(decorator, "argnames")) or []
        given.update(names)
        data = decorator.args[1] if len(decorator.args) > 1 else _keyword(decorator, "argvalues")
        items = _elements(_module_literal(data, context.module))
        if _keyword(decorator, "indirect") is not None or items is None:
            continue
        rows = [_row(item, len(names)) for item in items]
        ids = _ids(decorator, items)
        for k, name in enumerate(names):
            values = [row[k] for row in rows if row is not None]
            if len(values) == len(rows) and all(map(literal, values)):
                named = any(i is None for i in ids)
                found[name] = Source(tuple(values), True, "in every set of its parametrize data", (), ids, named)
    requested = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs) if a.arg != "self"]
    if any(name not in given and not fixtures.known(name) for name in requested):
        return {}  # a fixture defined where this file cannot see may take a parametrized name
    return {name: source for name, source in found.items() if given[name] == 1 and name not in fixtures.args}


def _called(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _argnames(node: ast.expr | None) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [part.strip() for part in node.value.split(",") if part.strip()]
    if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


def _module_literal(data: ast.expr | None, module: ast.Module) -> ast.expr | None:
    """`data`, or the value a module-level name is assigned once and read once (in this decorator) when it is one."""
    if not isinstance(data, ast.Name):
        return data
    assigns = [
        s.value
        for s in module.body
        if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == data.id for t in s.targets)
    ]
    return assigns[0] if len(assigns) == 1 and len(_names(module, data.id)) == 2 else None


def _elements(data: ast.expr | None) -> list[ast.expr] | None:
    """The items of a non-empty list or tuple written out, or None."""
    if isinstance(data, (ast.List, ast.Tuple)) and data.elts and not any(isinstance(e, ast.Starred) for e in data.elts):
        return list(data.elts)
    return None


def _ids(decorator: ast.Call, items: Sequence[ast.expr]) -> tuple[ast.expr | None, ...]:
    """Each set's explicit id: `pytest.param(..., id="x")`'s, else the `ids=[...]` list's (a string), else None (pytest
    names the set by its values; an `ids=` function may too)."""
    listed = _keyword(decorator, "ids")
    given = listed.elts if isinstance(listed, (ast.List, ast.Tuple)) and len(listed.elts) == len(items) else None
    found: list[ast.expr | None] = []
    for k, item in enumerate(items):
        own = _keyword(item, "id") if isinstance(item, ast.Call) and _called(item) == "param" else None
        chosen = own if own is not None else given[k] if given is not None else None
        plain = isinstance(chosen, ast.Constant) and isinstance(chosen.value, str)
        found.append(chosen if plain else None)
    return tuple(found)


def _row(item: ast.expr, width: int) -> list[ast.expr] | None:
    """A parameter set's values: `(a, b)`, `pytest.param(a, b, id=...)`, or the value itself for one name."""
    if isinstance(item, ast.Call) and _called(item) == "param":
        values = item.args
    elif width == 1:
        values = [item]
    elif isinstance(item, (ast.Tuple, ast.List)):
        values = item.elts
    else:
        return None
    return list(values) if len(values) == width and not any(isinstance(v, ast.Starred) for v in values) else None


def _loop_items(loop: ast.For, before: Sequence[ast.stmt], test: ast.FunctionDef) -> list[ast.expr] | None:
    """The items of a loop over literal data whose body runs to its end on each (no `break` or `continue`): a list or
    tuple written in the loop, or one a local name is assigned once before it and read only there; a dict's (key,
    value) pairs for `.items()` of one (a dict with no `**` in it)."""
    if loop.orelse or any(isinstance(n, (ast.Break, ast.Continue)) for n in own_nodes(loop)):
        return None
    data = loop.iter
    pairs = isinstance(data, ast.Call) and isinstance(data.func, ast.Attribute) and data.func.attr == "items"
    if pairs:  # `for key, value in {...}.items():` its (key, value) pairs, each name bound to its own
        two = isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == 2
        if data.args or data.keywords or not two:  # type: ignore[union-attr]
            return None
        data = data.func.value  # type: ignore[union-attr]
    if isinstance(data, ast.Name):
        assigns = [
            s.value
            for s in before
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and _names(s.targets[0], data.id) == [s.targets[0]]
        ]
        data = assigns[0] if len(assigns) == 1 and len(_names(test, data.id)) == 2 else None
    if pairs:
        keys = data.keys if isinstance(data, ast.Dict) else []
        plain = bool(keys) and all(key is not None for key in keys) and _distinct(keys)  # type: ignore[arg-type]
        return [ast.Tuple([k, v], ast.Load()) for k, v in zip(keys, data.values, strict=True)] if plain else None  # type: ignore[union-attr]
    return _elements(data)


def _loop_bindings(target: ast.expr, items: Sequence[ast.expr]) -> dict[str, Source]:
    """The loop's names whose values are literal in some item (`for name in [...]`, `for a, b in [(..., ...)]`)."""
    where = "in one item of its loop's data"
    if isinstance(target, ast.Name):
        values = tuple(item for item in items if literal(item))
        return {target.id: Source(values, False, where)} if values else {}
    if not (isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts)):
        return {}
    found = {}
    for k, element in enumerate(target.elts):
        values = tuple(
            item.elts[k]
            for item in items
            if isinstance(item, (ast.Tuple, ast.List)) and len(item.elts) == len(target.elts) and literal(item.elts[k])
        )
        if values:
            found[element.id] = Source(values, False, where)  # type: ignore[attr-defined]
    return found


def _helper_call(
    statement: ast.stmt, scope: str, functions: Mapping[tuple[str, str], ast.FunctionDef], test: ast.FunctionDef
) -> tuple[ast.FunctionDef | None, dict[str, Source]]:
    """The helper a statement of the test calls (`check(...)`, `self.check(...)`) and its parameters given literals."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return None, {}
    call, func = statement.value, statement.value.func
    if isinstance(func, ast.Name):
        helper, skip = functions.get(("", func.id)), 0
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" and scope:
        helper, skip = functions.get((scope, func.attr)), 1
    else:
        return None, {}
    if helper is None or helper is test or helper.decorator_list or not straight(helper):
        return None, {}
    if isinstance(func, ast.Name) and func.id in _bound_in(test):
        return None, {}  # the test binds the name itself (an argument, a local def, an import): not the module's
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None, {}
    parameters = [a.arg for a in (*helper.args.posonlyargs, *helper.args.args)][skip:]
    given = dict(zip(parameters, call.args, strict=False))
    given |= {k.arg: k.value for k in call.keywords if k.arg in parameters or k.arg in _keyword_only(helper)}
    where = f"passed to its helper {helper.name}"
    return helper, {name: Source((value,), False, where) for name, value in given.items() if literal(value)}


def _bound_in(test: ast.FunctionDef) -> set[str]:
    """The names a test binds: its arguments, and what it assigns, defines, imports or catches."""
    names = {a.arg for a in ast.walk(test.args) if isinstance(a, ast.arg)}
    for node in ast.walk(test):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not test:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _keyword_only(helper: ast.FunctionDef) -> set[str]:
    return {a.arg for a in helper.args.kwonlyargs}
