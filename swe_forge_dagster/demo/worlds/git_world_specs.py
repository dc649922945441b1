"""What the test world's repositories contain: small Python projects, their commits and PRs.

Written by this project (never copied): each PR comes with the lists a correct task builder
must conclude (FAIL_TO_PASS, PASS_TO_PASS, or the rejection), checked by running pytest in
`tests/test_git_world.py`. `git_world.py` builds real git remotes from these specs.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class WorldComment:
    """A comment on a PR's issue, `hours` after the PR's first commit (negative: before it)."""

    body: str
    hours: float


@dataclass(frozen=True)
class WorldIssue:
    number: int
    title: str
    body: str
    # GitHub's side of the issue, not git's: kept out of repr, so out of CONTENT_VERSION (adding a
    # comment does not rebuild the remotes). Those before the first commit are the task's hints.
    comments: tuple[WorldComment, ...] = field(default=(), repr=False)


# -- specs: what the repositories contain -------------------------------------------------------


@dataclass(frozen=True)
class _Commit:
    message: str
    files: Mapping[str, str | bytes | None]  # path -> new content (None deletes)


@dataclass(frozen=True)
class _PR:
    number: int
    title: str
    body: str
    branch: str
    commits: tuple[_Commit, ...]
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    rejection: str | None = None
    flaky: tuple[str, ...] = ()
    issue: WorldIssue | None = None
    agent_tests: Mapping[str, str] = field(default_factory=dict)


def _files(blob: str) -> dict[str, str]:
    """`=== path` sections of `blob` as {path: content}: many small files per literal."""
    sections = (s.partition("\n") for s in blob.split("\n=== ")[1:])
    return {head.strip(): body.rstrip("\n") + "\n" for head, _, body in sections}


def _tests(imports: str, **cases: str) -> str:
    """A pytest module: `imports`, then one test function per case (body lines split by newlines)."""
    funcs = [
        f"def {name}():\n" + "\n".join(f"    {ln}".rstrip() for ln in body.split("\n")) for name, body in cases.items()
    ]
    return imports + "\n\n\n" + "\n\n\n".join(funcs) + "\n"


def _edit(text: str, *changes: tuple[str, str]) -> str:
    """`text` with each (old, new) replaced once; a missing `old` fails loudly at import."""
    for old, new in changes:
        if old not in text:
            raise ValueError(f"git world spec: {old!r} not found")
        text = text.replace(old, new, 1)
    return text


def _project(name: str, summary: str, version: str = "0.1.0") -> dict[str, str]:
    """The boilerplate every world project shares: setuptools metadata, pytest config, a README."""
    package = name.replace("-", "_")
    pyproject = (
        f'[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "{name}"\nversion = "{version}"\ndescription = "{summary}"\nrequires-python = ">=3.9"\n\n'
        f'[tool.setuptools]\npackages = ["{package}"]\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    )
    return {"pyproject.toml": pyproject, "README.md": f"# {name}\n\n{summary}\n"}


def _png(width: int, height: int, shade: int) -> bytes:
    """A valid RGB PNG built byte by byte (a stored deflate block: no zlib-version drift)."""
    raw = b"".join(b"\0" + bytes((x * 29 + y * 13 + shade) % 256 for x in range(width * 3)) for y in range(height))
    idat = (
        b"\x78\x01\x01" + struct.pack("<HH", len(raw), len(raw) ^ 0xFFFF) + raw + struct.pack(">I", zlib.adler32(raw))
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


_TINYCALC = _files(r'''
=== tinycalc/__init__.py
"""Small arithmetic helpers."""
from tinycalc.arith import add, subtract
from tinycalc.rounding import round_half_up
=== tinycalc/arith.py
def add(a, b):
    return a + b


def subtract(a, b):
    return a - b
=== tinycalc/rounding.py
"""Rounding as people expect it: halves go away from zero, not to the even neighbour."""
import math


def round_half_up(value, digits=0):
    """Round `value` to `digits` places: 2.5 -> 3 and -2.5 -> -3."""
    scale = 10**digits
    return math.floor(value * scale + 0.5) / scale
=== tests/test_arith.py
from tinycalc import add, subtract


class TestAdd:
    def test_small(self):
        assert add(2, 3) == 5

    def test_negative(self):
        assert add(-2, -3) == -5


def test_subtract():
    assert subtract(5, 3) == 2
=== tests/test_rounding.py
import pytest

from tinycalc import round_half_up


def test_positive_half():
    assert round_half_up(2.5) == 3


@pytest.mark.parametrize(("value", "expected"), [(1.2, 1), (2.5, 3), (-1.2, -1)])
def test_round_half_up(value, expected):
    assert round_half_up(value) == expected


def test_digits():
    assert round_half_up(1.25, 1) == 1.3
''')
_ROUNDING_FIX = _edit(
    _TINYCALC["tinycalc/rounding.py"],
    (
        "    return math.floor(value * scale + 0.5) / scale\n",
        "    magnitude = math.floor(abs(value) * scale + 0.5) / scale\n    return math.copysign(magnitude, value)\n",
    ),
)
_ROUNDING_TESTS = _edit(_TINYCALC["tests/test_rounding.py"], ("(-1.2, -1)]", "(-1.2, -1), (-1.5, -2)]")) + (
    "\n\ndef test_negative_half():\n    assert round_half_up(-2.5) == -3\n"
)
_DATEKIT = _files(r'''
=== datekit/__init__.py
from datekit.parse import parse_date
=== datekit/parse.py
"""Parse the date spellings people actually type."""
import datetime as dt
import re

_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})$")


def parse_date(text):
    """Parse `YYYY-MM-DD` or `YYYYMMDD`; raise ValueError for anything else."""
    text = text.strip()
    for pattern in (_ISO, _COMPACT):
        match = pattern.match(text)
        if match:
            year, month, day = (int(part) for part in match.groups())
            return dt.date(year, month, day)
    raise ValueError(f"not a date: {text!r}")
''')
_DATE_IMPORTS = "import datetime as dt\n\nimport pytest\n\nfrom datekit import parse_date"
_DATEKIT["tests/test_parse.py"] = _tests(
    _DATE_IMPORTS,
    test_iso_date='assert parse_date("2024-02-29") == dt.date(2024, 2, 29)',
    test_compact_date='assert parse_date("20240229") == dt.date(2024, 2, 29)',
    test_strips_whitespace='assert parse_date("  2024-01-05\\n") == dt.date(2024, 1, 5)',
    test_rejects_garbage='with pytest.raises(ValueError):\n    parse_date("yesterday")',
)
_WEEK_DATES = _edit(
    _DATEKIT["datekit/parse.py"],
    ('})$")\n\n', '})$")\n_WEEK = re.compile(r"^(\\d{4})-?W(\\d{2})-?([1-7])$")\n\n'),
    (" or `YYYYMMDD`; raise ValueError for anything else", ", `YYYYMMDD` or ISO week `YYYY-Www-D`; else ValueError"),
    (
        "    raise ValueError",
        "    match = _WEEK.match(text)\n    if match:\n"
        "        year, week, weekday = (int(part) for part in match.groups())\n"
        "        return dt.date.fromisocalendar(year, week, weekday)\n    raise ValueError",
    ),
)
_WEEK_DATE_TESTS = _tests(
    _DATE_IMPORTS,
    test_week_date='assert parse_date("2024-W05-3") == dt.date(2024, 1, 31)',
    test_compact_week_date='assert parse_date("2024W053") == dt.date(2024, 1, 31)',
    test_week_one_starts_in_previous_year='assert parse_date("2020-W01-1") == dt.date(2019, 12, 30)',
    test_week_out_of_range='with pytest.raises(ValueError):\n    parse_date("2024-W54-1")',
)
_YAML_LITE = _files(r'''
=== yaml_lite/__init__.py
from yaml_lite.dump import dump, quote
=== yaml_lite/dump.py
"""Dump flat mappings of scalars as YAML."""


def quote(text):
    """Quote a scalar when the plain style would change its meaning."""
    needs = text == "" or text != text.strip() or any(ch in ":#{}[],&*!|>'\"%@`" for ch in text)
    if text.lower() in ("true", "false", "null", "yes", "no", "~"):
        needs = True
    if needs:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def dump(mapping):
    return "".join(f"{key}: {quote(str(value))}\n" for key, value in mapping.items())
''')
_YAML_LITE["tests/test_dump.py"] = _tests(
    "from yaml_lite import dump, quote",
    test_dump_simple='assert dump({"name": "tiny", "size": 3}) == "name: tiny\\nsize: 3\\n"',
    test_quotes_empty='assert quote("") == \'""\'',
    test_escapes_quotes='assert quote(\'say "hi": now\') == \'"say \\\\"hi\\\\": now"\'',
)
_YAML_TIDY = _edit(
    _YAML_LITE["yaml_lite/dump.py"],
    ('("true", "false", "null", "yes", "no", "~")', "_RESERVED"),
    ("\n\n\ndef quote", '\n\n_RESERVED = frozenset({"true", "false", "null", "yes", "no", "~"})\n\n\ndef quote'),
)
_QUOTING_TESTS = _tests(
    "from yaml_lite import quote",
    test_quotes_colon='assert quote("a: b") == \'"a: b"\'',
    test_plain_word_unquoted='assert quote("plain") == "plain"',
    test_quotes_reserved_words='assert quote("Yes") == \'"Yes"\'',
)
_STOCHASTIC = _edit(_ROUNDING_FIX, ("import math\n", "import math\nimport random\n")) + (
    "\n\ndef stochastic_round(value):\n"
    '    """Round up with probability equal to the fraction, else down: unbiased on average."""\n'
    "    low = math.floor(value)\n    return low + (random.random() < value - low)\n"
)
_STOCHASTIC_TESTS = _tests(
    "import tinycalc.rounding as rounding",  # not `from ... import`: no collection error at base
    test_whole_numbers_stay="assert rounding.stochastic_round(3.0) == 3",
    test_rounds_to_a_neighbour="assert rounding.stochastic_round(2.4) in (2, 3)",
    test_half_rounds_down="assert rounding.stochastic_round(2.5) == 2",  # true half of the time
)
_TINYCALC_TESTS = (
    "tests/test_arith.py::TestAdd::test_negative",
    "tests/test_arith.py::TestAdd::test_small",
    "tests/test_arith.py::test_subtract",
    "tests/test_rounding.py::test_digits",
    "tests/test_rounding.py::test_positive_half",
    "tests/test_rounding.py::test_round_half_up[-1.2--1]",
    "tests/test_rounding.py::test_round_half_up[1.2-1]",
    "tests/test_rounding.py::test_round_half_up[2.5-3]",
)
_NEGATIVE_HALVES = ("tests/test_rounding.py::test_negative_half", "tests/test_rounding.py::test_round_half_up[-1.5--2]")

_SPECS: dict[str, tuple[_Commit | _PR, ...]] = {
    "acme-labs/tinycalc": (
        _Commit("Initial commit", _project("tinycalc", "Small arithmetic helpers.")),
        _Commit("Add add, subtract and round_half_up", _TINYCALC),
        _PR(
            12,
            "Fix rounding of negative halves",
            "Fixes #11.\n\n`round_half_up` floored `x + 0.5`, which takes -2.5 up to -2. Round the magnitude and "
            "put the sign back, so halves go away from zero on both sides. Also adds a diagram to the docs.",
            "fix-negative-halves",
            (
                _Commit(
                    "Round negative halves away from zero",
                    {"tinycalc/rounding.py": _ROUNDING_FIX, "docs/rounding.png": _png(8, 8, 40)},
                ),
                _Commit("Test negative halves", {"tests/test_rounding.py": _ROUNDING_TESTS}),
            ),
            fail_to_pass=_NEGATIVE_HALVES,
            pass_to_pass=_TINYCALC_TESTS,
            issue=WorldIssue(
                11,
                "round_half_up(-2.5) returns -2",
                "The docstring says halves go away from zero, but `round_half_up(-2.5)` gives `-2` (and "
                "`round_half_up(-1.5)` gives `-1`). Positive halves are fine: `round_half_up(2.5) == 3`.",
                comments=(
                    WorldComment("Same with `round_half_up(-0.5)`: it gives `0`, not `-1`.", hours=-26),
                    WorldComment(
                        "`math.floor(x + 0.5)` rounds towards +inf. Round `abs(x)` and put the sign back?", hours=-3
                    ),
                    WorldComment("Fixed by #12, thanks! It will be in 0.2.0.", hours=30),
                ),
            ),
        ),
        _Commit("Release 0.2.0", _project("tinycalc", "Small arithmetic helpers.", version="0.2.0")),
        _PR(
            15,
            "Add stochastic rounding",
            "`stochastic_round` rounds up with probability equal to the fraction, so sums of rounded values "
            "stay unbiased.",
            "stochastic-rounding",
            (
                _Commit(
                    "Add stochastic rounding",
                    {"tinycalc/rounding.py": _STOCHASTIC, "tests/test_stochastic.py": _STOCHASTIC_TESTS},
                ),
            ),
            fail_to_pass=(
                "tests/test_stochastic.py::test_rounds_to_a_neighbour",
                "tests/test_stochastic.py::test_whole_numbers_stay",
            ),
            pass_to_pass=tuple(sorted(_TINYCALC_TESTS + _NEGATIVE_HALVES)),
            rejection="flaky tests",
            flaky=("tests/test_stochastic.py::test_half_rounds_down",),
        ),
    ),
    "northwind/datekit": (
        _Commit("Initial commit", {**_project("datekit", "Forgiving date parsing."), **_DATEKIT}),
        _PR(
            7,
            "Parse ISO week dates",
            "`parse_date` now understands ISO 8601 week dates such as `2024-W05-3` and the compact `2024W053`, "
            "which the planning tool's CSV exports use.",
            "iso-week-dates",
            (
                _Commit(
                    "Parse ISO week dates",
                    {
                        "datekit/parse.py": _WEEK_DATES,
                        "README.md": "# datekit\n\nForgiving date parsing, ISO weeks too.\n",
                    },
                ),
            ),
            fail_to_pass=(
                "tests/test_week_dates.py::test_compact_week_date",
                "tests/test_week_dates.py::test_week_date",
                "tests/test_week_dates.py::test_week_one_starts_in_previous_year",
            ),
            pass_to_pass=(
                "tests/test_parse.py::test_compact_date",
                "tests/test_parse.py::test_iso_date",
                "tests/test_parse.py::test_rejects_garbage",
                "tests/test_parse.py::test_strips_whitespace",
                "tests/test_week_dates.py::test_week_out_of_range",
            ),
            agent_tests={"tests/test_week_dates.py": _WEEK_DATE_TESTS},
        ),
    ),
    "globex-oss/yaml-lite": (
        _Commit("Initial commit", {**_project("yaml-lite", "Simple YAML output, no dependencies."), **_YAML_LITE}),
        _PR(
            3,
            "Tidy quoting",
            "Name the reserved words and pin the quoting rules down with tests. No behaviour change.",
            "tidy-quoting",
            (
                _Commit("Tidy quoting", {"yaml_lite/dump.py": _YAML_TIDY}),
                _Commit("Test the quoting rules", {"tests/test_quoting.py": _QUOTING_TESTS}),
            ),
            fail_to_pass=(),
            pass_to_pass=(
                "tests/test_dump.py::test_dump_simple",
                "tests/test_dump.py::test_escapes_quotes",
                "tests/test_dump.py::test_quotes_empty",
                "tests/test_quoting.py::test_plain_word_unquoted",
                "tests/test_quoting.py::test_quotes_colon",
                "tests/test_quoting.py::test_quotes_reserved_words",
            ),
            rejection="no FAIL_TO_PASS",
        ),
    ),
}
# The marker a built world is checked against: any change of content or builder rebuilds it.
