"""Interleaved timing, percentiles and the Markdown the report is made of."""

import gc
import statistics
import time
from collections.abc import Callable


def interleave(calls: dict[str, Callable[[], object]], iterations: int, warmup: int = 0) -> dict[str, list[float]]:
    """Milliseconds per call of each callable, run in turns within one loop so that noise from
    the rest of the machine lands on all of them alike; the starting one rotates every round."""
    names = list(calls)
    samples: dict[str, list[float]] = {name: [] for name in names}
    gc.collect()
    for round_ in range(warmup + iterations):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter_ns()
            calls[name]()
            elapsed = (time.perf_counter_ns() - start) / 1e6
            if round_ >= warmup:
                samples[name].append(elapsed)
    return samples


def p50_p95(samples: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(samples, n=20, method="inclusive")
    return cuts[9], cuts[18]


def ms(value: float) -> str:
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def ratio(value: float) -> str:
    return f"{value:.2f}"


def meets(value: float, goal: float) -> bool:
    """A ratio judged as the report prints it, to two decimals: 1.204 meets 1.2."""
    return round(value, 2) <= goal


def verdict(met: bool) -> str:
    return "met" if met else "**missed**"


def markdown(headers: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
