"""What the lake knows of a dataset: its folder, hive layout, file format and schema.

The packages that own a dataset declare it here-shaped, next to their schema (`gharchive.schema`,
`candidates.datasets`, `triage.pipeline`, `harness.results`, `gym.episodes`, `llm.ledger_dataset`),
and a declaration module above them (`wiring.datasets`) lists them for the catalog. So `lake` knows
layouts and formats, never the domain packages: they build on it, not it on them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import pyarrow as pa

from swe_forge_dagster.common.store import StorePath

HOURLY_HIVE: dict[str, str] = {"dt": "DATE", "hour": "INTEGER"}
"""The hive columns of the datasets partitioned by GH Archive hour (`dt=YYYY-MM-DD/hour=HH`)."""

SharedRows = Callable[[], "pa.Table | None"]
"""Rows of a dataset kept in the shared database (None when it is not set); may raise `SharedStateError`."""


@dataclass(frozen=True)
class Dataset:
    """A lake dataset: its folder, hive partition columns (in folder order), and the schema of its files.

    `shared_rows`, when given, reads the dataset's rows that live in the shared database rather than in the
    lake's files (the `llm_calls` ledger with `SWE_FORGE_POSTGRES_URL` set): the view is both, unioned.
    """

    name: str
    schema: pa.Schema
    hive_types: dict[str, str] = field(default_factory=dict)
    fmt: Literal["parquet", "jsonl"] = "parquet"
    shared_rows: SharedRows | None = field(default=None, compare=False)

    @property
    def pattern(self) -> str:
        return "/".join(["*"] * len(self.hive_types) + [f"*.{self.fmt}"])

    def root(self, lake_dir: StorePath) -> StorePath:
        return lake_dir / self.name

    def glob(self, lake_dir: StorePath) -> str:
        return str(self.root(lake_dir) / self.pattern)

    def has_files(self, lake_dir: StorePath) -> bool:
        return any(self.root(lake_dir).glob(self.pattern))

    def partition_dir(self, lake_dir: StorePath, **values: str) -> StorePath:
        """The folder of one partition, `<lake>/<name>/<col>=<value>/...`, every hive column given in order."""
        if set(values) != set(self.hive_types):
            raise ValueError(f"{self.name} is partitioned by {', '.join(self.hive_types)}, not {', '.join(values)}")
        folder = self.root(lake_dir)
        for column in self.hive_types:
            folder = folder / f"{column}={values[column]}"
        return folder


Datasets = Mapping[str, Dataset]
"""The datasets a catalog shows, by view name (the order is the order of the views)."""


def datasets_by_name(datasets: Iterable[Dataset]) -> dict[str, Dataset]:
    """`datasets` by name; a name given twice is a declaration error, said at once."""
    found: dict[str, Dataset] = {}
    for dataset in datasets:
        if dataset.name in found:
            raise ValueError(f"dataset {dataset.name!r} is declared twice")
        found[dataset.name] = dataset
    return found
