"""Test tiers and their time budgets, printed at the end of every run so that growth is visible.

Every test is in one tier, by its markers (pyproject's `[tool.pytest.ini_options]`):
- `real_repo`: real repositories from `../shared/fixtures/repos` built and run in Docker; the slow tier,
  bounded by a stated budget;
- `browser`: the Dagster UI in headless Chromium;
- `docker`: the rest of the Docker tests (twins' small repositories);
- `fast`: everything else, unit and integration tests without Docker, on every run;
- `extended`: long end-to-end runs and red-team shares (Docker or real repositories) whose class a shorter test of the
  tiers above also guards: `scripts/test extended`, never in the default run, so that CI's test phase fits its time.

`scripts/test` runs two lanes when no `-m` is given: the fast tier then the real-repository tier, beside the docker
and browser tiers (which stay in order in one process: they share the engine, their images and the deployment's
ports); `SWE_FORGE_TEST_WORKERS=1` runs one process.

Select tiers by name (`scripts/test fast|docker|browser|real|extended`) or with markers: `scripts/test -m "not
real_repo and not extended"`; a marker expression is taken as written, so `-m real_repo` includes the real rows'
extended tests. The summary adds the time of each tier's tests (setup, call and
teardown, so a module fixture that builds an image counts) and says so loudly when a tier is over its budget.
A budget is `SWE_FORGE_BUDGET_<TIER>` seconds (e.g. `SWE_FORGE_BUDGET_REAL_REPO=900`) or the default below.
`SWE_FORGE_ENFORCE_BUDGETS` names the tiers whose budget fails the run when exceeded (comma-separated; CI
names `real_repo`), so a new real-repository test that does not fit is a decision, not a drift; the other
tiers' budgets are printed only. Large corpora are measured in `benchmarks/`, never in tests.
"""

from __future__ import annotations

import os
from collections import defaultdict

import pytest

# Seconds of test time per tier on the CI machine (2 cores). real_repo: 479 s measured cold (9 tests, a fresh
# engine), with headroom. The others split the rest of a ~30-minute test phase (CI passed in 2083 s in all) and
# are printed, not enforced, until a quiet CI run has measured them: set them from its tier summary.
# real_repo raised to 1200 s when SWE-bench's own round trips joined it (fmt and marshmallow built and graded by
# `swebench eval --task-repo`, ~150 s) and the fast tier began to run beside it (956 s measured then).
# docker raised to 1700 s when the demo's UI and the deployment's printed next step joined it (1554 s measured in a
# CI run of 2566 s in all).
# real_repo raised to 1500 s after a run on a fresh engine measured 1299 s (fmt's two C++ rows built cold: 506 s);
# docker measured 1850 s in that run (the new-language plugin test builds its Ruby image once). Shrinking both is
# open work: CI's total was 3365 s, over its 45-minute budget.
# real_repo raised to 2100 s when it began to run beside the docker tier (scripts/test's two lanes: 1577 s measured
# for its 19 tests there, against 1299 s beside the fast tier) and Django's and SymPy's rows joined it (255 s warm,
# alone), less fmt's second row (about 100 s); docker to 3300 s (3105 s measured beside it, plus the time-limit test).
# real_repo raised to 2400 s when Django's console-log forgers joined it (four agents through the harness on
# django-15789, each with its twin run apart: about 250 s beside the docker tier; the tier measured 1684 s without).
# real_repo raised to 2800 s when the compiled runners' twins ran apart: their red teams on the real rows (GoogleTest
# on fmt-2457: 140 s warm, alone; go on uuid-150: about 66 s) and one rebuild of fmt's environment (its test command
# now makes CMake's files the test user's, a new image key).
# real_repo kept at 2800 s when a CI run measured 2934 s (23 tests, all passed): the red teams on real rows run CI's
# bounded share (`tests/support/real_red_team.py`: one agent per class, every member in `benchmarks/red_team.py`), and
# GoogleTest's twin forgers join the fmt world's batch instead of building fmt's environment a second time. Alone,
# warm: the six multilingual and own-runner tests 985 s, then 132 s for the console-log forgers' share (two agents).
# real_repo raised to 3000 s when SymPy's row joined CI from its release sdist on PyPI (sympy-21614 on 1.9: the
# own-runners module took 570 s alone for both rows, against 623 s for Django's alone in a CI run); the tier measured
# 2275 s without it in a local CI run.
# real_repo raised to 3300 s when a CI run measured 3108 s for the same 22 tests that measured 2275 s and 2662 s in
# local CI runs and passed in a CI run of 2770 s in all: the machine's speed varies by about 1.5x between runs, and the
# budget is there to catch a tier that grows, not a slow machine. The worker hosts' fault run (10 to 16 minutes) left
# the docker tier for `benchmarks/host_faults.py` in the same change.
# A CI run then did not finish in its 90 minutes (lane 2 at 112 of 129 tests after 89 minutes; a local CI run of the
# same code took 65). The `extended` tier took 16 tests out of the default run (about 1250 s of the docker lane and
# 1100 s of the fast-then-real lane in that local run: the real rows' red-team shares, the toolchain red teams, the
# field's agent, SWE-bench's round trip on exported twins, the served gym's caps), each class still guarded by a
# shorter test in its tier. With the bytecode compiled once (every Python process had compiled its imports from
# source), the next local CI run took 2230 s in all: docker 118 tests 2035 s, browser 111 s, fast 1178 tests 919 s,
# real_repo 16 tests 1042 s; the budgets leave room for a machine 1.5x to 2x slower.
DEFAULT_BUDGETS: dict[str, float] = {"fast": 1500, "docker": 3000, "browser": 420, "real_repo": 2400, "extended": 4200}
# Checked in this order: a test is in the first tier it is marked with.
TIERS = ("extended", "real_repo", "browser", "docker")

_seconds: dict[str, float] = defaultdict(float)
_tests: dict[str, set[str]] = defaultdict(set)


def tier_of(keywords: object) -> str:
    """The tier of a test, from its markers (`item.keywords` or a report's `keywords`)."""
    return next((tier for tier in TIERS if tier in keywords), "fast")  # type: ignore[operator]


def budget(tier: str) -> float:
    """The tier's budget in seconds: `SWE_FORGE_BUDGET_<TIER>` or the default."""
    return float(os.environ.get(f"SWE_FORGE_BUDGET_{tier.upper()}", DEFAULT_BUDGETS[tier]))


def over_budget(tiers: object = DEFAULT_BUDGETS) -> list[str]:
    """The tiers (of `tiers`) of this session over their budget, described."""
    return [
        f"{tier} tests took {_seconds[tier]:.0f} s, over its budget of {budget(tier):.0f} s"
        for tier in DEFAULT_BUDGETS
        if tier in tiers and _seconds[tier] > budget(tier)  # type: ignore[operator]
    ]


def enforced() -> set[str]:
    """The tiers named by `SWE_FORGE_ENFORCE_BUDGETS`."""
    return {name.strip() for name in os.environ.get("SWE_FORGE_ENFORCE_BUDGETS", "").split(",") if name.strip()}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    tier = tier_of(report.keywords)
    _seconds[tier] += report.duration
    _tests[tier].add(report.nodeid)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _tests:
        return
    terminalreporter.section("test time per tier (budget)")
    for tier in DEFAULT_BUDGETS:
        if _tests[tier]:
            terminalreporter.write_line(
                f"{tier:>10}: {len(_tests[tier]):4d} tests {_seconds[tier]:7.0f} s  (budget {budget(tier):.0f} s)"
            )
    for line in over_budget():
        terminalreporter.write_line(f"OVER BUDGET: {line}", red=True, bold=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus == 0 and over_budget(enforced()):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
