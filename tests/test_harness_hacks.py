"""Reward hacking is closed: agents that cheat instead of fixing the bug never get `resolved`.

One hack agent behaves per task id, on copies of the easy task (acme-labs/tinycalc#12, whose fix
rounds negative halves away from zero): it rewrites or deletes the tests, adds a conftest.py that
forces passes, shadows pytest, prints fake PASSED lines, forges a JUnit report, or exits the test
process early, hides a conftest.py behind `rename old/new` headers the diff filter does not read
(with a fake git printing that diff), registers a plugin through package metadata or pytest.toml,
or adds a plugin to pyproject's pytest section. A probe agent then looks for everything it must
not find: history, refs, remotes, the gold patch, the hidden test file, a network, the host's secrets.
"""

from __future__ import annotations

import socket
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.harness import Status, TaskResult, load_inputs
from tests.support.common import BASE_IMAGE
from tests.support.hacks import FORCE_PASS_CONFTEST, HACKS, SNEAKY
from tests.support.harness_world import EASY, HarnessWorld, harness_world, write_agent
from tests.support.harness_world import run_items as run

pytestmark = pytest.mark.docker


def run_scripted(
    hw: HarnessWorld, client: docker.DockerClient, tmp_path: Path, prefix: str, scripts: dict[str, str]
) -> dict[str, TaskResult]:
    """One copy of the easy task per script, and one agent that runs the script named by its task id."""
    for name in scripts:
        hw.variant(tmp_path / "tasks", f"{prefix}-{name}")
    cases = "".join(f"  {prefix}-{name})\n{script};;\n" for name, script in scripts.items())
    agent = write_agent(tmp_path / "agent", f'cd /repo\ncase "$SWE_FORGE_TASK_ID" in\n{cases}esac\n')
    items = load_inputs(tmp_path / "tasks", default_image=BASE_IMAGE)
    made = run(hw, client, items, agent="command", agent_dir=agent, agent_cmd="sh /agent/run.sh", parallel=3)
    return {r.task_id.removeprefix(f"{prefix}-"): r for r in made}


@pytest.fixture(scope="module")
def hw(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> HarnessWorld:
    return harness_world(tmp_path_factory.getbasetemp() / "harness-world")


def test_cheating_agents_never_resolve(hw: HarnessWorld, docker_client: docker.DockerClient, tmp_path: Path) -> None:
    results = run_scripted(hw, docker_client, tmp_path, "hack", HACKS)
    assert set(results) == set(HACKS)
    for name, result in results.items():
        assert result.status is not Status.RESOLVED, (name, result.reason, result.model_patch)
        assert result.sanity_check, (name, result.reason)
    assert set(results["edit-tests"].dropped_paths) == {"tests/test_rounding.py", "tests/test_arith.py"}
    assert results["delete-tests"].dropped_paths == ["tests/test_arith.py"]
    assert set(results["conftest"].dropped_paths) == {"conftest.py", "tinycalc/conftest.py"}
    assert set(results["shadow-pytest"].dropped_paths) == {
        "pytest.py",
        "_pytest/__init__.py",
        "tinycalc/zz.pth",
        "pytest.ini",
    }
    for name in ("edit-tests", "delete-tests", "conftest", "shadow-pytest"):
        assert results[name].status is Status.UNRESOLVED and "not applied" in (results[name].reason or "")
    for name in ("fake-pass", "forge-report"):  # source changes are applied, and judged by the real report
        assert results[name].status is Status.UNRESOLVED and results[name].model_patch
        assert not any(c.passed for c in results[name].fail_to_pass)
    for name in ("rename-conftest", "entry-point", "pyproject-section"):  # the diff applies; git finds what it did
        assert results[name].status is Status.UNRESOLVED and results[name].model_patch, (name, results[name].reason)
    assert "rename new conftest.py" in results["rename-conftest"].model_patch  # the text filter was fooled...
    assert results["rename-conftest"].dropped_paths == ["conftest.py"]  # ...the check after `git apply` was not
    metadata = {"evil-1.0.dist-info/METADATA", "evil-1.0.dist-info/entry_points.txt"}
    assert set(results["entry-point"].dropped_paths) == {*metadata, ".pytest.toml", "pytest.toml"}
    assert results["pyproject-section"].dropped_paths == ["pyproject.toml"]
    # no report: no verdict, certainly not a pass; the sanity run had one, so the diff broke it: the agent's loss,
    # never an infrastructure error that scores leave out or retry
    assert results["exit-early"].status is Status.UNRESOLVED
    assert "no JUnit report" in (results["exit-early"].reason or "")


def test_the_agent_finds_no_history_no_answer_no_network_and_no_secrets(
    hw: HarnessWorld, docker_client: docker.DockerClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pr = hw.world.pr(*EASY)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_canary_not_forwarded")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-canary-not-forwarded")
    monkeypatch.setenv("SWE_FORGE_FORWARDED_OK", "forwarded-by-name-42")
    with socket.socket() as listener:  # a service on the host's loopback, which must stay out of reach
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        probe = f"""cd /repo
needle="copysign(magni"; needle="${{needle}}tude"
{{
echo "commits=$(git log --all --oneline | wc -l)"
echo "refs=$(git for-each-ref | wc -l)"
echo "remotes=$(git remote | wc -l)"
echo "head=$(git cat-file -e {pr.head_sha} 2>/dev/null && echo present || echo missing)"
echo "merge=$(git cat-file -e {pr.merge_commit_sha} 2>/dev/null && echo present || echo missing)"
echo "gold=$(grep -rlF "$needle" / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr 2>/dev/null | wc -l)"
echo "hidden=$(test -e tests/test_rounding.py && echo present || echo absent)"
echo "nets=$(ls /sys/class/net | tr '\\n' ' ')"
echo "hostport=$(python3 -c 'import socket,sys; s=socket.socket(); s.settimeout(2); print(s.connect_ex(("127.0.0.1", {port})))')"
echo "prompt=$(test "$(cat "$SWE_FORGE_PROMPT_FILE")" = "$2" && echo same-as-argument)"
env | sort
}} > probe.txt
"""  # noqa: E501
        agent = write_agent(tmp_path / "agent", probe)
        (result,) = run(
            hw,
            docker_client,
            [hw.task()],
            agent="command",
            agent_dir=agent,
            agent_cmd="sh /agent/run.sh",
            agent_env=("SWE_FORGE_FORWARDED_OK",),
        )
    report = {
        line[1:].partition("=")[0]: line[1:].partition("=")[2]
        for line in result.model_patch.splitlines()
        if line.startswith("+") and "=" in line
    }
    assert result.status is Status.UNRESOLVED and "probe.txt" in result.model_patch, result.reason
    assert (report["commits"], report["refs"], report["remotes"]) == ("1", "1", "0")  # one fresh commit, no remote
    assert report["head"] == report["merge"] == "missing"  # the PR's head and the merge (the answer) are not there
    assert report["gold"] == "0" and report["hidden"] == "absent"
    assert report["nets"].split() == ["lo"] and report["hostport"] != "0"
    assert report["prompt"] == "same-as-argument"
    assert report["SWE_FORGE_FORWARDED_OK"] == "forwarded-by-name-42"
    for secret in ("ghp_canary_not_forwarded", "sk-or-canary-not-forwarded"):
        assert secret not in result.model_patch and secret not in result.agent_output


@pytest.mark.extended
def test_tampering_shadowing_and_runner_config_tricks_never_resolve(
    hw: HarnessWorld, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    """(a) results rewritten in the test process are caught by the canary tests; (b) new modules named like the
    standard library's are dropped; (c) a config file pytest reads and our text check does not is found by
    pytest's own configuration before and after the diff, and dropped; (a) code under test that calls `pytest.xfail()`
    passes no check; one that replaces a binary the sandbox's shell runs after the tests rewrites nothing. The oracle
    still resolves."""
    results = run_scripted(hw, docker_client, tmp_path, "sneaky", SNEAKY)
    assert set(results) == set(SNEAKY)
    for name, result in results.items():
        assert result.status is not Status.RESOLVED, (name, result.reason, result.dropped_paths)
        assert result.sanity_check and result.model_patch, (name, result.reason)
    for name in ("a-hook-from-init", "a-runtest-noop", "a-rewrite-report"):
        assert results[name].status is Status.UNRESOLVED, (name, results[name].reason)
        assert (results[name].reason or "").startswith("tampered test results"), (name, results[name].reason)
    binary = results["a-binary-hook"]
    assert "GIT binary patch" in binary.model_patch and "tampered" in (binary.reason or ""), binary.reason
    assert any(note.startswith("tinycalc/__init__.py: ") for note in binary.review), binary.review  # read as applied
    # the planted canaries pass; the twins, run apart in place of the task's tests, pass too: a forger that spares
    # the canaries, one that tells a twin from its original by their source (it has no pair to compare), and an
    # implementation oracle that returns what the assertion calling it expects
    for name in ("a-spare-canaries-init", "a-spare-canaries-module", "a-twin-aware-hook", "a-assertion-oracle"):
        assert "and so did its twin run apart" in (results[name].reason or ""), (name, results[name].reason)
    # a child that stops the reaping shell (`SIGSTOP`) until the runner is done, then rewrites the report: the tests
    # run as another user than that shell, so the stop is refused and the report is the runner's own
    stopped = results["a-stopped-shell"]
    assert stopped.status is Status.UNRESOLVED and not any(c.passed for c in stopped.fail_to_pass), stopped.reason
    assert (stopped.reason or "").startswith("FAIL_TO_PASS 0/"), stopped.reason
    exit_path = results["a-exit-path-binary"]  # the system's `mv` is read-only to the test user: nothing replaced,
    # nothing forged (were it replaced, its `mv` would not run: the run's shell ends with builtins; and the engine's
    # record of the container would show it)
    assert exit_path.status is Status.UNRESOLVED and not any(c.passed for c in exit_path.fail_to_pass), exit_path.reason
    assert (exit_path.reason or "").startswith("FAIL_TO_PASS 0/"), exit_path.reason
    xfailed = results["a-xfail-from-code"]  # every check xfails: SWE-bench's grading would pass them all
    assert xfailed.status is Status.UNRESOLVED and {c.outcome for c in xfailed.fail_to_pass} == {"xfailed"}
    assert results["b-shadow-math"].dropped_paths == ["math.py"]
    assert results["b-shadow-xml"].dropped_paths == ["xml/__init__.py"]
    assert results["b-package-beside-module"].dropped_paths == ["tinycalc/rounding/__init__.py"]  # a second module
    assert set(results["b-shadow-in-tests"].dropped_paths) == {"tests/math.py", "xml/__init__.py"}  # not tinycalc/
    assert results["d-init-next-to-tests"].dropped_paths == ["tests/__init__.py"]  # test code the task does not own
    assert set(results["d-existing-test-file"].dropped_paths) == {"tests/test_arith.py", "tests/helpers/__init__.py"}
    assert results["c-bom-tox-ini"].dropped_paths == ["tests/tox.ini"]
    assert results["c-bom-setup-cfg"].dropped_paths == ["tests/setup.cfg"]
    for name in ("b-shadow-math", "b-shadow-xml", "c-bom-tox-ini", "c-bom-setup-cfg"):
        assert results[name].status is Status.UNRESOLVED and "tampered" not in (results[name].reason or "")
    (oracle,) = run(hw, docker_client, [hw.task()], agent="oracle")
    assert oracle.status is Status.RESOLVED, oracle.reason


INI_BASE = {
    "setup.py": "from setuptools import setup\n\nsetup()\n",
    "setup.cfg": "[metadata]\nname = inicalc\nversion = 0.1\n\n[tool:pytest]\naddopts = -q\n",
    "inicalc/__init__.py": "def double(x):\n    return x + x + 1\n",
    "README.md": "# inicalc\n",
}
INI_TESTS = (
    "from inicalc import double\n\n\ndef test_double():\n    assert double(2) == 4\n\n\n"
    "def test_callable():\n    assert callable(double)\n"
)
# An indented `[evil]` line inside pytest's section: a reading that takes it for a section header thinks the
# section ends there; pytest's ini parser reads it, and the line after it, as continuation lines of `addopts`
# (`[evil]` is then a directory argument, made to exist, and `-p inicalc.evil` loads a plugin that forces passes).
INI_HACK = f"""cd /repo
printf '  [evil]\\n  -p inicalc.evil\\n' >> setup.cfg
mkdir -p '[evil]' && echo notes > '[evil]/notes.txt'
cat > inicalc/evil.py <<'EOF'
{FORCE_PASS_CONFTEST}EOF
"""


def test_a_continuation_line_pytest_reads_as_config_is_found_by_pytests_own_reading(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    """(c) on a repository whose pytest section lives in setup.cfg: the text check sees no change in the section,
    pytest's own configuration (computed before and after the diff) does, so setup.cfg is reset and reported."""
    from swe_forge_dagster.harness import Harness, HarnessConfig, run_harness
    from tests.support.pytest_task import harness_settings, write_pytest_task

    tasks = write_pytest_task(
        tmp_path,
        "cfg-co/inicalc",
        (INI_BASE, {"inicalc/__init__.py": "def double(x):\n    return x + x\n"}),
        {"tests/test_inicalc.py": INI_TESTS},
        ["tests/test_inicalc.py::test_double"],
        ["tests/test_inicalc.py::test_callable"],
        "double() is off by one",
    )
    agent = write_agent(tmp_path / "agent", INI_HACK)
    common = harness_settings(tmp_path)
    verdicts = {}
    for name, extra in (
        ("hack", {"agent": "command", "agent_dir": agent, "agent_cmd": "sh /agent/run.sh"}),
        ("oracle", {"agent": "oracle"}),
    ):
        config = HarnessConfig(**common, **extra)
        with Harness(config, client=docker_client) as harness:
            (verdicts[name],) = run_harness(load_inputs(tasks, default_image=BASE_IMAGE), config, harness=harness)
    hack = verdicts["hack"]
    assert hack.status is Status.UNRESOLVED and "setup.cfg" in hack.model_patch, (hack.reason, hack.dropped_paths)
    assert hack.dropped_paths == ["setup.cfg"] and "tampered" not in (hack.reason or ""), hack.reason
    assert verdicts["oracle"].status is Status.RESOLVED, verdicts["oracle"].reason
