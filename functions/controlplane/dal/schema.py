"""The table schema, in DynamoDB CreateTable form.

This is the one definition: the CDK stack builds the table from it, and the tests and the local
server pass it straight to ``create_table``. It imports nothing, so infra can import it cheaply.
"""

from typing import Any

PARTITION_KEY = "PK"
SORT_KEY = "SK"
GSI1_NAME = "GSI1"
GSI1_PARTITION_KEY = "GSI1PK"
GSI1_SORT_KEY = "GSI1SK"
# GSI2: an org's users by the path of their unit (issue 27). Sparse: only user items carry its keys.
GSI2_NAME = "GSI2"
GSI2_PARTITION_KEY = "GSI2PK"
GSI2_SORT_KEY = "GSI2SK"
TTL_ATTRIBUTE = "expires_at"

TABLE_SCHEMA: dict[str, Any] = {  # keyword arguments of CreateTable, less the name
    "AttributeDefinitions": [
        {"AttributeName": name, "AttributeType": "S"}
        for name in (PARTITION_KEY, SORT_KEY, GSI1_PARTITION_KEY, GSI1_SORT_KEY, GSI2_PARTITION_KEY, GSI2_SORT_KEY)
    ],
    "KeySchema": [
        {"AttributeName": PARTITION_KEY, "KeyType": "HASH"},
        {"AttributeName": SORT_KEY, "KeyType": "RANGE"},
    ],
    "GlobalSecondaryIndexes": [
        {
            "IndexName": GSI1_NAME,
            "KeySchema": [
                {"AttributeName": GSI1_PARTITION_KEY, "KeyType": "HASH"},
                {"AttributeName": GSI1_SORT_KEY, "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        },
        {
            # ALL: a unit's user listing returns whole users from the index, with no read of the table
            # (items read = items returned). A user item is well under 1 KB, so each user write costs
            # one more write unit here (docs/DATA_MODEL.md, "Org units").
            "IndexName": GSI2_NAME,
            "KeySchema": [
                {"AttributeName": GSI2_PARTITION_KEY, "KeyType": "HASH"},
                {"AttributeName": GSI2_SORT_KEY, "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        },
    ],
    "BillingMode": "PAY_PER_REQUEST",
    # Every change, with the item before and after it, for the lifecycle events (controlplane.lifecycle.contract).
    "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
}
