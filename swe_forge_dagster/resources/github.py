"""GitHub access and the mining rules, as resources.

The token is never resource config (the UI shows config): the client reads it from the
environment variable named by `token_env` when a run starts. The store, the request slots and the
processed-PR ledger are files under the home, or the shared database when `SWE_FORGE_POSTGRES_URL`
is set (`wiring.shared_state`, read when a run starts too).
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from pydantic import Field

from swe_forge_dagster.candidates.filters import FilterConfig
from swe_forge_dagster.candidates.ledger import PRLedger
from swe_forge_dagster.candidates.rules import CandidateRules
from swe_forge_dagster.common.dagster_names import GITHUB_API_POOL
from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.common.secrets import secret_from_env
from swe_forge_dagster.github.client import GitHubAuthError, GitHubClient
from swe_forge_dagster.github.enrich import CHUNK_SIZE, Enricher
from swe_forge_dagster.github.store import ResponseStore
from swe_forge_dagster.settings import DEFAULT_LANGUAGES
from swe_forge_dagster.wiring.shared_state import github_store, processed_ledger, request_slots


class GitHubResource(dg.ConfigurableResource):
    api_url: str = Field(description="https://api.github.com, or a twin/GHES API root")
    home: str = Field(
        description="SWE_FORGE_HOME: the response/enrichment store lives under cache/github "
        "(in the shared database when SWE_FORGE_POSTGRES_URL is set)"
    )
    token_env: str = Field(default="GITHUB_TOKEN", description="name of the env var holding the token")
    max_in_flight: int = Field(default=3, ge=1, le=10, description="requests at once, machine-wide")
    max_rate_limit_wait_seconds: float = Field(default=900, ge=0, description="longer waits fail the partition")
    max_attempts: int = Field(default=6, ge=1)
    backoff_initial_seconds: float = Field(default=1.0, ge=0)
    chunk_size: int = Field(default=CHUNK_SIZE, ge=1, le=100)

    def store(self) -> ResponseStore:
        return github_store(HomeLayout.of(self.home))

    def client(self) -> GitHubClient:
        token = secret_from_env([self.token_env])
        if not token:
            raise GitHubAuthError(f"{self.token_env} is not set: enrichment needs a GitHub token (public read access)")
        return GitHubClient(
            self.api_url,
            token,
            store=self.store(),
            slots=request_slots(HomeLayout.of(self.home), GITHUB_API_POOL, self.max_in_flight),
            max_in_flight=self.max_in_flight,
            max_rate_limit_wait=self.max_rate_limit_wait_seconds,
            max_attempts=self.max_attempts,
            backoff_initial=self.backoff_initial_seconds,
        )

    def enricher(self, client: GitHubClient, max_files: int) -> Enricher:
        return Enricher(
            client,
            client.store or self.store(),
            chunk_size=self.chunk_size,
            workers=self.max_in_flight,
            max_files=max_files,
        )


class MiningResource(dg.ConfigurableResource):
    """The seed's mining knobs: `--pr-file`, `--min-stars`, `--languages`, org-only, and the local filter."""

    pr_file: str
    org_only: bool = True
    min_stars: int = Field(default=20, ge=0)
    languages: list[str] = Field(default_factory=lambda: DEFAULT_LANGUAGES.split(","))
    min_files: int = 1
    max_files: int = 50
    min_added_lines: int = 3
    max_added_lines: int = 1000
    min_description_chars: int = 30
    difficulty: list[str] = Field(default_factory=list, description="task target tiers; empty = every tier")
    tasks_per_tick: int = Field(default=25, ge=1, description="task partitions the task sensor adds per tick")

    def ledger(self) -> PRLedger:
        return processed_ledger(Path(self.pr_file))

    def rules(self) -> CandidateRules:
        return CandidateRules(org_only=self.org_only)

    def filter_config(self) -> FilterConfig:
        return FilterConfig(
            min_stars=self.min_stars,
            min_files=self.min_files,
            max_files=self.max_files,
            min_added_lines=self.min_added_lines,
            max_added_lines=self.max_added_lines,
            languages=self.languages,
            min_description_chars=self.min_description_chars,
            org_only=self.org_only,
        )
