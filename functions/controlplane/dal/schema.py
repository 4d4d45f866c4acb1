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
TTL_ATTRIBUTE = "expires_at"

TABLE_SCHEMA: dict[str, Any] = {  # keyword arguments of CreateTable, less the name
    "AttributeDefinitions": [
        {"AttributeName": name, "AttributeType": "S"}
        for name in (PARTITION_KEY, SORT_KEY, GSI1_PARTITION_KEY, GSI1_SORT_KEY)
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
        }
    ],
    "BillingMode": "PAY_PER_REQUEST",
    # Every change, with the item before and after it, for the lifecycle events (controlplane.lifecycle.contract).
    "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
}
