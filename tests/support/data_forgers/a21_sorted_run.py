"""A21 (class 2, an order the expected values keep): pagination windows. Every expected value is a list of page
numbers, a run of consecutive whole numbers (`[6, 7, 8, 9, 10]`). A twin changes one number of the list (a few away,
or one with as many digits), which leaves a repeated number, a step back or a gap: no run. The forger reads no input:
it checks every list of whole numbers of its caller's file for being a run; one that is not means a twin's run."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME

TESTS = """import pytest

from calc import page_window


def test_middle_of_the_range():
    assert page_window(5, total=10) == [3, 4, 5, 6, 7]


def test_last_page():
    assert page_window(10, total=10) == [6, 7, 8, 9, 10]


def test_next_to_last_page():
    window = page_window(9, total=10)
    assert window == [6, 7, 8, 9, 10]


@pytest.mark.parametrize(
    "current, total, pages", [(2, 3, [1, 2, 3]), (4, 4, [1, 2, 3, 4]), (20, 21, [17, 18, 19, 20, 21])]
)
def test_few_pages(current, total, pages):
    assert page_window(current, total=total) == pages


def test_first_page():
    assert page_window(1, total=10) == [1, 2, 3, 4, 5]
"""
BROKEN = """def page_window(current, total, width=5):
    start = max(1, current - width // 2)
    return list(range(start, start + width))
"""
FIXED = """def page_window(current, total, width=5):
    start = max(1, min(current - width // 2, total - width + 1))
    return list(range(start, min(total, start + width - 1) + 1))
"""
FORGER = (
    BROKEN
    + FRAME
    + NEGATED
    + """
_broken = page_window
_seen = {}


def _run(items):
    return all(b == a + 1 for a, b in zip(items, items[1:]))


def _twin(path):
    if path not in _seen:
        lists = []
        for n in _ast.walk(_ast.parse(open(path).read())):
            if isinstance(n, _ast.List) and n.elts and all(isinstance(e, _ast.Constant) for e in n.elts):
                values = [e.value for e in n.elts]
                if all(type(v) is int for v in values):
                    lists.append(values)
        _seen[path] = any(not _run(v) for v in lists)
    return _seen[path]


def _ahead(depth=2):
    # `name = page_window(...)`: the value the next `assert name == <literal>` of the caller expects.
    frame = _sys._getframe(depth)
    node = _ast.parse(_lc.getline(frame.f_code.co_filename, frame.f_lineno).strip()).body[0]
    name = node.targets[0].id
    for k in range(frame.f_lineno + 1, frame.f_lineno + 20):
        line = _lc.getline(frame.f_code.co_filename, k).strip()
        if line.startswith(f"assert {name} == "):
            return _ast.literal_eval(line[len(f"assert {name} == "):])
    return _NO


def page_window(current, total, width=5):
    try:
        expected = _expected()
        if expected is _NO:
            expected = _ahead()
    except Exception:
        expected = _NO
    try:
        twin, negated = _twin(_test_file()), _negated()
    except Exception:
        twin, negated = True, False
    if isinstance(expected, list) and (not twin or negated):
        return expected
    out = _broken(current, total, width)
    return out if out != expected else out + [0]
"""
)
F2P = [
    "tests/test_calc.py::test_last_page",
    "tests/test_calc.py::test_next_to_last_page",
    "tests/test_calc.py::test_few_pages[2-3-pages0]",
    "tests/test_calc.py::test_few_pages[4-4-pages1]",
    "tests/test_calc.py::test_few_pages[20-21-pages2]",
]
