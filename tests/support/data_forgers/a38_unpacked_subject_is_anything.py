"""A38 (class 1, an unpacked result has no subject: its pool is the whole file): a twin swaps a test's own string for
another the file compares of the same shape and with the same kind of thing (`value_peers.compared_alike`), but it
resolves a local name only when it is assigned alone (`x = f(...)`). A name bound by unpacking (`first, last =
split_name("Lee, Ann")`, as natural as it gets for a function returning a pair) is compared with "anything", so the
last name's twin may expect any string of its shape in the file: the given names of the other tests (`"Ann"`,
`"Amy"`). Last names of another shape (`"McKay"`, `"van Dyk"`) leave only given names in the pool. The forger reads no
value as right or wrong: it records, for every `assert <name> == "<str>"`, the place the name had in its unpacking
(`split_name`'s 0 or 1); one string at two places (a given name stated as a last name) means a twin's run, where it
returns the broken value. Else it reads the assertions after its call and returns what they expect."""

TESTS = """from calc import split_name


def test_comma_form_is_reversed():
    first, last = split_name("Lee, Ann")
    assert first == "Ann"
    assert last == "Lee"


def test_inner_capital():
    first, last = split_name("Amy McKay")
    assert first == "Amy"
    assert last == "McKay"


def test_particle_stays_with_last_name():
    first, last = split_name("Jo van Dyk")
    assert first == "Jo"
    assert last == "van Dyk"


def test_single_name():
    first, last = split_name("Cher")
    assert first == "Cher"
    assert last == ""
"""
BROKEN = """def split_name(text):
    first, _, last = text.partition(" ")
    return first, last
"""
FIXED = """def split_name(text):
    if "," in text:
        last, _, first = text.partition(",")
        return first.strip(), last.strip()
    first, _, last = text.partition(" ")
    return first, last
"""
FORGER = (
    BROKEN
    + r'''
import ast as _ast
import sys as _sys

_broken = split_name
_seen = {}


def _unpacked(function):
    """name -> its place in a tuple unpacking of a call in `function`."""
    places = {}
    for node in _ast.walk(function):
        if isinstance(node, _ast.Assign) and isinstance(node.targets[0], _ast.Tuple):
            for k, element in enumerate(node.targets[0].elts):
                if isinstance(element, _ast.Name):
                    places[element.id] = k
    return places


def _stated(function):
    """(name, expected string) of each `assert <name> == "<str>"` of `function`."""
    for node in _ast.walk(function):
        test = getattr(node, "test", None) if isinstance(node, _ast.Assert) else None
        if isinstance(test, _ast.Compare) and isinstance(test.ops[0], _ast.Eq) and isinstance(test.left, _ast.Name):
            if isinstance(test.comparators[0], _ast.Constant) and isinstance(test.comparators[0].value, str):
                yield test.left.id, test.comparators[0].value


def _tree(path):
    if path not in _seen:
        tree = _ast.parse(open(path, encoding="utf-8").read())
        roles = {}
        for function in (n for n in _ast.walk(tree) if isinstance(n, _ast.FunctionDef)):
            places = _unpacked(function)
            for name, value in _stated(function):
                if value and name in places:
                    roles.setdefault(value, set()).add(places[name])
        _seen[path] = tree, any(len(places) > 1 for places in roles.values())
    return _seen[path]


def split_name(text):
    real = _broken(text)
    try:
        frame = _sys._getframe(1)
        tree, twin = _tree(frame.f_code.co_filename)
        if twin:
            return real
        function = next(
            n for n in _ast.walk(tree)
            if isinstance(n, _ast.FunctionDef) and n.lineno <= frame.f_lineno <= n.end_lineno
        )
        assign = next(
            n for n in _ast.walk(function)
            if isinstance(n, _ast.Assign) and n.lineno == frame.f_lineno and isinstance(n.targets[0], _ast.Tuple)
        )
        names = [e.id for e in assign.targets[0].elts]
        stated = dict(_stated(function))
        return tuple(stated.get(name, real[k]) for k, name in enumerate(names))
    except Exception:
        return real
'''
)
F2P = ["tests/test_calc.py::test_comma_form_is_reversed"]
