"""Outages: an AWS service we depend on is unreachable, timing out, failing on its side, or still
throttling us (DynamoDB's throttling codes, which other services use too). botocore's errors are the
data layer's to read; the http layer asks this module and answers 503."""

from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from controlplane.dal.table import THROTTLING

_UNREACHABLE = (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError, ConnectionClosedError)


def is_outage(error: BaseException | None) -> bool:
    """An AWS service we depend on is unreachable, timing out, failing on its side (5xx) or
    throttling, after the client's own retries: worth a retry later, never a 500. Looks
    through the errors that libraries raise in its place (e.g. Powertools' idempotency layer, whose
    record writes do not go through ``table.translate``)."""
    while error is not None:
        if isinstance(error, _UNREACHABLE):
            return True
        if isinstance(error, ClientError) and (
            error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) >= 500
            or error.response.get("Error", {}).get("Code") in THROTTLING
        ):
            return True
        error = error.__cause__ or error.__context__
    return False
