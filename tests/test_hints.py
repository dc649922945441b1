"""SWE-bench's `hints_text`: the enrichment fetches its inputs, and our rule gives SWE-bench's own answer.

The reference is SWE-bench's collector itself (`extract_problem_statement_and_hints`), run over
REST against the same GitHub twin the enrichment reads over GraphQL (`tests/support/swebench_collector`).
The world holds the cases its rule distinguishes: a comment edited after the first commit (its
`updated_at` counts, and the walk stops there), a comment exactly at the cut-off (strict `<`), a
comment between the first commit's author and committer dates (the author date is the cut-off),
two issues where the first has no hints ("\\n" + the second's), and a PR that closes no issue.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from swe_forge_dagster.demo.twins.github_twin import GithubTwin
from swe_forge_dagster.demo.worlds.github_world import (
    Comment,
    GithubWorld,
    Issue,
    PRCommit,
    PullRequest,
    Repo,
    fake_sha,
)
from swe_forge_dagster.demo.worlds.github_world_gen import world_from_pr_events
from swe_forge_dagster.github.client import GitHubClient
from swe_forge_dagster.github.enrich import Enricher
from swe_forge_dagster.github.models import EnrichedPR
from swe_forge_dagster.github.store import GithubStore
from swe_forge_dagster.tasks.hints import hints_text
from tests.support.swebench_collector import swebench_hints

TOKEN = "ghp_hints_test_token_0123456789"
REPO = "acme/widgets"
AUTHORED, COMMITTED = "2025-03-10T12:00:00Z", "2025-03-11T09:00:00Z"  # first commit, rebased a day later
EXPECTED = {
    5: "early, kept",  # then an edited comment stops the walk
    6: "\nthree: before the cut-off",  # issue 2 has no hints; at the cut-off is not before it
    7: "",  # closes no issue
    8: "before the author date",  # the author date is the cut-off, not the committer date
}


def make_world() -> GithubWorld:
    world = GithubWorld()
    world.add_repo(Repo("acme", "widgets", stars=500))
    first = [PRCommit(fake_sha("c1"), AUTHORED, "Fix it", COMMITTED), PRCommit(fake_sha("c2"), "2025-03-11T10:00:00Z")]
    closes = {5: [1], 6: [2, 3], 7: [], 8: [4]}
    for number, issues in closes.items():
        body = " ".join(f"Fixes #{n}." for n in issues) or "A refactor that closes nothing, described at length."
        world.add_pull(
            PullRequest(
                REPO, number, body=body, closing_issues=issues, commits=list(first), created_at="2025-03-11T10:30:00Z"
            )
        )
    comments = {
        1: [
            Comment("early, kept", "2025-03-09T08:00:00Z"),
            Comment("edited after the first commit", "2025-03-09T09:00:00Z", updated_at="2025-03-12T00:00:00Z"),
            Comment("early too, but after the edited one", "2025-03-09T10:00:00Z"),
        ],
        2: [Comment("two: after the first commit", "2025-03-10T13:00:00Z")],
        3: [Comment("three: before the cut-off", "2025-03-10T11:59:59Z"), Comment("three: at the cut-off", AUTHORED)],
        4: [
            Comment("before the author date", "2025-03-10T11:00:00Z"),
            Comment("between author and committer date", "2025-03-10T20:00:00Z"),
        ],
    }
    for number, thread in comments.items():
        world.add_issue(REPO, Issue(number, f"Issue {number}", f"Body of issue {number}.", comments=thread))
    return world


@pytest.fixture
def world() -> GithubWorld:
    return make_world()


@pytest.fixture
def twin(world: GithubWorld) -> Iterator[GithubTwin]:
    with GithubTwin(world, token=TOKEN) as server:
        yield server


def enrich(twin: GithubTwin, store_path: Path, keys: list[tuple[str, int]]) -> tuple[dict, GitHubClient]:
    store = GithubStore(store_path)
    with GitHubClient(twin.url, TOKEN, store=store, sleep=lambda _s: None) as client:
        results = {r.key: r.pr for r in Enricher(client, store).enrich(keys)}
    return results, client


def our_hints(pr: EnrichedPR) -> str:
    """The rule over what enrichment stored, shaped as `enriched_prs` rows hold it (model_dump)."""
    return hints_text([issue.model_dump() for issue in pr.closing_issues], pr.first_commit_at)


def test_enrichment_brings_issue_comments_and_the_first_commit_author_date(
    twin: GithubTwin, world: GithubWorld, tmp_path: Path
) -> None:
    results, client = enrich(twin, tmp_path / "github.sqlite", [(REPO, n) for n in EXPECTED])
    assert client.stats.graphql_requests == 1
    pr = results[(REPO, 5)]
    assert pr.source == "graphql"
    assert pr.first_commit_at == dt.datetime(2025, 3, 10, 12, tzinfo=dt.UTC)  # authoredDate, not committedDate
    (issue,) = pr.closing_issues
    got = [(c.body, c.created_at, c.updated_at) for c in issue.comments]
    want = [
        (c.body, dt.datetime.fromisoformat(c.created_at), dt.datetime.fromisoformat(c.updated_at))
        for c in world.issues[(REPO, 1)].comments
    ]
    assert got == want  # all of them, oldest first: the cut-off is applied when the task is built
    assert [i.number for i in results[(REPO, 6)].closing_issues] == [2, 3]
    assert results[(REPO, 7)].closing_issues == ()


def test_a_chunk_of_30_prs_costs_3_points(tmp_path: Path) -> None:
    """comments (5 issues x 1 request) and commits (1) per PR: (30 x 9) / 100 = 2.7, rounded to 3."""
    rows = [{"repo_name": f"org{i % 4}/proj{i % 4}", "number": 100 + i, "action": "closed"} for i in range(30)]
    big = world_from_pr_events(rows, seed=5)
    with GithubTwin(big, token=TOKEN) as server:
        results, client = enrich(server, tmp_path / "github.sqlite", sorted(big.pulls))
    assert len(results) == 30 and client.stats.graphql_requests == 1 and client.stats.graphql_cost == 3


def test_the_rest_fallback_fills_the_same_fields(twin: GithubTwin, tmp_path: Path) -> None:
    keys = [(REPO, n) for n in EXPECTED]
    by_graphql, _ = enrich(twin, tmp_path / "graphql.sqlite", keys)
    for _repo, number in keys:
        twin.graphql_partial_error(REPO, number, error_type="SERVICE_UNAVAILABLE", times=1)
    by_rest, _ = enrich(twin, tmp_path / "rest.sqlite", keys)
    ignore = {"source", "fetched_at"}
    for key in keys:
        assert by_rest[key].source == "rest"
        assert by_rest[key].model_dump(exclude=ignore) == by_graphql[key].model_dump(exclude=ignore)
    assert any(path.endswith("/pulls/5/commits") for path in (r.path for r in twin.requests))
    assert any(path.endswith("/issues/1/comments") for path in (r.path for r in twin.requests))


def test_hints_text_is_what_swebenchs_collector_computes(twin: GithubTwin, world: GithubWorld, tmp_path: Path) -> None:
    results, _ = enrich(twin, tmp_path / "github.sqlite", [(REPO, n) for n in EXPECTED])
    for number, expected in EXPECTED.items():
        theirs = swebench_hints(twin.url, TOKEN, REPO, number, world.pulls[(REPO, number)].closing_issues)
        assert (number, our_hints(results[(REPO, number)])) == (number, theirs) == (number, expected)


def test_no_cut_off_means_no_hints() -> None:
    """A PR enriched before first commits were fetched: nothing is known to precede it, so no hints."""
    issue = {"comments": [{"body": "old", "created_at": "2020-01-01T00:00:00Z", "updated_at": "2020-01-01T00:00:00Z"}]}
    assert hints_text([issue], None) == ""
    assert hints_text([issue, {"comments": None}], "2021-01-01T00:00:00Z") == "old\n"
