"""What an agent may change, decided in the verification container, whatever its diff's text claims.

The agent owns its container, so it can edit, delete or add any file, and even replace `git`
there, so the text of its diff proves nothing about what applying it does.
What it may not change (`is_protected`): the task's own test files (hidden files, files of the
test_patch and seed test files, the test files the checks run) and what a language pack protects
(`LanguagePack.protects`, `registry.protected`): every `conftest.py`, pytest's
configuration files (`pytest.ini`, `.pytest.ini`, `pytest.toml`, `.pytest.toml`),
`*.pth`, `sitecustomize.py`/`usercustomize.py`, package metadata (`*.dist-info/`, `*.egg-info/`,
`*.egg-link`: their `[pytest11]` entry points are plugins pytest loads), NEW files that shadow
`pytest`/`_pytest` (`pytest.py`, `pytest/`, `_pytest/` that do not exist at base), the other runners'
configuration (`.mocharc*`, `jest.config.*`, `vitest.config.*`, `karma.conf.*`, `.cargo/config.toml`)
and NEW Go test files (a `TestMain` in one runs the package's tests its own way). The pytest
sections of `pyproject.toml` (`[tool.pytest...]`), `setup.cfg` (`[tool:pytest]`) and `tox.ini`
(`[pytest]`) are protected too: a change to such a file that changes its pytest section is
dropped as a whole (its other changes with it); other changes to them are applied.
`filter_diff` drops sections on protected paths from the diff text first (so the diff still
applies next to the test_patch), but the authority is `apply_agent_diff`: after `git apply` in
the verification container, that container's own git lists what really changed, and every
protected path among them is reset to its pre-diff state before any check runs. Everything
dropped is reported in the result's `dropped_paths`.

What the environment's install added to the tree (`node_modules/`, generated files: `install_outputs`) comes
from the image, never from the diff: the diff's changes under it are reset too. Test code the task does not own
(each language pack's `test_code`: `tests/` helpers and `__init__.py`, `*_test.go`, `*.spec.ts`, `src/test/`) is
reset to the base commit, so no existing test file, helper or `TestMain` carries a payload.

New top-level modules in the directories the checks import from (`LanguagePack.new_modules`: whatever their
names, since any name can be an installed module, or an optional import of the interpreter, the runner or a
dependency at start-up) are reset as well, and the runner's effective configuration is compared before and after
the diff by the runner's own loader (`RunnerConfig`), which catches config our text reading would miss.

Not covered here: source code that tampers with pytest from inside the test process (it is imported by the
tests, so it runs there): `languages.python.canaries` and `languages.python.twins` detect that in the results.
Test code is decided by the rules that split a PR into its fix and its tests, so a package named `test/` or
`testing/` (django/test, sympy/testing) counts as tests, as SWE-bench's split counts it; a path the gold patch
changes never does. pytest's own `src/_pytest` is source (only a NEW `_pytest/` shadows pytest).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import PurePosixPath

from swe_forge_dagster.execution.patch import split_sections
from swe_forge_dagster.execution.repo_box import (
    GIT,
    REPO_DIR,
    WORK_DIR,
    PatchRejected,
    WorkspaceError,
    as_bytes,
    changed_paths,
    exec_demux,
    put_files,
)
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxError
from swe_forge_dagster.harness.fuzzy_apply import FuzzRefused, fuzzed_diff
from swe_forge_dagster.harness.module_names import second_modules
from swe_forge_dagster.languages.registry import (
    config_section,
    config_section_files,
    is_fixed_dependency_file,
    is_test_code,
    new_modules,
    protected,
)

MAX_CONFIG_BYTES = 1 << 20


# --- what the agent may change --------------------------------------------------------------


def is_protected(
    path: str, task_files: Collection[str] = (), *, new: bool = False, fix_files: Collection[str] = ()
) -> bool:
    """Whether an agent's change to `path` is dropped (see the module docstring).

    `new`: the path does not exist before the agent's change (only then does a `pytest.py`,
    `pytest/` or `_pytest/` count as shadowing pytest: pytest's own source and sympy/testing/pytest.py
    are ordinary source files). Test code the task does not own (`LanguagePack.test_code`: a test helper, a
    `tests/__init__.py`, a Go `TestMain` in an existing `_test.go`) is the repository's, not the fix's: the
    task's test patch brings every test change a fix needs (a path the gold patch changes, `fix_files`, is the fix's).
    So are the manifests and lock files the environment was installed from (`LanguagePack.dependencies_fixed`).
    """
    owned = is_test_code(path) or is_fixed_dependency_file(path)  # the repository's, not the fix's
    return path in task_files or protected(path, new) or (owned and path not in fix_files)


def filter_diff(diff: str, task_files: Collection[str] = (), fix_files: Collection[str] = ()) -> tuple[str, list[str]]:
    """(the diff without sections touching protected paths, the dropped paths). ValueError: not a diff.

    A first pass on the diff's text; `apply_agent_diff` is the authority (the text may lie).
    """
    kept: list[str] = []
    dropped: list[str] = []
    for section in split_sections(diff):
        paths = [section.path] + ([section.old_path] if section.old_path else [])
        new = section.old_path is not None or "\nnew file mode " in section.text.split("\n@@", 1)[0]
        if any(is_protected(path, task_files, new=new, fix_files=fix_files) for path in paths):
            dropped += [path for path in paths if path not in dropped]
        else:
            kept.append(section.text)
    return "".join(kept), dropped


LIST_CHANGES = (
    "git add -A -f && git --literal-pathspecs -c core.quotepath=false diff --cached --no-renames --no-ext-diff "
    "--name-status -z HEAD"
)
# The verification container: snapshot base + the task's tests (and the environment's leftovers,
# ignored or not) as a commit, apply the agent's diff, list what really changed since the snapshot.
VERIFY_SCRIPT = f"""set -e
cd {REPO_DIR}
git add -A -f
{" ".join(GIT)} commit -q --no-verify --allow-empty -m checks
git apply --binary --whitespace=nowarn "{WORK_DIR}/agent.diff" || exit 3
{LIST_CHANGES}
"""
# Reset the listed paths to the snapshot (a symlink in a path's leading directories is removed
# first, so nothing is deleted or written outside /repo through it), then list again.
RESTORE_SCRIPT = f"""set -e
cd {REPO_DIR}
while IFS= read -r -d '' path; do
  p=$path
  while [ "${{p%/*}}" != "$p" ]; do p=${{p%/*}}; if [ -L "$p" ]; then rm -f -- "$p"; fi; done
  rm -rf -- "$path"
  if git --literal-pathspecs cat-file -e "HEAD:$path" 2>/dev/null; then
    git --literal-pathspecs checkout -q HEAD -- "$path"
  fi
done < "{WORK_DIR}/restore.list"
{LIST_CHANGES}
"""
# Each listed config file before and after the agent's diff, base64, one per line (empty: none).
SHOW_SCRIPT = f"""cd {REPO_DIR}
while IFS= read -r -d '' path; do
  git --literal-pathspecs show "HEAD:$path" 2>/dev/null | head -c {MAX_CONFIG_BYTES + 1} | base64 | tr -d '\\n'; echo
  head -c {MAX_CONFIG_BYTES + 1} -- "$path" 2>/dev/null | base64 | tr -d '\\n'; echo
done < "{WORK_DIR}/configs.list"
"""


class ConfigChanged(WorkspaceError):
    """The agent's diff changes the test runner's effective configuration in a way no reset of its config
    files undoes (e.g. a new directory layout that moves pytest's rootdir)."""


def apply_agent_diff(
    box: Sandbox,
    diff: str,
    task_files: Collection[str],
    *,
    protect: bool = True,
    runner_config: RunnerConfig | None = None,
    import_roots: Collection[str] | None = None,
    fix_files: Collection[str] = (),
) -> list[str]:
    """Apply the agent's (text-filtered) diff in the verification container, then reset every protected
    path it really changed, whatever its text claimed; the reset paths. PatchRejected: git refused it.

    Git in this container (which no agent code ever ran in) lists the changes: edits, deletions,
    new files, ignored files and type changes, with no rename detection to hide a path behind.
    New top-level modules in the directories the checks import from (`import_roots`, asked of the environment
    in the sanity container: `languages.python.paths`; without it, every directory that is not a package) are
    reset too, whatever their names, and so is a new file that is a second module for an existing module name
    (`module_names`). With `runner_config` (the runner's own effective configuration, `languages.python.config`,
    `languages.node.config`, `languages.rust.config`, and its answer for the tree before the diff: the sanity
    container's), the files that answer names as the runner's are reset, and a configuration that differs after
    the diff resets every configuration file the diff changed (not one the gold patch changes too: then the
    difference is the task's);
    `ConfigChanged` when it still differs. Its `triggers` say which changed file names make the probe worth asking
    again (pytest's); None asks after every diff (the JavaScript runners', cargo's).
    """
    changes = _applied(box, diff)
    if not protect:  # the oracle's gold patch: trusted, applied whole
        return []
    reset = [path for status, path in changes if is_protected(path, task_files, new=status == "A", fix_files=fix_files)]
    reset += _untracked_outputs(box, [path for _s, path in changes if path not in reset])
    shadows = new_modules(box, changes, import_roots)
    if any(status == "A" for status, _path in changes):
        shadows += second_modules(changes, _tree(box))
    reset += [path for path in shadows if path not in reset]
    if runner_config is not None and runner_config.before is not None:
        named = runner_config.names_files(runner_config.before)
        reset += [path for _s, path in changes if path in named and path not in reset and path not in fix_files]
    shared = config_section_files()
    configs = [path for _s, path in changes if PurePosixPath(path).name in shared and path not in reset]
    if configs:
        reset += _changed_sections(box, configs)
    _restore(box, reset, task_files, fix_files)
    config = runner_config
    if config is None or config.before is None:
        return reset
    triggers = config.triggers
    touches_config = triggers is None or any(PurePosixPath(p).name in triggers for _s, p in changes)
    if touches_config and config.read() != config.before:
        changed = [path for _s, path in changes if PurePosixPath(path).name in config.files and path not in reset]
        extra = [path for path in changed if path not in fix_files]
        _restore(box, extra, task_files, fix_files)
        reset += extra
        if len(extra) < len(changed):  # the gold patch changes that file too: the task's own configuration change
            return reset
        if config.read() != config.before:
            raise ConfigChanged(
                f"the agent's diff changes {config.name}'s effective configuration (as its own loader reads it) "
                f"beyond its config files: {', '.join(p for _s, p in changes)[:500]}"
            )
    return reset


def _applied(box: Sandbox, diff: str) -> list[tuple[str, str]]:
    """Apply `diff` with `git apply` (else as SWE-bench's last fallback, GNU patch's fuzz, placed it: `fuzzy_apply`)
    and list what changed; PatchRejected when neither places it."""
    put_files(box, {f"{WORK_DIR}/agent.diff": as_bytes(diff)})
    exit_code, stdout, stderr = exec_demux(box, ["bash", "-c", VERIFY_SCRIPT])
    if exit_code == 3:
        refused = stderr.decode("utf-8", "replace").strip()
        try:
            exact = fuzzed_diff(box, diff)
        except FuzzRefused as exc:
            raise PatchRejected("the agent's diff", f"{refused[-1000:]}\n{exc}"[-1500:]) from None
        put_files(box, {f"{WORK_DIR}/agent.diff": as_bytes(exact)})
        exit_code, stdout, stderr = exec_demux(box, ["bash", "-c", VERIFY_SCRIPT])
        if exit_code == 3:
            refused = stderr.decode("utf-8", "replace").strip()[-1500:]
            raise PatchRejected("the agent's diff, as `patch --fuzz=5` placed it", refused)
    return changed_paths(exit_code, stdout, stderr, "applying the agent's diff")


@dataclass(frozen=True)
class RunnerConfig:
    """A test run's effective configuration as the runner's own loader reads it (`read`, in the verification
    container), its answer for the tree before the diff (`before`: the sanity container's), the file names whose
    change makes it worth asking again (`triggers`; None: ask after every diff) and those reset when the answer
    differs (`files`)."""

    name: str
    read: Callable[[], object]
    before: object
    triggers: frozenset[str] | None
    files: frozenset[str]
    names_files: Callable[[object], frozenset[str]] = lambda _answer: frozenset()
    """The files of /repo an answer names as the runner's (`execution.config_files`): configuration too."""


def install_outputs(box: Sandbox) -> list[str]:
    """What the environment's install added to /repo (`node_modules`, a generated `_version.py`, `*.egg-info`): the
    image's, never the diff's. `repo_box.prepare_script` writes them to `.git/info/exclude` as `/path` patterns
    (glob characters escaped), where no diff reaches (git refuses paths inside `.git`)."""
    try:
        text = box.read_file(f"{REPO_DIR}/.git/info/exclude", max_bytes=16 << 20, follow_symlinks=False) or b""
    except (OSError, ValueError, SandboxError):
        return []
    outputs = []
    for line in text.decode("utf-8", "surrogateescape").split("\n"):  # outputs.list keeps no name with a newline
        if line.startswith("/"):
            outputs.append(re.sub(r"\\(.)", r"\1", line[1:]))
    return outputs


def _untracked_outputs(box: Sandbox, paths: list[str]) -> list[str]:
    """`paths` under the install's outputs that the base commit does not track (an environment image serves many
    commits: what its install added at one may be a tracked file at another, which a fix may change)."""
    outputs = install_outputs(box)
    under = [path for path in paths if under_outputs(path, outputs)]
    if not under:
        return []
    put_files(box, {f"{WORK_DIR}/outputs.check": b"".join(as_bytes(path) + b"\0" for path in under)})
    script = (
        f"cd {REPO_DIR} && xargs -0 -r -a {WORK_DIR}/outputs.check "
        "git --literal-pathspecs ls-tree -r -z --name-only HEAD~1 -- 2>/dev/null || true"
    )
    _code, stdout, _ = exec_demux(box, ["bash", "-c", script])
    tracked = set(stdout.decode("utf-8", "surrogateescape").split("\0"))
    return [path for path in under if path not in tracked]


def under_outputs(path: str, outputs: Collection[str]) -> bool:
    """Whether `path` is an install output or inside one."""
    return any(path == output or path.startswith(f"{output}/") for output in outputs)


def _tree(box: Sandbox) -> list[str]:
    """Every file of the snapshot (base, the task's tests, the install's outputs), repo-relative."""
    exit_code, stdout, _ = exec_demux(box, ["bash", "-c", f"cd {REPO_DIR} && git ls-tree -r -z --name-only HEAD"])
    return [p for p in stdout.decode("utf-8", "surrogateescape").split("\0") if p] if exit_code == 0 else []


def _restore(box: Sandbox, paths: list[str], task_files: Collection[str], fix_files: Collection[str] = ()) -> None:
    """Reset `paths` to the snapshot; WorkspaceError when any of them (or a protected path) still differs."""
    if not paths:
        return
    put_files(box, {f"{WORK_DIR}/restore.list": b"".join(as_bytes(path) + b"\0" for path in paths)})
    exit_code, stdout, stderr = exec_demux(box, ["bash", "-c", RESTORE_SCRIPT])
    left = [
        path
        for status, path in changed_paths(exit_code, stdout, stderr, "resetting protected paths")
        if path in paths or is_protected(path, task_files, new=status == "A", fix_files=fix_files)
    ]
    if left:
        raise WorkspaceError(f"protected paths changed by the agent could not be reset: {', '.join(left[:10])}")


def _changed_sections(box: Sandbox, paths: list[str]) -> list[str]:
    """The shared files among `paths` whose runner section (`registry.config_section`: pytest's) the agent's diff
    changed (or that are too big)."""
    put_files(box, {f"{WORK_DIR}/configs.list": b"".join(as_bytes(path) + b"\0" for path in paths)})
    exit_code, stdout, _stderr = exec_demux(box, ["bash", "-c", SHOW_SCRIPT])
    lines = stdout.decode("ascii", "replace").split("\n")
    if exit_code != 0 or len(lines) < 2 * len(paths):
        return paths  # cannot tell: drop them all
    changed = []
    for index, path in enumerate(paths):
        try:
            before, after = (base64.b64decode(lines[2 * index + side]) for side in (0, 1))
        except ValueError:
            changed.append(path)
            continue
        name = PurePosixPath(path).name
        if max(len(before), len(after)) > MAX_CONFIG_BYTES or config_section(name, before) != config_section(
            name, after
        ):
            changed.append(path)
    return changed
