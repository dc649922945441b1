"""The GitHub twin itself, exercised with plain httpx the way a real client would talk to GitHub.

The project's client will be tested against this twin, so these tests pin down that the twin
answers like api.github.com (shapes, headers, pagination, errors, limits, faults) and that the
generated world is deterministic and varied enough to exercise a local filter.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from swe_forge_dagster.testing.github_twin import GithubTwin
from swe_forge_dagster.testing.github_world import (
    ChangedFile,
    GithubWorld,
    Issue,
    PullRequest,
    Repo,
    world_from_pr_events,
)

TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PR_QUERY = """
query($o1: String!, $n1: String!, $num1: Int!, $o2: String!, $n2: String!, $num2: Int!) {
  first: repository(owner: $o1, name: $n1) {
    nameWithOwner stargazerCount isFork isArchived primaryLanguage { name } licenseInfo { spdxId key name }
    owner { __typename login }
    pr: pullRequest(number: $num1) {
      number title state merged mergedAt mergeCommit { oid } baseRefOid headRefName additions changedFiles
      author { __typename login }
      files(first: 10) { totalCount nodes { path additions deletions changeType } }
      closingIssuesReferences(first: 5) { totalCount nodes { number title body repository { nameWithOwner } } }
      labels(first: 5) { nodes { name } }
    }
    gone: pullRequest(number: 999) { number }
  }
  second: repository(owner: $o2, name: $n2) {
    owner { __typename login }
    bot: pullRequest(number: $num2) { author { __typename login } state }
  }
}
"""
PR_VARS = {"o1": "acme", "n1": "widgets", "num1": 5, "o2": "solo", "n2": "tool", "num2": 7}


def make_world() -> GithubWorld:
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


@pytest.fixture
def twin() -> Iterator[GithubTwin]:
    with GithubTwin(make_world()) as running:
        yield running


@pytest.fixture
def client(twin: GithubTwin) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=twin.url, headers=AUTH, timeout=10) as http:
        yield http


def gql(client: httpx.Client, query: str, variables: dict[str, Any] | None = None) -> httpx.Response:
    return client.post("/graphql", json={"query": query, "variables": variables or {}})


# --- REST ----------------------------------------------------------------------------------------


def test_pull_json_has_github_shape_and_rate_headers(client: httpx.Client, twin: GithubTwin) -> None:
    response = client.get("/repos/acme/widgets/pulls/5")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["x-ratelimit-resource"] == "core"
    assert response.headers["x-ratelimit-limit"] == "5000"
    assert response.headers["x-ratelimit-remaining"] == "4999"
    assert response.headers["x-ratelimit-used"] == "1"
    assert int(response.headers["x-ratelimit-reset"]) > time.time()
    pull = response.json()
    assert (pull["number"], pull["state"], pull["title"], pull["merged"]) == (5, "closed", "Fix parser crash", True)
    assert pull["user"] == pull["user"] | {"login": "alice", "type": "User"}
    assert pull["merged_at"] and len(pull["merge_commit_sha"]) == 40
    assert pull["base"]["ref"] == "main" and len(pull["base"]["sha"]) == 40
    assert pull["base"]["repo"]["full_name"] == "acme/widgets" and pull["head"]["ref"] == "fix-branch"
    assert (pull["additions"], pull["deletions"], pull["changed_files"]) == (149 * 2 + 10, 149, 150)
    assert pull["labels"][0]["name"] == "bug"
    assert pull["html_url"] == "https://github.com/acme/widgets/pull/5"
    assert pull["created_at"] == "2025-10-08T10:00:00Z"
    assert pull["url"].startswith(twin.url)  # follow-up URLs point back at the twin
    bot = client.get("/repos/solo/tool/pulls/7").json()
    assert bot["user"]["login"] == "dependabot[bot]" and bot["user"]["type"] == "Bot"
    repo = client.get("/repos/acme/widgets").json()
    assert (repo["stargazers_count"], repo["watchers_count"], repo["language"]) == (1234, 1234, "Python")
    assert (repo["fork"], repo["archived"], repo["default_branch"]) == (False, False, "main")
    assert repo["license"]["spdx_id"] == "MIT" and repo["license"]["key"] == "mit"
    assert repo["owner"]["login"] == "acme" and repo["owner"]["type"] == "Organization"
    assert client.get("/repos/solo/tool").json()["license"] is None


def test_field_names_are_real_github_ones(client: httpx.Client, shared_fixtures: Path) -> None:
    """Every key the twin sends exists in a response recorded from real api.github.com."""
    recorded = shared_fixtures / "github-api" / "github3py-cassettes" / "extracted"
    if not recorded.is_dir():
        pytest.skip("recorded GitHub responses missing")

    def keys(name: str, inner: str | None = None) -> set[str]:
        data = json.loads((recorded / name).read_text())
        data = data[0] if isinstance(data, list) else data
        return set((data[inner] if inner else data).keys())

    pull = client.get("/repos/acme/widgets/pulls/5").json()
    assert set(pull) <= keys("PullRequest_diff__00.json")
    assert set(pull["user"]) <= keys("PullRequest_diff__00.json", "user")
    assert set(pull["base"]) <= keys("PullRequest_diff__00.json", "base")
    first_file = client.get("/repos/acme/widgets/pulls/5/files").json()[0]
    assert set(first_file) <= keys("PullRequest_files__01.json") | {"previous_filename"}
    issue = client.get("/repos/acme/widgets/issues/5").json()
    assert set(issue) <= keys("PullRequest_issue__01.json") | {"state_reason"}
    repo = client.get("/repos/acme/widgets").json()
    assert set(repo) <= keys("GitHub_repository__00.json") | {"node_id", "topics", "visibility", "disabled"}


def test_files_pagination_follows_link_header(client: httpx.Client) -> None:
    page1 = client.get("/repos/acme/widgets/pulls/5/files", params={"per_page": 100})
    assert len(page1.json()) == 100 and page1.json()[0]["filename"] == "src/acme/mod_000.py"
    assert page1.links["next"]["url"].endswith("/repos/acme/widgets/pulls/5/files?per_page=100&page=2")
    assert page1.links["last"]["url"].endswith("page=2") and "prev" not in page1.links
    assert 'rel="next"' in page1.headers["link"]
    page2 = client.get(page1.links["next"]["url"])  # followed verbatim, as clients do
    items = page2.json()
    assert len(items) == 50 and "next" not in page2.links and page2.links["prev"]["url"].endswith("page=1")
    assert items[-1] == items[-1] | {"filename": "tests/test_mod.py", "status": "added", "additions": 10, "changes": 10}
    assert items[-1]["patch"].startswith("@@ -0,0 +1,10 @@")
    default = client.get("/repos/acme/widgets/pulls/5/files")
    assert len(default.json()) == 30 and default.links["last"]["url"].endswith("per_page=30&page=5")
    assert len(client.get("/repos/acme/widgets/pulls/5/files", params={"per_page": 500}).json()) == 100
    assert client.get("/repos/acme/widgets/pulls/5/files", params={"page": 9}).json() == []
    assert "link" not in client.get("/repos/solo/tool/pulls/7/files").headers


def test_diff_media_type(client: httpx.Client, twin: GithubTwin) -> None:
    response = client.get("/repos/solo/tool/pulls/7", headers={"Accept": "application/vnd.github.diff"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/vnd.github.diff")
    diff = response.text
    assert diff.startswith("diff --git a/go.mod b/go.mod\n")
    assert "diff --git a/old.go b/old.go\ndeleted file mode 100644" in diff and "+++ /dev/null" in diff
    assert diff.count("\n-    old_old_") == 4 and "--- a/go.mod\n+++ b/go.mod\n@@ " in diff
    huge = [ChangedFile(f"f{i}.txt", 1, 0) for i in range(301)]
    big = twin.world.add_pull(PullRequest("solo/tool", 8, files=huge))
    too_large = client.get("/repos/solo/tool/pulls/8", headers={"Accept": "application/vnd.github.v3.diff"})
    assert too_large.status_code == 406 and too_large.json()["errors"][0]["code"] == "too_large"
    assert big.changed_files == 301 and client.get("/repos/solo/tool/pulls/8").status_code == 200


def test_etag_304_is_free(client: httpx.Client, twin: GithubTwin) -> None:
    first = client.get("/repos/acme/widgets/pulls/5")
    etag = first.headers["etag"]
    assert etag.startswith('"') and not etag.startswith("W/")
    again = client.get("/repos/acme/widgets/pulls/5", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["x-ratelimit-remaining"] == first.headers["x-ratelimit-remaining"] == "4999"
    stale = client.get("/repos/acme/widgets/pulls/5", headers={"If-None-Match": '"nope"'})
    assert stale.status_code == 200 and stale.headers["x-ratelimit-remaining"] == "4998"
    assert [r.counted for r in twin.requests] == [True, False, True]
    assert [r.status for r in twin.requests] == [200, 304, 200]
    assert len(twin.counted_requests()) == 2


def test_auth_required_and_token_never_echoed(twin: GithubTwin) -> None:
    with httpx.Client(base_url=twin.url) as anonymous:
        missing = anonymous.get("/repos/acme/widgets")
        wrong = anonymous.get("/repos/acme/widgets", headers={"Authorization": "Bearer nope"})
        gql_missing = anonymous.post("/graphql", json={"query": "{ rateLimit { cost } }"})
        ok = anonymous.get("/repos/acme/widgets", headers={"Authorization": f"token {TOKEN}"})
    assert missing.status_code == wrong.status_code == gql_missing.status_code == 401
    assert missing.json() == {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}
    assert ok.status_code == 200
    assert all(TOKEN not in r.text for r in (missing, wrong, gql_missing, ok))
    assert twin.authorizations == [None, "Bearer nope", f"token {TOKEN}"]
    assert not any(r.counted for r in twin.requests[:3])
    with GithubTwin(make_world(), token=None) as open_twin:
        assert httpx.get(f"{open_twin.url}/repos/acme/widgets").status_code == 200


def test_not_found(client: httpx.Client, twin: GithubTwin) -> None:
    for path in ("/repos/nobody/nothing", "/repos/acme/widgets/pulls/404", "/repos/acme/widgets/issues/77", "/user"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert response.json()["message"] == "Not Found"
    assert client.get("/repos/ACME/Widgets/pulls/5").status_code == 200  # GitHub routes ignore case
    issue = client.get("/repos/acme/widgets/issues/3").json()
    assert (issue["number"], issue["title"], issue["state"]) == (3, "Parser crashes", "closed")
    assert "pull_request" not in issue and issue["user"]["login"]
    assert "pull_request" in client.get("/repos/acme/widgets/issues/5").json()  # a PR is an issue too
    twin.world.remove_pull("acme/widgets", 5)
    assert client.get("/repos/acme/widgets/pulls/5").status_code == 404


def test_rate_limit_endpoint_is_free(client: httpx.Client, twin: GithubTwin) -> None:
    client.get("/repos/acme/widgets")
    body = client.get("/rate_limit").json()
    assert client.get("/rate_limit").json()["resources"]["core"]["remaining"] == 4999
    assert body["resources"]["core"] == body["rate"] | {"remaining": 4999}
    assert body["resources"]["graphql"]["limit"] == 5000 and body["resources"]["core"]["used"] == 1
    assert [r.counted for r in twin.requests] == [True, False, False]
    assert twin.requests[1].resource == "none" and twin.count("/rate_limit") == 2


def test_concurrent_requests_are_tracked(client: httpx.Client, twin: GithubTwin) -> None:
    twin.delay(0.2)
    threads = [
        threading.Thread(target=lambda: httpx.get(f"{twin.url}/repos/acme/widgets", headers=AUTH)) for _ in range(5)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert twin.max_in_flight >= 3 and twin.count("/repos/acme", method="GET") == 5
    assert twin.rate_limit_remaining("core") == 4995


# --- faults --------------------------------------------------------------------------------------


def test_rest_rate_limit_exhaustion_and_refill(client: httpx.Client, twin: GithubTwin) -> None:
    twin.exhaust_rate_limit("core", reset_in=0.3)
    limited = client.get("/repos/acme/widgets")
    assert limited.status_code == 403 and limited.headers["x-ratelimit-remaining"] == "0"
    assert limited.json()["message"].startswith("API rate limit exceeded for user ID 1.")
    assert int(limited.headers["x-ratelimit-reset"]) >= int(time.time())
    assert not twin.requests[-1].counted
    time.sleep(0.35)
    refilled = client.get("/repos/acme/widgets")
    assert refilled.status_code == 200 and refilled.headers["x-ratelimit-remaining"] == "4999"


def test_secondary_limit_sends_retry_after(client: httpx.Client, twin: GithubTwin) -> None:
    twin.secondary_limit(times=2, retry_after=3)
    responses = [client.get("/repos/acme/widgets") for _ in range(2)]
    responses.append(gql(client, "{ rateLimit { cost } }"))
    assert [r.status_code for r in responses[:2]] == [403, 403]
    assert all(r.headers["retry-after"] == "3" for r in responses[:2])
    assert "secondary rate limit" in responses[0].json()["message"]
    assert responses[2].status_code == 200 and [r.counted for r in twin.requests] == [False, False, True]


def test_5xx_bursts_on_matching_paths(client: httpx.Client, twin: GithubTwin) -> None:
    twin.fail_next(502, times=2, path_prefix="/repos/acme/widgets/pulls")
    assert client.get("/repos/acme/widgets").status_code == 200  # other paths unaffected
    burst = [client.get("/repos/acme/widgets/pulls/5") for _ in range(3)]
    assert [r.status_code for r in burst] == [502, 502, 200]
    assert burst[0].headers["content-type"].startswith("text/html") and "x-ratelimit-remaining" in burst[0].headers
    twin.fail_next(502, path_prefix="/graphql")
    failed = gql(client, "{ rateLimit { cost } }")
    assert failed.status_code == 502 and failed.json()["errors"][0]["message"].startswith("Something went wrong")
    twin.fail_next(503)
    assert client.get("/rate_limit").status_code == 503
    assert twin.count(method="GET") == 5 and sum(r.counted for r in twin.requests) == 2


# --- GraphQL -------------------------------------------------------------------------------------


def test_graphql_aliases_variables_and_not_found(client: httpx.Client) -> None:
    response = gql(client, PR_QUERY, PR_VARS)
    assert response.status_code == 200 and response.headers["x-ratelimit-resource"] == "graphql"
    body = response.json()
    first, second = body["data"]["first"], body["data"]["second"]
    assert first["nameWithOwner"] == "acme/widgets" and first["stargazerCount"] == 1234
    assert first["primaryLanguage"] == {"name": "Python"} and first["licenseInfo"]["spdxId"] == "MIT"
    assert first["owner"] == {"__typename": "Organization", "login": "acme"}
    assert second["owner"]["__typename"] == "User"
    pr = first["pr"]
    assert (pr["number"], pr["state"], pr["merged"], pr["changedFiles"]) == (5, "MERGED", True, 150)
    assert pr["author"] == {"__typename": "User", "login": "alice"}
    assert pr["files"]["totalCount"] == 150 and len(pr["files"]["nodes"]) == 10
    assert pr["files"]["nodes"][0] == {
        "path": "src/acme/mod_000.py",
        "additions": 2,
        "deletions": 1,
        "changeType": "MODIFIED",
    }
    issue = pr["closingIssuesReferences"]["nodes"][0]
    assert issue["number"] == 3 and issue["repository"]["nameWithOwner"] == "acme/widgets"
    assert pr["labels"]["nodes"] == [{"name": "bug"}] and len(pr["mergeCommit"]["oid"]) == 40
    assert second["bot"] == {"author": {"__typename": "Bot", "login": "dependabot"}, "state": "MERGED"}
    assert first["gone"] is None
    [error] = body["errors"]
    assert error["type"] == "NOT_FOUND" and error["path"] == ["first", "gone"]
    assert error["message"] == "Could not resolve to a PullRequest with the number of 999."
    assert error["locations"][0]["line"] > 1
    missing = gql(client, '{ repository(owner: "no", name: "pe") { name } }').json()
    assert missing["data"] == {"repository": None}
    assert missing["errors"][0]["message"] == "Could not resolve to a Repository with the name 'no/pe'."


def test_graphql_partial_error_keeps_other_data(client: httpx.Client, twin: GithubTwin) -> None:
    twin.graphql_partial_error("acme/widgets", 5, "SERVICE_UNAVAILABLE", times=1)
    body = gql(client, PR_QUERY, PR_VARS).json()
    assert body["data"]["first"]["pr"] is None and body["data"]["first"]["nameWithOwner"] == "acme/widgets"
    assert body["data"]["second"]["bot"]["author"]["login"] == "dependabot"
    types = {e["type"]: e for e in body["errors"]}
    assert types["SERVICE_UNAVAILABLE"]["path"] == ["first", "pr"]
    assert gql(client, PR_QUERY, PR_VARS).json()["data"]["first"]["pr"]["number"] == 5  # only `times` executions


def test_graphql_rate_limited_then_refilled(client: httpx.Client, twin: GithubTwin) -> None:
    twin.exhaust_rate_limit("graphql", reset_in=0.3)
    limited = gql(client, PR_QUERY, PR_VARS)
    assert limited.status_code == 200 and limited.headers["x-ratelimit-remaining"] == "0"
    assert limited.json() == {"errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded for user ID 1."}]}
    assert client.get("/repos/acme/widgets").status_code == 200  # core is a separate bucket
    time.sleep(0.35)
    body = gql(client, "{ rateLimit { limit remaining used cost } }").json()
    assert body["data"]["rateLimit"] == {"limit": 5000, "remaining": 4999, "used": 1, "cost": 1}


def test_graphql_cost_is_static_and_charged(client: httpx.Client, twin: GithubTwin) -> None:
    nested = """{ repository(owner: "acme", name: "widgets") { pullRequest(number: 5) {
        closingIssuesReferences(first: 100) { nodes { repository { pullRequest(number: 5) {
            files(first: 100) { totalCount } labels(first: 100) { totalCount } } } } } } }
      rateLimit { cost remaining nodeCount } }"""
    rate = gql(client, nested).json()["data"]["rateLimit"]
    assert rate == {"cost": 2, "remaining": 4998, "nodeCount": 100 + 2 * 100 * 100}  # (1 + 100 + 100) / 100
    aliases = " ".join(f"p{i}: pullRequest(number: 5) {{ files(first: 10) {{ totalCount }} }}" for i in range(150))
    many = gql(client, f'{{ repository(owner: "acme", name: "widgets") {{ {aliases} }} rateLimit {{ cost }} }}')
    assert many.json()["data"]["rateLimit"]["cost"] == 2 and many.headers["x-ratelimit-used"] == "4"
    dry = gql(client, "{ rateLimit(dryRun: true) { cost remaining } }").json()["data"]["rateLimit"]
    assert dry == {"cost": 1, "remaining": 4996} and twin.rate_limit_remaining("graphql") == 4996
    assert [r.counted for r in twin.graphql_requests()] == [True, True, False]


def test_graphql_pagination_limits_and_cursors(client: httpx.Client) -> None:
    query = (
        '{ repository(owner: "acme", name: "widgets") { pullRequest(number: 5) { files(first: 101) { totalCount } } } }'
    )
    too_many = gql(client, query).json()
    assert too_many["data"]["repository"]["pullRequest"]["files"] is None
    assert too_many["errors"][0]["type"] == "EXCESSIVE_PAGINATION"
    assert too_many["errors"][0]["path"] == ["repository", "pullRequest", "files"]
    assert "exceeds the `first` limit of 100 records" in too_many["errors"][0]["message"]
    unbounded = gql(
        client, '{ repository(owner: "acme", name: "widgets") { pullRequest(number: 5) { files { totalCount } } } }'
    )
    assert unbounded.json()["errors"][0]["type"] == "MISSING_PAGINATION_BOUNDARIES"
    page_query = """query($after: String) { repository(owner: "acme", name: "widgets") { pullRequest(number: 5) {
        files(first: 100, after: $after) { pageInfo { hasNextPage endCursor } nodes { path } } } } }"""
    paths: list[str] = []
    cursor = None
    for _ in range(5):
        files = gql(client, page_query, {"after": cursor}).json()["data"]["repository"]["pullRequest"]["files"]
        paths += [n["path"] for n in files["nodes"]]
        if not files["pageInfo"]["hasNextPage"]:
            break
        cursor = files["pageInfo"]["endCursor"]
    assert len(paths) == 150 and len(set(paths)) == 150 and paths[-1] == "tests/test_mod.py"


def test_graphql_invalid_documents_cost_nothing(client: httpx.Client, twin: GithubTwin) -> None:
    syntax = gql(client, '{ repository(owner: "acme" { name } }')
    unknown = gql(client, '{ repository(owner: "acme", name: "widgets") { stars } }')
    for response in (syntax, unknown):
        assert response.status_code == 200 and "data" not in response.json()
        assert response.json()["errors"][0]["message"] and response.json()["errors"][0]["locations"]
    assert client.post("/graphql", content=b"{not json").status_code == 400
    assert not any(r.counted for r in twin.graphql_requests())
    assert twin.rate_limit_remaining("graphql") == 5000


# --- world generation ----------------------------------------------------------------------------


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
