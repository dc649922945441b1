"""The test world's git repositories: small real Python projects with real history and merged PRs.

Task building (clone, check out base and merge, run the tests, keep FAIL_TO_PASS) cannot be
tested against GitHub, so this module writes tiny projects and their history into LOCAL BARE
repositories laid out like GitHub: `root/<owner>/<name>.git` with `refs/heads/main`, each PR's
head under `refs/pull/<N>/head`, merged into main with a merge commit. The clone URL template
`file:///root/{repo}.git` then stands in for `https://github.com/{repo}.git`.

Each PR carries its ground truth (`expected_fail_to_pass`, `expected_pass_to_pass`,
`expected_rejection`), checked by really running pytest in `tests/test_git_world.py`, and
`enriched_pr_rows` turns the PRs into `enriched_prs` rows so later stages run without GitHub.
Content, authors and dates are fixed, so shas are identical on every machine, and a built
world is reused while its content version (a hash of the specs below) is unchanged.

One PR per behaviour a task builder must get right:
- acme-labs/tinycalc#12: a bug fix with tests (2 FAIL_TO_PASS, one parametrized; PASS_TO_PASS
  including a class method), closing issue #11, and a binary file (PNG) in its diff;
- northwind/datekit#7: a fix without tests; `agent_tests` are what a good test agent writes, and
  the expected lists describe the runs with them written over the tree;
- globex-oss/yaml-lite#3: a refactor whose new tests already pass before it: no FAIL_TO_PASS;
- acme-labs/tinycalc#15 (a second PR, after #12): a feature whose new test passes about half
  the time: flaky.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import struct
import subprocess
import tempfile
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

WORLD_FORMAT = 1  # bump when the builder (not the content) changes the repositories
MANIFEST = "git-world.json"
_EPOCH = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class WorldIssue:
    number: int
    title: str
    body: str


@dataclass
class WorldPR:
    """A merged PR of the world and what a correct task builder must conclude about it."""

    repo: str
    number: int
    title: str
    body: str
    head_ref: str
    base_sha: str  # main just before the merge, which is also the branch point
    head_sha: str  # also at refs/pull/<number>/head
    merge_commit_sha: str  # parents: base_sha, head_sha
    created_at: datetime
    merged_at: datetime
    additions: int
    deletions: int
    issue: WorldIssue | None
    expected_fail_to_pass: list[str]  # SWE-bench node ids, sorted
    expected_pass_to_pass: list[str]
    expected_rejection: str | None  # why a correct validator rejects the PR, if it does
    expected_flaky: list[str]  # tests whose result flips between identical runs
    test_files: list[str]
    src_files: list[str]  # every changed file outside tests/, binary ones included
    agent_tests: dict[str, str]  # for PRs without tests: what a good agent writes
    base_tree: dict[str, bytes] = field(repr=False)
    head_tree: dict[str, bytes] = field(repr=False)  # also the merge commit's tree
    base_ref: str = "main"

    @property
    def file_paths(self) -> list[str]:
        return sorted(self.test_files + self.src_files)


@dataclass
class GitWorld:
    root: Path
    url_template: str  # file:///root/{repo}.git
    prs: list[WorldPR]

    def pr(self, repo: str, number: int) -> WorldPR:
        return next(p for p in self.prs if (p.repo, p.number) == (repo, number))

    def remote(self, repo: str) -> Path:
        return self.root / f"{repo}.git"


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
    "tests/test_arith.py::TestAdd::test_negative", "tests/test_arith.py::TestAdd::test_small",
    "tests/test_arith.py::test_subtract", "tests/test_rounding.py::test_digits",
    "tests/test_rounding.py::test_positive_half", "tests/test_rounding.py::test_round_half_up[-1.2--1]",
    "tests/test_rounding.py::test_round_half_up[1.2-1]", "tests/test_rounding.py::test_round_half_up[2.5-3]",
)  # fmt: skip
_NEGATIVE_HALVES = ("tests/test_rounding.py::test_negative_half", "tests/test_rounding.py::test_round_half_up[-1.5--2]")

_SPECS: dict[str, tuple[_Commit | _PR, ...]] = {
    "acme-labs/tinycalc": (
        _Commit("Initial commit", _project("tinycalc", "Small arithmetic helpers.")),
        _Commit("Add add, subtract and round_half_up", _TINYCALC),
        _PR(
            12, "Fix rounding of negative halves",
            "Fixes #11.\n\n`round_half_up` floored `x + 0.5`, which takes -2.5 up to -2. Round the magnitude and "
            "put the sign back, so halves go away from zero on both sides. Also adds a diagram to the docs.",
            "fix-negative-halves",
            (
                _Commit("Round negative halves away from zero",
                        {"tinycalc/rounding.py": _ROUNDING_FIX, "docs/rounding.png": _png(8, 8, 40)}),
                _Commit("Test negative halves", {"tests/test_rounding.py": _ROUNDING_TESTS}),
            ),
            fail_to_pass=_NEGATIVE_HALVES,
            pass_to_pass=_TINYCALC_TESTS,
            issue=WorldIssue(
                11, "round_half_up(-2.5) returns -2",
                "The docstring says halves go away from zero, but `round_half_up(-2.5)` gives `-2` (and "
                "`round_half_up(-1.5)` gives `-1`). Positive halves are fine: `round_half_up(2.5) == 3`.",
            ),
        ),
        _Commit("Release 0.2.0", _project("tinycalc", "Small arithmetic helpers.", version="0.2.0")),
        _PR(
            15, "Add stochastic rounding",
            "`stochastic_round` rounds up with probability equal to the fraction, so sums of rounded values "
            "stay unbiased.",
            "stochastic-rounding",
            (_Commit("Add stochastic rounding",
                     {"tinycalc/rounding.py": _STOCHASTIC, "tests/test_stochastic.py": _STOCHASTIC_TESTS}),),
            fail_to_pass=("tests/test_stochastic.py::test_rounds_to_a_neighbour",
                          "tests/test_stochastic.py::test_whole_numbers_stay"),
            pass_to_pass=tuple(sorted(_TINYCALC_TESTS + _NEGATIVE_HALVES)),
            rejection="flaky tests",
            flaky=("tests/test_stochastic.py::test_half_rounds_down",),
        ),
    ),
    "northwind/datekit": (
        _Commit("Initial commit", {**_project("datekit", "Forgiving date parsing."), **_DATEKIT}),
        _PR(
            7, "Parse ISO week dates",
            "`parse_date` now understands ISO 8601 week dates such as `2024-W05-3` and the compact `2024W053`, "
            "which the planning tool's CSV exports use.",
            "iso-week-dates",
            (_Commit("Parse ISO week dates", {"datekit/parse.py": _WEEK_DATES,
                                              "README.md": "# datekit\n\nForgiving date parsing, ISO weeks too.\n"}),),
            fail_to_pass=("tests/test_week_dates.py::test_compact_week_date",
                          "tests/test_week_dates.py::test_week_date",
                          "tests/test_week_dates.py::test_week_one_starts_in_previous_year"),
            pass_to_pass=(
                "tests/test_parse.py::test_compact_date", "tests/test_parse.py::test_iso_date",
                "tests/test_parse.py::test_rejects_garbage", "tests/test_parse.py::test_strips_whitespace",
                "tests/test_week_dates.py::test_week_out_of_range",
            ),
            agent_tests={"tests/test_week_dates.py": _WEEK_DATE_TESTS},
        ),
    ),
    "globex-oss/yaml-lite": (
        _Commit("Initial commit", {**_project("yaml-lite", "Simple YAML output, no dependencies."), **_YAML_LITE}),
        _PR(
            3, "Tidy quoting",
            "Name the reserved words and pin the quoting rules down with tests. No behaviour change.",
            "tidy-quoting",
            (_Commit("Tidy quoting", {"yaml_lite/dump.py": _YAML_TIDY}),
             _Commit("Test the quoting rules", {"tests/test_quoting.py": _QUOTING_TESTS})),
            fail_to_pass=(),
            pass_to_pass=(
                "tests/test_dump.py::test_dump_simple", "tests/test_dump.py::test_escapes_quotes",
                "tests/test_dump.py::test_quotes_empty", "tests/test_quoting.py::test_plain_word_unquoted",
                "tests/test_quoting.py::test_quotes_colon", "tests/test_quoting.py::test_quotes_reserved_words",
            ),
            rejection="no FAIL_TO_PASS",
        ),
    ),
}  # fmt: skip
# The marker a built world is checked against: any change of content or builder rebuilds it.
CONTENT_VERSION = hashlib.sha256(f"{WORLD_FORMAT}\n{_SPECS!r}".encode()).hexdigest()[:16]


# -- building -----------------------------------------------------------------------------------


def build_git_world(root: Path) -> GitWorld:
    """Build the world's bare repositories under `root`, or reuse them if already built.

    Reuse needs the manifest of the same CONTENT_VERSION and every remote present; otherwise the
    remotes are rebuilt. A lock file makes concurrent builders (test workers) build once.
    """
    root = Path(root).absolute()
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / ".git-world.lock"):
        manifest = _load_manifest(root)
        if manifest is None:
            manifest = _build(root)
    return _world(root, manifest)


def enriched_pr_rows(world: GitWorld) -> list[dict[str, Any]]:
    """The world's PRs as accepted `enriched_prs` rows, so task stages can be fed without GitHub."""
    # Imported here: pyarrow is not needed to build the world (e.g. in spawned test workers).
    from swe_forge_dagster.candidates.datasets import ENRICHED_PRS_SCHEMA

    rows = []
    for pr in world.prs:
        row: dict[str, Any] = dict.fromkeys(ENRICHED_PRS_SCHEMA.names)
        issues = [] if pr.issue is None else [{**vars(pr.issue), "repo": pr.repo}]
        row.update(
            repo_name=pr.repo, number=pr.number, status="accepted", reason=None, reasons=[], stage="filter",
            merged=True, merged_at=pr.merged_at, merge_commit_sha=pr.merge_commit_sha,
            base_ref=pr.base_ref, base_sha=pr.base_sha, head_ref=pr.head_ref, head_sha=pr.head_sha,
            title=pr.title, body=pr.body, author_login="world-dev", author_is_bot=False, pr_created_at=pr.created_at,
            additions=pr.additions, deletions=pr.deletions, changed_files=len(pr.file_paths),
            file_paths=pr.file_paths, files_complete=True, closing_issues=issues, labels=[],
            stars=100, language="Python", is_fork=False, is_archived=False, license="MIT",
            owner_type="Organization", source="git_world", from_store=False,
        )  # fmt: skip
        rows.append(row)
    return rows


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _load_manifest(root: Path) -> dict[str, Any] | None:
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if manifest.get("version") != CONTENT_VERSION:
        return None
    if not all((root / f"{repo}.git" / "HEAD").is_file() for repo in _SPECS):
        return None
    return manifest


def _build(root: Path) -> dict[str, Any]:
    prs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(dir=root, prefix=".scratch-") as scratch:
        for index, (repo, steps) in enumerate(_SPECS.items()):
            start = _EPOCH + timedelta(days=30 * index)
            prs.update(_build_repo(repo, steps, root / f"{repo}.git", Path(scratch), start))
    manifest = {"version": CONTENT_VERSION, "prs": prs}
    tmp = root / f".{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    os.replace(tmp, root / MANIFEST)  # written last: its presence means a complete world
    return manifest


def _build_repo(
    repo: str, steps: tuple[_Commit | _PR, ...], remote: Path, scratch: Path, start: datetime
) -> dict[str, Any]:
    """Replay `steps` in a scratch clone, then push main and `refs/pull/N/head` to a fresh bare remote."""
    work = scratch / repo.replace("/", "--")
    work.mkdir(parents=True)
    _git(["init", "--quiet", "--initial-branch=main"], work, scratch)
    clock = iter(start + timedelta(hours=hour) for hour in range(10_000))

    def commit(step: _Commit) -> datetime:
        when = next(clock)
        for path, content in step.files.items():
            target = work / path
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode() if isinstance(content, str) else content)
        _git(["add", "--all"], work, scratch)
        _git(["commit", "--quiet", "--message", step.message], work, scratch, when)
        return when

    prs: dict[str, Any] = {}
    pull_refs = []
    for step in steps:
        if isinstance(step, _Commit):
            commit(step)
            continue
        _git(["checkout", "--quiet", "-b", step.branch], work, scratch)
        dates = [commit(c) for c in step.commits]
        head = _git(["rev-parse", "HEAD"], work, scratch)
        _git(["checkout", "--quiet", "main"], work, scratch)
        base = _git(["rev-parse", "HEAD"], work, scratch)
        merged = next(clock)
        message = f"Merge pull request #{step.number} from {repo.split('/')[0]}/{step.branch}\n\n{step.title}"
        _git(["merge", "--quiet", "--no-ff", "--message", message, step.branch], work, scratch, merged)
        numstat = [line.split("\t") for line in _git(["diff", "--numstat", base, head], work, scratch).splitlines()]
        prs[f"{repo}#{step.number}"] = {
            "base_sha": base, "head_sha": head, "merge_commit_sha": _git(["rev-parse", "HEAD"], work, scratch),
            "created_at": dates[0].isoformat(), "merged_at": merged.isoformat(),
            "additions": sum(int(n[0]) for n in numstat if n[0] != "-"),
            "deletions": sum(int(n[1]) for n in numstat if n[1] != "-"),
        }  # fmt: skip
        pull_refs.append(f"{head}:refs/pull/{step.number}/head")
    shutil.rmtree(remote, ignore_errors=True)
    remote.mkdir(parents=True)
    _git(["init", "--quiet", "--bare", "--initial-branch=main"], remote, scratch)
    _git(["push", "--quiet", str(remote), "refs/heads/main:refs/heads/main", *pull_refs], work, scratch)
    return prs


def _git(args: list[str], cwd: Path, home: Path, when: datetime | None = None) -> str:
    """Run git with no machine config and a fixed identity (and date), so shas are reproducible."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home), XDG_CONFIG_HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", LC_ALL="C",
        GIT_AUTHOR_NAME="World Builder", GIT_AUTHOR_EMAIL="builder@example.invalid",
        GIT_COMMITTER_NAME="World Builder", GIT_COMMITTER_EMAIL="builder@example.invalid",
    )  # fmt: skip
    if when is not None:
        env.update(GIT_AUTHOR_DATE=when.isoformat(), GIT_COMMITTER_DATE=when.isoformat())
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def _world(root: Path, manifest: dict[str, Any]) -> GitWorld:
    """The world object: shas from the manifest, everything else from the specs."""
    prs = []
    for repo, steps in _SPECS.items():
        tree: dict[str, bytes] = {}
        for step in steps:
            if isinstance(step, _Commit):
                _apply(tree, step.files)
                continue
            base = dict(tree)
            for change in step.commits:
                _apply(tree, change.files)
            changed = sorted(p for p in base.keys() | tree.keys() if base.get(p) != tree.get(p))
            built = manifest["prs"][f"{repo}#{step.number}"]
            prs.append(
                WorldPR(
                    repo=repo, number=step.number, title=step.title, body=step.body, head_ref=step.branch,
                    base_sha=built["base_sha"], head_sha=built["head_sha"], merge_commit_sha=built["merge_commit_sha"],
                    created_at=datetime.fromisoformat(built["created_at"]),
                    merged_at=datetime.fromisoformat(built["merged_at"]),
                    additions=built["additions"], deletions=built["deletions"], issue=step.issue,
                    expected_fail_to_pass=list(step.fail_to_pass), expected_pass_to_pass=list(step.pass_to_pass),
                    expected_rejection=step.rejection, expected_flaky=list(step.flaky),
                    test_files=[p for p in changed if p.startswith("tests/")],
                    src_files=[p for p in changed if not p.startswith("tests/")],
                    agent_tests=dict(step.agent_tests), base_tree=base, head_tree=dict(tree),
                )
            )  # fmt: skip
    return GitWorld(root=root, url_template=f"file://{root}/{{repo}}.git", prs=prs)


def _apply(tree: dict[str, bytes], files: Mapping[str, str | bytes | None]) -> None:
    for path, content in files.items():
        if content is None:
            tree.pop(path, None)
        else:
            tree[path] = content.encode() if isinstance(content, str) else content
