"""The pace of calls on a per-account quota (sign-ins jobs, API keys), on a fake clock."""

import math

from controlplane.pacing import Throttle


def test_the_throttle_spaces_calls_at_its_rate():
    now, slept = [0.0], []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    throttle = Throttle(10.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(21):
        throttle.wait()

    assert len(slept) == 20 and math.isclose(sum(slept), 2.0)
    assert math.isclose(now[0], 2.0)
