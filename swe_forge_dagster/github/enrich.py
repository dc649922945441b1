"""Enrich PR keys: from the store when known, else one GraphQL request per chunk of 30.

Chunks stream through a small thread pool (at most `workers` in flight, a bounded window
queued), so memory and request bursts stay flat however many candidates an hour has. Each
chunk's results are committed to the store before they are yielded: a crash loses at most the
chunks in flight, and a re-run pays only for what was never stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from swe_forge_dagster.github.client import GitHubClient, GitHubError, GitHubNotFoundError
from swe_forge_dagster.github.graphql import build_chunk_query, parse_chunk_response
from swe_forge_dagster.github.models import EnrichedPR
from swe_forge_dagster.github.rest import closing_issue_numbers, files_from_rest, pr_from_rest
from swe_forge_dagster.github.store import ResponseStore

Key = tuple[str, int]
CHUNK_SIZE = 30  # the seed's chunk: small enough for flat bursts, large enough for ~0.03 requests/PR


@dataclass(frozen=True)
class Enrichment:
    key: Key
    pr: EnrichedPR | None
    status: Literal["enriched", "missing", "error"]
    reason: str | None = None
    cached: bool = False


def rest_enrich(client: GitHubClient, key: Key, max_files: int = 100, *, hints: bool = True) -> EnrichedPR:
    """The REST path for one PR: pull, files (paged), and the issues its body closes.

    With `hints` (the default, as the GraphQL path) also what SWE-bench's hints need: the first
    commit (`/commits?per_page=1`, oldest first) and each issue's first 100 comments, one request
    each. This path only serves PRs whose GraphQL resolution failed, so the extra requests are
    few; `hints=False` is the seed's own REST path (the benchmarks' baseline).
    """
    repo, number = key
    pull = client.rest_json(f"repos/{repo}/pulls/{number}")
    files = None
    if int(pull.get("changed_files") or 0) <= max_files:
        files = client.rest_pages(f"repos/{repo}/pulls/{number}/files", max_pages=max(1, -(-max_files // 100)))
    commits = client.rest_json(f"repos/{repo}/pulls/{number}/commits", {"per_page": 1}) if hints else None
    issues, comments = [], {}
    for issue_number in closing_issue_numbers(pull.get("body"))[:5]:
        try:
            issues.append(client.rest_json(f"repos/{repo}/issues/{issue_number}"))
        except GitHubNotFoundError:
            continue
        if hints:
            path = f"repos/{repo}/issues/{issue_number}/comments"
            comments[issue_number] = client.rest_json(path, {"per_page": 100})
    return pr_from_rest(pull, files, None, issues, comments, commits)


def _as_key(pr: EnrichedPR, key: Key) -> EnrichedPR:
    """The PR under the name it was asked for (GitHub's own spelling stays in `repository.full_name`)."""
    return pr if pr.key == key else pr.model_copy(update={"repo": key[0], "number": key[1]})


class Enricher:
    def __init__(
        self,
        client: GitHubClient,
        store: ResponseStore,
        *,
        chunk_size: int = CHUNK_SIZE,
        workers: int = 3,
        max_files: int = 50,
    ) -> None:
        self.client = client
        self.store = store
        self.chunk_size = chunk_size
        self.workers = workers
        self.max_files = max_files

    def enrich(self, keys: Iterable[Key]) -> Iterator[Enrichment]:
        unique = list(dict.fromkeys(keys))
        known = self.store.get_enriched(unique)
        gone = self.store.get_missing(unique)
        todo = []
        for key in unique:
            if key in known:
                yield Enrichment(key, known[key], "enriched", cached=True)
            elif key in gone:
                yield Enrichment(key, None, "missing", gone[key], cached=True)
            else:
                todo.append(key)
        chunks = [todo[i : i + self.chunk_size] for i in range(0, len(todo), self.chunk_size)]
        if not chunks:
            return
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="github") as pool:
            window: list[Future[list[Enrichment]]] = []
            for chunk in chunks:
                window.append(pool.submit(self._enrich_chunk, chunk))
                if len(window) >= 2 * self.workers:
                    yield from window.pop(0).result()
            for future in window:
                yield from future.result()

    def _enrich_chunk(self, chunk: Sequence[Key]) -> list[Enrichment]:
        query = build_chunk_query(chunk, files_first=min(100, self.max_files))
        result = parse_chunk_response(query, self.client.graphql(query.text, query.variables))
        # Results are keyed by the *requested* (repo, number): GitHub may spell a renamed or
        # differently-cased repository its own way, and callers look results up by their key.
        enriched = {key: self._complete_files(_as_key(pr, key)) for key, pr in result.enriched.items()}
        missing = dict(result.missing)
        errors: list[Enrichment] = []
        for key, reason in result.failed.items():  # a resolver error costs only this PR
            try:
                enriched[key] = _as_key(rest_enrich(self.client, key, self.max_files), key)
            except GitHubNotFoundError:
                missing[key] = "not found on GitHub (REST 404)"
            except GitHubError as exc:
                errors.append(Enrichment(key, None, "error", f"{reason}; REST fallback failed: {exc}"))
        self.store.put_chunk(enriched.values(), missing)
        return (
            [Enrichment(key, pr, "enriched") for key, pr in enriched.items()]
            + [Enrichment(key, None, "missing", reason) for key, reason in missing.items()]
            + errors
        )

    def _complete_files(self, pr: EnrichedPR) -> EnrichedPR:
        """Page the file list over REST only when it matters: more than one GraphQL page, within max_files."""
        if pr.files_complete or pr.changed_files > self.max_files:
            return pr
        pages = max(1, -(-pr.changed_files // 100))
        files = self.client.rest_pages(f"repos/{pr.repo}/pulls/{pr.number}/files", max_pages=pages)
        return pr.model_copy(update={"files": files_from_rest(files), "files_complete": True})
