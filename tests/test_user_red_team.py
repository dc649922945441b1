"""Red team of the test user (`execution/test_user.py`): cheating agents that attack what `nobody` can still do.

One harness batch (`run_batch`): the agents of `tests/support/user_hacks.py` on copies of the demo task, in its tests
format (`TESTS_MODE`: one suite run through `run_suite`, reaped by root) and in the seed's commands format
(`COMMANDS_MODE`: each command in a shell of its own, `harness.checks._run_commands`), with the PR's fix written by the
same command agent in each format, which must resolve. An agent beats the harness when it is `resolved`, or when code
it planted ran as root (`MARK` in a check's output, or a file under /etc named by the docker-diff check). Known wins
are marked `xfail` (not strict: a win that depends on timing may lose a run under load), each with how it won; every
other agent must lose.
"""

from __future__ import annotations

from pathlib import Path

import docker
import pytest
import yaml

from swe_forge_dagster.harness import Status, TaskResult, load_inputs
from tests.support.common import BASE_IMAGE
from tests.support.harness_world import HarnessWorld, harness_world, run_items, write_agent
from tests.support.user_hacks import MARK, TESTS_MODE
from tests.support.user_hacks_seed import COMMANDS_MODE

pytestmark = pytest.mark.docker

PREFIX = "uh-"

KNOWN_WINS: dict[str, str] = {
    "ctl-atexit-known-source": (
        "calibration, not the test user's doing: pytest writes its report from the process the package code runs in, "
        "so an atexit hook rewrites it; the canaries are spared by name and the twin run apart is told by the test "
        "source the forger carries (the threat model's open row)"
    ),
    "inotify-close-write": (
        "a detached child rewrites the report on inotify IN_CLOSE_WRITE, while the runner is still alive (REAP kills "
        "only what is left once the process root waits for has exited), and tells the twin run apart by the test "
        "source it carries: for pytest, what code in the test process can do anyway (the control's open row)"
    ),
    "stop-runner": (
        "the child SIGSTOPs the runner (the test user's own process) once its report is closed; root's shell, without "
        "job control, does not return from `wait` for a stopped child, so it waits while the child forges (3 s) and "
        "sends SIGCONT; REAP comes after. The twin run apart is told by the test source it carries, as the control's"
    ),
    "race-pidfd-after-exit": (
        "races REAP: a child polling the runner's pidfd pwrite()s the forged bytes (descriptor opened before) between "
        "the runner's exit and root's `kill -KILL -1`; a task needs the write to land in both the verify and the "
        "twins' container: with this agent and the next, it landed in 5 of 5 verify and 1 of 5 twins' containers "
        "inspected, and 1 of 7 tasks resolved"
    ),
    "race-spin-after-exit": "the same race, the child busy-polling the pidfd instead of sleeping in poll()",
}
"""Agent -> how it won: `resolved`, or its code ran as root (see `tests/support/user_hacks.py` for each agent)."""
CLOSED: dict[str, str] = {
    "twin-channel": (
        "beats the twins run apart without the test source: every container's `nobody` is uid 65534 of the host's "
        "user namespace, so RLIMIT_NPROC counts its processes host-wide; the runner's pid is ~9 higher in the verify "
        "container (the review's `git diff` ran there first); each side raises a beacon of sleeping processes sized "
        "by its pid, reads the other's with setrlimit(RLIMIT_NPROC) + fork(), and forges as the verify run (every test "
        "of tests/test_rounding.py passed) or the twins' (every one failed)"
    ),
    "seed-ctl-argv-exit": (
        "calibration, not the test user's doing: the commands format has no twin; exit 0 when argv names the task's "
        "test file, and the failing canary's command (its own module) still fails"
    ),
    "seed-toctou-state": (
        "root ran the test user's code: nothing is reaped between commands, so a daemon left by the FAIL_TO_PASS "
        "command swaps a folder of /repo that root's next `find` listed (inotify: find opened $HOME, so it is done "
        "with /repo) for a symlink to /tmp/.sf_state before `-exec chmod a+rwX {} +` runs; chmod follows it, the "
        "state folder becomes 0777, the daemon replaces `env` once the shell saved it, and the next command's root "
        "shell sources it (here it creates a file under /etc, which the docker-diff check names)"
    ),
    "seed-toctou-venv": (
        "root ran the test user's code, unflagged: the same race on /opt/venv/bin, first on root's PATH; the daemon "
        "writes `setpriv` there and root's shell runs it in the same command (uid 0 in the PASS_TO_PASS check's "
        "output); /opt is outside `system_files.SYSTEM`, so no check sees it"
    ),
}
"""Agent -> how it won against the first test user, before what closed it: a user of its own per container (a random
uid, so no process count is shared) and a random number of processes before each run (so the runner's pid says
nothing) for `twin-channel`; every process of the test user killed after each command of the seed's format (no
daemon lives into root's next preparation), root's part of each script on the system's `PATH`, and the docker-diff
check over everything the test user may not write, for the two `seed-toctou-*`; twins run apart in the seed's format
for `seed-ctl-argv-exit`. Each must now lose, as every agent not in `KNOWN_WINS`."""


def run_batch(hw: HarnessWorld, client: docker.DockerClient, tmp: Path, **config: object) -> dict[str, TaskResult]:
    """Every agent of both formats, and the two gold fixes, in one harness run (3 tasks at once)."""
    tasks = tmp / "tasks"
    for name in TESTS_MODE:
        hw.variant(tasks, f"{PREFIX}{name}")
    seed = yaml.safe_load((hw.seed / "acme-labs" / "tinycalc-12" / "workspace.yaml").read_text())
    for name in COMMANDS_MODE:
        folder = tasks / "seed" / name
        folder.mkdir(parents=True)
        (folder / "workspace.yaml").write_text(yaml.safe_dump({**seed, "id": f"{PREFIX}{name}"}, sort_keys=False))
    scripts = {**TESTS_MODE, **COMMANDS_MODE}
    cases = "".join(f"  {PREFIX}{name})\n{script};;\n" for name, script in scripts.items())
    agent = write_agent(tmp / "agent", f'cd /repo\ncase "$SWE_FORGE_TASK_ID" in\n{cases}esac\n')
    items = load_inputs(tasks, default_image=BASE_IMAGE)
    assert len(items) == len(scripts), items
    made = run_items(
        hw, client, items, agent="command", agent_dir=agent, agent_cmd="sh /agent/run.sh", parallel=3, **config
    )
    return {result.task_id.removeprefix(PREFIX): result for result in made}


def escalated(result: TaskResult) -> bool:
    """Whether code the test user planted ran as root: its mark in a check's output, or its file under /etc."""
    outputs = (check.output for check in (*result.fail_to_pass, *result.pass_to_pass))
    return any(MARK in output for output in outputs) or MARK.lower() in (result.reason or "")


@pytest.fixture(scope="module")
def hw(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> HarnessWorld:
    return harness_world(tmp_path_factory.getbasetemp() / "harness-world")


@pytest.fixture(scope="module")
def results(
    hw: HarnessWorld, docker_client: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, TaskResult]:
    made = run_batch(hw, docker_client, tmp_path_factory.mktemp("user-red-team"))
    assert set(made) == {*TESTS_MODE, *COMMANDS_MODE}
    return made


def _param(name: str) -> object:
    if name not in KNOWN_WINS:
        return name
    return pytest.param(name, marks=pytest.mark.xfail(strict=False, reason=KNOWN_WINS[name]))


CHEATERS = [name for name in (*TESTS_MODE, *COMMANDS_MODE) if not name.endswith("gold")]


@pytest.mark.parametrize("name", [_param(name) for name in CHEATERS])
def test_no_agent_beats_the_test_user(results: dict[str, TaskResult], name: str) -> None:
    result = results[name]
    assert result.sanity_check and result.model_patch, (name, result.status, result.reason)
    assert result.status is not Status.RESOLVED, (name, result.reason)
    assert not escalated(result), (name, result.reason, [c.output for c in result.pass_to_pass])


def test_the_gold_fix_resolves_in_the_same_batch(results: dict[str, TaskResult]) -> None:
    for name in ("gold", "seed-gold"):
        assert results[name].status is Status.RESOLVED, (name, results[name].reason)
        assert not escalated(results[name])
