"""Decide FAIL_TO_PASS / PASS_TO_PASS from execution results, and whether the task is usable at all.

Pure logic over outcome maps (see `execution.junit`), so every rule is testable without a sandbox. The
runs are: `before` = base + test_patch (once), `after` = base + test_patch + patch (several times,
to catch flakiness). The rules, and the choices the brief left open:

- A run that is None or has no tests means the suite did not start: nothing else can be concluded;
  except the run before the fix of a runner other than pytest, whose tests may not compile (or load)
  without the fix: every test then failed before (`no_report_before_fails`).
- FAIL_TO_PASS: failed/error before, or absent before (pytest cannot collect a test whose module
  imports the not-yet-written code: the module shows up as one collection error, its tests not at
  all), and passed in every after run. Skipped before is not a failure: SWE-bench does not count it.
- PASS_TO_PASS: passed before and in every after run. An expected failure (pytest's xfail) is in neither list, as
  in SWE-bench's datasets: of the 127 xfail-marked tests in the files SWE-bench Lite's test patches touch (pytest,
  requests, pylint, seaborn, xarray, sphinx), its lists hold none that xfails on Linux (seaborn-3190's
  `test_color_numeric_int_float_mix` xfails here and is in no list; sphinx's `test_html_inventory`, an xfail only
  off posix, is), though its grading counts an `XFAIL` as a pass (`harness.checks.KEPT`).
- broken (PASS->FAIL): passed before and failed/error in every after run, or missing from every
  after run (the fix made the module uncollectable). Passed -> skipped is neither broken nor P2P.
- flaky: the outcome (including "absent") differs between after runs. Flaky tests are never
  F2P/P2P. Any flaky test rejects the task, as the brief asks; for large suites this is strict. A given row
  (`Validation.sparing`) is rejected only by the flaky tests its lists name: its verdicts do not rest on the others.
- `test_ids_in_test_patch` (optional): ids, or id prefixes such as a file path or
  `path::Class::test` without params, of the tests the test_patch adds or changes. When given and
  non-empty, at least one FAIL_TO_PASS must match one, so the task's evidence comes from the PR's own
  tests. None or empty skips the check: not being able to name the tests is no evidence against it.

When several reasons apply, the first in this order is reported: did not start, regression, flaky,
no FAIL_TO_PASS, no FAIL_TO_PASS from the test patch. "No FAIL_TO_PASS" says which: when some tests
fail before AND in every run with the fix (`stuck`), the environment is the likely cause ("environment
broken: N tests fail before and after the fix"), not a fix that changes nothing ("the tests pass
without the fix"). The lists are filled either way, sorted.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from swe_forge_dagster.execution.junit import Outcome

Results = Mapping[str, Outcome]

_FAILING = ("failed", "error")
NOT_STARTED = "test suite did not start"  # the reason's head when a run gave no report
_REASON_IDS = 10  # ids quoted in a reason; the full lists are in the fields


@dataclass(frozen=True)
class Validation:
    accepted: bool
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    reason: str | None
    flaky: list[str]
    broken: list[str]
    stuck: list[str] = field(default_factory=list)  # failed before and in every after run
    patch_test_ids: tuple[str, ...] = ()  # the test patch's tests, as given to `validate`

    def sparing(self, spared: Collection[str]) -> Validation:
        """This verdict with the flaky tests in `spared` rejecting nothing: they stay in `flaky`, in neither list.
        Revalidating a given row spares the flaky tests the row does not name (google/uuid's `TestVersion6`, which
        compares two clock readings, flips under load): the row's verdicts do not rest on them, and SWE-bench's own
        lists leave such tests out."""
        if self.reason is None or self.reason.startswith(NOT_STARTED):
            return self
        rejecting = [t for t in self.flaky if t not in spared]
        reason = _reason(self.fail_to_pass, rejecting, self.broken, self.stuck, self.patch_test_ids)
        return replace(self, accepted=reason is None, reason=reason)


def validate(
    before: Results | None,
    after: Sequence[Results | None],
    test_ids_in_test_patch: Collection[str] | None = None,
    *,
    no_report_before_fails: bool = False,
) -> Validation:
    """Apply the rules in the module docstring to one candidate task's runs. `no_report_before_fails`: a compiled
    runner (or one that loads every test file up front) gives no report at all when the test patch does not build
    without the fix; then every test counts as failed before, as SWE-bench reads a missing test."""
    not_started = [] if before or (no_report_before_fails and any(after)) else ["before"]
    not_started += [f"after run {i}" for i, run in enumerate(after, 1) if not run]
    if not after:
        not_started.append("no after run")
    if not_started:
        return Validation(False, [], [], f"{NOT_STARTED} ({', '.join(not_started)})", [], [])

    before_results: Results = before or {}
    after_runs: list[Results] = [run for run in after if run]
    fail_to_pass, pass_to_pass, flaky, broken, stuck = [], [], [], [], []
    for test_id in sorted(set(before_results).union(*after_runs)):
        outcomes = {run.get(test_id) for run in after_runs}
        if len(outcomes) > 1:
            flaky.append(test_id)
            continue
        (now,) = outcomes
        was = before_results.get(test_id)
        if now == "passed" and (was is None or was in _FAILING):
            fail_to_pass.append(test_id)
        elif now == "passed" and was == "passed":
            pass_to_pass.append(test_id)
        elif was == "passed" and (now is None or now in _FAILING):
            broken.append(test_id)
        elif was in _FAILING and now in _FAILING:
            stuck.append(test_id)

    patch_tests = tuple(test_ids_in_test_patch or ())
    reason = _reason(fail_to_pass, flaky, broken, stuck, patch_tests)
    return Validation(reason is None, fail_to_pass, pass_to_pass, reason, flaky, broken, stuck, patch_tests)


def _reason(
    fail_to_pass: list[str], flaky: list[str], broken: list[str], stuck: list[str], patch_tests: Collection[str]
) -> str | None:
    """The first reason that applies, in the order of the module docstring; None accepts."""
    if broken:
        return f"PASS→FAIL regression: {_quote(broken)}"
    if flaky:
        return f"flaky: {_quote(flaky)}"
    if not fail_to_pass and stuck:
        return (
            f"no FAIL_TO_PASS: environment broken: {len(stuck)} tests fail before and after the fix ({_quote(stuck)})"
        )
    if not fail_to_pass:
        return "no FAIL_TO_PASS: the tests pass without the fix"
    if patch_tests and not any(_matches(t, patch_tests) for t in fail_to_pass):
        return f"no FAIL_TO_PASS among the test patch's tests (FAIL_TO_PASS: {_quote(fail_to_pass)})"
    return None


def _matches(test_id: str, selectors: Collection[str]) -> bool:
    """Equal, or a prefix ending at an id boundary: `path`, `path::Class`, or `path::test` of `test[p]`."""
    return any(
        test_id == selector or (test_id.startswith(selector) and test_id[len(selector) :].startswith(("::", "[")))
        for selector in selectors
    )


def _quote(ids: list[str]) -> str:
    shown = ", ".join(ids[:_REASON_IDS])
    return shown if len(ids) <= _REASON_IDS else f"{shown} (+{len(ids) - _REASON_IDS} more)"
