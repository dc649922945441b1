"""The whole pipeline's test world: the git world's PRs as GH Archive events, GitHub data and git remotes.

`build_git_world` gives real repositories with merged PRs; this module makes them findable the way
real PRs are: a `closed` PullRequestEvent in a GH Archive hour (trimmed 2025 payload, amid
ordinary noise events that are not pull requests), and a GitHub twin world that serves each PR
with its real shas, commits, changed files and line counts, and the issue it closes with its
comments (tinycalc#12's issue has two comments before the PR's first commit, SWE-bench's
`hints_text`, and one after it, which is not a hint). Mining those hours
then walks the real path end to end: ingest → candidates → GraphQL enrichment + filter → triage →
task partitions → patch (the git remotes) → agents and validation in Docker → export.

Which PR lands in which hour is part of the world, so tests know the order a backwards walk meets
them: the newest hour holds tinycalc#12 (good, linked issue) and yaml-lite#3 (rejected: passes
without the fix), the one before datekit#7 (no tests: the test agent writes them), the oldest
tinycalc#15 (flaky). The demo's world (`javascript=True`) adds slug-lite#4, a JavaScript fix with
mocha tests, to the newest hour.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import os
import subprocess
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from swe_forge_dagster.demo.worlds.gharchive_world import EVENT_MIX, write_hour
from swe_forge_dagster.demo.worlds.git_world import GitWorld, WorldPR, build_git_world
from swe_forge_dagster.demo.worlds.git_world_js import JS_REPO
from swe_forge_dagster.demo.worlds.github_world import (
    ChangedFile,
    Comment,
    GithubWorld,
    Issue,
    PRCommit,
    PullRequest,
    Repo,
    iso,
    parse_iso,
)
from swe_forge_dagster.gharchive.hours import partition_key

# Hour offset (0 = newest) → the world PRs closed in it.
HOUR_PLAN: dict[int, list[tuple[str, int]]] = {
    0: [("acme-labs/tinycalc", 12), ("globex-oss/yaml-lite", 3)],
    1: [("northwind/datekit", 7)],
    2: [("acme-labs/tinycalc", 15)],
}
JS_HOUR_PLAN = {0: [(JS_REPO, 4)]}
"""What `javascript=True` adds to HOUR_PLAN."""
NOISE = {kind: weight for kind, weight in EVENT_MIX.items() if kind != "PullRequestEvent"}


@dataclass
class TaskWorld:
    git: GitWorld
    github: GithubWorld
    mirror: Path
    hours: list[str]  # partition keys, newest first (as HOUR_PLAN)
    plan: dict[int, list[tuple[str, int]]] = field(default_factory=lambda: HOUR_PLAN)

    def prs_in(self, hour_index: int) -> list[WorldPR]:
        return [self.git.pr(repo, number) for repo, number in self.plan[hour_index]]


def hour_plan(javascript: bool = False) -> dict[int, list[tuple[str, int]]]:
    if not javascript:
        return HOUR_PLAN
    return {offset: prs + JS_HOUR_PLAN.get(offset, []) for offset, prs in HOUR_PLAN.items()}


def _line_counts(before: bytes | None, after: bytes | None) -> tuple[int, int]:
    if b"\x00" in (before or b"") or b"\x00" in (after or b""):
        return 0, 0  # binary: GitHub reports no lines
    old = (before or b"").decode("utf-8", "replace").splitlines()
    new = (after or b"").decode("utf-8", "replace").splitlines()
    diff = list(difflib.unified_diff(old, new, lineterm="", n=0))[2:]
    adds = sum(1 for line in diff if line.startswith("+"))
    return adds, sum(1 for line in diff if line.startswith("-"))


def pr_commits(git: GitWorld, pr: WorldPR) -> list[PRCommit]:
    """The PR's real commits, oldest first, read from its remote (what GitHub lists for the PR)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    log = subprocess.run(
        [
            "git",
            "--git-dir",
            str(git.remote(pr.repo)),
            "log",
            "--reverse",
            "--format=%H%x1f%aI%x1f%cI%x1f%s",
            f"{pr.base_sha}..{pr.head_sha}",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = [line.split("\x1f") for line in log.splitlines() if line]
    return [
        PRCommit(sha, iso(parse_iso(author)), subject, iso(parse_iso(committer)))
        for sha, author, committer, subject in rows
    ]


def github_pull(pr: WorldPR, commits: list[PRCommit] | None = None) -> PullRequest:
    files = []
    for path in pr.file_paths:
        before, after = pr.base_tree.get(path), pr.head_tree.get(path)
        adds, dels = _line_counts(before, after)
        kind = "ADDED" if before is None else "DELETED" if after is None else "MODIFIED"
        files.append(ChangedFile(path, adds, dels, kind, patch=f"@@ {path} @@"))
    return PullRequest(
        repo=pr.repo,
        number=pr.number,
        title=pr.title,
        body=pr.body,
        author_login="world-dev",
        merged=True,
        merged_at=iso(pr.merged_at),
        merge_commit_sha=pr.merge_commit_sha,
        base_ref=pr.base_ref,
        base_sha=pr.base_sha,
        head_ref=pr.head_ref,
        head_sha=pr.head_sha,
        created_at=iso(pr.created_at),
        files=files,
        closing_issues=[pr.issue.number] if pr.issue else [],
        commits=list(commits or []),
    )


def github_world_for(git: GitWorld) -> GithubWorld:
    world = GithubWorld()
    for pr in git.prs:
        owner, _, name = pr.repo.partition("/")
        world.add_repo(Repo(owner=owner, name=name, stars=150, language=pr.language, license_spdx="MIT"))
        world.add_pull(github_pull(pr, pr_commits(git, pr)))
        if pr.issue is not None:
            comments = [Comment(c.body, iso(pr.comment_time(c)), author_login="world-user") for c in pr.issue.comments]
            world.add_issue(pr.repo, Issue(pr.issue.number, pr.issue.title, pr.issue.body, comments=comments))
    return world


def closed_event(pr: WorldPR, event_id: int, when: dt.datetime) -> bytes:
    """The trimmed (2025+) `closed` PullRequestEvent GitHub writes when the PR is merged."""
    owner, _, name = pr.repo.partition("/")
    repo_ref = {
        "id": zlib.crc32(pr.repo.encode()) % 10**7,
        "url": f"https://api.github.com/repos/{pr.repo}",
        "name": name,
    }
    event = {
        "id": str(event_id),
        "type": "PullRequestEvent",
        "actor": {"id": 4242, "login": "world-dev", "gravatar_id": "", "url": "https://api.github.com/users/world-dev"},
        "repo": {"id": repo_ref["id"], "name": pr.repo, "url": repo_ref["url"]},
        "org": {"id": 77, "login": owner, "url": f"https://api.github.com/orgs/{owner}"},
        "payload": {
            "action": "closed",
            "number": pr.number,
            "pull_request": {
                "url": f"https://api.github.com/repos/{pr.repo}/pulls/{pr.number}",
                "id": 900_000 + pr.number,
                "number": pr.number,
                "head": {"ref": pr.head_ref, "sha": pr.head_sha, "repo": repo_ref},
                "base": {"ref": pr.base_ref, "sha": pr.base_sha, "repo": repo_ref},
            },
        },
        "public": True,
        "created_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    return json.dumps(event, separators=(",", ":")).encode()


def newest_complete_hour(now: dt.datetime | None = None) -> dt.datetime:
    now = now or dt.datetime.now(dt.UTC)
    return now.replace(minute=0, second=0, microsecond=0) - dt.timedelta(hours=1)


def build_task_world(
    root: Path,
    newest: dt.datetime | None = None,
    noise_events: int = 2000,
    mirror: Path | None = None,
    *,
    javascript: bool = False,
) -> TaskWorld:
    """Git remotes under `root/git`, GH Archive hours in `mirror` (default `root/mirror`) ending at `newest`
    (default: the last complete hour, so a walk from "now" finds them first), and the matching GitHub world.
    `javascript` adds the JavaScript repository and its PR (the demo's world)."""
    git = build_git_world(root / "git", javascript=javascript)
    newest = newest or newest_complete_hour()
    mirror = mirror or root / "mirror"
    plan = hour_plan(javascript)
    hours = []
    for offset, prs in plan.items():
        hour = newest - dt.timedelta(hours=offset)
        when = hour + dt.timedelta(minutes=30)
        lines = [
            closed_event(git.pr(repo, n), int(hour.timestamp()) * 1000 + 900 + i, when)
            for i, (repo, n) in enumerate(prs)
        ]
        write_hour(mirror, hour, events=noise_events, seed=offset, extra_lines=lines, mix=NOISE)
        hours.append(partition_key(hour))
    return TaskWorld(git, github_world_for(git), mirror, hours, plan)
