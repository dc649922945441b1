"""The REST path parses real recorded GitHub responses into the model GraphQL produces."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from swe_forge_dagster.github.graphql import ChunkQuery, build_chunk_query, parse_chunk_response
from swe_forge_dagster.github.models import EnrichedPR
from swe_forge_dagster.github.rest import closing_issue_numbers, pr_from_rest, repo_from_rest
from swe_forge_dagster.tasks.hints import hints_text


@pytest.fixture
def cassettes(shared_fixtures: Path) -> Path:
    path = shared_fixtures / "github-api" / "github3py-cassettes" / "extracted"
    if not path.is_dir():
        pytest.skip(f"missing {path}")
    return path


def load(folder: Path, name: str) -> dict | list:
    return json.loads((folder / name).read_text())


def test_merged_pr_235_pull_and_files(cassettes: Path) -> None:
    pr = pr_from_rest(load(cassettes, "PullRequest_files__00.json"), load(cassettes, "PullRequest_files__01.json"))
    assert (pr.repo, pr.number, pr.merged, pr.source) == ("sigmavirus24/github3.py", 235, True, "rest")
    assert pr.merge_commit_sha == "8af3fd28fce3cb8d824b3c7242d73c4727d6cb38"
    assert pr.base_sha == "7ec3d393fc08222b1eed89f61263481ba356984d" and pr.base_ref == "develop"
    assert pr.head_sha == "560c19155ac83eb38713db56c56c7aeaa122c528"
    assert pr.title == "Add Release.assets attribute" and pr.author_login == "bgilbert" and not pr.author_is_bot
    assert (pr.additions, pr.deletions, pr.changed_files) == (18, 0, 2)
    assert pr.file_paths == ["github3/repos/release.py", "tests/unit/test_repos_release.py"]
    assert [f.change_type for f in pr.files] == ["MODIFIED", "MODIFIED"] and pr.files_complete
    assert pr.repository.language == "Python" and pr.repository.stars > 1000
    assert pr.repository.owner_type == "User"


def test_pr_286_with_five_files(cassettes: Path) -> None:
    pr = pr_from_rest(load(cassettes, "PullFile_contents__00.json"), load(cassettes, "PullFile_contents__01.json"))
    assert pr.number == 286 and pr.changed_files == 5 and len(pr.files) == 5 and pr.files_complete


def test_closed_unmerged_pr_has_no_merge_commit(cassettes: Path) -> None:
    pr = pr_from_rest(load(cassettes, "GitHub_pull_request__00.json"))
    assert pr.number == 119 and not pr.merged and pr.merge_commit_sha is None
    assert not pr.files_complete  # the files were not fetched


def test_pull_without_files_knows_it_is_incomplete_and_repo_json_wins(cassettes: Path) -> None:
    repo = load(cassettes, "GitHub_repository__00.json")
    pr = pr_from_rest(load(cassettes, "PullRequest_diff__00.json"), None, repo)
    assert pr.repository == repo_from_rest(repo)


def test_diff_media_type_recording_is_a_unified_diff(cassettes: Path) -> None:
    diff = (cassettes / "PullRequest_diff__01.diff").read_text()
    assert diff.startswith("diff --git a/github3/repos/release.py b/github3/repos/release.py")


def test_linked_issue_from_closing_keywords(cassettes: Path) -> None:
    issue = load(cassettes, "Issue_pull_request__00.json")
    pr = pr_from_rest(load(cassettes, "Issue_pull_request__01.json"), [], None, [issue])
    assert pr.closing_issues[0].number == issue["number"] and pr.closing_issues[0].repo == pr.repo


@pytest.mark.parametrize(
    ("body", "numbers"),
    [
        ("Fixes #12", [12]),
        ("closes: #3, resolves #4 and fixes #3", [3, 4]),
        ("see #9", []),
        (None, []),
        ("FIXED #7.", [7]),
        ("prefix#5 fixes#6", []),
    ],
)
def test_closing_keywords(body: str | None, numbers: list[int]) -> None:
    assert closing_issue_numbers(body) == numbers


def graphql_pr_from_rest_fixture(pull: dict, files: list[dict]) -> tuple[ChunkQuery, dict]:
    """The GraphQL response GitHub would give for the same PR, built from the REST recording."""
    repo = pull["base"]["repo"]
    query = build_chunk_query([(repo["full_name"], pull["number"])])
    change = {"modified": "MODIFIED", "added": "ADDED", "removed": "DELETED", "renamed": "RENAMED"}
    node = {
        "number": pull["number"],
        "title": pull["title"],
        "body": pull["body"],
        "merged": pull["merged"],
        "mergedAt": pull["merged_at"],
        "createdAt": pull["created_at"],
        "mergeCommit": {"oid": pull["merge_commit_sha"]},
        "baseRefName": pull["base"]["ref"],
        "baseRefOid": pull["base"]["sha"],
        "headRefName": pull["head"]["ref"],
        "headRefOid": pull["head"]["sha"],
        "additions": pull["additions"],
        "deletions": pull["deletions"],
        "changedFiles": pull["changed_files"],
        "author": {"__typename": "User", "login": pull["user"]["login"]},
        "files": {
            "totalCount": len(files),
            "nodes": [
                {
                    "path": f["filename"],
                    "additions": f["additions"],
                    "deletions": f["deletions"],
                    "changeType": change[f["status"]],
                }
                for f in files
            ],
        },
        "closingIssuesReferences": {"nodes": []},
        "labels": {"nodes": []},
    }
    repository = {
        "nameWithOwner": repo["full_name"],
        "stargazerCount": repo["stargazers_count"],
        "isFork": repo["fork"],
        "isArchived": repo["archived"],
        "primaryLanguage": {"name": repo["language"]},
        "licenseInfo": {"spdxId": (repo.get("license") or {}).get("spdx_id")},
        "owner": {"__typename": repo["owner"]["type"], "login": repo["owner"]["login"]},
        "p0": node,
    }
    return query, {"data": {"rateLimit": {"cost": 1, "remaining": 4999}, "r0": repository}}


def test_rest_and_graphql_paths_give_the_same_model(cassettes: Path) -> None:
    pull, files = load(cassettes, "PullRequest_files__00.json"), load(cassettes, "PullRequest_files__01.json")
    assert isinstance(pull, dict) and isinstance(files, list)
    from_rest = pr_from_rest(pull, files)
    query, payload = graphql_pr_from_rest_fixture(pull, files)
    from_graphql = parse_chunk_response(query, payload).enriched[(from_rest.repo, from_rest.number)]
    ignore = {"source", "fetched_at"}
    assert isinstance(from_graphql, EnrichedPR)
    assert from_graphql.model_dump(exclude=ignore) == from_rest.model_dump(exclude=ignore)


def test_an_error_inside_a_pr_makes_it_failed_not_enriched_with_empty_fields(cassettes: Path) -> None:
    """Review finding: `files` failing alone must not store a PR with no files as complete."""
    pull, files = load(cassettes, "PullRequest_files__00.json"), load(cassettes, "PullRequest_files__01.json")
    assert isinstance(pull, dict) and isinstance(files, list)
    query, payload = graphql_pr_from_rest_fixture(pull, files)
    payload["data"]["r0"]["p0"]["files"] = None
    payload["errors"] = [{"type": "SERVICE_UNAVAILABLE", "path": ["r0", "p0", "files"], "message": "timeout"}]
    result = parse_chunk_response(query, payload)
    key = ("sigmavirus24/github3.py", 235)
    assert key in result.failed and key not in result.enriched and key not in result.missing


def test_hints_inputs_from_the_recorded_commits_and_comments(cassettes: Path) -> None:
    """`/pulls/235/commits` (oldest first, the date under `commit.author`) and `/issues/235/comments` as
    recorded; the GraphQL path reads the same values from `authoredDate` and `comments.nodes`."""
    pull, commits = load(cassettes, "PullRequest_commits__00.json"), load(cassettes, "PullRequest_commits__01.json")
    issue = load(cassettes, "PullRequest_issue__01.json")
    comments = load(cassettes, "PullRequest_issue_comments__01.json")
    assert isinstance(pull, dict) and isinstance(commits, list) and isinstance(issue, dict)
    assert isinstance(comments, list)
    from_rest = pr_from_rest(pull, [], None, [issue], {235: comments}, commits)
    assert from_rest.first_commit_at == dt.datetime(2014, 5, 2, 6, 8, 14, tzinfo=dt.UTC)
    (linked,) = from_rest.closing_issues
    assert [(c.body, c.created_at, c.updated_at) for c in linked.comments] == [
        (
            "Thanks @bgilbert \n",
            dt.datetime(2014, 5, 3, 14, 41, 27, tzinfo=dt.UTC),
            dt.datetime(2014, 5, 3, 14, 41, 27, tzinfo=dt.UTC),
        )
    ]
    assert hints_text([linked.model_dump()], from_rest.first_commit_at) == ""  # thanks after the fact: no hint

    query, payload = graphql_pr_from_rest_fixture(pull, [])
    node = payload["data"]["r0"]["p0"]
    node["commits"] = {"nodes": [{"commit": {"authoredDate": c["commit"]["author"]["date"]}} for c in commits[:1]]}
    node["closingIssuesReferences"] = {
        "nodes": [
            {
                "number": issue["number"],
                "title": issue["title"],
                "body": issue["body"],
                "repository": {"nameWithOwner": "sigmavirus24/github3.py"},
                "comments": {
                    "nodes": [
                        {"body": c["body"], "createdAt": c["created_at"], "updatedAt": c["updated_at"]}
                        for c in comments
                    ]
                },
            }
        ]
    }
    from_graphql = parse_chunk_response(query, payload).enriched[(from_rest.repo, from_rest.number)]
    ignore = {"source", "fetched_at", "files_complete"}  # no files given to either path
    assert from_graphql.model_dump(exclude=ignore) == from_rest.model_dump(exclude=ignore)
