"""Test ids in SWE-bench's form, checked against SWE-bench's own code (the `swebench` package).

SWE-bench's harness runs pytest with `-rA` and its log parser (`parse_log_pytest`) keeps the
first whitespace-delimited token after the status word as the test id, so a parametrized id with
a space (`test_fail[custom-Custom error message.]`) becomes `test_fail[custom-Custom`. Our
validation reads JUnit (full ids); the exported lists must be what SWE-bench's parser would
produce from the same run, and the harness must grade a SWE-bench instance by those cut ids.
Here a real pytest run on the host (no Docker: the module imports nothing of a repository) is
read both ways and compared.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from swe_forge_dagster.execution.languages.python_runner import PYTEST
from swe_forge_dagster.execution.languages.registry import runner_for
from swe_forge_dagster.execution.runners import JUNIT, graded_outcomes, swebench_ids

swebench_parsers = pytest.importorskip("swebench.harness.log_parsers.python", reason="`swebench` not installed")

MODULE = """
import pytest

@pytest.mark.parametrize("message", ["custom-Custom error message.", "plain", "two  spaces", "tab\\there"])
def test_fail(message):
    assert "e" in message or message == "plain"

class TestErrorMessages:
    @pytest.mark.parametrize("x", ["a b", "c"])
    def test_param(self, x):
        assert x != "c"

    def test_ok(self):
        pass

@pytest.mark.skip(reason="not today")
def test_skipped():
    pass
"""


def run_pytest(tmp_path: Path) -> tuple[str, bytes, list[str]]:
    """(the console log, the JUnit report, the test files) of one real run with our command plus -rA."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_ids.py").write_text(textwrap.dedent(MODULE))
    files = ["tests/test_ids.py"]
    report = tmp_path / "report.xml"
    command, _ = runner_for("pytest").command(PYTEST, files, str(report))
    assert "-rA" in command  # the log SWE-bench's parser reads comes from our own command
    done = subprocess.run(
        [sys.executable, "-m", *command.split()[2:]], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert report.is_file(), done.stdout[-2000:]
    return done.stdout, report.read_bytes(), files


def test_our_ids_are_what_swebenchs_parser_reads_from_the_same_run(tmp_path: Path) -> None:
    log, xml, files = run_pytest(tmp_path)
    runner = runner_for("pytest")
    full = runner.parse(xml, files)
    assert "tests/test_ids.py::test_fail[custom-Custom error message.]" in full  # JUnit keeps the full id
    theirs = swebench_parsers.parse_log_pytest(log, None)
    ours = graded_outcomes(runner, full)
    status = {"passed": "PASSED", "failed": "FAILED", "error": "ERROR", "skipped": "SKIPPED"}
    # SWE-bench's parser drops pytest's skip summaries (`SKIPPED [1] file:line: reason`): skipped tests are
    # in no list of ours either (validation never counts a skipped test as FAIL_TO_PASS or PASS_TO_PASS)
    assert {test_id: status[outcome] for test_id, outcome in ours.items() if outcome != "skipped"} == theirs
    assert ours["tests/test_ids.py::test_skipped"] == "skipped"
    assert "tests/test_ids.py::test_fail[custom-Custom" in theirs
    # the exported lists: cut, deduplicated, in order
    full_ids = ["tests/test_ids.py::test_fail[two  spaces]", "tests/test_ids.py::test_fail[two x]", "t.py::t[plain]"]
    assert swebench_ids(runner, full_ids) == ["tests/test_ids.py::test_fail[two", "t.py::t[plain]"]
    assert JUNIT not in log


def test_real_swebench_ids_are_already_in_the_cut_form(shared_fixtures: Path) -> None:
    from swe_forge_dagster.export.swebench import read_instances

    path = shared_fixtures / "swebench" / "lite-dev" / "princeton-nlp-SWE-bench_Lite-dev.json"
    runner = runner_for("pytest")
    instances = {inst.instance_id: inst for inst in read_instances(path)}
    marshmallow = instances["marshmallow-code__marshmallow-1359"]
    assert any(test_id.endswith("[custom-Custom") for test_id in marshmallow.PASS_TO_PASS + marshmallow.FAIL_TO_PASS)
    for inst in instances.values():
        ids = inst.FAIL_TO_PASS + inst.PASS_TO_PASS
        assert swebench_ids(runner, ids) == list(dict.fromkeys(ids)), inst.instance_id
