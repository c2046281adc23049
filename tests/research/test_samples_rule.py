from __future__ import annotations

import pytest

from research.samples_rule import tail


def test_the_tail_is_the_chance_that_enough_drawn_replies_disagree():
    assert tail(10, 0, 3, 2) == 0.0
    assert tail(10, 10, 3, 3) == 1.0
    # 3 of 10 disagree, 3 drawn, at least 2 disagreeing: (C(3,2)*C(7,1) + C(3,3)) / C(10,3)
    assert tail(10, 3, 3, 2) == pytest.approx((3 * 7 + 1) / 120)
