"""Tests run as another user than the shell that reaps them (issue 37, item 2), in a real container. A suite run
(`execution.suite.run_suite`, the one way tests run: validation, the sanity run, the verification, the twins apart)
gives the test process a user of its own (`sf-test`, a random uid per container), no capability: it can signal none
of root's processes (the shell that kills what the runner leaves behind and then hands the report over), cannot
regain root, cannot write the system's files, yet writes its checkout, its home and the temporary folders, and runs
git in the checkout root owns. A link a diff planted in the checkout is not followed when the checkout is opened to
it. Each of these is a test of the suite itself, so its outcome comes from the runner's own report, read as every
verdict is.
"""

from __future__ import annotations

import docker
import pytest

from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.sandbox import Sandbox
from swe_forge_dagster.execution.suite import run_suite
from swe_forge_dagster.languages.python.runner import PYTEST_RUNNER
from tests.support.common import BASE_IMAGE

pytestmark = pytest.mark.docker

REGIME = r"""import os, pathlib, signal, subprocess


def root_processes():
    found = []
    for status in pathlib.Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:
            continue
        if fields.get("Uid", "").split()[:1] == ["0"]:
            found.append(int(status.parent.name))
    return found


def test_the_tests_run_as_a_user_of_their_own_with_no_capability():
    import pwd

    uid = os.getuid()
    assert 10000 <= uid < 65000 and (os.geteuid(), os.getgid()) == (uid, uid)
    assert pwd.getpwuid(uid).pw_name == "sf-test"
    pathlib.Path("/tmp/sf-uid").write_text(str(uid))
    caps = dict(line.split(":", 1) for line in pathlib.Path("/proc/self/status").read_text().splitlines())
    assert int(caps["CapEff"], 16) == 0 and int(caps["CapBnd"], 16) == 0


def test_no_root_process_can_be_signalled_not_even_the_reaping_shell():
    roots = root_processes()
    assert roots, "the shell that runs the suite is root's"
    for pid in roots:
        try:
            os.kill(pid, signal.SIGSTOP)
        except PermissionError:
            continue
        raise AssertionError(f"stopped root's process {pid}")


def test_root_cannot_be_regained():
    for call in (lambda: os.setuid(0), lambda: os.seteuid(0)):
        try:
            call()
        except PermissionError:
            continue
        raise AssertionError("became root again")


def test_the_system_is_read_only_and_a_planted_link_was_not_followed():
    for path in ("/usr/bin/sf-probe", "/etc/sf-probe", "/usr/lib/python3/dist-packages/sf_probe.py"):
        try:
            open(path, "w").close()
        except PermissionError:
            continue
        raise AssertionError(f"wrote {path}")
    assert os.stat("/usr/bin").st_mode & 0o777 == 0o755  # /repo/bin-link points there
    for write in (
        lambda: os.rename("/repo/.git", "/repo/.git-moved"),  # root's git reads it in later steps
        lambda: open("/repo/.git/config", "a").close(),
        lambda: open(os.path.expanduser("~/.gitconfig"), "a").close(),
        lambda: os.rename(os.path.expanduser("~/.gitconfig"), "/tmp/moved"),
    ):
        try:
            write()
        except PermissionError:
            continue
        raise AssertionError("changed what root's git reads")


def test_the_checkout_its_home_and_tmp_are_writable_and_git_works_there():
    pathlib.Path("/repo/probe.txt").write_text("x")
    cache = pathlib.Path(os.path.expanduser("~/.cache/sf-probe"))
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "f").write_text("x")
    pathlib.Path(os.path.expanduser("~/.cache/root-made")).write_text("x")  # a cache file root's install made
    pathlib.Path("/tmp/sf-probe").write_text("x")
    done = subprocess.run(["git", "-C", "/repo", "status", "--short"], capture_output=True, text=True)
    assert done.returncode == 0 and "probe.txt" in done.stdout, done.stderr
"""


SETUP = (
    "cd /repo && ln -s /usr/bin bin-link && git init -q . && git add -A && "
    "git -c user.name=t -c user.email=t@t commit -qm base && mkdir -p /root/.cache && chmod 700 /root && "
    "touch /root/.cache/root-made"
)
"""A checkout root owns, with a link a diff could have planted, and a home with a cache root's install made."""


def regime_runs(box: Sandbox, runs: int) -> str:
    """The regime's tests, `runs` times in `box` (all must pass each time); the uid they ran as."""
    box.write_file("/repo/tests/test_regime.py", REGIME)
    setup = box.run(SETUP)
    assert setup.ok, setup.output
    for _ in range(runs):  # and the same in a later run of the same container, once all is opened
        run = run_suite(box, PYTEST_RUNNER.template, ["tests/test_regime.py"], 120, runner=PYTEST_RUNNER)
        assert run.outcomes is not None, (run.error, run.output[-2000:])
        assert run.outcomes and set(run.outcomes.values()) == {"passed"}, (run.outcomes, run.output[-3000:])
    return (box.read_file("/tmp/sf-uid") or b"").decode()


def test_a_suite_runs_as_a_user_that_can_signal_no_root_process(docker_client: docker.DockerClient) -> None:
    config = sandbox_config(build=True, image=BASE_IMAGE, mem_limit="1g", labels={"swe-forge.test": "test-user"})
    with Sandbox.start(docker_client, config, name_hint="test-user") as box:
        uid = regime_runs(box, 2)
        after = box.run("stat -c '%a %U' /usr/bin /repo/.git; git -C /repo log --oneline | wc -l")
        assert after.output.split() == ["755", "root", "755", "root", "1"], after.output  # root's own, still
    with Sandbox.start(docker_client, config, name_hint="test-user-2") as other:
        assert regime_runs(other, 1) != uid  # another container, another user: no count of theirs is shared
