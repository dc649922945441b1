"""One bare, partial clone per repository, shared by every task-building step on the machine.

Building a task needs a few commits of a repository (base, PR head, merge) and checkouts of
them. Cloning per PR would refetch the same history again and again, so each repository is
cloned once, bare and with `--filter=blob:none`: commits and trees arrive up front (cheap, and
enough for `merge-base` and `diff --name-only`), file contents only when a checkout or a diff
needs them. Later PRs of the same repository only fetch their own refs.

Several Dagster runs (processes) and step threads share the cache, so every mutation of a
repository (clone, fetch, adding or removing a worktree) holds an exclusive `flock` on
`root/locks/<owner>/<name>.lock`. `flock` locks die with their process, so a crashed run never
wedges the cache, and a clone is made in a staging directory and renamed into place, so a
crash never leaves a half clone that later calls would trust.

Git runs with a clean environment (`execution.git_command`: no system or user config, no terminal prompts, no inherited
`GIT_*` variables) so results never depend on the machine's git setup.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from packaging.version import InvalidVersion, Version

from swe_forge_dagster.execution.git_command import IsolatedGit, RepoCacheError, is_local_url
from swe_forge_dagster.settings import DEFAULT_GIT_URL

_REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SHA_RE = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_REF_RE = re.compile(r"^[A-Za-z0-9_./+-]+$")
KEEP_PREFIX = "refs/swe-forge/keep/"  # fetched shas get a ref so that gc can never drop them
CARRIED_PREFIX = "refs/swe-forge/carried/"
"""`<prefix><sha>` names the commit standing in for `sha` when only its tree was carried in (`carried_trees`)."""
CARRIED_TAG = "swe-forge-release-tag: "
"""A line of a carried commit's message: a release tag of the commit it stands in for (it has no history)."""


class RepoCache(IsolatedGit):
    """Bare partial clones under `root/<owner>/<name>.git`, cloned from `url_template`.

    `url_template` must contain `{repo}` ("owner/name"); tests point it at local bare
    repositories (`file:///world/{repo}.git`), production at GitHub. `clones` counts the clones
    this instance made (for tests and logs).
    """

    def __init__(
        self,
        root: Path,
        url_template: str = DEFAULT_GIT_URL,
        git: str = "git",
        timeout: float = 1800.0,
    ) -> None:
        if "{repo}" not in url_template:
            raise RepoCacheError(f"url_template must contain '{{repo}}', got {url_template!r}")
        super().__init__(root, git, timeout)
        self._tags_fetched: set[str] = set()
        self.url_template = url_template
        self.clones = 0
        self._count_lock = threading.Lock()

    # -- naming -------------------------------------------------------------------------------

    def url(self, repo: str) -> str:
        return self.url_template.format(repo=_check_repo(repo))

    def path(self, repo: str) -> Path:
        """Where the clone of `repo` lives (whether or not it exists yet)."""
        owner, name = _check_repo(repo).split("/")
        return self.root / owner / f"{name}.git"

    @contextmanager
    def lock(self, repo: str) -> Iterator[None]:
        """Exclusive lock on `repo` across processes and threads (each call opens its own fd)."""
        owner, name = _check_repo(repo).split("/")
        lock_file = self.root / "locks" / owner / f"{name}.lock"
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    # -- clone and fetch ----------------------------------------------------------------------

    def ensure(self, repo: str) -> Path:
        """The clone of `repo`, cloning it first if needed (exactly once across processes)."""
        dest = self.path(repo)
        if (dest / "HEAD").is_file():  # only complete clones are ever renamed into place
            return dest
        with self.lock(repo):
            if not (dest / "HEAD").is_file():
                self._clone(repo, dest)
        return dest

    def _clone(self, repo: str, dest: Path) -> None:
        dest.parent.mkdir(parents=True, exist_ok=True)
        for stale in dest.parent.glob(f".{dest.name}.clone-*"):  # left by a crashed clone
            shutil.rmtree(stale, ignore_errors=True)
        url = self.url(repo)
        staging = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.clone-"))
        staging.chmod(0o755)  # mkdtemp's 0700 would hide the clone from other users (containers)
        try:
            base = ["clone", "--bare", "--quiet", "--no-tags", *self._upload_pack_args(url)]
            try:
                self._run([*base, "--filter=blob:none", url, str(staging)], what=f"cannot clone {repo} from {url}")
            except RepoCacheError as exc:
                # A server that refuses filters normally just gets a full clone (git warns and
                # carries on); one that errors out instead gets a plain full clone here.
                if "filter" not in exc.stderr.lower():
                    raise
                shutil.rmtree(staging)
                staging.mkdir()
                self._run([*base, url, str(staging)], what=f"cannot clone {repo} from {url}")
            if is_local_url(url):  # lazy blob fetches and later fetches need the same server options
                self._run(["config", "remote.origin.uploadpack", self._upload_pack()], cwd=staging)
            os.rename(staging, dest)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        with self._count_lock:
            self.clones += 1

    def fetch(self, repo: str, refs: Sequence[str], refresh: bool = False) -> None:
        """Fetch `refs` into the cache: shas (kept under `refs/swe-forge/keep/`), full refs
        (`refs/pull/12/head`, stored under the same name) or branch names.

        Whatever is already present is skipped without touching the remote, so calling this
        before every use is cheap; `refresh=True` refetches refs (shas never change).
        """
        path = self.ensure(repo)
        with self.lock(repo):
            specs = [_refspec(ref) for ref in dict.fromkeys(refs) if not self._has(path, ref, refresh)]
            if not specs:
                return
            self._sync_remote(repo, path)
            args = ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "origin", *specs]
            self._run(args, cwd=path, what=f"cannot fetch {', '.join(refs)} of {repo} from {self.url(repo)}")

    def _sync_remote(self, repo: str, path: Path) -> None:
        """Point `origin` at the current template's URL (a moved mirror, a new token), under the lock."""
        url = self.url(repo)
        current = self._run(["config", "--get", "remote.origin.url"], cwd=path, check=False).stdout.strip()
        if current == url:
            return
        self._run(["config", "remote.origin.url", url], cwd=path)
        if is_local_url(url):
            self._run(["config", "remote.origin.uploadpack", self._upload_pack()], cwd=path)
        else:
            self._run(["config", "--unset-all", "remote.origin.uploadpack"], cwd=path, check=False)

    def _has(self, path: Path, ref: str, refresh: bool) -> bool:
        _refspec(ref)  # validate before anything reaches git's command line
        if _SHA_RE.match(ref):
            return self._has_commit(path, ref) or self._carried_at(path, ref) is not None
        if refresh:
            return False
        full = ref if ref.startswith("refs/") else f"refs/heads/{ref}"
        return self._ok(["rev-parse", "--verify", "--quiet", f"{full}^{{commit}}"], cwd=path)

    def _has_commit(self, path: Path, sha: str) -> bool:
        """Whether commit `sha` is in the clone, WITHOUT asking the remote.

        In a partial clone, `cat-file -e` or `rev-parse` of a missing object lazily fetches it,
        and a lazy fetch of a commit negotiates nothing, so it downloads the commit's whole
        history again. `rev-list --missing=...` turns lazy fetching off; a missing or non-commit
        object is simply an error.
        """
        return self._ok(["rev-list", "--no-walk", "--missing=allow-any", sha, "--"], cwd=path)

    def _carried_at(self, path: Path, sha: str) -> str | None:
        """The commit standing in for `sha` (its tree carried in from a task repository's `repo.tar`), else None;
        never clones or fetches."""
        if not (path / "HEAD").is_file():
            return None
        ref = f"{CARRIED_PREFIX}{sha}^{{commit}}"
        proc = self._run(["rev-parse", "--verify", "--quiet", ref], cwd=path, check=False)
        return (proc.stdout.strip() or None) if proc.returncode == 0 else None

    def has(self, repo: str, sha: str) -> bool:
        """Whether commit `sha` (or a tree carried in for it) is in the cache, without cloning or fetching."""
        path = self.path(repo)
        return (path / "HEAD").is_file() and self._has(path, sha, refresh=False)

    # -- reading ------------------------------------------------------------------------------

    def release_version(self, repo: str, sha: str) -> str | None:
        """The version of the newest release tag reachable from `sha` (`v3.12.1` -> `3.12.1`), or None.

        What setuptools-scm / hatch-vcs would derive from the repository's git metadata, for installs
        that run without it (the tree in a sandbox has no `.git`)."""
        tags = self.release_tags(repo, sha)
        return tags[-1] if tags else None

    def release_tags(self, repo: str, sha: str) -> tuple[str, ...]:
        """The newest release tag reachable from `sha` as upstream names it, then its version when that differs
        (`("v0.13.0", "0.13.0")`), or (): the names a history made for an install is tagged with. versioneer reads
        only tags with the project's `tag_prefix` (xarray 0.13's is `v`: tagged `0.13.0` alone, its editable
        install was versioned `0+untagged.1.g…`, and every later row that reused the environment saw that version);
        setuptools-scm reads either."""
        path = self.ensure(repo)
        carried = self._carried_at(path, sha) if _SHA_RE.match(sha) and not self._has_commit(path, sha) else None
        if carried:  # no history to describe: the tags it was carried in with
            message = self._run(["log", "-1", "--format=%B", carried], cwd=path).stdout
            return tuple(line[len(CARRIED_TAG) :] for line in message.splitlines() if line.startswith(CARRIED_TAG))
        if repo not in self._tags_fetched:  # the cache fetches without tags: get them once per process
            with self.lock(repo):
                self._sync_remote(repo, path)
                self._run(
                    ["fetch", "--quiet", "--no-write-fetch-head", "origin", "+refs/tags/*:refs/tags/*"],
                    cwd=path,
                    check=False,
                )
            self._tags_fetched.add(repo)
        describe = ["describe", "--tags", "--abbrev=0", "--match", "*[0-9]*", sha]  # release-like tags only
        proc = self._run(describe, cwd=path, check=False)
        tag = proc.stdout.strip() if proc.returncode == 0 else ""
        try:
            version = str(Version(re.sub(r"^[^0-9]*", "", tag))) if tag else ""
        except InvalidVersion:
            return ()
        return tuple(dict.fromkeys(name for name in (tag, version) if name))

    def committed_at(self, repo: str, sha: str) -> datetime | None:
        """The committer date of a cached commit (what an era-true install resolves as of), or None."""
        proc = self._run(["log", "-1", "--format=%ct", self.resolve(repo, sha)], cwd=self.ensure(repo), check=False)
        stamp = proc.stdout.strip()
        return datetime.fromtimestamp(int(stamp), UTC) if proc.returncode == 0 and stamp.isdigit() else None

    def resolve(self, repo: str, rev: str) -> str:
        """The commit sha `rev` names in the cache; it must have been fetched already."""
        path = self.ensure(repo)
        if rev.startswith("-"):
            raise RepoCacheError(f"invalid revision {rev!r} for {repo}")
        if _SHA_RE.match(rev) and not self._has_commit(path, rev):
            carried = self._carried_at(path, rev)
            if carried:
                return carried
            raise RepoCacheError(f"{rev} is not a commit in the cache of {repo} (fetch it first)")
        proc = self._run(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=path, check=False)
        if proc.returncode != 0:
            raise RepoCacheError(f"{rev} is not a commit in the cache of {repo} (fetch it first)", proc.stderr)
        return proc.stdout.strip()

    def merge_base(self, repo: str, a: str, b: str) -> str:
        """The best common ancestor of two cached commits (commits and trees are always local)."""
        path = self.ensure(repo)
        shas = [self.resolve(repo, a), self.resolve(repo, b)]
        proc = self._run(["merge-base", *shas], cwd=path, check=False)
        if proc.returncode != 0:
            raise RepoCacheError(f"{a} and {b} of {repo} have no merge base", proc.stderr)
        return proc.stdout.strip()

    def diff(self, repo: str, base: str, head: str, binary: bool = True, paths: Sequence[str] = ()) -> str:
        """`git diff` from `base` to `head` (optionally limited to `paths`), with full blob ids.

        With `binary` (the default) binary files are carried as `GIT binary patch` hunks, so the
        patch re-applies with `git apply`; without, they show as "Binary files ... differ". Text
        is decoded as UTF-8 with `surrogateescape`: `.encode("utf-8", "surrogateescape")` gives
        back the exact bytes of files in other encodings.
        """
        path = self.ensure(repo)
        shas = [self.resolve(repo, base), self.resolve(repo, head)]
        args = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--full-index"]
        args += ["--binary"] if binary else []
        proc = self._run([*args, *shas, "--", *paths], cwd=path, text=False, what=f"cannot diff {repo}")
        return proc.stdout.decode("utf-8", "surrogateescape")

    def show_file(self, repo: str, sha: str, path: str) -> bytes | None:
        """The bytes of file `path` at commit `sha`; None when there is no such file there."""
        repo_path = self.ensure(repo)
        commit = self.resolve(repo, sha)
        listing = self._run(["ls-tree", "-z", commit, "--", path], cwd=repo_path, what=f"cannot list {repo}")
        entry = listing.stdout.split("\0")[0]
        if not entry:
            return None
        meta, _, name = entry.partition("\t")
        _mode, kind, oid = meta.split()
        if kind != "blob" or name != path:
            return None
        proc = self._run(["cat-file", "blob", oid], cwd=repo_path, text=False, what=f"cannot read {path}")
        return proc.stdout

    def list_files(self, repo: str, sha: str) -> list[str]:
        """Every file path of commit `sha` (trees only: no blob is fetched from a partial clone)."""
        listing = self._run(
            ["ls-tree", "-r", "-z", "--name-only", self.resolve(repo, sha)],
            cwd=self.ensure(repo),
            what=f"cannot list {repo}",
        )
        return [name for name in listing.stdout.split("\0") if name]

    @contextmanager
    def worktree(self, repo: str, sha: str) -> Iterator[Path]:
        """A detached checkout of `sha` in a fresh directory under `root/worktrees`.

        It is removed and pruned on exit, error or not. Only the bookkeeping in the shared
        repository (add, remove, prune) holds the repo lock; the checkout itself, which may
        fetch blobs, runs unlocked so concurrent worktrees of one repository do not queue.
        """
        path = self.ensure(repo)
        commit = self.resolve(repo, sha)
        parent = self.root / "worktrees"
        parent.mkdir(parents=True, exist_ok=True)
        owner, name = repo.split("/")
        holder = Path(tempfile.mkdtemp(dir=parent, prefix=f"{owner}--{name}-{commit[:12]}-"))
        holder.chmod(0o755)  # readable when mounted into a container running as another user
        tree = holder / name
        try:
            with self.lock(repo):
                add = ["worktree", "add", "--quiet", "--detach", "--no-checkout", str(tree), commit]
                self._run(add, cwd=path, what=f"cannot add a worktree of {repo}")
            self._run(["reset", "--quiet", "--hard", commit], cwd=tree, what=f"cannot check out {commit} of {repo}")
            yield tree
        finally:
            with self.lock(repo):
                self._run(["worktree", "remove", "--force", "--force", str(tree)], cwd=path, check=False)
                shutil.rmtree(holder, ignore_errors=True)
                self._run(["worktree", "prune"], cwd=path, check=False)


def _check_repo(repo: str) -> str:
    if not _REPO_RE.match(repo) or any(part in (".", "..") for part in repo.split("/")):
        raise RepoCacheError(f"invalid repository name {repo!r} (expected 'owner/name')")
    return repo


def _refspec(ref: str) -> str:
    """The refspec that fetches `ref` and keeps it: shas under KEEP_PREFIX, refs as themselves."""
    if _SHA_RE.match(ref):
        return f"{ref}:{KEEP_PREFIX}{ref}"
    if not _REF_RE.match(ref) or ref.startswith("-") or ".." in ref:
        raise RepoCacheError(f"invalid ref {ref!r}")
    full = ref if ref.startswith("refs/") else f"refs/heads/{ref}"
    return f"+{full}:{full}"
