"""The cost model's arithmetic: dollars per call from measured milliseconds and capacity units and the
prices of bench.prices; the memory size each function should have; a tenant's month. No I/O."""

import math
from collections import Counter
from typing import NamedTuple

from bench import prices

# What the cost section measures and prices (bench.cost runs it, bench.cost_report reports it).
MEMORY_SIZES = (256, 512, 1024, 1769)
BOUND = 1.25  # a function's memory: the cheapest whose p50 is within this of the best size's
CACHE_HIT_RATE = 0.9  # of calls answered from API Gateway's authorizer cache (60 s TTL)
DAYS, USERS = 22, 25  # working days a month; users of the profile's org
# The profile: calls a month of one org of USERS users, each working DAYS days.
PROFILE = {
    "GET /orgs/{org_id}/users/{user_id}/tickets": USERS * DAYS * 10,
    "GET /orgs/{org_id}/tickets/{ticket_id}": USERS * DAYS * 10,
    "GET /orgs/{org_id}/users/{user_id}": USERS * DAYS * 2,
    "GET /orgs/{org_id}": USERS * DAYS * 2,
    "POST /orgs/{org_id}/users/{user_id}/tickets": USERS * DAYS * 3,
    "PATCH /orgs/{org_id}/tickets/{ticket_id}": USERS * DAYS * 5,
    "DELETE /orgs/{org_id}/tickets/{ticket_id}": USERS * DAYS // 2,
    "GET /orgs/{org_id}/users": DAYS * 5,
    "GET /orgs/{org_id}/activity": DAYS * 2,
    "POST /orgs/{org_id}/users": 3,
    "PATCH /orgs/{org_id}/users/{user_id}": 5,
    "DELETE /orgs/{org_id}/users/{user_id}": 2,
}

GATEWAY, LAMBDA, DYNAMODB, AUTHORIZER, LOGS = "API Gateway", "Lambda", "DynamoDB", "authorizer", "CloudWatch Logs"
PARTS = (GATEWAY, LAMBDA, DYNAMODB, AUTHORIZER, LOGS)
GB = 1024**3


class Use(NamedTuple):
    """What one call of a route uses, as measured."""

    memory_mb: int
    ms: float  # the function's duration (p50)
    read_units: float
    write_units: float
    log_bytes: float


def lambda_dollars(memory_mb: int, ms: float) -> float:
    """One invocation: its request and its duration, billed per started millisecond."""
    seconds = math.ceil(ms) / 1000
    return memory_mb / 1024 * seconds * prices.LAMBDA_GB_SECOND + prices.LAMBDA_PER_MILLION_REQUESTS / 1e6


def dynamodb_dollars(read_units: float, write_units: float) -> float:
    return (
        read_units * prices.DYNAMODB_PER_MILLION_READ_UNITS + write_units * prices.DYNAMODB_PER_MILLION_WRITE_UNITS
    ) / 1e6


def logs_dollars(log_bytes: float) -> float:
    return log_bytes / GB * prices.CLOUDWATCH_LOGS_PER_GB


def per_call(use: Use, authorizer: Use, cache_hit_rate: float) -> dict[str, float]:
    """Dollars of one call by part. The authorizer runs on a cache miss only; the cache is API
    Gateway's, free for authorizer decisions."""
    miss = 1 - cache_hit_rate
    decision = lambda_dollars(authorizer.memory_mb, authorizer.ms)
    decision += dynamodb_dollars(authorizer.read_units, authorizer.write_units) + logs_dollars(authorizer.log_bytes)
    return {
        GATEWAY: prices.API_GATEWAY_REST_PER_MILLION / 1e6,
        LAMBDA: lambda_dollars(use.memory_mb, use.ms),
        DYNAMODB: dynamodb_dollars(use.read_units, use.write_units),
        AUTHORIZER: miss * decision,
        LOGS: logs_dollars(use.log_bytes),
    }


def choose_memory(p50_ms: dict[int, list[float]], bound: float) -> int:
    """The memory size whose calls (one of each route, p50 ms per route at each size) cost least in
    Lambda among the sizes whose summed p50 is within ``bound`` times the best size's; on a tie, the
    smaller size."""
    best = min(sum(times) for times in p50_ms.values())
    within = [memory for memory, times in p50_ms.items() if sum(times) <= bound * best]
    return min(within, key=lambda memory: (sum(lambda_dollars(memory, ms) for ms in p50_ms[memory]), memory))


def month(calls: dict[str, float], dollars: dict[str, dict[str, float]]) -> Counter:
    """A month's dollars by part, for ``calls`` per route and each route's dollars per call by part."""
    total: Counter = Counter()
    for route, count in calls.items():
        for part, amount in dollars[route].items():
            total[part] += count * amount
    return total
