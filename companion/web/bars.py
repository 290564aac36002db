"""Bar charts by month as plain SVG data for templates: stacked series, no script, no
inline style (CSP); the review's wins and games (companion.household.review)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

WIDTH, HEIGHT = 360, 170
LEFT, RIGHT, TOP, BOTTOM = 26, 4, 8, 20
FILL = 0.7  # of each month's slot; the rest is the gap between bars


class Bar(NamedTuple):
    """One series' part of a month's bar: where it is, its value and its style class."""

    x: float
    y: float
    width: float
    height: float
    value: int
    month: int  # 0..11
    css: str
    label: str


class BarChart(NamedTuple):
    """Everything the template draws."""

    width: int
    height: int
    bars: list[Bar]
    y_ticks: list[tuple[float, int]]
    x_labels: list[tuple[float, str]]
    left: int
    right: int
    bottom: int
    legend: list[tuple[str, str]]  # (label, css) of each series, for more than one


def month_bars(
    series: Sequence[tuple[str, str, Sequence[int]]], months: Sequence[str], top: int
) -> BarChart:
    """Lay out stacked bars: ``series`` of (label, css class, a value per month)."""
    top = max(top, 1)
    slot = (WIDTH - LEFT - RIGHT) / len(months)
    plot = HEIGHT - TOP - BOTTOM
    bars = []
    for month in range(len(months)):
        base = 0
        for label, css, values in series:
            value = values[month]
            if value:
                y = TOP + plot * (top - base - value) / top
                x = LEFT + slot * (month + (1 - FILL) / 2)
                height = plot * value / top
                bars.append(
                    Bar(
                        round(x, 1),
                        round(y, 1),
                        round(slot * FILL, 1),
                        round(height, 1),
                        value,
                        month,
                        css,
                        label,
                    )
                )
                base += value
    step = max(1, -(-top // 4))
    ticks = [
        (round(TOP + plot * (top - value) / top, 1), value) for value in range(0, top + 1, step)
    ]
    labels = [(round(LEFT + slot * (month + 0.5), 1), name) for month, name in enumerate(months)]
    legend = [(label, css) for label, css, _values in series] if len(series) > 1 else []
    return BarChart(
        WIDTH, HEIGHT, bars, ticks, labels, LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, legend
    )
