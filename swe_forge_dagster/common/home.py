"""Where everything lives under `SWE_FORGE_HOME`, written down once.

Settings, resources and the CLI all derive their paths from this, so the layout cannot drift
between the process that writes a file and the one that reads it.

`SWE_FORGE_HOME` may name an object store (`s3://bucket/prefix`, `common.store`): then the lake lives there,
shared by every machine, and what is per machine by nature (the Dagster home, caches, bare clones, locks,
the DuckDB catalog file) lives in `SWE_FORGE_LOCAL_DIR` (default `.swe-forge`). With a local home both are
the same folder, as always.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlencode

from swe_forge_dagster.common.secrets import secret_from_env
from swe_forge_dagster.common.store import StorePath, is_remote_uri, store_path

LOCAL_DIR_SETTING = "SWE_FORGE_LOCAL_DIR"
DEFAULT_LOCAL_DIR = ".swe-forge"


@dataclass(frozen=True)
class HomeLayout:
    root: Path
    """The local folder: the home itself, or `SWE_FORGE_LOCAL_DIR` when the home is on an object store."""
    shared: StorePath = field(default=None)  # type: ignore[assignment]
    """Where the lake lives: `root`, or the object-store home."""

    def __post_init__(self) -> None:
        if self.shared is None:
            object.__setattr__(self, "shared", self.root)

    @classmethod
    def of(
        cls,
        home: str | Path,
        local_dir: str | Path | None = None,
        *,
        endpoint_url: str | None = None,
        region: str | None = None,
    ) -> HomeLayout:
        """The layout of `home` (a path, `file://` or `s3://` URI, or a `home_ref`; `common.store.StoreConfigError`
        when the store cannot be used). For a remote home, `local_dir`, `endpoint_url` and `region` (from
        `Settings`) win over those a `home_ref` carries, which win over their settings read by name."""
        if not is_remote_uri(home):
            return cls(Path(store_path(home)))
        uri, _, query = str(home).partition("?")
        carried = {name: values[-1] for name, values in parse_qs(query).items()}
        local = (
            local_dir
            or carried.get("local_dir")
            or (secret_from_env([LOCAL_DIR_SETTING]) or "").strip()
            or DEFAULT_LOCAL_DIR
        )
        shared = store_path(
            uri, endpoint_url=endpoint_url or carried.get("endpoint_url"), region=region or carried.get("region")
        )
        return cls(Path(local).expanduser().resolve(), shared)

    @property
    def remote(self) -> bool:
        return self.shared is not self.root

    @property
    def home_ref(self) -> str:
        """The home as a string the resources can be configured with (and `of` reads back): the local folder, or
        the store's URI with the store's endpoint and region and the local folder as its query (settings given
        in code reach the resources; the credentials are never in it, they are read by name)."""
        if not self.remote:
            return str(self.shared)
        client = self.shared.storage_options.get("client_kwargs", {})
        carried = {
            "endpoint_url": client.get("endpoint_url", ""),
            "region": client.get("region_name", ""),
            "local_dir": str(self.root),
        }
        return f"{self.shared}?{urlencode(carried)}"

    @property
    def lake(self) -> StorePath:
        return self.shared / "lake"

    def on_store(self, name: str) -> StorePath | None:
        """The store's copy of a local folder of the home (`work`, `tasks`, `datasets`) when the home is an
        object store; None when the home is local (the folder is the only copy)."""
        return self.shared / name if self.remote else None

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
