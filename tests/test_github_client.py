"""The GitHub client and the enricher against the loopback twin: every way the API says no."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from swe_forge_dagster.common.dagster_names import GITHUB_API_POOL
from swe_forge_dagster.common.slots import Slots
from swe_forge_dagster.demo.twins.github_twin import GithubTwin
from swe_forge_dagster.demo.worlds.github_world import GithubWorld
from swe_forge_dagster.demo.worlds.github_world_gen import world_from_pr_events
from swe_forge_dagster.github.client import (
    GitHubAuthError,
    GitHubClient,
    GitHubNotFoundError,
    GitHubRateLimitError,
    GitHubUnavailableError,
)
from swe_forge_dagster.github.enrich import Enricher
from swe_forge_dagster.github.store import GithubStore

TOKEN = "ghp_test_secret_token_value_0123456789"


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_world(n: int = 40, repos: int = 5) -> GithubWorld:
    rows = [{"repo_name": f"org{i % repos}/proj{i % repos}", "number": 100 + i, "action": "closed"} for i in range(n)]
    return world_from_pr_events(rows, seed=3)


@pytest.fixture
def world() -> GithubWorld:
    return make_world()


@pytest.fixture
def twin(world: GithubWorld) -> Iterator[GithubTwin]:
    with GithubTwin(world, token=TOKEN) as server:
        yield server


def client_for(twin: GithubTwin, tmp_path: Path, sleeps: Sleeps | None = None, **kwargs: object) -> GitHubClient:
    pause = sleeps if sleeps is not None else Sleeps()
    store = GithubStore(tmp_path / "github.sqlite")
    return GitHubClient(twin.url, TOKEN, store=store, sleep=pause, backoff_initial=0.5, **kwargs)  # type: ignore[arg-type]


def enricher(client: GitHubClient) -> Enricher:
    assert client.store is not None
    return Enricher(client, client.store)


def keys(world: GithubWorld) -> list[tuple[str, int]]:
    return sorted(world.pulls)


def test_one_graphql_request_per_chunk_of_30(twin: GithubTwin, world: GithubWorld, tmp_path: Path) -> None:
    with client_for(twin, tmp_path) as client:
        results = list(enricher(client).enrich(keys(world)))
        assert client.stats.counted == 2 and client.stats.graphql_requests == 2  # 40 PRs -> 30 + 10
    assert {r.status for r in results} == {"enriched"}
    assert len(twin.counted_requests()) == 2
    assert all(value in {f"Bearer {TOKEN}", f"token {TOKEN}"} for value in twin.authorizations)
    by_key = {r.key: r.pr for r in results}
    for key, pull in world.pulls.items():
        got = by_key[key]
        assert got is not None
        assert (got.merged, got.title, got.base_sha, got.head_sha) == (
            pull.merged,
            pull.title,
            pull.base_sha,
            pull.head_sha,
        )
        assert got.file_paths == [f.path for f in pull.files][: len(got.file_paths)]
        assert got.repository.stars == world.repos[key[0]].stars


def test_second_run_spends_nothing(twin: GithubTwin, world: GithubWorld, tmp_path: Path) -> None:
    with client_for(twin, tmp_path) as client:
        list(enricher(client).enrich(keys(world)))
    twin.reset_counters()
    with client_for(twin, tmp_path) as client:
        again = list(enricher(client).enrich(keys(world)))
        assert client.stats.sent == 0
    assert all(r.cached for r in again) and len(again) == len(world.pulls)
    assert len(twin.counted_requests()) == 0


def test_missing_pr_is_rejected_and_the_rest_of_the_chunk_survives(
    twin: GithubTwin, world: GithubWorld, tmp_path: Path
) -> None:
    gone = keys(world)[3]
    world.remove_pull(*gone)
    with client_for(twin, tmp_path) as client:
        results = {r.key: r for r in enricher(client).enrich([*keys(world), gone])}
    assert results[gone].status == "missing" and "not found" in (results[gone].reason or "").lower()
    assert sum(r.status == "enriched" for r in results.values()) == len(world.pulls)
    with client_for(twin, tmp_path) as client:  # and it is remembered: no request next time
        (again,) = list(enricher(client).enrich([gone]))
        assert again.status == "missing" and again.cached and client.stats.sent == 0


def test_partial_graphql_error_falls_back_to_rest_for_that_pr_only(
    twin: GithubTwin, world: GithubWorld, tmp_path: Path
) -> None:
    flaky = keys(world)[5]
    twin.graphql_partial_error(flaky[0], flaky[1], error_type="SERVICE_UNAVAILABLE", times=1)
    with client_for(twin, tmp_path) as client:
        results = {r.key: r for r in enricher(client).enrich(keys(world))}
    assert all(r.status == "enriched" for r in results.values())
    assert results[flaky].pr is not None and results[flaky].pr.source == "rest"
    assert sum(r.pr.source == "graphql" for r in results.values() if r.pr) == len(world.pulls) - 1
    assert results[flaky].pr.title == world.pulls[flaky].title


def test_primary_rate_limit_waits_for_a_near_reset(twin: GithubTwin, world: GithubWorld, tmp_path: Path) -> None:
    twin.exhaust_rate_limit("graphql", reset_in=0.5)
    sleeps = Sleeps()
    with client_for(twin, tmp_path, sleeps, max_rate_limit_wait=60) as client:
        client._sleep = lambda s: (sleeps.append(s), time.sleep(min(s, 2.0)))  # type: ignore[method-assign]
        results = list(enricher(client).enrich(keys(world)[:10]))
    assert {r.status for r in results} == {"enriched"}
    assert sleeps and sleeps[0] <= 60


def test_primary_rate_limit_with_a_far_reset_fails_fast_with_the_time(
    twin: GithubTwin, world: GithubWorld, tmp_path: Path
) -> None:
    twin.exhaust_rate_limit("graphql", reset_in=3600)
    with client_for(twin, tmp_path, max_rate_limit_wait=60) as client, pytest.raises(GitHubRateLimitError) as caught:
        list(enricher(client).enrich(keys(world)[:3]))
    assert "retry after" in str(caught.value) and "UTC" in str(caught.value)


def test_rest_primary_rate_limit_far_reset(twin: GithubTwin, world: GithubWorld, tmp_path: Path) -> None:
    twin.exhaust_rate_limit("core", reset_in=3600)
    repo, number = keys(world)[0]
    with client_for(twin, tmp_path, max_rate_limit_wait=10) as client, pytest.raises(GitHubRateLimitError):
        client.rest_json(f"repos/{repo}/pulls/{number}")


def test_secondary_limit_honours_retry_after_then_continues(
    twin: GithubTwin, world: GithubWorld, tmp_path: Path
) -> None:
    twin.secondary_limit(times=2, retry_after=7)
    sleeps = Sleeps()
    with client_for(twin, tmp_path, sleeps) as client:
        results = list(enricher(client).enrich(keys(world)[:5]))
    assert {r.status for r in results} == {"enriched"}
    assert sleeps == [7.0, 7.0]


def test_502_burst_is_retried_with_backoff(twin: GithubTwin, world: GithubWorld, tmp_path: Path) -> None:
    twin.fail_next(502, times=3)
    sleeps = Sleeps()
    with client_for(twin, tmp_path, sleeps) as client:
        results = list(enricher(client).enrich(keys(world)[:5]))
    assert {r.status for r in results} == {"enriched"}
    assert sleeps == [0.5, 1.0, 2.0]


def test_persistent_5xx_gives_up_and_loses_no_stored_chunk(
    twin: GithubTwin, world: GithubWorld, tmp_path: Path
) -> None:
    with client_for(twin, tmp_path) as client:
        list(enricher(client).enrich(keys(world)[:30]))
    twin.fail_next(502, times=100)
    with client_for(twin, tmp_path, max_attempts=3) as client, pytest.raises(GitHubUnavailableError, match="502"):
        list(enricher(client).enrich(keys(world)))
    twin.clear_faults()
    twin.reset_counters()
    with client_for(twin, tmp_path) as client:
        results = list(enricher(client).enrich(keys(world)))
    assert sum(r.cached for r in results) == 30 and len(twin.counted_requests()) == 1  # only the last 10 PRs


def test_bad_token_fails_fast_naming_the_variable_not_the_value(world: GithubWorld, tmp_path: Path) -> None:
    with GithubTwin(world, token="the-right-one") as twin, client_for(twin, tmp_path) as client:
        with pytest.raises(GitHubAuthError) as caught:
            list(enricher(client).enrich(keys(world)[:2]))
        assert twin.count() == 1  # no retries on a 401
    assert "GITHUB_TOKEN" in str(caught.value) and TOKEN not in str(caught.value)


def test_rest_etag_304_costs_no_rate_limit(twin: GithubTwin, world: GithubWorld, tmp_path: Path) -> None:
    repo, number = keys(world)[0]
    with client_for(twin, tmp_path) as client:
        first = client.rest_json(f"repos/{repo}/pulls/{number}")
    twin.reset_counters()
    with client_for(twin, tmp_path) as client:  # a new process: the ETag comes from the store
        second = client.rest_json(f"repos/{repo}/pulls/{number}")
        assert client.stats.not_modified == 1 and client.stats.counted == 0
    assert first == second and len(twin.counted_requests()) == 0


def test_diff_and_files_paging_over_rest(twin: GithubTwin, world: GithubWorld, tmp_path: Path) -> None:
    key = keys(world)[0]
    pull = world.pulls[key]
    pull.files = [
        type(pull.files[0])(
            path=f"src/m{i}.py", additions=1, deletions=0, change_type="MODIFIED", patch="@@ -0,0 +1 @@\n+x"
        )
        for i in range(150)
    ]
    with client_for(twin, tmp_path) as client:
        files = client.rest_pages(f"repos/{key[0]}/pulls/{key[1]}/files")
        diff = client.diff(*key)
        with pytest.raises(GitHubNotFoundError):
            client.rest_json(f"repos/{key[0]}/pulls/999999")
    assert len(files) == 150 and diff.count("diff --git") == 150


def test_at_most_three_requests_in_flight_across_clients(twin: GithubTwin, world: GithubWorld, tmp_path: Path) -> None:
    import threading

    twin.delay(0.2)
    slots_dir = tmp_path / "locks"
    big = make_world(n=300, repos=40)
    twin.world = big  # type: ignore[attr-defined]

    def run(index: int) -> None:
        client = GitHubClient(
            twin.url,
            TOKEN,
            store=GithubStore(tmp_path / f"s{index}.sqlite"),
            slots=Slots(slots_dir, GITHUB_API_POOL, 3),
        )
        with client:
            list(Enricher(client, client.store, workers=3).enrich(sorted(big.pulls)))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert twin.max_in_flight == 3


def test_results_keep_the_requested_name_when_github_spells_the_repo_differently(
    twin: GithubTwin, world: GithubWorld, tmp_path: Path
) -> None:
    """Review finding: GH Archive's name and GitHub's may differ in case (or after a rename)."""
    repo, number = keys(world)[0]
    asked = (repo.upper(), number)  # what the event said; the twin, like GitHub, ignores case
    twin.graphql_partial_error(repo, number, error_type="SERVICE_UNAVAILABLE", times=1)  # force the REST path
    with client_for(twin, tmp_path) as client:
        (result,) = list(enricher(client).enrich([asked]))
        assert result.key == asked and result.pr is not None and result.pr.key == asked
        assert result.pr.source == "rest"
    with client_for(twin, tmp_path) as client:  # stored under the asked name: the re-run is free
        (again,) = list(enricher(client).enrich([asked]))
        assert again.cached and client.stats.sent == 0


def test_a_secondary_limit_longer_than_the_allowed_wait_fails_with_the_time(
    twin: GithubTwin, world: GithubWorld, tmp_path: Path
) -> None:
    """Review finding: retrying before Retry-After only prolongs a secondary limit."""
    twin.secondary_limit(times=1, retry_after=3600)
    sleeps = Sleeps()
    pattern = r"secondary rate limit.*retry after \d\d:\d\d UTC"
    with (
        client_for(twin, tmp_path, sleeps, max_rate_limit_wait=900) as client,
        pytest.raises(GitHubRateLimitError, match=pattern),
    ):
        list(enricher(client).enrich(keys(world)[:2]))
    assert sleeps == [] and twin.count() == 1


def test_a_wrong_api_url_says_so(twin: GithubTwin) -> None:
    """Review finding: a 4xx from a wrong SWE_FORGE_GITHUB_API_URL surfaced as a misleading error."""
    from swe_forge_dagster.github.client import GitHubError

    with (
        GitHubClient(f"{twin.url}/not-the-api-root", TOKEN, sleep=Sleeps()) as client,
        pytest.raises(GitHubError, match="404"),
    ):
        client.graphql("query { rateLimit { cost } }", {})
