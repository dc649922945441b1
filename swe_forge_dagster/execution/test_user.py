"""Tests run as another user than the shell that reaps them and reads their report.

Why: the code under test runs inside the test process. Run as the container's root, it could stop (`SIGSTOP`) the
shell that is to kill what the runner left behind, and so rewrite the report after the runner had exited; it could
replace any file a later step runs (a virtual environment's interpreter, for the seed's next command). Run as an
unprivileged user (`nobody`: every Debian image has it, so tools that look their user up find one), with no
capability at all (`setpriv --inh-caps=-all --bounding-set=-all`: nothing to regain root with, under the container's
`no-new-privileges`), it can signal none of root's processes, and it can write only what it is given: the checkout
(its `.git` stays root's), its home (the image's `$HOME`, where the toolchains keep their caches; not the home's
own dotfiles, `.gitconfig` among them) and the
temporary folders. The system's files, the interpreters and virtual environments the install made, and the
sandbox's own state stay read-only to it. When the command ends, root kills every process left (`suite.REAP`),
then the report is read from outside the container.

Only regular files and folders are opened to it (never through a symlink a diff may have planted: `chmod` follows
links), once per container: files that are already writable for others are skipped. The checkout and the home are
sticky, so their top-level entries root made (`.git`, `.gitconfig`) cannot be renamed or replaced by it: root's own
git, in later steps, reads only what root wrote. Git, run by the tests in a
checkout root owns, needs `safe.directory` (set in the home's global config). An image without `setpriv` (not a
Debian one) runs its tests as root, and says so in the run's output (`AS_ROOT_NOTICE`).
"""

from __future__ import annotations

import shlex

from swe_forge_dagster.execution.repo_box import REPO_DIR, WORK_DIR

TEST_UID = 65534
"""`nobody`, in every Debian image's /etc/passwd."""
AS_ROOT_NOTICE = "[swe-forge: no setpriv in this image: the tests ran as root]"
_SETPRIV = f"setpriv --reuid={TEST_UID} --regid={TEST_UID} --clear-groups --inh-caps=-all --bounding-set=-all --"
_OPEN = (
    f'__sf_h="${{HOME:-/root}}"; find {REPO_DIR} {WORK_DIR} "$__sf_h" -xdev \\( -path {REPO_DIR}/.git -o -type f '
    r'-path "$__sf_h/.*" ! -path "$__sf_h/*/*" \) -prune -o \( -type f -o -type d \) ! -perm -o+w '
    r"-exec chmod a+rwX {} + 2>/dev/null"
)
PREPARE = (
    f"mkdir -p {WORK_DIR}\n"
    f"if command -v setpriv >/dev/null 2>&1; then\n"
    f"  {_OPEN}\n"
    f'  chmod a+rwx,+t {REPO_DIR} "${{HOME:-/root}}" 2>/dev/null\n'
    f"  command -v git >/dev/null 2>&1 && ! git config --global --get-all safe.directory 2>/dev/null | grep -qx '\\*' "
    f"&& git config --global --add safe.directory '*'\n"
    f"  __sf_as=({_SETPRIV})\n"
    f"else\n"
    f"  builtin echo '{AS_ROOT_NOTICE}'\n"
    f"  __sf_as=()\n"
    f"fi\n"
)
"""Root's lines before a test command: the checkout, the home and the work folder opened to the test user, and
`__sf_as` set to the prefix that runs a command as that user (empty without `setpriv`)."""


def as_test_user(command: str) -> str:
    """Shell lines (for root's shell, after `PREPARE`) that run `command` through bash as the test user; its exit
    status is theirs. Exported variables (the environment's `PATH`, a runner's switches) reach it; nothing else of
    root's shell does."""
    return f'"${{__sf_as[@]}}" /bin/bash -c {shlex.quote(command)}'
