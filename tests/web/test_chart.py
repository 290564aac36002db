"""The chart helpers lay out what templates draw."""

from companion.web.chart import bars


def test_bars_reach_the_limit_or_the_longest_total():
    under = bars({"Anna": 33, "Ben": 0}, 66)
    assert under.widths == {"Anna": 50.0, "Ben": 0.0} and under.limit_x == 100.0
    over = bars({"Anna": 80, "Ben": 40}, 64)
    assert over.widths == {"Anna": 100.0, "Ben": 50.0} and over.limit_x == 80.0


def test_bars_without_a_limit_or_a_bull():
    assert bars({"Anna": 0, "Ben": 0}) == ({"Anna": 0.0, "Ben": 0.0}, None)
