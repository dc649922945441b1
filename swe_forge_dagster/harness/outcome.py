"""A status decided in the middle of a task's evaluation.

Raised by any step of the flow (environment, containers, sanity, agent, verification) and caught once
in `Harness.evaluate`, which turns it into the task's status and reason: every failure becomes a
verdict with a reason, never an exception out of `evaluate`.
"""

from __future__ import annotations

from swe_forge_dagster.harness.models import Status


class HarnessOutcome(Exception):
    """A status decided mid-flow (control flow, caught in `Harness.evaluate`)."""

    def __init__(self, status: Status, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
