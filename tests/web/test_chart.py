"""The chart helpers lay out what templates draw."""

from itertools import pairwise

import pytest

from companion.web.chart import LABEL_SIZE, bars, line_chart


def test_bars_reach_the_limit_or_the_longest_total():
    under = bars({"Anna": 33, "Ben": 0}, 66)
    assert under.widths == {"Anna": 50.0, "Ben": 0.0} and under.limit_x == 100.0
    over = bars({"Anna": 80, "Ben": 40}, 64)
    assert over.widths == {"Anna": 100.0, "Ben": 50.0} and over.limit_x == 80.0


def test_bars_without_a_limit_or_a_bull():
    assert bars({"Anna": 0, "Ben": 0}) == ({"Anna": 0.0, "Ben": 0.0}, None)


@pytest.mark.parametrize("size", [LABEL_SIZE, 17])
def test_end_labels_at_close_totals_keep_a_line_apart_inside_the_picture(size):
    # Totals 5 bulls apart and equal ones; the TV's names are 17 units high (issue 57).
    chart = line_chart(
        [f"P{number}" for number in range(5)], [[70], [25], [20], [5], [5]], 66, size
    )
    ends = sorted(line.end_y for line in chart.lines)
    assert all(later - earlier >= size * 1.25 - 0.1 for earlier, later in pairwise(ends)), ends
    assert ends[0] >= size * 0.75 - 0.1 and ends[-1] <= chart.height - size * 1.25 + 0.1, ends


@pytest.mark.parametrize("size", [LABEL_SIZE, 17])
def test_ten_names_at_the_foot_share_the_pictures_height(size):
    totals = [[70], [25], [20], [10], [5], [5], [0], [0], [0], [0]]
    chart = line_chart([f"P{number}" for number in range(10)], totals, 66, size)
    ends = sorted(line.end_y for line in chart.lines)
    # A name's letters (about its font size high) never touch the next one's.
    assert all(later - earlier >= size - 0.1 for earlier, later in pairwise(ends)), ends
    assert ends[0] >= size * 0.75 - 0.1 and ends[-1] <= chart.height - size * 1.25 + 0.1, ends


def test_end_labels_apart_already_stay_where_their_lines_end():
    chart = line_chart(["Anna", "Ben"], [[60], [0]], 66)
    assert [line.end_y for line in chart.lines] == [
        float(line.points.split()[-1].split(",")[1]) for line in chart.lines
    ]
