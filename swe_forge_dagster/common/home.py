"""Where everything lives under `SWE_FORGE_HOME`, written down once.

Settings, resources and the CLI all derive their paths from this, so the layout cannot drift
between the process that writes a file and the one that reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class HomeLayout:
    root: Path

    @classmethod
    def of(cls, home: str | Path) -> HomeLayout:
        return cls(Path(home).expanduser().resolve())

    @property
    def lake(self) -> Path:
        return self.root / "lake"

    @property
    def catalog(self) -> Path:
        return self.root / "catalog.duckdb"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    @property
    def locks(self) -> Path:
        """Machine-wide request slots (`common.slots`)."""
        return self.root / "locks"

    @property
    def github_store(self) -> Path:
        return self.cache / "github" / "github.sqlite"

    @property
    def llm_answers(self) -> Path:
        return self.cache / "llm" / "answers.sqlite"

    @property
    def processed_prs(self) -> Path:
        return self.root / "processed_prs.jsonl"

    @property
    def repos(self) -> Path:
        """Bare partial clones, one per repository (`execution.repo_cache`)."""
        return self.cache / "repos"

    @property
    def recipes(self) -> Path:
        """Proven environment recipes, one per repository (`tasks.recipes`)."""
        return self.cache / "recipes"

    @property
    def work(self) -> Path:
        """Each task's stage results and agent transcripts (`tasks.work`)."""
        return self.root / "work"

    @property
    def tasks(self) -> Path:
        """Exported task directories, unless SWE_FORGE_OUTPUT says otherwise."""
        return self.root / "tasks"

    @property
    def datasets(self) -> Path:
        """`swe_dataset.jsonl` / `.parquet`."""
        return self.root / "datasets"

    @property
    def dagster(self) -> Path:
        return self.root / "dagster"
