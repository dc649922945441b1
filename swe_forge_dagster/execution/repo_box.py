"""A container whose /repo is one commit of a repository, as validation, the agent and the checks see it.

Why not clone inside the container: a clone brings the remote, every branch, the PR's refs and
the future commits that contain the fix (`git log --all` would hand the agent the answer). So the
host's repository cache exports the base commit's files with `git archive` (no `.git`, runs no
repository code; `export-ignore`/`export-subst` attributes are disabled, so the tree is exactly
the commit's), the archive is unpacked over the environment image's `/repo`, and a new repository
with a single commit is made in the container (`git add -A -f`: files the repo tracks although
its `.gitignore` matches them are in that commit and in diffs). Paths to `hide` (the task's tests,
in the agent's container) are deleted before that commit, so they are in neither view nor history.
Patches are then applied with git in that container, and files written after the commit.

Every step here is harness code run with `exec` (not through the agent's shell session), with
bounded output; `take_diff` reads the agent's diff as a stream and abandons it past a limit.
"""

from __future__ import annotations

import functools
import io
import re
import subprocess
import tarfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import docker

from swe_forge_dagster.execution.carried_trees import CarriedTree, carry_tree
from swe_forge_dagster.execution.recipe import ENV_DIR
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.sandbox import Mounts, Sandbox, SandboxConfig

REPO_DIR = "/repo"
WORK_DIR = "/tmp/.swe-forge-harness"
"""Where patches and files are staged in a container; removed once they are applied."""
TREE_NAME = ".swe-forge-tree"

GIT = [
    "git",
    "-c",
    "user.name=swe-forge",
    "-c",
    "user.email=swe-forge@localhost",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "init.defaultBranch=main",
    "-c",
    "core.hooksPath=/dev/null",
]
DIFF_OPTIONS = (
    "--cached --binary --full-index --no-color --no-ext-diff --no-textconv --no-renames --src-prefix=a/ --dst-prefix=b/"
)
MAX_DIFF_BYTES = 50 << 20
GIT_TIMEOUT_S = 300
EXPORT_ATTRIBUTES = "* -export-ignore -export-subst\n"


class WorkspaceError(RuntimeError):
    """Preparing the repository in a container failed (a harness or environment problem)."""


class PatchRejected(RuntimeError):
    """`git apply` refused a patch; `name` says which one, the message is git's error."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name} does not apply: {message}")
        self.name = name


# --- the base tree ----------------------------------------------------------------------------


def fetch_base(cache: RepoCache, repo: str, sha: str, carried: CarriedTree | None = None) -> None:
    """Make sure `sha` of `repo` is in the host cache: from the tree the task carries when it has one (a task
    repository's `repo.tar`: no network), else cloned once per repo, then fetched by sha."""
    if carried is not None:
        carry_tree(cache, repo, sha, Path(carried.archive), carried.tags)
        return
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
    commit = cache.resolve(repo, sha)  # a carried tree's stand-in commit too
    argv = [cache.git, "--git-dir", str(git_dir), "archive", "--format=tar", f"--prefix={TREE_NAME}/", commit]
    with dest.open("wb") as out:
        proc = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, env=env, timeout=GIT_TIMEOUT_S, check=False)
    if proc.returncode != 0:
        raise WorkspaceError(f"git archive of {repo}@{sha[:12]} failed: {proc.stderr.decode(errors='replace')}")
    return dest


# --- containers -------------------------------------------------------------------------------

# Arguments: the paths to hide. Replaces the image's /repo (built at whatever commit the cached
# environment was made from) by the base tree, commits it, then applies the staged patches in order
# and copies the staged files in. Exit 3 + "PATCH <n>" names a patch git refused.
# An environment image records the tree it was built from (`ENV_DIR/base.list`) and what its install
# added (`outputs.list`): only the former is removed, so the install's outputs (a src/ layout's
# egg-info, generated version files, node_modules) stay, kept out of git (`.git/info/exclude`) and out
# of every diff; the base commit holds exactly the tree's files (tracked-but-ignored ones included).
# Images without the record (older builds, other images) keep only the top-level names `kept` gives (the language
# packs' `install_outputs`, as their callers hand them in: a setuptools install's metadata). An image whose
# install compiled the tree (`ENV_DIR/retouch`, `recipe.RETOUCH`) gets the tree's files dated now:
# they carry their commit's time, older than the image's build outputs, which make would otherwise reuse.
_KEPT_NAME = re.compile(r"[A-Za-z0-9_.*?+@-]+")


@functools.lru_cache(maxsize=8)
def prepare_script(kept: tuple[str, ...] = ()) -> str:
    """The script that prepares /repo (see above), keeping the top-level names that match the globs `kept` in an
    image that records no outputs of its own."""
    for name in kept:
        if not _KEPT_NAME.fullmatch(name):
            raise ValueError(f"not a plain top-level name or glob: {name!r}")
    globs = " ".join(f'"$tree"/{name}' for name in kept)
    unless = "".join(f" ! -name '{name}'" for name in kept)
    return f"""set -e
tree=/tmp/{TREE_NAME}
mkdir -p {REPO_DIR} "$tree"
if [ -f {ENV_DIR}/base.list ]; then
  (cd {REPO_DIR} && xargs -0 -r rm -f -- < {ENV_DIR}/base.list)
  find {REPO_DIR} -depth -mindepth 1 -type d -empty -delete
  if [ "$#" -gt 0 ]; then (cd "$tree" && rm -rf -- "$@"); fi
  (cd "$tree" && find . -mindepth 1 \\( -type f -o -type l \\) -printf '%P\\0') > /tmp/.swe-forge-tree.list
  while IFS= read -r -d '' path; do  # a directory left where the tree now has a file: the tree wins
    if [ -d "{REPO_DIR}/$path" ] && [ ! -L "{REPO_DIR}/$path" ]; then rm -rf -- "{REPO_DIR}/$path"; fi
  done < /tmp/.swe-forge-tree.list
  cp -a "$tree"/. {REPO_DIR}/
  if [ -f {ENV_DIR}/retouch ]; then (cd {REPO_DIR} && xargs -0 -r touch -c -h -- < /tmp/.swe-forge-tree.list); fi
  rm -rf "$tree"
  cd {REPO_DIR}
  if [ "$#" -gt 0 ]; then rm -rf -- "$@"; fi
  {" ".join(GIT)} init -q
  if [ -f {ENV_DIR}/outputs.list ]; then
    sed -e 's/[][*?\\\\!#]/\\\\&/g' -e 's/ $/\\\\ /' -e 's|^|/|' {ENV_DIR}/outputs.list >> .git/info/exclude
  fi
  git add -A
  if [ -s /tmp/.swe-forge-tree.list ]; then
    git --literal-pathspecs add -f --pathspec-from-file=/tmp/.swe-forge-tree.list --pathspec-file-nul
  fi
  rm -f /tmp/.swe-forge-tree.list
else
  for kept in {globs}; do if [ -e "$kept" ]; then rm -rf "{REPO_DIR}/${{kept##*/}}"; fi; done
  find {REPO_DIR} -mindepth 1 -maxdepth 1{unless} -exec rm -rf {{}} +
  find "$tree" -mindepth 1 -maxdepth 1 -exec mv -t {REPO_DIR} {{}} +
  rm -rf "$tree"
  cd {REPO_DIR}
  if [ "$#" -gt 0 ]; then rm -rf -- "$@"; fi
  {" ".join(GIT)} init -q
  git add -A -f
fi
{" ".join(GIT)} commit -q --no-verify --allow-empty -m base
sha=$(git rev-parse HEAD)
n=0
while [ -f "{WORK_DIR}/$n.diff" ]; do
  git apply --binary --whitespace=nowarn "{WORK_DIR}/$n.diff" || {{ echo "PATCH $n"; exit 3; }}
  n=$((n + 1))
done
if [ -d {WORK_DIR}/files ]; then cp -a {WORK_DIR}/files/. {REPO_DIR}/; fi
rm -rf {WORK_DIR} {ENV_DIR}
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
    kept: Sequence[str] = (),
) -> tuple[Sandbox, str]:
    """A sandbox whose /repo is the base tree (minus `hide`) as the single commit of a new repo,
    with `patches` (name, diff) applied and `repo_files` (path -> text) written after that commit.
    `kept`: the top-level install outputs (globs) an image that records none of its own keeps (`prepare_script`).

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
        staged = {f"{WORK_DIR}/{index}.diff": as_bytes(text) for index, (_, text) in enumerate(named)}
        staged.update({f"{WORK_DIR}/files/{path}": as_bytes(text) for path, text in (repo_files or {}).items()})
        put_files(box, {**staged, **(files or {})})
        exit_code, output = box.container.exec_run(
            ["bash", "-c", prepare_script(tuple(kept)), "prepare", *hide], workdir="/"
        )
        text = output.decode("utf-8", "replace").strip()
        # git's error (stderr) and our marker (stdout) arrive in either order: find the marker line
        marker = re.search(r"^PATCH ([0-9]+)$", text, re.MULTILINE) if exit_code == 3 else None
        if marker is not None and int(marker.group(1)) < len(named):
            git_error = (text[: marker.start()] + text[marker.end() :]).strip()
            raise PatchRejected(named[int(marker.group(1))][0], git_error[-1500:])
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


def put_files(box: Sandbox, files: Mapping[str, bytes], keep_modes: bool = False) -> None:
    """Write files at absolute paths (parents created) in one archive, owned by root; `keep_modes`: a file written over
    an existing one keeps its mode (a twin written over its test must not differ from it by an executable bit)."""
    if not files:
        return
    modes = _modes(box, list(files)) if keep_modes else {}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size, info.mode, info.mtime = len(data), modes.get(path, 0o644), int(time.time())
            tar.addfile(info, io.BytesIO(data))
    if not box.container.put_archive("/", buffer.getvalue()):
        raise WorkspaceError(f"writing {sorted(files)} failed")


SEAL_SCRIPT = f"""set -e
cd {REPO_DIR}
old=$(mktemp -d /tmp/.swe-forge-git.XXXXXX)
if [ -d .git ]; then mv .git "$old/git"; fi
{" ".join(GIT)} init -q
if [ -f "$old/git/info/exclude" ]; then cp "$old/git/info/exclude" .git/info/exclude; fi
rm -rf "$old" {WORK_DIR}
stamp=$1; shift
for f in "$@"; do
  if [ -f "$f" ] && [ ! -L "$f" ]; then cp -p -- "$f" "$f.swe-forge-seal" && mv -f -- "$f.swe-forge-seal" "$f"; fi
done
if [ "$#" -gt 0 ]; then touch -c -h -d "@$stamp" -- "$@"; fi
git add -A
{" ".join(GIT)} commit -q --no-verify --allow-empty -m checkout
"""
"""Give /repo a new history of one commit, the tree as the tests are about to run it (planted tests included, with
the old `info/exclude`, so install outputs stay ignored), drop the old one and the harness's work files, and give
the named test files one modification time. Code under test that reads `.git` (`git show HEAD:`, the index, the
object files) or compares file times would otherwise tell the task's tests (committed) from the planted ones (written
after the commit, whole-second times).

Each named file is first made anew, in the same (sorted) order in every container: a copy renamed over it, so its
inode and its birth time (`statx`, which no `touch` sets) are the seal's. The verify run and the run apart then hold
the same files born the same way; without it, the twins and canaries written into the run apart were born seconds
before its tests ran and the verify run's test files minutes earlier, which a red-team forger read to tell the two
runs apart (`c3-btime-hook`)."""


def _modes(box: Sandbox, paths: Sequence[str]) -> dict[str, int]:
    """The permission bits of those of `paths` that are regular files in `box` (octal, as `stat` prints them)."""
    argv = [
        "sh",
        "-c",
        'for f in "$@"; do [ -f "$f" ] && [ ! -L "$f" ] && stat -c "%a %n" -- "$f"; done; true',
        "modes",
    ]
    exit_code, output = box.container.exec_run([*argv, *paths], workdir="/")
    modes = {}
    for line in output.decode("utf-8", "surrogateescape").splitlines() if exit_code == 0 else []:
        mode, _, path = line.partition(" ")
        if path in paths and mode.isdigit():
            modes[path] = int(mode, 8)
    return modes


def seal_checkout(box: Sandbox, test_files: Sequence[str]) -> None:
    """Run `SEAL_SCRIPT` on `box` for the repo-relative `test_files`; WorkspaceError when it fails."""
    stamp = f"{time.time():.6f}"
    argv = ["bash", "-c", SEAL_SCRIPT, "seal", stamp, *(f"{REPO_DIR}/{path}" for path in sorted(set(test_files)))]
    exit_code, output = box.container.exec_run(argv, workdir="/")
    if exit_code != 0:
        raise WorkspaceError(f"sealing the checkout failed: {output.decode('utf-8', 'replace')[-500:]}")


def apply_patches(box: Sandbox, patches: Sequence[tuple[str, str]]) -> None:
    """Apply (name, diff) pairs in order with `git apply --binary`; PatchRejected names the first refused."""
    patches = [(name, text) for name, text in patches if text.strip()]
    put_files(box, {f"{WORK_DIR}/{index}.diff": as_bytes(text) for index, (_, text) in enumerate(patches)})
    for index, (name, _) in enumerate(patches):
        argv = ["git", "-C", REPO_DIR, "apply", "--binary", "--whitespace=nowarn", f"{WORK_DIR}/{index}.diff"]
        exit_code, output = box.container.exec_run(argv, workdir=REPO_DIR, environment={"LC_ALL": "C"})
        if exit_code != 0:
            raise PatchRejected(name, output.decode("utf-8", "replace").strip()[-1500:])


def exec_demux(box: Sandbox, argv: list[str]) -> tuple[int, bytes, bytes]:
    try:
        exit_code, (stdout, stderr) = box.container.exec_run(argv, workdir="/", demux=True)
    except docker.errors.APIError as exc:
        raise WorkspaceError(f"{argv[-1][:40]!r}: {exc}") from exc
    return exit_code, stdout or b"", stderr or b""


def changed_paths(exit_code: int, stdout: bytes, stderr: bytes, what: str) -> list[tuple[str, str]]:
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


def as_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")
