"""The repository as the agent and the checks see it: base tree only, one fresh commit, no history.

Why not clone inside the container: a clone brings the remote, every branch, the PR's refs and
the future commits that contain the fix (`git log --all` would hand the agent the answer). So the
host's repository cache exports the base commit's files with `git archive` (no `.git`, runs no
repository code; `export-ignore`/`export-subst` attributes are disabled, so the tree is exactly
the commit's), the archive is unpacked over the environment image's `/repo`, and a new repository
with a single commit is made in the container (`git add -A -f`: files the repo tracks although
its `.gitignore` matches them are in that commit and in diffs). In the agent's container the
task's test files are deleted before that commit, so they are not in its view or its history.

Why protected paths: the agent owns its container, so it can edit, delete or add any file, and
even replace `git` there, so the text of its diff proves nothing about what applying it does.
What it may not change (`is_protected`): the task's own test files (hidden files, files of the
test_patch and seed test files, the test files the checks run), every `conftest.py`, pytest's
configuration files (`pytest.ini`, `.pytest.ini`, `pytest.toml`, `.pytest.toml`),
`*.pth`, `sitecustomize.py`/`usercustomize.py`, package metadata (`*.dist-info/`, `*.egg-info/`,
`*.egg-link`: their `[pytest11]` entry points are plugins pytest loads) and NEW files that shadow
`pytest`/`_pytest` (`pytest.py`, `pytest/`, `_pytest/` that do not exist at base). The pytest
sections of `pyproject.toml` (`[tool.pytest...]`), `setup.cfg` (`[tool:pytest]`) and `tox.ini`
(`[pytest]`) are protected too: a change to such a file that changes its pytest section is
dropped as a whole (its other changes with it); other changes to them are applied.
`filter_diff` drops sections on protected paths from the diff text first (so the diff still
applies next to the test_patch), but the authority is `apply_agent_diff`: after `git apply` in
the verification container, that container's own git lists what really changed, and every
protected path among them is reset to its pre-diff state before any check runs. Everything
dropped is reported in the result's `dropped_paths`.

Not covered (documented limitations): source code that tampers with pytest or the tests from
inside the test process (it is imported by the tests, so it runs there), and test helper files
that are neither run by the checks nor part of the task's tests (a `tests/helpers.py` the task's
tests import): only the categories above are protected, so that real fixes to source packages
named `test/`, `testing/` or `_pytest/` (django/test, sympy/testing, pytest's own src/_pytest)
are applied.
"""

from __future__ import annotations

import base64
import io
import re
import shlex
import subprocess
import tarfile
import time
import tomllib
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath

import docker

from swe_forge_dagster.execution.patch import split_sections
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.sandbox import Mounts, Sandbox, SandboxConfig

REPO_DIR = "/repo"
WORK_DIR = "/tmp/.swe-forge-harness"
"""Where the harness stages patches and files in a container; removed once they are applied."""
TREE_NAME = ".swe-forge-tree"

GIT = [
    "git", "-c", "user.name=swe-forge", "-c", "user.email=swe-forge@localhost", "-c", "commit.gpgsign=false",
    "-c", "init.defaultBranch=main", "-c", "core.hooksPath=/dev/null",
]  # fmt: skip
DIFF_OPTIONS = (
    "--cached --binary --full-index --no-color --no-ext-diff --no-textconv --no-renames --src-prefix=a/ --dst-prefix=b/"
)
PROTECTED_NAMES = frozenset(
    {"conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "sitecustomize.py", "usercustomize.py"}
)  # fmt: skip
SHADOW_NAMES = frozenset({"pytest.py", "pytest", "_pytest"})
"""New files or directories with these names shadow the real pytest (protected only when new)."""
METADATA_SUFFIXES = (".dist-info", ".egg-info")
PYTEST_SECTION_FILES = frozenset({"pyproject.toml", "setup.cfg", "tox.ini"})
"""Files whose change is dropped only when it changes their pytest section."""
MAX_DIFF_BYTES = 50 << 20
MAX_CONFIG_BYTES = 1 << 20
GIT_TIMEOUT_S = 300
EXPORT_ATTRIBUTES = "* -export-ignore -export-subst\n"


class WorkspaceError(RuntimeError):
    """Preparing the repository in a container failed (a harness or environment problem)."""


class PatchRejected(RuntimeError):
    """`git apply` refused a patch; `name` says which one, the message is git's error."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name} does not apply: {message}")
        self.name = name


# --- what the agent may change --------------------------------------------------------------


def is_protected(path: str, task_files: Collection[str] = (), *, new: bool = False) -> bool:
    """Whether an agent's change to `path` is dropped (see the module docstring).

    `new`: the path does not exist before the agent's change (only then does a `pytest.py`,
    `pytest/` or `_pytest/` count as shadowing pytest: pytest's own source and sympy/testing/pytest.py
    are ordinary source files).
    """
    pure = PurePosixPath(path)
    return (
        path in task_files
        or pure.name in PROTECTED_NAMES
        or pure.name.endswith((".pth", ".egg-link"))
        or any(part.endswith(METADATA_SUFFIXES) for part in pure.parts)
        or (new and any(part in SHADOW_NAMES for part in pure.parts))
    )


def command_test_files(commands: Iterable[str]) -> list[str]:
    """Repo-relative `.py` files named in shell check commands (`python -m pytest tests/test_x.py::t`)."""
    files: list[str] = []
    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
        for word in words:
            path = word.split("::", 1)[0].removeprefix("/repo/").removeprefix("./")
            if path.endswith(".py") and not path.startswith(("/", "-")) and ".." not in path and path not in files:
                files.append(path)
    return files


def filter_diff(diff: str, task_files: Collection[str] = ()) -> tuple[str, list[str]]:
    """(the diff without sections touching protected paths, the dropped paths). ValueError: not a diff.

    A first pass on the diff's text; `apply_agent_diff` is the authority (the text may lie).
    """
    kept: list[str] = []
    dropped: list[str] = []
    for section in split_sections(diff):
        paths = [section.path] + ([section.old_path] if section.old_path else [])
        new = section.old_path is not None or "\nnew file mode " in section.text.split("\n@@", 1)[0]
        if any(is_protected(path, task_files, new=new) for path in paths):
            dropped += [path for path in paths if path not in dropped]
        else:
            kept.append(section.text)
    return "".join(kept), dropped


def pytest_section(name: str, text: bytes | None) -> object:
    """What of a `pyproject.toml` / `setup.cfg` / `tox.ini` configures pytest (comparable with `==`).

    pyproject: the parsed `[tool.pytest*]` table. ini files: the raw lines of every `[pytest]` or
    `[tool:pytest]` section, in order (raw, so no parser difference with pytest's can hide a
    change). A file that does not parse counts by its whole text.
    """
    if text is None:
        return None
    if name == "pyproject.toml":
        try:
            return tomllib.loads(text.decode("utf-8")).get("tool", {}).get("pytest")
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            return ("unparseable", text)
    lines, inside = [], False
    for line in text.decode("utf-8", "surrogateescape").splitlines():
        header = re.match(r"\s*\[([^\]]*)\]", line)
        if header:
            inside = header.group(1).strip().lower() in ("pytest", "tool:pytest")
        if inside:
            lines.append(line)
    return lines or None


# --- the base tree ----------------------------------------------------------------------------


def fetch_base(cache: RepoCache, repo: str, sha: str) -> None:
    """Make sure `sha` of `repo` is in the host cache (clones once per repo, then fetches by sha)."""
    cache.ensure(repo)
    cache.fetch(repo, [sha])


def write_tree_archive(cache: RepoCache, repo: str, sha: str, dest: Path) -> Path:
    """`git archive` of `sha` into `dest`, every path under `TREE_NAME` (unpacked in /tmp, then moved).

    The archive is the commit's tree exactly: the cache repo's `info/attributes` (which outranks
    the tree's `.gitattributes`) turns `export-ignore` and `export-subst` off, and git runs with
    the cache's isolated environment (no host git config or `GIT_*` variables).
    """
    git_dir = cache.path(repo)
    attributes = git_dir / "info" / "attributes"
    with cache.lock(repo):
        current = attributes.read_text(encoding="utf-8", errors="replace") if attributes.is_file() else ""
        if EXPORT_ATTRIBUTES not in current.splitlines(keepends=True):
            attributes.parent.mkdir(parents=True, exist_ok=True)
            with attributes.open("a", encoding="utf-8") as handle:
                handle.write(("\n" if current and not current.endswith("\n") else "") + EXPORT_ATTRIBUTES)
    env = cache._env  # the cache's isolated git environment (no public accessor)
    Path(env["HOME"]).mkdir(parents=True, exist_ok=True)
    argv = [cache.git, "--git-dir", str(git_dir), "archive", "--format=tar", f"--prefix={TREE_NAME}/", sha]
    with dest.open("wb") as out:
        proc = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, env=env, timeout=GIT_TIMEOUT_S, check=False)
    if proc.returncode != 0:
        raise WorkspaceError(f"git archive of {repo}@{sha[:12]} failed: {proc.stderr.decode(errors='replace')}")
    return dest


# --- containers -------------------------------------------------------------------------------

# Arguments: the paths to hide. Replaces the image's /repo (built at whatever commit the cached
# environment was made from) by the base tree, keeping the `*.egg-info` editable installs point
# at (as the task builder's suite runs do), commits it, then applies the staged patches in order
# and copies the staged files in. Exit 3 + "PATCH <n>" names a patch git refused.
PREPARE_SCRIPT = f"""set -e
tree=/tmp/{TREE_NAME}
mkdir -p {REPO_DIR} "$tree"
for kept in "$tree"/*.egg-info; do if [ -e "$kept" ]; then rm -rf "{REPO_DIR}/${{kept##*/}}"; fi; done
find {REPO_DIR} -mindepth 1 -maxdepth 1 ! -name '*.egg-info' -exec rm -rf {{}} +
find "$tree" -mindepth 1 -maxdepth 1 -exec mv -t {REPO_DIR} {{}} +
rm -rf "$tree"
cd {REPO_DIR}
if [ "$#" -gt 0 ]; then rm -rf -- "$@"; fi
{" ".join(GIT)} init -q
git add -A -f
{" ".join(GIT)} commit -q --no-verify --allow-empty -m base
sha=$(git rev-parse HEAD)
n=0
while [ -f "{WORK_DIR}/$n.diff" ]; do
  git apply --binary --whitespace=nowarn "{WORK_DIR}/$n.diff" || {{ echo "PATCH $n"; exit 3; }}
  n=$((n + 1))
done
if [ -d {WORK_DIR}/files ]; then cp -a {WORK_DIR}/files/. {REPO_DIR}/; fi
rm -rf {WORK_DIR}
echo "$sha"
"""


def start_repo_box(
    client: docker.DockerClient,
    config: SandboxConfig,
    archive: Path,
    *,
    name_hint: str,
    hide: Sequence[str] = (),
    patches: Sequence[tuple[str, str]] = (),
    repo_files: Mapping[str, str] | None = None,
    files: Mapping[str, bytes] | None = None,
    mounts: Mounts | None = None,
    on_start: Callable[[Sandbox], None] | None = None,
) -> tuple[Sandbox, str]:
    """A sandbox whose /repo is the base tree (minus `hide`) as the single commit of a new repo,
    with `patches` (name, diff) applied and `repo_files` (path -> text) written after that commit.

    Returns the sandbox and the base commit's sha. `files` (absolute path -> bytes) are written
    anywhere else (the agent's prompt). `on_start` sees the sandbox as soon as it runs, and may
    raise to have it closed. Three Docker calls after the start, whatever is asked: a container
    start is most of the harness's overhead, so nothing here adds round trips.
    """
    box = Sandbox.start(client, config, name_hint=name_hint, mounts=mounts)
    try:
        if on_start is not None:
            on_start(box)
        with archive.open("rb") as data:
            if not box.container.put_archive("/tmp", data):
                raise WorkspaceError("unpacking the base tree failed")
        named = [(name, text) for name, text in patches if text.strip()]
        staged = {f"{WORK_DIR}/{index}.diff": _bytes(text) for index, (_, text) in enumerate(named)}
        staged.update({f"{WORK_DIR}/files/{path}": _bytes(text) for path, text in (repo_files or {}).items()})
        put_files(box, {**staged, **(files or {})})
        exit_code, output = box.container.exec_run(["bash", "-c", PREPARE_SCRIPT, "prepare", *hide], workdir="/")
        text = output.decode("utf-8", "replace").strip()
        if exit_code == 3 and text.splitlines()[-1].startswith("PATCH "):
            name = named[int(text.splitlines()[-1].split()[1])][0]
            raise PatchRejected(name, "\n".join(text.splitlines()[:-1])[-1500:])
        if exit_code != 0:
            hint = " (is git installed in the image?)" if exit_code == 127 else ""
            raise WorkspaceError(f"preparing /repo failed ({exit_code}){hint}: {text[-1500:]}")
        return box, text.splitlines()[-1]
    except BaseException:
        box.close()
        raise


def exec_checked(box: Sandbox, argv: list[str], what: str) -> str:
    """Run a harness step (not agent code) directly, without the session machinery; output or WorkspaceError."""
    try:
        exit_code, output = box.container.exec_run(argv, workdir="/")
    except docker.errors.APIError as exc:
        raise WorkspaceError(f"{what}: {exc}") from exc
    text = output.decode("utf-8", "replace")
    if exit_code != 0:
        hint = " (is git installed in the image?)" if exit_code == 127 else ""
        raise WorkspaceError(f"{what} failed ({exit_code}){hint}: {text[-1500:]}")
    return text


def put_files(box: Sandbox, files: Mapping[str, bytes]) -> None:
    """Write files at absolute paths (parents created) in one archive, owned by root."""
    if not files:
        return
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            tar.addfile(info, io.BytesIO(data))
    if not box.container.put_archive("/", buffer.getvalue()):
        raise WorkspaceError(f"writing {sorted(files)} failed")


def apply_patches(box: Sandbox, patches: Sequence[tuple[str, str]]) -> None:
    """Apply (name, diff) pairs in order with `git apply --binary`; PatchRejected names the first refused."""
    patches = [(name, text) for name, text in patches if text.strip()]
    put_files(box, {f"{WORK_DIR}/{index}.diff": _bytes(text) for index, (_, text) in enumerate(patches)})
    for index, (name, _) in enumerate(patches):
        argv = ["git", "-C", REPO_DIR, "apply", "--binary", "--whitespace=nowarn", f"{WORK_DIR}/{index}.diff"]
        exit_code, output = box.container.exec_run(argv, workdir=REPO_DIR, environment={"LC_ALL": "C"})
        if exit_code != 0:
            raise PatchRejected(name, output.decode("utf-8", "replace").strip()[-1500:])


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


def apply_agent_diff(box: Sandbox, diff: str, task_files: Collection[str]) -> list[str]:
    """Apply the agent's (text-filtered) diff in the verification container, then reset every protected
    path it really changed, whatever its text claimed; the reset paths. PatchRejected: git refused it.

    Git in this container (which no agent code ever ran in) lists the changes: edits, deletions,
    new files, ignored files and type changes, with no rename detection to hide a path behind.
    """
    put_files(box, {f"{WORK_DIR}/agent.diff": _bytes(diff)})
    exit_code, stdout, stderr = _exec(box, ["bash", "-c", VERIFY_SCRIPT])
    if exit_code == 3:
        raise PatchRejected("the agent's diff", stderr.decode("utf-8", "replace").strip()[-1500:])
    changes = _changes(exit_code, stdout, stderr, "applying the agent's diff")
    reset = [path for status, path in changes if is_protected(path, task_files, new=status == "A")]
    configs = [path for _s, path in changes if PurePosixPath(path).name in PYTEST_SECTION_FILES and path not in reset]
    if configs:
        reset += _changed_pytest_sections(box, configs)
    if not reset:
        return []
    put_files(box, {f"{WORK_DIR}/restore.list": b"".join(_bytes(path) + b"\0" for path in reset)})
    exit_code, stdout, stderr = _exec(box, ["bash", "-c", RESTORE_SCRIPT])
    left = [path for status, path in _changes(exit_code, stdout, stderr, "resetting protected paths")
            if path in reset or is_protected(path, task_files, new=status == "A")]  # fmt: skip
    if left:
        raise WorkspaceError(f"protected paths changed by the agent could not be reset: {', '.join(left[:10])}")
    return reset


def _changed_pytest_sections(box: Sandbox, paths: list[str]) -> list[str]:
    """The config files among `paths` whose pytest section the agent's diff changed (or that are too big)."""
    put_files(box, {f"{WORK_DIR}/configs.list": b"".join(_bytes(path) + b"\0" for path in paths)})
    exit_code, stdout, _stderr = _exec(box, ["bash", "-c", SHOW_SCRIPT])
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
        if max(len(before), len(after)) > MAX_CONFIG_BYTES or pytest_section(name, before) != pytest_section(
            name, after
        ):
            changed.append(path)
    return changed


def _exec(box: Sandbox, argv: list[str]) -> tuple[int, bytes, bytes]:
    try:
        exit_code, (stdout, stderr) = box.container.exec_run(argv, workdir="/", demux=True)
    except docker.errors.APIError as exc:
        raise WorkspaceError(f"{argv[-1][:40]!r}: {exc}") from exc
    return exit_code, stdout or b"", stderr or b""


def _changes(exit_code: int, stdout: bytes, stderr: bytes, what: str) -> list[tuple[str, str]]:
    """(status letter, path) pairs of `git diff --name-status -z`."""
    if exit_code != 0:
        hint = " (is git installed in the image?)" if exit_code == 127 else ""
        raise WorkspaceError(f"{what} failed ({exit_code}){hint}: {stderr.decode('utf-8', 'replace')[-1500:]}")
    fields = stdout.decode("utf-8", "surrogateescape").split("\0")
    if fields and fields[-1] == "":
        fields.pop()
    if len(fields) % 2:
        raise WorkspaceError(f"{what}: unexpected git output {stdout[-200:]!r}")
    return [(fields[i][:1], fields[i + 1]) for i in range(0, len(fields), 2)]


def take_diff(box: Sandbox, base_sha: str, limit: int = MAX_DIFF_BYTES) -> str:
    """Everything the agent changed since the base commit: edits, new files (untracked too), deletions,
    commits it made itself, binary files; as text that `.encode("utf-8", "surrogateescape")` restores.

    The output is read as a stream and abandoned past `limit` bytes (the agent's container may run
    anything in place of git, so its output size is the agent's to choose).
    """
    script = (
        f"cd {REPO_DIR} && timeout {GIT_TIMEOUT_S} git add -A >/dev/null "
        f"&& timeout {GIT_TIMEOUT_S} git -c core.quotepath=true diff {DIFF_OPTIONS} {base_sha} --"
    )
    api = box.client.api
    stdout, stderr = bytearray(), bytearray()
    try:
        exec_id = api.exec_create(box.id, ["bash", "-c", script], stdout=True, stderr=True, workdir="/")["Id"]
        stream = api.exec_start(exec_id, stream=True, demux=True)
        try:
            for out, err in stream:
                stdout += out or b""
                stderr = (stderr + (err or b""))[-8192:]
                if len(stdout) > limit:
                    raise WorkspaceError(f"the agent's diff is over the {limit} byte limit")
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        exit_code = _exit_code(api, exec_id)
    except docker.errors.APIError as exc:
        raise WorkspaceError(f"taking the agent's diff: {exc}") from exc
    if exit_code != 0:
        message = bytes(stderr).decode("utf-8", "replace").strip()[-1500:]
        raise WorkspaceError(f"git could not diff the agent's work ({exit_code}): {message}")
    return bytes(stdout).decode("utf-8", "surrogateescape")


def _exit_code(api: docker.APIClient, exec_id: str) -> int:
    """An exec's exit code once its output has ended (the engine may record it a moment later)."""
    for _ in range(50):
        info = api.exec_inspect(exec_id)
        if not info.get("Running") and info.get("ExitCode") is not None:
            return int(info["ExitCode"])
        time.sleep(0.1)
    raise WorkspaceError("the agent's diff command did not end after its output did")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")
