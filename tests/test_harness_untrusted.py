"""Untrusted input through the real CLI: text from agents and files is printed inert, and a malformed record
is one task's error while the others run.

Acceptance (issue 13 e, g): an agent that prints rich markup and escape sequences does not crash
`swe-forge harness` in table mode (the summary prints, `-o` is written, the markup shows as written); a
SWE-bench JSONL with bad records evaluates the good instance and reports each bad one as `setup_error`
with where and why (and `validate -i` reports them as `error` the same way).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.common.terminal import markup_safe, plain
from swe_forge_dagster.demo.worlds.harness_task import VENV_INSTALL, world_task_record
from swe_forge_dagster.export.swebench import to_record
from tests.support.common import BASE_IMAGE
from tests.support.harness_world import EASY, HarnessWorld, harness_world, write_agent

MARKUP = "[/x] [bold red]FAKE resolved[/] :warning:"


@pytest.fixture(scope="module")
def hw(tmp_path_factory: pytest.TempPathFactory) -> HarnessWorld:
    return harness_world(tmp_path_factory.getbasetemp() / "harness-world")


def cli(hw: HarnessWorld, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`swe-forge <args>` in a subprocess with a wide, non-terminal console and its own home."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SWE_FORGE_")},
        "COLUMNS": "400",
        "SWE_FORGE_HOME": str(tmp_path / "home"),
        "SWE_FORGE_GIT_URL": hw.world.url_template,
    }
    argv = [sys.executable, "-m", "swe_forge_dagster.cli", *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)


def test_plain_text_spells_out_what_a_terminal_would_obey() -> None:
    assert plain("a\x1b[2Jb\nc\u202ed\x9b\x07") == "a\\x1b[2Jb\\nc\\u202ed\\x9b\\x07"
    assert plain("one\ntwo\x1b", multiline=True) == "one\n  two\\x1b"
    assert markup_safe(MARKUP) == "\\[/x] \\[bold red]FAKE resolved\\[/] :warning:"


def test_usage_errors_print_markup_as_written(hw: HarnessWorld, tmp_path: Path) -> None:
    proc = cli(hw, tmp_path, "harness", "-i", str(tmp_path), "--agent", "[/x]\x1b[31m")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--agent must be command or oracle, not '[/x]\\x1b[31m'" in proc.stderr and "\x1b" not in proc.stderr


@pytest.mark.docker
def test_a_markup_printing_agent_cannot_crash_or_spoof_the_table(
    hw: HarnessWorld, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    inputs = tmp_path / "inputs"
    shutil.copytree(hw.tasks / "acme-labs__tinycalc-12", inputs / "acme-labs__tinycalc-12")
    for name in ("[/x]", "\x1b[31mevil"):  # directory names are labels of broken tasks: untrusted too
        (inputs / name).mkdir(parents=True)
        (inputs / name / "workspace.yaml").write_text("id: [unclosed\n")
    agent = write_agent(tmp_path / "agent", f"printf '%s \\033[2J\\033[31mred\\033[0m\\n' '{MARKUP}'\nexit 3\n")
    summary_file = tmp_path / "out" / "summary.json"
    proc = cli(
        hw,
        tmp_path,
        "harness",
        "-i",
        str(inputs),
        "--agent-dir",
        str(agent),
        "--agent-cmd",
        "sh /agent/run.sh",
        "--docker-image",
        BASE_IMAGE,
        "--no-record",
        "-o",
        str(summary_file),
    )
    assert proc.returncode == 1, proc.stderr[-3000:]  # the broken inputs are setup_errors; nothing crashed
    assert "Traceback" not in proc.stderr and "MarkupError" not in proc.stderr
    summary = json.loads(summary_file.read_text())
    by_id = {r["task_id"]: r for r in summary["results"]}
    assert by_id["acme-labs__tinycalc-12"]["status"] == "agent_error"
    assert MARKUP in by_id["acme-labs__tinycalc-12"]["error"]  # the JSON keeps the agent's text exactly
    assert {by_id[name]["status"] for name in ("[/x]", "\x1b[31mevil")} == {"setup_error"}
    # The table and the progress lines show it all as written: markup literal, escapes spelled out.
    assert "harness results" in proc.stdout and "total 3: " in proc.stdout
    for stream in (proc.stdout, proc.stderr):
        assert MARKUP in stream and "\\x1b[2J\\x1b[31mred\\x1b[0m" in stream
        assert "\\x1b[31mevil" in stream and "[/x]" in stream
        assert "\x1b" not in stream  # no escape sequence of the agent's (nor colours: not a terminal) got through


@pytest.mark.docker
def test_a_bad_record_is_one_setup_error_and_the_good_ones_run(
    hw: HarnessWorld, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    good = to_record(world_task_record(hw.cache, hw.world.pr(*EASY)).instance)
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps({**good, "instance_id": "acme-labs__tinycalc-98", "base_commit": 12345, "patch": ["x"]}),
        json.dumps({"instance_id": "acme-labs__tinycalc-99"}),
        json.dumps(["not", "an", "object"]),
    ]
    instances = tmp_path / "instances.jsonl"
    instances.write_text("\n".join(lines) + "\n")
    spec = tmp_path / "envs.json"
    spec.write_text(json.dumps({"acme-labs/tinycalc": {"image": BASE_IMAGE, "install_commands": [VENV_INSTALL]}}))
    proc = cli(
        hw,
        tmp_path,
        "harness",
        "-i",
        str(instances),
        "--env-spec",
        str(spec),
        "--agent",
        "oracle",
        "--docker-image",
        BASE_IMAGE,
        "--no-record",
        "--json",
    )
    assert proc.returncode == 1, proc.stderr[-3000:]  # some task could not be evaluated: the bad records
    summary = json.loads(proc.stdout)  # stdout holds the JSON only
    assert (summary["total"], summary["resolved"], summary["setup_error"]) == (5, 1, 4), summary
    by_id = {r["task_id"]: r for r in summary["results"]}
    assert by_id["acme-labs__tinycalc-12"]["status"] == "resolved"
    reasons = {task_id: r["error"] for task_id, r in by_id.items() if r["status"] == "setup_error"}
    assert "instances.jsonl:2: invalid JSON" in reasons["instances.jsonl:2"]
    assert "base_commit: Input should be a valid string" in reasons["acme-labs__tinycalc-98"]
    assert "patch: Field required" in reasons["acme-labs__tinycalc-99"]
    assert "not a JSON object" in reasons["instances.jsonl:5"]
    # --json still reports progress on stderr, a line per finished task
    assert "resolved    acme-labs__tinycalc-12" in proc.stderr and "setup_error instances.jsonl:2" in proc.stderr

    bad_only = tmp_path / "bad-only.jsonl"
    bad_only.write_text("\n".join(lines[1:]) + "\n")
    checked = cli(hw, tmp_path, "validate", "-i", str(bad_only), "--json")
    assert checked.returncode == 1, checked.stderr[-3000:]
    report = json.loads(checked.stdout)
    assert report["total"] == 4 and report["by_status"] == {"error": 4}
    errors = {r["instance_id"]: r["reason"] for r in report["results"]}
    assert "invalid JSON" in errors["bad-only.jsonl:1"] and "base_commit" in errors["acme-labs__tinycalc-98"]
