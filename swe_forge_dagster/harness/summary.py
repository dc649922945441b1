"""The seed's JSON summary of a harness run, and the exit code a CI can act on.

Exit codes of `swe-forge harness`:
- 0: every task was evaluated; its status is a verdict (resolved, unresolved, agent_error,
  sanity_fail), whatever the agent scored. A CI that wants a score reads the JSON.
- 1: at least one task could not be evaluated (setup_error or test_error: a missing repo or
  image, a malformed input, a dead Docker engine, checks that give no verdict).
- 2: bad usage (unknown option, missing --input, unreadable --env-spec, an --agent-env that is
  not set); nothing was run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from swe_forge_dagster.harness.models import INFRA_STATUSES, Status, TaskResult

EXIT_OK = 0
EXIT_NOT_EVALUATED = 1


def counts(results: Sequence[TaskResult]) -> dict[str, int]:
    """How many tasks ended in each status (every status present, zeros included)."""
    tally = dict.fromkeys((status.value for status in Status), 0)
    for result in results:
        tally[result.status.value] += 1
    return tally


def average_agent_time(results: Sequence[TaskResult]) -> float:
    """Mean agent time over the tasks whose agent ran, to 0.1 s (as the seed rounds it)."""
    times = [r.agent_duration_secs for r in results if r.agent_duration_secs > 0]
    return round(sum(times) / len(times), 1) if times else 0.0


def summarize(results: Sequence[TaskResult], runtimes: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, Any]:
    """`{total, resolved, unresolved, agent_error, test_error, setup_error, sanity_fail,
    avg_agent_time_secs, results: [...]}`, the seed's shape and key order. With `runtimes` (image -> what its
    environment records, `execution.runtime_record`), each result also says what it ran on (`runtime`)."""
    tally = counts(results)
    rows = [result.summary() for result in results]
    if runtimes is not None:
        for row, result in zip(rows, results, strict=True):
            row["runtime"] = dict(runtimes.get(result.image or "", {}))
    return {
        "total": len(results),
        **{status.value: tally[status.value] for status in Status},
        "avg_agent_time_secs": average_agent_time(results),
        "results": rows,
    }


def exit_code(results: Sequence[TaskResult]) -> int:
    """0 when every task got a verdict, 1 when some could not be evaluated (see the module docstring)."""
    return EXIT_NOT_EVALUATED if any(r.status in INFRA_STATUSES for r in results) else EXIT_OK
