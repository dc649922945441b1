"""The generated world behind the GitHub twin (`world_from_pr_events`).

It must be deterministic per seed, let event values win over invented ones, and be varied enough
(stars, languages, docs-only and huge PRs, bots, closing issues) to exercise a local filter.
"""

from __future__ import annotations

from typing import Any

from swe_forge_dagster.demo.worlds.github_world_gen import world_from_pr_events


def trimmed_rows(count: int) -> list[dict[str, Any]]:
    """Rows as the trimmed 2025 payload yields them: refs and shas only, everything else NULL."""
    return [
        {
            "repo_name": f"org{i % 300}/project{i % 300}",
            "number": 100 + i,
            "action": "closed",
            "created_at": "2025-10-10T12:00:00Z",
            "title": None,
            "merged": None,
            "head_sha": f"{i:040x}",
        }
        for i in range(count)
    ]


def test_world_is_deterministic_per_seed() -> None:
    rows = trimmed_rows(200)
    assert world_from_pr_events(rows, seed=7) == world_from_pr_events(rows, seed=7)
    other = world_from_pr_events(rows, seed=8)
    assert other != world_from_pr_events(rows, seed=7)
    assert other.get_pull("org1/project1", 101).head_sha == f"{1:040x}"  # event values always win


def test_world_uses_event_values_and_invents_the_rest() -> None:
    classic = [
        {
            "repo_name": "a/b",
            "number": 1,
            "action": "opened",
            "created_at": "2015-01-01T00:00:00Z",
            "title": "Add x",
            "body": "Closes #9 and fixes #1",
            "merged": False,
            "author_login": "zed",
            "author_type": "User",
        },
        {
            "repo_name": "a/b",
            "number": 1,
            "action": "closed",
            "created_at": "2015-01-02T00:00:00Z",
            "title": "Add x",
            "merged": True,
            "merge_commit_sha": "f" * 40,
            "additions": 12,
            "deletions": 3,
            "changed_files": 2,
        },
        {
            "repo_name": "a/b",
            "number": 2,
            "action": "closed",
            "created_at": "2015-01-03T00:00:00Z",
            "title": "Nope",
            "merged": False,
            "author_login": "ci",
            "author_type": "Bot",
        },
        {"repo_name": "a/b", "number": 3, "action": "opened", "created_at": "2025-10-10T00:00:00Z"},
    ]
    world = world_from_pr_events(classic, seed=1)
    assert len(world.repos) == 1 and len(world.pulls) == 3
    first = world.get_pull("a/b", 1)
    assert (first.title, first.merged, first.merge_commit_sha, first.author_login) == ("Add x", True, "f" * 40, "zed")
    assert (first.additions, first.deletions, first.changed_files) == (12, 3, 2)
    assert first.created_at == "2015-01-01T00:00:00Z" and first.merged_at == "2015-01-02T00:00:00Z"
    assert first.closing_issues == [9] and world.get_issue("a/b", 9) is not None  # #1 is the PR itself
    second = world.get_pull("a/b", 2)
    assert (second.merged, second.state, second.author_is_bot) == (False, "closed", True)
    third = world.get_pull("a/b", 3)
    assert (third.merged, third.state) == (False, "open") and third.title and len(third.head_sha) == 40


def test_world_has_the_variety_a_filter_needs() -> None:
    world = world_from_pr_events(trimmed_rows(1000), seed=3)
    pulls, repos = list(world.pulls.values()), list(world.repos.values())

    def share(items: list[Any], predicate: Any) -> float:
        return sum(1 for item in items if predicate(item)) / len(items)

    assert 0.72 <= share(pulls, lambda p: p.merged) <= 0.88
    assert 0.10 <= share(repos, lambda r: r.stars < 20) <= 0.30 and share(repos, lambda r: r.stars >= 1000) > 0.05
    assert share(repos, lambda r: r.language in {"Python", "TypeScript", "Go", "JavaScript", "Rust", "Java"}) > 0.75
    assert (
        0.03
        <= share(repos, lambda r: r.language not in {"Python", "TypeScript", "Go", "JavaScript", "Rust", "Java", None})
        <= 0.2
    )
    assert 0 < share(repos, lambda r: r.language is None) <= 0.08
    assert 0 < share(repos, lambda r: r.is_fork) <= 0.08 and share(repos, lambda r: r.is_archived) <= 0.06
    assert 0.75 <= share(repos, lambda r: r.owner_type == "Organization") <= 0.93
    assert 0.04 <= share(pulls, lambda p: all(f.path.endswith(".md") for f in p.files)) <= 0.13
    assert 0.02 <= share(pulls, lambda p: all("test" in f.path.lower() for f in p.files)) <= 0.10
    assert 0.01 <= share(pulls, lambda p: p.changed_files >= 60) <= 0.06
    assert 0.02 <= share(pulls, lambda p: p.additions > 1000) <= 0.10
    assert 0.02 <= share(pulls, lambda p: p.additions < 3) <= 0.10
    assert 0.30 <= share(pulls, lambda p: len(p.closing_issues) == 1) <= 0.50
    assert all(world.get_issue(p.repo, n) for p in pulls for n in p.closing_issues)
    assert 0.08 <= share(pulls, lambda p: len(p.body) < 20 and not p.closing_issues) <= 0.22
    assert 0.02 <= share(pulls, lambda p: p.author_is_bot and p.author_login.endswith("[bot]")) <= 0.09
    assert 0.05 <= share(pulls, lambda p: bool(p.labels)) <= 0.4
    assert all(p.changed_files >= 1 for p in pulls)
    python = next(p for p in pulls if world.get_repo(p.repo).language == "Python" and p.changed_files > 2)
    assert any(f.path.endswith(".py") for f in python.files)
    assert all(f.patch.count("\n+") + f.patch.startswith("+") == f.additions for p in pulls[:50] for f in p.files)
