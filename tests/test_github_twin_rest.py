"""The GitHub twin's REST side and its faults, exercised with plain httpx as a real client would.

The project's client will be tested against this twin, so these tests pin down that the twin
answers like api.github.com (shapes, headers, pagination, errors, limits, faults). The sample
world and helpers are in `tests/support/github_world.py`, shared with `test_github_twin_graphql`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from swe_forge_dagster.demo.twins.github_twin import GithubTwin
from swe_forge_dagster.demo.worlds.github_world import ChangedFile, PullRequest
from tests.support.github_world import AUTH, TOKEN, gql, make_world


@pytest.fixture
def twin() -> Iterator[GithubTwin]:
    with GithubTwin(make_world()) as running:
        yield running


@pytest.fixture
def client(twin: GithubTwin) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=twin.url, headers=AUTH, timeout=10) as http:
        yield http


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
