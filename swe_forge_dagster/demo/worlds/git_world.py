"""The test world's git repositories: small real projects (Python, one JavaScript) with real history and merged PRs.

Task building (clone, check out base and merge, run the tests, keep FAIL_TO_PASS) cannot be
tested against GitHub, so this module writes tiny projects and their history into LOCAL BARE
repositories laid out like GitHub: `root/<owner>/<name>.git` with `refs/heads/main`, each PR's
head under `refs/pull/<N>/head`, merged into main with a merge commit. The clone URL template
`file:///root/{repo}.git` then stands in for `https://github.com/{repo}.git`.

Each PR carries its ground truth (`expected_fail_to_pass`, `expected_pass_to_pass`,
`expected_rejection`), checked by really running pytest in `tests/test_git_world.py`, and
`enriched_pr_rows` turns the PRs into `enriched_prs` rows so later stages run without GitHub.
Content, authors and dates are fixed, so shas are identical on every machine, and a built
world is reused while its content version (a hash of the specs below) is unchanged.

One PR per behaviour a task builder must get right:
- acme-labs/tinycalc#12: a bug fix with tests (2 FAIL_TO_PASS, one parametrized; PASS_TO_PASS
  including a class method), closing issue #11, and a binary file (PNG) in its diff;
- northwind/datekit#7: a fix without tests; `agent_tests` are what a good test agent writes, and
  the expected lists describe the runs with them written over the tree;
- globex-oss/yaml-lite#3: a refactor whose new tests already pass before it: no FAIL_TO_PASS;
- acme-labs/tinycalc#15 (a second PR, after #12): a feature whose new test passes about half
  the time: flaky;
- initech/slug-lite#4 (`build_git_world(javascript=True)`, the demo's world): a JavaScript fix
  with mocha tests in an npm package with a lock file (`git_world_js`); its lists are checked by
  running mocha in the Node toolchain image (`tests/test_demo_js_world.py`).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from swe_forge_dagster.demo.worlds.git_world_js import JS_SPECS
from swe_forge_dagster.demo.worlds.git_world_specs import _PR, _SPECS, WorldComment, WorldIssue, _Commit

__all__ = ["GitWorld", "WorldComment", "WorldIssue", "WorldPR", "build_git_world", "enriched_pr_rows"]

WORLD_FORMAT = 1  # bump when the builder (not the content) changes the repositories
MANIFEST = "git-world.json"
_EPOCH = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


@dataclass
class WorldPR:
    """A merged PR of the world and what a correct task builder must conclude about it."""

    repo: str
    number: int
    title: str
    body: str
    head_ref: str
    base_sha: str  # main just before the merge, which is also the branch point
    head_sha: str  # also at refs/pull/<number>/head
    merge_commit_sha: str  # parents: base_sha, head_sha
    created_at: datetime  # the first commit's date: the PR is opened then, and hints are cut there
    merged_at: datetime
    additions: int
    deletions: int
    issue: WorldIssue | None
    expected_fail_to_pass: list[str]  # SWE-bench node ids, sorted
    expected_pass_to_pass: list[str]
    expected_rejection: str | None  # why a correct validator rejects the PR, if it does
    expected_flaky: list[str]  # tests whose result flips between identical runs
    test_files: list[str]
    src_files: list[str]  # every changed file outside tests/, binary ones included
    agent_tests: dict[str, str]  # for PRs without tests: what a good agent writes
    base_tree: dict[str, bytes] = field(repr=False)
    head_tree: dict[str, bytes] = field(repr=False)  # also the merge commit's tree
    base_ref: str = "main"
    language: str = "Python"  # GitHub's name of the repository's language

    @property
    def file_paths(self) -> list[str]:
        return sorted(self.test_files + self.src_files)

    def comment_time(self, comment: WorldComment) -> datetime:
        """When a comment on the PR's issue was written: relative to the first commit (`created_at`)."""
        return self.created_at + timedelta(hours=comment.hours)


@dataclass
class GitWorld:
    root: Path
    url_template: str  # file:///root/{repo}.git
    prs: list[WorldPR]

    def pr(self, repo: str, number: int) -> WorldPR:
        return next(p for p in self.prs if (p.repo, p.number) == (repo, number))

    def remote(self, repo: str) -> Path:
        return self.root / f"{repo}.git"


Specs = dict[str, tuple[_Commit | _PR, ...]]


def world_specs(javascript: bool = False) -> Specs:
    """The Python world, plus the JavaScript repository when asked (appended: the Python shas stay the same)."""
    return {**_SPECS, **JS_SPECS} if javascript else _SPECS


def content_version(specs: Specs) -> str:
    return hashlib.sha256(f"{WORLD_FORMAT}\n{specs!r}".encode()).hexdigest()[:16]


CONTENT_VERSION = content_version(_SPECS)


# -- building -----------------------------------------------------------------------------------


def build_git_world(root: Path, *, javascript: bool = False) -> GitWorld:
    """Build the world's bare repositories under `root`, or reuse them if already built.

    Reuse needs the manifest of the same content version and every remote present; otherwise the
    remotes are rebuilt. A lock file makes concurrent builders (test workers) build once.
    `javascript` adds `initech/slug-lite` (the demo's world; its task needs the Node image and npm).
    """
    root = Path(root).absolute()
    root.mkdir(parents=True, exist_ok=True)
    specs = world_specs(javascript)
    with _locked(root / ".git-world.lock"):
        manifest = _load_manifest(root, specs)
        if manifest is None:
            manifest = _build(root, specs)
    return _world(root, manifest, specs)


def enriched_pr_rows(world: GitWorld) -> list[dict[str, Any]]:
    """The world's PRs as accepted `enriched_prs` rows, so task stages can be fed without GitHub."""
    # Imported here: pyarrow is not needed to build the world (e.g. in spawned test workers).
    from swe_forge_dagster.candidates.datasets import ENRICHED_PRS_SCHEMA

    rows = []
    for pr in world.prs:
        row: dict[str, Any] = dict.fromkeys(ENRICHED_PRS_SCHEMA.names)
        issues = []
        if pr.issue is not None:
            comments = [
                {"body": c.body, "created_at": pr.comment_time(c), "updated_at": pr.comment_time(c)}
                for c in pr.issue.comments
            ]
            issues = [
                {
                    "number": pr.issue.number,
                    "title": pr.issue.title,
                    "body": pr.issue.body,
                    "repo": pr.repo,
                    "comments": comments,
                }
            ]
        row.update(
            repo_name=pr.repo,
            number=pr.number,
            status="accepted",
            reason=None,
            reasons=[],
            stage="filter",
            merged=True,
            merged_at=pr.merged_at,
            merge_commit_sha=pr.merge_commit_sha,
            base_ref=pr.base_ref,
            base_sha=pr.base_sha,
            head_ref=pr.head_ref,
            head_sha=pr.head_sha,
            title=pr.title,
            body=pr.body,
            author_login="world-dev",
            author_is_bot=False,
            pr_created_at=pr.created_at,
            first_commit_at=pr.created_at,
            additions=pr.additions,
            deletions=pr.deletions,
            changed_files=len(pr.file_paths),
            file_paths=pr.file_paths,
            files_complete=True,
            closing_issues=issues,
            labels=[],
            stars=100,
            language=pr.language,
            is_fork=False,
            is_archived=False,
            license="MIT",
            owner_type="Organization",
            source="git_world",
            from_store=False,
        )
        rows.append(row)
    return rows


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _load_manifest(root: Path, specs: Specs) -> dict[str, Any] | None:
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if manifest.get("version") != content_version(specs):
        return None
    if not all((root / f"{repo}.git" / "HEAD").is_file() for repo in specs):
        return None
    return manifest


def _build(root: Path, specs: Specs) -> dict[str, Any]:
    prs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(dir=root, prefix=".scratch-") as scratch:
        for index, (repo, steps) in enumerate(specs.items()):
            start = _EPOCH + timedelta(days=30 * index)
            prs.update(_build_repo(repo, steps, root / f"{repo}.git", Path(scratch), start))
    manifest = {"version": content_version(specs), "prs": prs}
    tmp = root / f".{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    os.replace(tmp, root / MANIFEST)  # written last: its presence means a complete world
    return manifest


def _build_repo(
    repo: str, steps: tuple[_Commit | _PR, ...], remote: Path, scratch: Path, start: datetime
) -> dict[str, Any]:
    """Replay `steps` in a scratch clone, then push main and `refs/pull/N/head` to a fresh bare remote."""
    work = scratch / repo.replace("/", "--")
    work.mkdir(parents=True)
    _git(["init", "--quiet", "--initial-branch=main"], work, scratch)
    clock = iter(start + timedelta(hours=hour) for hour in range(10_000))

    def commit(step: _Commit) -> datetime:
        when = next(clock)
        for path, content in step.files.items():
            target = work / path
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode() if isinstance(content, str) else content)
        _git(["add", "--all"], work, scratch)
        _git(["commit", "--quiet", "--message", step.message], work, scratch, when)
        return when

    prs: dict[str, Any] = {}
    pull_refs = []
    for step in steps:
        if isinstance(step, _Commit):
            commit(step)
            continue
        _git(["checkout", "--quiet", "-b", step.branch], work, scratch)
        dates = [commit(c) for c in step.commits]
        head = _git(["rev-parse", "HEAD"], work, scratch)
        _git(["checkout", "--quiet", "main"], work, scratch)
        base = _git(["rev-parse", "HEAD"], work, scratch)
        merged = next(clock)
        message = f"Merge pull request #{step.number} from {repo.split('/')[0]}/{step.branch}\n\n{step.title}"
        _git(["merge", "--quiet", "--no-ff", "--message", message, step.branch], work, scratch, merged)
        numstat = [line.split("\t") for line in _git(["diff", "--numstat", base, head], work, scratch).splitlines()]
        prs[f"{repo}#{step.number}"] = {
            "base_sha": base,
            "head_sha": head,
            "merge_commit_sha": _git(["rev-parse", "HEAD"], work, scratch),
            "created_at": dates[0].isoformat(),
            "merged_at": merged.isoformat(),
            "additions": sum(int(n[0]) for n in numstat if n[0] != "-"),
            "deletions": sum(int(n[1]) for n in numstat if n[1] != "-"),
        }
        pull_refs.append(f"{head}:refs/pull/{step.number}/head")
    shutil.rmtree(remote, ignore_errors=True)
    remote.mkdir(parents=True)
    _git(["init", "--quiet", "--bare", "--initial-branch=main"], remote, scratch)
    _git(["push", "--quiet", str(remote), "refs/heads/main:refs/heads/main", *pull_refs], work, scratch)
    return prs


def _git(args: list[str], cwd: Path, home: Path, when: datetime | None = None) -> str:
    """Run git with no machine config and a fixed identity (and date), so shas are reproducible."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        LC_ALL="C",
        GIT_AUTHOR_NAME="World Builder",
        GIT_AUTHOR_EMAIL="builder@example.invalid",
        GIT_COMMITTER_NAME="World Builder",
        GIT_COMMITTER_EMAIL="builder@example.invalid",
    )
    if when is not None:
        env.update(GIT_AUTHOR_DATE=when.isoformat(), GIT_COMMITTER_DATE=when.isoformat())
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def _world(root: Path, manifest: dict[str, Any], specs: Specs) -> GitWorld:
    """The world object: shas from the manifest, everything else from the specs."""
    prs = []
    for repo, steps in specs.items():
        tree: dict[str, bytes] = {}
        for step in steps:
            if isinstance(step, _Commit):
                _apply(tree, step.files)
                continue
            base = dict(tree)
            for change in step.commits:
                _apply(tree, change.files)
            changed = sorted(p for p in base.keys() | tree.keys() if base.get(p) != tree.get(p))
            built = manifest["prs"][f"{repo}#{step.number}"]
            prs.append(
                WorldPR(
                    repo=repo,
                    number=step.number,
                    title=step.title,
                    body=step.body,
                    head_ref=step.branch,
                    base_sha=built["base_sha"],
                    head_sha=built["head_sha"],
                    merge_commit_sha=built["merge_commit_sha"],
                    created_at=datetime.fromisoformat(built["created_at"]),
                    merged_at=datetime.fromisoformat(built["merged_at"]),
                    additions=built["additions"],
                    deletions=built["deletions"],
                    issue=step.issue,
                    expected_fail_to_pass=list(step.fail_to_pass),
                    expected_pass_to_pass=list(step.pass_to_pass),
                    expected_rejection=step.rejection,
                    expected_flaky=list(step.flaky),
                    test_files=[p for p in changed if p.startswith(_TEST_DIRS)],
                    src_files=[p for p in changed if not p.startswith(_TEST_DIRS)],
                    agent_tests=dict(step.agent_tests),
                    base_tree=base,
                    head_tree=dict(tree),
                    language="JavaScript" if "package.json" in base else "Python",
                )
            )
    return GitWorld(root=root, url_template=f"file://{root}/{{repo}}.git", prs=prs)


_TEST_DIRS = ("tests/", "test/")  # pytest's and mocha's


def _apply(tree: dict[str, bytes], files: Mapping[str, str | bytes | None]) -> None:
    for path, content in files.items():
        if content is None:
            tree.pop(path, None)
        else:
            tree[path] = content.encode() if isinstance(content, str) else content
