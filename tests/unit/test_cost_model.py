"""The cost model's arithmetic (bench.cost_model): prices from bench.prices, no AWS."""

from datetime import date

import pytest

from bench import cost_model, prices
from bench.cost_model import Use, choose_memory, lambda_dollars, month, per_call

NO_AUTHORIZER = Use(512, 0, 0, 0, 0)


def test_lambda_bills_its_request_and_each_started_millisecond_at_the_memory_size():
    # 1 GB for 1.2 ms is billed as 2 ms.
    assert lambda_dollars(1024, 1.2) == pytest.approx(0.002 * prices.LAMBDA_GB_SECOND + 0.2e-6)
    assert lambda_dollars(512, 2.0) == pytest.approx(0.5 * 0.002 * prices.LAMBDA_GB_SECOND + 0.2e-6)


def test_a_call_costs_the_gateway_the_function_its_units_and_its_logs():
    use = Use(memory_mb=1024, ms=3, read_units=0.5, write_units=4, log_bytes=1024**3 / 1e6)

    dollars = per_call(use, NO_AUTHORIZER, cache_hit_rate=1.0)

    assert dollars[cost_model.GATEWAY] * 1e6 == pytest.approx(prices.API_GATEWAY_REST_PER_MILLION)
    assert dollars[cost_model.LAMBDA] == pytest.approx(lambda_dollars(1024, 3))
    assert dollars[cost_model.DYNAMODB] * 1e6 == pytest.approx(
        0.5 * prices.DYNAMODB_PER_MILLION_READ_UNITS + 4 * prices.DYNAMODB_PER_MILLION_WRITE_UNITS
    )
    assert dollars[cost_model.LOGS] * 1e6 == pytest.approx(prices.CLOUDWATCH_LOGS_PER_GB)
    assert dollars[cost_model.AUTHORIZER] == 0


def test_the_authorizer_costs_only_on_a_cache_miss():
    authorizer = Use(memory_mb=512, ms=2, read_units=0.5, write_units=0, log_bytes=0)
    decision = lambda_dollars(512, 2) + 0.5 * prices.DYNAMODB_PER_MILLION_READ_UNITS / 1e6

    dollars = per_call(NO_AUTHORIZER, authorizer, cache_hit_rate=0.9)

    assert dollars[cost_model.AUTHORIZER] == pytest.approx(0.1 * decision)


def test_the_memory_is_the_cheapest_size_within_the_bound_of_the_fastest():
    p50 = {256: [40.0], 512: [20.0], 1024: [11.0], 1769: [10.0]}

    # Within 1.25 x 10 ms: 1024 and 1769; 1 GB x 11 ms costs less than 1.73 GB x 10 ms.
    assert choose_memory(p50, 1.25) == 1024
    # Within 2.5 x: 512 too, and half a GB x 20 ms costs less than 1 GB x 11 ms.
    assert choose_memory(p50, 2.5) == 512


def test_a_slow_size_is_not_chosen_for_being_cheap():
    p50 = {256: [30.0], 1024: [10.0]}  # 256 MB costs less (7.5 GB-ms against 10) but takes 3 x as long

    assert choose_memory(p50, 1.25) == 1024


def test_each_route_is_billed_by_the_started_millisecond_not_the_sum():
    # Two routes of 0.4 ms each: two started milliseconds at any size, so the smaller size is cheaper.
    assert choose_memory({512: [0.4, 0.4], 1024: [0.35, 0.35]}, 1.25) == 512


def test_a_month_sums_each_part_over_the_routes_calls():
    dollars = {"a": {"x": 1.0, "y": 0.5}, "b": {"x": 2.0, "y": 0.0}}

    assert month({"a": 10, "b": 3}, dollars) == {"x": 16.0, "y": 5.0}


def test_the_prices_say_when_they_were_read():
    assert date.fromisoformat(prices.READ_ON) <= date.today()
