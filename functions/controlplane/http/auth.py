"""Who is calling: the ``Caller`` the API's Lambda authorizer (functions/authorizer) verified, read
from its context, which API Gateway hands over in ``requestContext.authorizer``: ``sub``,
``org_id``, ``user_id``, ``role``, ``groups`` (comma-separated), ``plan`` and ``user_created_at`` (the
caller's user item's), every value a string, the org fields empty for operators. In the cloud and in
the local gateway, the authorizer has already verified the token and that the org is not suspended.
What the caller may do is ``logic.access``'s to decide."""

from collections.abc import Mapping
from typing import Any

from controlplane.logic.access import ADMIN, MEMBER, OPERATORS_GROUP, Caller
from controlplane.models.errors import UNAUTHORIZED_MESSAGE, Forbidden, Unauthorized


def authorizer_context(event: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """What the Lambda authorizer passed on for this request's token; None without one."""
    context = (event.get("requestContext") or {}).get("authorizer")
    return context if isinstance(context, Mapping) else None


def caller_from(context: Mapping[str, Any] | None) -> Caller:
    """Fails closed: no subject is 401; a caller who is not an operator is refused unless the context
    names their org, their user id and a role (the authorizer's, read from their item)."""
    if not context or not context.get("sub"):
        raise Unauthorized(UNAUTHORIZED_MESSAGE)
    groups = {group.strip() for group in str(context.get("groups") or "").split(",")}
    caller = Caller(
        subject=str(context["sub"]),
        user_id=context.get("user_id") or None,
        org_id=context.get("org_id") or None,
        role=context.get("role") or None,
        operator=OPERATORS_GROUP in groups,
        user_created_at=context.get("user_created_at") or None,
    )
    if not caller.operator and not (caller.org_id and caller.user_id and caller.role in (ADMIN, MEMBER)):
        raise Forbidden("Your sign-in names no organization, user and role")
    return caller
