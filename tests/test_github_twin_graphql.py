"""The GitHub twin's GraphQL side, exercised with plain httpx as a real client would.

Pins down that `POST /graphql` answers like api.github.com: aliases and variables, GitHub-typed
errors next to intact data, static cost accounting, pagination limits and cursors. Uses the
sample world of `test_github_twin_rest`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from swe_forge_dagster.demo.twins.github_twin import GithubTwin
from tests.support.github_world import AUTH, gql, make_world

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


@pytest.fixture
def twin() -> Iterator[GithubTwin]:
    with GithubTwin(make_world()) as running:
        yield running


@pytest.fixture
def client(twin: GithubTwin) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=twin.url, headers=AUTH, timeout=10) as http:
        yield http


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
