"""Small line charts as plain SVG data for templates: no script, no inline style (CSP)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

WIDTH, HEIGHT = 340, 200
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 32, 70, 10, 24
SERIES = 10  # distinct line classes (.series-0 ... .series-9) with dash patterns too


class Line(NamedTuple):
    """One player's line: SVG points, its end for the label, and its style class."""

    label: str
    points: str
    end_x: float
    end_y: float
    css: str


class Chart(NamedTuple):
    """Everything the template draws."""

    width: int
    height: int
    lines: list[Line]
    y_ticks: list[tuple[float, int]]
    x_ticks: list[tuple[float, int]]
    limit_y: float | None
    left: int
    right: int
    bottom: int


def line_chart(
    labels: Sequence[str], series: Sequence[Sequence[int]], limit: int | None = None
) -> Chart:
    """Lay out one line per label over points 0..n (values start at 0 before point 1)."""
    count = max((len(values) for values in series), default=0)
    top = max([limit or 0, *(max(values, default=0) for values in series), 1])
    plot_w = WIDTH - PAD_LEFT - PAD_RIGHT
    plot_h = HEIGHT - PAD_TOP - PAD_BOTTOM

    def x(index: int) -> float:
        return round(PAD_LEFT + plot_w * index / max(count, 1), 1)

    def y(value: int) -> float:
        return round(PAD_TOP + plot_h * (1 - value / top), 1)

    lines = []
    for number, (label, values) in enumerate(zip(labels, series, strict=True)):
        coords = [(x(0), y(0))] + [(x(i), y(v)) for i, v in enumerate(values, 1)]
        points = " ".join(f"{px},{py}" for px, py in coords)
        end_x, end_y = coords[-1]
        lines.append(Line(label, points, end_x, end_y, f"series-{number % SERIES}"))
    spread_labels(lines)
    step = max(1, top // 4)
    y_ticks = [(y(value), value) for value in range(0, top + 1, step)]
    x_ticks = [(x(index), index) for index in range(1, count + 1)]
    limit_y = y(limit) if limit else None
    return Chart(
        WIDTH,
        HEIGHT,
        lines,
        y_ticks,
        x_ticks,
        limit_y,
        PAD_LEFT,
        WIDTH - PAD_RIGHT,
        HEIGHT - PAD_BOTTOM,
    )


def spread_labels(lines: list[Line], gap: float = 11) -> None:
    """Move end labels apart vertically so names at equal totals stay readable."""
    order = sorted(range(len(lines)), key=lambda i: lines[i].end_y)
    previous = None
    for index in order:
        line = lines[index]
        if previous is not None and line.end_y - previous < gap:
            lines[index] = line._replace(end_y=round(previous + gap, 1))
        previous = lines[index].end_y
