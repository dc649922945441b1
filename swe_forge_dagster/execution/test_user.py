"""Tests run as another user than the shell that reaps them and reads their report.

Why: the code under test runs inside the test process. Run as the container's root, it could stop (`SIGSTOP`) the
shell that is to kill what the runner left behind, and so rewrite the report after the runner had exited; it could
replace any file a later step runs (a virtual environment's interpreter, for the seed's next command). Run as an
unprivileged user with no capability at all (`setpriv --inh-caps=-all --bounding-set=-all`: nothing to regain root
with, under the container's `no-new-privileges`), it can signal none of root's processes, and it can write only
what it is given: the checkout (its `.git` stays root's), its home (the image's `$HOME`, where the toolchains keep
their caches; not the home's own dotfiles, `.gitconfig` among them) and the temporary folders. The system's files,
the interpreters and virtual environments the install made, and the sandbox's own state stay read-only to it.

- **A user of its own per container** (`sf-test`, a random uid drawn once per container and written to its
  /etc/passwd): a uid's process count is the host's, not the container's, so two containers sharing one (the
  verification and the twins run apart, which must not tell each other apart) could signal each other through
  `RLIMIT_NPROC`, and did (a red-team forger). Before each run root also starts a random number of processes, so
  the runner's pid does not say which container ran more steps before its tests (the verification's review).
- **Root's part of the script uses the system's programs only** (`ROOT_PATH`): the environment's `PATH` may lead
  into the checkout or the home (a venv there), which the tests can write; the test command gets that `PATH` back.
  The runner's own start-up lines (a pack's `plugins_off`, which runs the environment's Python) run as the test
  user too.
- **Every process of the test user is killed when its command ends** (`REAP`: stopped first, so a fork during the
  kill does not escape, then killed), before the report is read and before any later step of root's, and again
  (as that user: only its own) before the next command is prepared, for one a timeout's kill of the process group
  missed: no test process is alive while root opens the tree to the next run (a live one could swap a folder for a
  link between `find` and `chmod`), and the shell ends with builtins only (`LAST`), saving no state.
- **Open:** code installed under the home (`pip --user`, a venv or a toolchain there) is writable by the test user,
  as a venv inside the checkout is, so a later command of the seed's format may run what a test changed; the
  canaries and twins still see a forged verdict. The home is opened only when it is under /root or /home.
- The uid is drawn below 65,000, inside the 65,536 ids a remapped or rootless engine maps.

Only regular files and folders are opened to the test user (never through a link a diff planted: `chmod` follows
links); files already writable for others are skipped. The checkout and the home are sticky, so their top-level
entries root made (`.git`, `.gitconfig`) cannot be renamed or replaced by it. Git, run by the tests in a checkout
root owns, needs `safe.directory` (set in the home's global config). An image without `setpriv` (not a Debian
one) runs its tests as root, and says so in the run's output (`AS_ROOT_NOTICE`).
"""

from __future__ import annotations

import shlex

from swe_forge_dagster.execution.repo_box import REPO_DIR, WORK_DIR
from swe_forge_dagster.execution.shell_state import STATE_DIR

TEST_USER = "sf-test"
AS_ROOT_NOTICE = "[swe-forge: no setpriv in this image: the tests ran as root]"
ROOT_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
UID_FILE = f"{STATE_DIR}/test_uid"
REAP = (
    "builtin kill -STOP -1 2>/dev/null; builtin kill -STOP -1 2>/dev/null\n"
    "builtin kill -KILL -1 2>/dev/null; builtin kill -KILL -1 2>/dev/null"
)
"""Every process the test command left behind (a child that waits for the runner to exit, then rewrites its report),
stopped and killed by root before the report is read: `kill -1` reaches every process but the shell itself and the
container's init; twice, so one forked while the first signal went round is reached too."""
LAST = f"/bin/rm -f {STATE_DIR}/pgid.$__sf_id\nbuiltin trap - EXIT\nbuiltin exit $__sf_rc"
"""How the run's shell ends after the reaping: with builtins only and without saving the shell's state (the
sandbox saves it on exit with `mv`; while the tests ran as root, one replaced `mv` and rewrote the report from
there). A test command's `cd` and `export` never carry over to the next command."""

_HOME = '__sf_h="${HOME:-/root}"\ncase "$__sf_h" in /root | /root/* | /home/?*) ;; *) __sf_h=/root ;; esac\n'
_OPEN = (
    f'find {REPO_DIR} {WORK_DIR} "$__sf_h" -xdev \\( -path {REPO_DIR}/.git -o -type f '
    r'-path "$__sf_h/.*" ! -path "$__sf_h/*/*" \) -prune -o \( -type f -o -type d \) ! -perm -o+w '
    r"-exec chmod a+rwX {} + 2>/dev/null"
)
OPEN_IN_IMAGE = f"{_HOME}mkdir -p {WORK_DIR}\n{_OPEN}\ntrue"
"""What root opens to the test user, run once where an image is made (an environment's install, before its commit),
so that a container of it finds nothing left to open. Why: the image's files are in its lower layers, and changing
a file's mode there copies the whole file into the container's own layer (overlayfs's copy-up). Opened per run, a
`node_modules` or a cargo `target` was copied into every container a check starts (the real axios row's validation and
two harness runs: over 600 s, against 75 s opened in the image); opened in the image, each run only walks the tree
and opens what the run itself brought (the agent's files)."""

_NEW_USER = (
    f"__sf_uid=$(( 10000 + (RANDOM * 32768 + RANDOM) % 55000 ))\n"
    f'    builtin echo "$__sf_uid" > {UID_FILE}\n'
    f'    builtin echo "{TEST_USER}:x:$__sf_uid:$__sf_uid::$__sf_h:/bin/sh" >> /etc/passwd\n'
    f'    builtin echo "{TEST_USER}:x:$__sf_uid:" >> /etc/group'
)
PREPARE = (
    f'__sf_env_path="$PATH"; PATH={ROOT_PATH}\n'
    f"{_HOME}"
    f"mkdir -p {WORK_DIR}\n"
    f"if command -v setpriv >/dev/null 2>&1; then\n"
    f"  if [ -s {UID_FILE} ]; then IFS= read -r __sf_uid < {UID_FILE}; else\n"
    f"    {_NEW_USER}\n"
    f"  fi\n"
    f"  setpriv --reuid=$__sf_uid --regid=$__sf_uid --clear-groups /bin/bash -c 'kill -KILL -1' 2>/dev/null\n"
    f"  {_OPEN}\n"
    f'  chmod a+rwx,+t {REPO_DIR} "$__sf_h" 2>/dev/null\n'
    f"  command -v git >/dev/null 2>&1 && ! git config --global --get-all safe.directory 2>/dev/null | grep -qx '\\*' "
    f"&& git config --global --add safe.directory '*'\n"
    f"  for __sf_i in $(seq $(( RANDOM % 128 ))); do /bin/true; done\n"
    f"  __sf_as=(setpriv --reuid=$__sf_uid --regid=$__sf_uid --clear-groups --inh-caps=-all --bounding-set=-all --)\n"
    f"else\n"
    f"  builtin echo '{AS_ROOT_NOTICE}'\n"
    f"  __sf_as=()\n"
    f"fi\n"
)
"""Root's lines before a test command, with the system's `PATH`: the test user of this container (made on first
use), the checkout, the home and the work folder opened to it, and `__sf_as` set to the prefix that runs a command
as that user (empty without `setpriv`); the environment's `PATH` kept for the test command."""


def test_command_script(command: str, prelude: str = f"cd {REPO_DIR}") -> str:
    """The whole script of one test command for the sandbox's shell: `PREPARE`, root's `prelude` (with the system's
    programs), `command` through bash as the test user (with the environment's `PATH` and exported variables, in
    the prelude's directory), then every process it left killed, and the shell's end with builtins only. Its exit
    status is the command's."""
    run = f'"${{__sf_as[@]}}" /usr/bin/env PATH="$__sf_env_path" /bin/bash -c {shlex.quote(command)}'
    return f"{PREPARE}{prelude} && {run}\n__sf_rc=$?\n{REAP}\n{LAST}"
