"""The table: built from the schema the handler tests use, recoverable, protected in prod."""

from controlplane.dal.schema import TABLE_SCHEMA, TTL_ATTRIBUTE


def _table_id(template: dict) -> str:
    [logical_id] = [k for k, r in template["Resources"].items() if r["Type"] == "AWS::DynamoDB::Table"]
    return logical_id


def _table(template: dict) -> dict:
    return template["Resources"][_table_id(template)]


def _by_name(attributes: list[dict]) -> list[dict]:
    return sorted(attributes, key=lambda attribute: attribute["AttributeName"])


def test_table_keys_and_indexes_equal_the_shared_schema(dev):
    # Given the stack synthesized for dev
    # When reading its table
    properties = _table(dev)["Properties"]

    # Then keys, attributes, indexes and billing are exactly TABLE_SCHEMA's, which the handler tests use
    assert properties["KeySchema"] == TABLE_SCHEMA["KeySchema"]
    assert _by_name(properties["AttributeDefinitions"]) == _by_name(TABLE_SCHEMA["AttributeDefinitions"])
    assert properties["GlobalSecondaryIndexes"] == TABLE_SCHEMA["GlobalSecondaryIndexes"]
    assert properties["BillingMode"] == TABLE_SCHEMA["BillingMode"] == "PAY_PER_REQUEST"
    assert properties["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert TABLE_SCHEMA["StreamSpecification"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"


def test_table_is_encrypted_recoverable_and_expires_items(dev):
    properties = _table(dev)["Properties"]

    assert properties["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert properties["SSESpecification"] == {"SSEEnabled": True}  # the AWS managed key, aws/dynamodb
    assert properties["TimeToLiveSpecification"] == {"AttributeName": TTL_ATTRIBUTE, "Enabled": True}


def test_prod_table_is_deletion_protected_and_retained(prod):
    table = _table(prod)

    assert table["Properties"]["DeletionProtectionEnabled"] is True
    assert table["DeletionPolicy"] == "Retain"  # even after a failed first create: it cannot be deleted
    assert table["UpdateReplacePolicy"] == "Retain"


def test_dev_table_is_deleted_with_its_stack(dev):
    table = _table(dev)

    assert table["Properties"]["DeletionProtectionEnabled"] is False
    assert table["DeletionPolicy"] == "Delete"


def test_prod_log_groups_are_retained_and_expire(prod):
    log_groups = [r for r in prod["Resources"].values() if r["Type"] == "AWS::Logs::LogGroup"]

    # three API functions, the events, tenant-keys and revocations functions, the authorizer, the API's
    # access logs, the console's deployment
    assert len(log_groups) == 9
    assert all(group["DeletionPolicy"] == "RetainExceptOnCreate" for group in log_groups)
    assert all(group["Properties"]["RetentionInDays"] == 30 for group in log_groups)


def test_outputs_are_the_table_name_and_the_stage_url_without_trailing_slash(dev):
    outputs = dev["Outputs"]

    assert outputs["TableName"]["Value"] == {"Ref": _table_id(dev)}
    [stage_id] = [k for k, r in dev["Resources"].items() if r["Type"] == "AWS::ApiGateway::Stage"]
    url_parts = outputs["ApiUrl"]["Value"]["Fn::Join"][1]
    assert url_parts[0] == "https://"
    assert url_parts[-2:] == ["/", {"Ref": stage_id}]  # so "$API_URL/orgs" has a single slash


def _dynamodb_resources_by_role(template: dict) -> dict[str, list]:
    """Each role's resources of its DynamoDB statements (the authorizer's own statement included)."""
    found: dict[str, list] = {}
    for resource in template["Resources"].values():
        if resource["Type"] != "AWS::IAM::Policy":
            continue
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            if any(action.startswith("dynamodb:") and action != "dynamodb:ListStreams" for action in actions):
                for role in resource["Properties"]["Roles"]:
                    found.setdefault(role["Ref"], []).append((actions, statement["Resource"]))
    return found


def test_only_a_role_that_queries_may_reach_the_tables_indexes(dev):
    # Given every role's DynamoDB statements (the stream's actions are on the stream, not the table)
    roles = _dynamodb_resources_by_role(dev)
    index_wildcard = {"Fn::Join": ["", [{"Fn::GetAtt": [_table_id(dev), "Arn"]}, "/index/*"]]}

    # Then the indexes (index/*) are in a statement only with Query, the one action of these functions
    # IAM authorizes on an index: the events function (GetItem, BatchWriteItem) and the tenant-keys
    # consumer (GetItem) never read one, so a wildcard there is a grant no code uses
    assert len(roles) == 6  # the three API functions, the events function, the authorizer, tenant keys
    for role, statements in roles.items():
        for actions, resources in statements:
            on_indexes = index_wildcard in (resources if isinstance(resources, list) else [resources])
            assert on_indexes == ("dynamodb:Query" in actions), (role, actions)
