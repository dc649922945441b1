"""The evaluation results drawn for people: every agent's verdict on every task, and the resolved rates run by run.

Both end up in `eval_summary`'s metadata (`assets.harness`), but nothing here knows Dagster:

- `verdict_matrix`: a Markdown table, a row per task and a column per agent, so that the verdicts of several
  agents read at a glance in one place (the `harness_ok` check of `eval_result` passes for any verdict, so its
  partition grid no longer carries them), a rejected task saying `rejected` in every column.
- `rate_history_svg`: each agent's resolved rate over the last runs, as an SVG line chart whose x axis is one
  place per run, labelled with the run's time to the second (to the millisecond when two runs share a
  second). Dagster's own metadata plots label their time axis to the minute only, so runs a few seconds apart
  (the demo's, a re-run) all read the same minute there; `svg_markdown` wraps the chart as a Markdown image
  (a `data:` URI, which the Dagster UI's Markdown renderer allows) so it opens from the metadata.
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Mapping, Sequence
from xml.sax.saxutils import escape

REJECTED = "rejected"
NO_RESULT = "—"
PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777")
WIDTH, PLOT_HEIGHT = 720, 240
LEFT, RIGHT, TOP, BOTTOM = 96, 24, 36, 120  # room for the y ticks, the title and the slanted time labels
INSET = 16  # the first and last runs stand that far inside the plot
LEGEND_LINE = 18
MATRIX_ROWS = 200
"""Tasks in the `verdicts` table, which every `eval_summary` run stores in the instance."""


def verdict_matrix(rows: Sequence[Mapping[str, object]], rejected: Sequence[str], limit: int = MATRIX_ROWS) -> str:
    """A Markdown table of the latest status of each (task, agent) in `rows` (`eval_results` rows), plus a row per
    `rejected` task id that reads `rejected` for every agent; the first `limit` tasks in id order, and a last line
    that says how many more there are and where to read them (the metadata is stored with every run)."""
    agents = sorted({str(row.get("agent") or "(unnamed)") for row in rows})
    status = {(str(row["task_id"]), str(row.get("agent") or "(unnamed)")): str(row["status"]) for row in rows}
    dropped = set(rejected)
    tasks = sorted({task for task, _ in status} | dropped)
    if not tasks:
        return "no task has a verdict yet"
    columns = agents or ["(no agent yet)"]
    lines = [
        "| task | " + " | ".join(cell(agent) for agent in columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for task in tasks[:limit]:
        verdicts = [REJECTED if task in dropped else status.get((task, agent), NO_RESULT) for agent in columns]
        lines.append(f"| {cell(task)} | " + " | ".join(verdicts) + " |")
    if len(tasks) > limit:
        lines.append(f"\n{len(tasks) - limit} more tasks: `SELECT task_id, agent, status FROM eval_results`")
    return "\n".join(lines)


def cell(text: str) -> str:
    """`text` safe inside a Markdown table cell."""
    return text.replace("|", "/").replace("\n", " ")


def run_time_labels(times: Sequence[dt.datetime]) -> tuple[list[str], str]:
    """Labels that tell the runs apart (UTC, to the second; to the millisecond when two runs share a second;
    with the date when the runs span days), and the axis title that says the rest."""
    utc = [time.astimezone(dt.UTC) for time in times]
    days = {time.date() for time in utc}
    day_part = "" if len(days) == 1 else "%Y-%m-%d "
    labels = [time.strftime(f"{day_part}%H:%M:%S") for time in utc]
    if len(set(labels)) < len(labels):
        labels = [time.strftime(f"{day_part}%H:%M:%S.%f")[:-3] for time in utc]
    title = f"run time (UTC, {next(iter(days)).isoformat()})" if len(days) == 1 else "run time (UTC)"
    return labels, title


def rate_history_svg(runs: Sequence[tuple[dt.datetime, Mapping[str, float]]], title: str) -> str:
    """An SVG line chart of each agent's rate (0 to 1) per run; `runs` in time order, each its agents' rates (an
    agent missing from a run leaves a gap in its line)."""
    agents = sorted({agent for _, rates in runs for agent in rates})
    labels, axis_title = run_time_labels([time for time, _ in runs])
    height = TOP + PLOT_HEIGHT + BOTTOM + LEGEND_LINE * len(agents)
    plot_width = WIDTH - LEFT - RIGHT
    step = (plot_width - 2 * INSET) / max(len(runs) - 1, 1)

    def x(index: int) -> float:
        return LEFT + (plot_width / 2 if len(runs) == 1 else INSET + index * step)

    def y(rate: float) -> float:
        return TOP + PLOT_HEIGHT * (1 - min(max(rate, 0.0), 1.0))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
        f'<text x="{LEFT}" y="20" font-size="13" font-weight="bold">{escape(title)}</text>',
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#e5e7eb"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.0%}</text>')
    for index, label in enumerate(labels):
        base = TOP + PLOT_HEIGHT + 14
        parts.append(
            f'<text x="{x(index):.1f}" y="{base}" text-anchor="end" '
            f'transform="rotate(-40 {x(index):.1f} {base})">{escape(label)}</text>'
        )
    parts.append(
        f'<text x="{LEFT + plot_width / 2:.1f}" y="{TOP + PLOT_HEIGHT + BOTTOM - 8}" '
        f'text-anchor="middle">{escape(axis_title)}</text>'
    )
    for number, agent in enumerate(agents):
        colour = PALETTE[number % len(PALETTE)]
        points = [(x(i), y(rates[agent])) if agent in rates else None for i, (_, rates) in enumerate(runs)]
        for segment in line_segments(points):
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in segment)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for point in points:
            if point is not None:
                parts.append(f'<circle cx="{point[0]:.1f}" cy="{point[1]:.1f}" r="3.5" fill="{colour}"/>')
        legend_y = TOP + PLOT_HEIGHT + BOTTOM + LEGEND_LINE * number + 12
        parts.append(f'<rect x="{LEFT}" y="{legend_y - 9}" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{LEFT + 16}" y="{legend_y}">{escape(agent)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def line_segments(points: Sequence[tuple[float, float] | None]) -> list[list[tuple[float, float]]]:
    """The runs of consecutive present points (a line is drawn only between runs that both have a value)."""
    segments: list[list[tuple[float, float]]] = [[]]
    for point in points:
        if point is None:
            segments.append([])
        else:
            segments[-1].append(point)
    return [segment for segment in segments if len(segment) > 1]


def svg_markdown(svg: str, alt: str) -> str:
    """The chart as a Markdown image with a `data:` URI (rendered by the Dagster UI's Markdown viewer)."""
    encoded = base64.b64encode(svg.encode()).decode()
    return f"![{alt}](data:image/svg+xml;base64,{encoded})"
