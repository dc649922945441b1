"""SWE-bench's fallbacks for a prediction `git apply` refuses, so a patch is judged as `swebench eval` judges it.

`swebench eval` tries `git apply`, then `git apply --3way`, then `git apply --reject`, then
`patch --batch --forward --fuzz=5 -p1`, from a pristine tree each time (`run_evaluation.GIT_APPLY_CMDS`). A patch
written against line numbers or context that drifted (what models often send) is resolved there when GNU patch can
place its hunks. `--reject` exits non-zero whenever a hunk is left out, so it never applies what plain `git apply`
refused, and `--3way` needs the preimage blobs the patch names, which a sealed checkout has only when nothing drifted;
GNU patch's fuzz is the fallback that changes verdicts.

The task images have no `patch` (and no agent code may run where the verdict is decided), so GNU patch runs here, on
copies of the base files the diff names, in a temporary folder, and what it made is turned back into an exact git
diff of those files. That diff goes through `protection.apply_agent_diff` like any other: the verification
container's git lists what it really changes, and every defence judges the applied tree, not this text.

GNU patch reads the agent's text, so it runs confined: it gets the sections only (no text before the first), each
with unified hunks only (it takes an ed script for one and runs `ed`); the paths they name must be plain relative
file paths (no `..`, no `.git`), regular files at base; afterwards, every path it changed must be one the sections
name, and no link (a header hidden in a hunk's body names another file: GNU patch 2.7.6 refuses `..` and absolute
paths itself). Git on the copy keeps its metadata outside it, reads no configuration or attributes the diff could
plant, and a failure of either tool is a refusal. No backups, a time limit, a clean environment.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

from swe_forge_dagster.execution.patch import split_sections
from swe_forge_dagster.execution.repo_box import GIT, REPO_DIR, exec_demux
from swe_forge_dagster.execution.sandbox import Sandbox

FUZZ_COMMAND = ["patch", "--batch", "--forward", "--fuzz=5", "-p1", "--unified", "--no-backup-if-mismatch"]
"""GNU patch as `swebench eval` runs it last (`--fuzz=5 -p1`), confined (`--unified`, no `.orig` files)."""
PATCH_SECONDS = 60
_REGULAR = ("100644", "100755")
_HUNK_LINE = " +-\\@"
NO_ATTRIBUTES = "* -text -eol -ident -filter -working-tree-encoding\n"
"""The copy's git reads no attributes a diff could plant (`.gitattributes`): what it records is what patch wrote."""


class FuzzRefused(RuntimeError):
    """GNU patch could not place the diff either (or cannot run here); the message says why."""


def _named(diff: str) -> tuple[list[str], str]:
    """The repo-relative paths the diff's sections name (old and new), and the sections' text alone (nothing before
    the first section reaches GNU patch); FuzzRefused on an unsafe path or a body that is not unified hunks."""
    try:
        sections = split_sections(diff)
    except ValueError as exc:
        raise FuzzRefused(str(exc)) from exc
    paths: list[str] = []
    for section in sections:
        _check_unified(section.text, section.path)
        for path in (section.path, section.old_path):
            if path is not None and path not in paths:
                paths.append(_safe(path))
    return paths, "".join(section.text for section in sections)


def _safe(path: str) -> str:
    """`path`, or FuzzRefused when it is not a plain file path inside the tree (absolute, `..`, `.`, a `.git`)."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or path != str(pure) or any(part in ("..", ".") for part in path.split("/")):
        raise FuzzRefused(f"unsafe path in the diff: {path!r}")
    if any(part.lower() == ".git" for part in pure.parts):
        raise FuzzRefused(f"a path under .git in the diff: {path!r}")
    return path


def _check_unified(text: str, path: str) -> None:
    """FuzzRefused unless the section's body is unified hunks only: GNU patch takes any other body for another
    format (an ed script among them), and a binary patch is git's alone."""
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if line.startswith("@@ ")), None)
    if first is None:
        raise FuzzRefused(f"no unified hunk for {path!r}")
    if any(line and line[0] not in _HUNK_LINE for line in lines[first:]):
        raise FuzzRefused(f"{path!r}: lines that are not a unified diff's")


def _base_files(box: Sandbox, paths: list[str]) -> bytes:
    """A tar of the regular files among `paths` at the container's HEAD (base + the task's tests)."""
    listing = [*GIT, "-C", REPO_DIR, "--literal-pathspecs", "ls-tree", "-z", "HEAD", "--", *paths]
    code, out, err = exec_demux(box, listing)
    if code != 0:
        raise FuzzRefused(f"listing the diff's files failed: {err.decode('utf-8', 'replace')[-300:]}")
    regular: list[str] = []
    for entry in filter(None, out.decode("utf-8", "surrogateescape").split("\0")):
        meta, _, path = entry.partition("\t")
        if path not in paths:  # ls-tree lists a folder's own entry, never its content, without -r
            continue
        if meta.split(" ")[0] not in _REGULAR:
            raise FuzzRefused(f"the diff touches a non-regular file: {path!r}")
        regular.append(path)
    if not regular:
        return b""
    archive = [*GIT, "-C", REPO_DIR, "--literal-pathspecs", "archive", "--format=tar", "HEAD", "--", *regular]
    code, out, err = exec_demux(box, archive)
    if code != 0:
        raise FuzzRefused(f"reading the diff's files failed: {err.decode('utf-8', 'replace')[-300:]}")
    return out


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Git on the copy: its metadata beside the tree (never inside, where GNU patch writes what the diff says), no
    configuration but its own, attributes off (`info/attributes`: no filter, conversion or ident rewrites what it
    records); FuzzRefused when it fails."""
    where = [f"--git-dir={folder.parent / 'meta'}", f"--work-tree={folder}"]
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(folder.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
    }
    try:
        return subprocess.run([*GIT, *where, *args], capture_output=True, check=True, env=env, timeout=PATCH_SECONDS)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        raise FuzzRefused(f"git on the patched copy failed: {detail.decode('utf-8', 'replace')[-300:] or exc}") from exc


def _changed(folder: Path) -> list[str]:
    """The paths GNU patch changed in the copy (what git sees, against the base commit)."""
    listed = _git(folder, "diff", "--cached", "--name-only", "-z", "--no-renames", "HEAD").stdout
    return [p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p]


def fuzzed_diff(box: Sandbox, diff: str) -> str:
    """The exact git diff of what `patch --fuzz=5 -p1` makes of `diff` on the container's base files.

    FuzzRefused when GNU patch is not installed here, a path is unsafe, or a hunk cannot be placed."""
    binary = shutil.which("patch")
    if binary is None:
        raise FuzzRefused("no GNU patch on this host: SWE-bench's `patch --fuzz=5` fallback was not tried")
    paths, sections = _named(diff)
    with tempfile.TemporaryDirectory(prefix="swe-forge-fuzz-") as temp:
        folder = Path(temp) / "tree"
        folder.mkdir()
        files = _base_files(box, paths)
        if files:
            with tarfile.open(fileobj=io.BytesIO(files)) as tar:
                tar.extractall(folder, filter="data")
        _git(folder, "init", "-q")
        (Path(temp) / "meta" / "info").mkdir(parents=True, exist_ok=True)
        (Path(temp) / "meta" / "info" / "attributes").write_text(NO_ATTRIBUTES)
        _git(folder, "add", "-A", "-f")
        _git(folder, "commit", "-q", "--no-verify", "--allow-empty", "-m", "base")
        (Path(temp) / "agent.diff").write_bytes(sections.encode("utf-8", "surrogateescape"))
        try:
            result = subprocess.run(
                [binary, *FUZZ_COMMAND[1:], "-d", str(folder), "-i", str(Path(temp) / "agent.diff")],
                capture_output=True,
                timeout=PATCH_SECONDS,
                env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
            )
        except subprocess.TimeoutExpired as exc:
            raise FuzzRefused(f"GNU patch ran over {PATCH_SECONDS} s") from exc
        if result.returncode != 0:
            output = (result.stdout + result.stderr).decode("utf-8", "replace").strip()
            raise FuzzRefused(f"`patch --fuzz=5` refused it too: {output[-800:]}")
        _git(folder, "add", "-A", "-f")
        # only the files the sections name, as regular files: a header hidden in a hunk's body names no other
        for path in _changed(folder):
            if path not in paths or (folder / path).is_symlink():
                raise FuzzRefused(f"GNU patch wrote {path!r}, which no section of the diff names as a file")
        diff_args = ["diff", "--cached", "--binary", "--full-index", "--no-renames", "--no-textconv", "--no-ext-diff"]
        exact = _git(folder, *diff_args, "HEAD").stdout
    if not exact.strip():
        raise FuzzRefused("`patch --fuzz=5` changed nothing")
    return exact.decode("utf-8", "surrogateescape")
