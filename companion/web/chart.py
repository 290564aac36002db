"""Small line charts as plain SVG data for templates: no script, no inline style (CSP)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import NamedTuple

WIDTH, HEIGHT = 340, 200
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 32, 70, 10, 24
# The end labels' room on the right: as wide as the longest name needs (a bold letter is
# about LETTER_EM of the label's size wide), at most LABEL_SHARE of the chart; a name is
# cut only past that.
LETTER_EM = 0.7
LABEL_SHARE = 0.45
LABEL_SIZE = 10  # the labels' font size in the chart's units (chart.css; the TV's: tv.css)
LABEL_LINE = 1.25  # an end label's line (its text's box on screen), in its font size
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


class Scale(NamedTuple):
    """Where a chart's points go: ``slots`` steps across, values ``low``..``high`` up."""

    slots: int
    low: float
    high: float
    right: float = WIDTH - PAD_RIGHT  # the plot's right edge: the labels' room beyond

    def x(self, index: int) -> float:
        """The x of point ``index`` (0 at the left edge of the plot)."""
        return round(PAD_LEFT + (self.right - PAD_LEFT) * index / max(self.slots, 1), 1)

    def y(self, value: float) -> float:
        """The y of ``value`` (``high`` at the top of the plot)."""
        plot_h = HEIGHT - PAD_TOP - PAD_BOTTOM
        return round(PAD_TOP + plot_h * (self.high - value) / (self.high - self.low), 1)

    def line(self, label: str, values: Sequence[float], number: int, first: int = 0) -> Line:
        """One labelled line through ``values``, the first at point ``first``."""
        coords = [(self.x(index), self.y(value)) for index, value in enumerate(values, first)]
        points = " ".join(f"{px},{py}" for px, py in coords)
        return Line(label, points, *coords[-1], f"series-{number % SERIES}")


def framed(
    lines: list[Line],
    y_ticks: list,
    x_ticks: list,
    limit_y: float | None,
    right: float = WIDTH - PAD_RIGHT,
) -> Chart:
    """A chart of these lines and ticks in the one frame every chart shares."""
    return Chart(
        WIDTH, HEIGHT, lines, y_ticks, x_ticks, limit_y, PAD_LEFT, right, HEIGHT - PAD_BOTTOM
    )


def label_room(labels: Sequence[str], size: float) -> tuple[float, int]:
    """Where the plot ends so that the longest end label fits beyond it at ``size``, and
    how many letters a label may then show (a longer one is cut)."""
    letter = size * LETTER_EM
    most = int((WIDTH * LABEL_SHARE - 8) / letter)
    longest = min(max((len(label) for label in labels), default=0), most)
    room = max(PAD_RIGHT, 8 + longest * letter)
    return round(WIDTH - room, 1), most


def fitted(label: str, letters: int) -> str:
    """``label`` whole when it has at most ``letters`` letters, else cut with "…"."""
    return label if len(label) <= letters else label[: letters - 1].rstrip() + "…"


def line_chart(
    labels: Sequence[str],
    series: Sequence[Sequence[int]],
    limit: int | None = None,
    label_size: float = LABEL_SIZE,
) -> Chart:
    """Lay out one line per label over points 0..n (values start at 0 before point 1),
    with room on the right for the labels at ``label_size`` (the TV's are larger)."""
    count = max((len(values) for values in series), default=0)
    top = max([limit or 0, *(max(values, default=0) for values in series), 1])
    right, letters = label_room(labels, label_size)
    scale = Scale(count, 0, top, right)
    lines = [
        scale.line(fitted(label, letters), [0, *values], number)
        for number, (label, values) in enumerate(zip(labels, series, strict=True))
    ]
    spread_labels(lines, label_size * LABEL_LINE)
    step = max(1, top // 4)
    y_ticks = [(scale.y(value), value) for value in range(0, top + 1, step)]
    x_ticks = [(scale.x(index), index) for index in range(1, count + 1)]
    return framed(lines, y_ticks, x_ticks, scale.y(limit) if limit else None, right)


def spread_labels(lines: list[Line], gap: float = LABEL_SIZE * LABEL_LINE) -> None:
    """Move end labels apart vertically so names at equal or close totals stay readable:
    ``gap`` (a label's line) from one to the next, or as much as the picture's height has
    for them all; none above its top nor below its foot, from where they move up together."""
    top, foot = gap * 0.6, HEIGHT - gap  # a label's line inside the picture
    if len(lines) > 1:
        gap = min(gap, (foot - top) / (len(lines) - 1))
    order = sorted(range(len(lines)), key=lambda i: lines[i].end_y)
    ends: list[float] = []
    for index in order:
        end = max(lines[index].end_y, top)
        ends.append(end if not ends or end - ends[-1] >= gap else ends[-1] + gap)
    lowest = foot
    for place in reversed(range(len(ends))):
        ends[place] = min(ends[place], lowest)
        lowest = ends[place] - gap
    for index, end in zip(order, ends, strict=True):
        lines[index] = lines[index]._replace(end_y=round(end, 1))


class Bars(NamedTuple):
    """Horizontal bars on a 0..100 scale: each key's length and where the limit falls."""

    widths: dict
    limit_x: float | None


def bars(values: Mapping[Hashable, int], limit: int | None = None) -> Bars:
    """Scale ``values`` to bars of 0..100, the longest bar or the limit reaching 100."""
    top = max([limit or 0, *values.values(), 1])
    widths = {key: round(100 * value / top, 1) for key, value in values.items()}
    return Bars(widths, round(100 * limit / top, 1) if limit else None)
