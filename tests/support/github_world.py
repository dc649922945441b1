"""The sample GitHub world both twin test modules assert on, and a GraphQL request helper."""

from __future__ import annotations

from typing import Any

import httpx

from swe_forge_dagster.demo.worlds.github_world import ChangedFile, GithubWorld, Issue, PullRequest, Repo

TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def make_world() -> GithubWorld:
    """The world both twin test files assert on: a 150-file merged PR closing #3, an open PR, a bot PR."""
    world = GithubWorld()
    world.add_repo(Repo("acme", "widgets", stars=1234, language="Python", license_spdx="MIT"))
    world.add_repo(Repo("solo", "tool", stars=3, language="Go", license_spdx=None, owner_type="User"))
    files = [ChangedFile(f"src/acme/mod_{i:03}.py", 2, 1) for i in range(149)]
    files.append(ChangedFile("tests/test_mod.py", 10, 0, "ADDED"))
    world.add_pull(
        PullRequest(
            repo="acme/widgets",
            number=5,
            title="Fix parser crash",
            body="Fixes #3.\n\nThe parser crashed on empty input.",
            author_login="alice",
            files=files,
            labels=["bug"],
            closing_issues=[3],
            created_at="2025-10-08T10:00:00Z",
        )
    )
    world.add_issue("acme/widgets", Issue(3, "Parser crashes", "It crashes. Every time. On empty input."))
    world.add_pull(PullRequest("acme/widgets", 6, files=[ChangedFile("README.md", 1, 1)], merged=False, state="open"))
    bot_files = [ChangedFile("go.mod", 1, 1), ChangedFile("old.go", 0, 4, "DELETED")]
    world.add_pull(PullRequest("solo/tool", 7, author_login="dependabot[bot]", author_is_bot=True, files=bot_files))
    return world


def gql(client: httpx.Client, query: str, variables: dict[str, Any] | None = None) -> httpx.Response:
    return client.post("/graphql", json={"query": query, "variables": variables or {}})
