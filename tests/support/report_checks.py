"""What the report parser tests share: the `swebench` package's own log parsers, read in our outcome words."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from swe_forge_dagster.execution.junit import Outcome

_c = pytest.importorskip("swebench.harness.log_parsers.c", reason="`swebench` not installed")
_go, _java, _js, _rust = (
    pytest.importorskip(f"swebench.harness.log_parsers.{m}") for m in ("go", "java", "javascript", "rust")
)
_SWEBENCH: dict[str, Outcome] = {"PASSED": "passed", "FAILED": "failed", "SKIPPED": "skipped"}


def swebench(parser: Callable[..., dict[str, str]], log: str) -> dict[str, Outcome]:
    """A swebench log parser's result in our outcome words (the parsers here do not use the spec)."""
    return {test_id: _SWEBENCH[status] for test_id, status in parser(log, None).items()}


def without(results: dict[str, Outcome], outcome: str) -> dict[str, Outcome]:
    return {test_id: o for test_id, o in results.items() if o != outcome}
