"""Print a query result as a table, CSV or JSON.

The table shows cells as inert text (markup and escape sequences spelled out, never obeyed); CSV
and JSON are data for other programs and keep every value exactly (JSON escapes control characters).
"""

from __future__ import annotations

import json

import polars as pl
import pyarrow as pa
from rich.console import Console
from rich.table import Table
from rich.text import Text

from swe_forge_dagster.common.terminal import plain

MAX_CELL = 80


def _cell(value: object) -> Text:
    """A table cell as inert text: the lake holds PR titles, reasons and ids from outside (`common.terminal`)."""
    text = "NULL" if value is None else plain(value)
    return Text(text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…")


def _json_text(value: object) -> str:
    return json.dumps(value.to_list() if isinstance(value, pl.Series) else value, default=str)


def render(table: pa.Table, fmt: str, console: Console) -> None:
    """`table` (rich, cells shortened), `csv` or `json` (full values, one array of objects)."""
    frame = pl.from_arrow(table) if table.num_columns else pl.DataFrame()
    assert isinstance(frame, pl.DataFrame)
    if fmt == "csv":  # CSV has no nested values: lists and structs go in as JSON text
        nested = [n for n, t in frame.schema.items() if t.is_nested()]
        flat = frame.with_columns(pl.col(n).map_elements(_json_text, return_dtype=pl.String) for n in nested)
        console.file.write(flat.write_csv())
    elif fmt == "json":
        console.file.write(frame.write_json() + "\n")
    else:
        view = Table(show_header=True, header_style="bold")
        for name in frame.columns:
            view.add_column(name, overflow="fold")
        for row in frame.iter_rows():
            view.add_row(*(_cell(v) for v in row))
        console.print(view)
        console.print(f"({frame.height} row{'s' if frame.height != 1 else ''})", style="dim")
    console.file.flush()
