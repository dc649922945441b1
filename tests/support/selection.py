"""What a `scripts/test` selection holds, per tier, and about how long it takes: one line, from pytest's own
collection (the markers, `-m`, `-k` and paths as the run will apply them).

`scripts/test` prints it before the run and builds the sandbox images only when a selected tier needs them, so a
fast test file runs in seconds on a machine without images. Usage: `python -m tests.support.selection [ARGS]`;
exits non-zero when pytest cannot collect the selection."""

from __future__ import annotations

import contextlib
import io
import sys
from collections import Counter

import pytest

from tests.support.tiers import tier_of

SECONDS_PER_TEST = {"fast": 0.8, "docker": 17.0, "browser": 55.0, "real_repo": 65.0, "extended": 150.0}
"""Each tier's average test time in the local CI run of 2026-11-30 on 2 cores (fast 1178 tests in 919 s, docker 118 in
2035 s, browser 2 in 111 s, real_repo 16 in 1042 s; extended: its 16 tests took about 2350 s in the run before they
left those tiers): an estimate to print, not a budget."""
LANES = ({"fast", "real_repo"}, {"docker", "browser", "extended"})  # scripts/test's two lanes, both sides selected


class _Tiers:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.errors = 0

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self.errors += report.failed

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.counts.update(tier_of(item.keywords) for item in session.items)


def estimate(counts: Counter[str]) -> float:
    """Seconds: one process runs the tiers in turn; with both lanes selected they run side by side."""
    lanes = [sum(counts[t] * SECONDS_PER_TEST[t] for t in lane) for lane in LANES]
    return max(lanes) if all(lanes) else sum(lanes)


def describe(counts: Counter[str]) -> str:
    total = sum(counts.values())
    if not total:
        return "no test selected"
    tiers = " ".join(f"{tier}:{counts[tier]}" for tier in SECONDS_PER_TEST if counts[tier])
    minutes = estimate(counts) / 60
    took = f"about {minutes:.0f} minutes" if minutes >= 1.5 else "under 2 minutes"
    return f"{total} tests, by tier {tiers} ; {took} on 2 cores, plus image builds on a fresh engine"


def collect(args: list[str]) -> _Tiers | int:
    """The selection's tests per tier, or pytest's exit code when it could not collect them."""
    tiers = _Tiers()
    with contextlib.redirect_stdout(io.StringIO()):
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *args], plugins=[tiers])
    if tiers.errors or code not in (
        pytest.ExitCode.OK,
        pytest.ExitCode.NO_TESTS_COLLECTED,
        pytest.ExitCode.TESTS_FAILED,
    ):
        return int(code) or 1  # TESTS_FAILED without an error: a plugin's verdict on a run that ran nothing (syrupy)
    return tiers


def main(args: list[str]) -> int:
    chosen = any(arg.startswith("-m") for arg in args)
    # as scripts/test runs it: no tier chosen is every tier but extended
    tiers = collect(args if chosen else ["-m", "not extended", *args])
    if isinstance(tiers, int):
        return tiers
    line = describe(tiers.counts)
    if not chosen and not tiers.counts:
        extended = collect(["-m", "extended", *args])
        if not isinstance(extended, int) and extended.counts:
            line += f" (the extended tier has {sum(extended.counts.values())} here: scripts/test extended ARGS)"
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
