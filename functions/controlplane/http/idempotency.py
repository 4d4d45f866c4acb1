"""Idempotent creates: a retried POST with the same ``Idempotency-Key`` gets the first answer.

Powertools' Idempotency utility does the work, with its records in the single table where
``keys.idempotency_layout`` puts them, one partition per tenant, expiring 24 hours on. The key is
hashed together with the caller and the path, so two tenants, or two users, sending the same key
never see each other's responses. The request body is the payload Powertools validates: the
same key with another body is refused.
"""

import json
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.shared.json_encoder import Encoder
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyPersistenceLayerError,
    IdempotencyValidationError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import STATUS_CONSTANTS, DataRecord
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel

from controlplane import config
from controlplane.dal import keys, sealing
from controlplane.dal.outage import is_outage
from controlplane.http.errors import IDEMPOTENCY_IN_PROGRESS, IDEMPOTENCY_KEY_REUSED
from controlplane.models.errors import Conflict, IdempotencyKeyReused
from controlplane.observability import logger

EXPIRES_AFTER_SECONDS = 24 * 60 * 60
_CONFIG = IdempotencyConfig(
    event_key_jmespath="key",
    payload_validation_jmespath="body",
    raise_on_no_idempotency_key=True,
    expires_after_seconds=EXPIRES_AFTER_SECONDS,
    use_local_cache=False,  # a replay must be answered from the table, the one truth across instances
)


class _Store(DynamoDBPersistenceLayer):
    """Powertools' DynamoDB layer, whose record a keyed create completes in its own transaction
    (``dal.sealing``): once it has, the layer's own completion is not needed, and neither is a
    delete of the record after an error (the resource exists: a resend gets the 201). Nor is one of
    a record that another attempt took over. Any other delete is of the record only while it is
    still this attempt's in progress: a write that timed out may have completed it."""

    def __init__(self, org_id: str | None, answer: Callable[[BaseModel], Response[Any]] | None):
        self.layout = keys.idempotency_layout(org_id)
        super().__init__(table_name=config.settings().table_name, **self.layout, boto3_client=config.dynamodb())
        statuses = (STATUS_CONSTANTS["INPROGRESS"], STATUS_CONSTANTS["COMPLETED"])
        parts = (self.table_name, self.status_attr, self.data_attr, self.expiry_attr, self.in_progress_expiry_attr)
        self.seal = None
        if answer is not None:
            self.seal = sealing.Seal(sealing.Record(*parts, *statuses), lambda made: _stored(_saved(answer(made))))

    def _put_record(self, data_record: DataRecord) -> None:
        super()._put_record(data_record)
        if self.seal is not None:
            key = {self.layout["key_attr"]: self.layout["static_pk_value"]}
            key[self.layout["sort_key_attr"]] = data_record.idempotency_key
            self.seal.claim(key, data_record.in_progress_expiry_timestamp, data_record.expiry_timestamp or 0)

    def _update_record(self, data_record: DataRecord) -> None:
        if self.seal is None or not self.seal.sealed:
            super()._update_record(data_record)

    def _delete_record(self, data_record: DataRecord) -> None:
        if self.seal is None or self.seal.key is None:
            super()._delete_record(data_record)
        elif not (self.seal.sealed or self.seal.lost):  # the write's outcome may be unknown (a timeout)
            sealing.release(self.seal, self.seal.key, self.client)


def once(
    key: str | None,
    org_id: str | None,
    identity: dict[str, str],
    body: BaseModel,
    make: Callable[[], Response[Any]],
    lambda_context: LambdaContext,
    slim: tuple[str, Callable[[str], BaseModel]] | None = None,
    answer: Callable[[BaseModel], Response[Any]] | None = None,
) -> Response[Any]:
    """Run ``make`` once per (``identity``, ``key``); replay its response for later calls.

    ``org_id`` is the org of the request's path (None for none). The Lambda context bounds the
    in-progress record by the invocation's remaining time, so a crashed attempt blocks retries for
    seconds, not for the 24 hours of a finished one. ``slim``, for a body that may outgrow an item
    (a user import's, with its refused rows): (a field, a read) the record keeps only that field of
    the body, and a replay's body is the read of it, as it is now. ``answer``, for a create whose
    resource one transaction makes: the response for that resource, which the transaction stores
    as the record's (``dal.sealing``), so that no resend makes it again.
    """
    if key is None:
        return make()
    _CONFIG.register_lambda_context(lambda_context)
    store = _Store(org_id, answer)

    # Powertools leaves idempotent_function's result unannotated.
    @idempotent_function(  # type: ignore[untyped-decorator]
        data_keyword_argument="request", persistence_store=store, config=_CONFIG
    )
    def respond(request: dict[str, Any]) -> dict[str, Any]:
        made.append(_saved(make()))
        return {**made[0], "body": {slim[0]: made[0]["body"][slim[0]]}} if slim else made[0]

    made: list[dict[str, Any]] = []
    request = {"key": {**identity, "idempotency_key": key}, "body": body.model_dump(mode="json")}
    try:
        with sealing.opened(store.seal) if store.seal else nullcontext():
            stored = respond(request=request)
    except IdempotencyValidationError:
        raise IdempotencyKeyReused(IDEMPOTENCY_KEY_REUSED) from None
    except (IdempotencyAlreadyInProgressError, sealing.Lost):
        raise Conflict(IDEMPOTENCY_IN_PROGRESS) from None
    except IdempotencyPersistenceLayerError as failed:
        if not made and sealing.in_a_transaction(failed):  # a resend while the first one's transaction runs
            raise Conflict(IDEMPOTENCY_IN_PROGRESS) from None
        # Nothing created: the error is the answer (a 503 for an outage), and a retry is safe. Anything
        # but an outage (a misconfiguration) stays a 500, whenever it happened.
        if not made or not is_outage(failed):
            raise
        # Created, but its record not saved (throttled, an outage): the truth is the 201, not a 503
        # whose retry would create again. Unless the creation completed it (``answer``), the record
        # stays in progress until the invocation's time is up.
        logger.warning("Created, but its idempotency record was not saved", exc_info=True)
    if made:  # the first run (its record saved or not): its whole response
        stored = made[0]
    elif slim:  # a replay of a slim record: the body read as it is now
        stored = {**stored, "body": slim[1](stored["body"][slim[0]])}
    return Response(stored["status"], content_types.APPLICATION_JSON, stored["body"], stored["headers"])


def _saved(response: Response[Any]) -> dict[str, Any]:
    """A response as its record keeps it."""
    payload: Any = response.body.model_dump(mode="json") if isinstance(response.body, BaseModel) else response.body
    return {"status": response.status_code, "headers": response.headers, "body": payload}


def _stored(saved: dict[str, Any]) -> str:
    """``saved`` as the record's data, in the form Powertools writes it (``save_success``)."""
    return json.dumps(saved, cls=Encoder, sort_keys=True)
