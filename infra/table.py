"""The single table, built from the schema the functions and their tests use."""

from aws_cdk import Acknowledgment, RemovalPolicy, Stack, Validations
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

from controlplane.dal.schema import TABLE_SCHEMA, TTL_ATTRIBUTE

_TYPES = {"S": dynamodb.AttributeType.STRING, "N": dynamodb.AttributeType.NUMBER, "B": dynamodb.AttributeType.BINARY}
_BILLING = {"PAY_PER_REQUEST": dynamodb.BillingMode.PAY_PER_REQUEST}
# The actions IAM authorizes on an index: the only ones a grant on index/* serves.
_INDEX_ACTIONS = frozenset({"dynamodb:Query", "dynamodb:Scan"})
_PROJECTIONS = {"ALL": dynamodb.ProjectionType.ALL, "KEYS_ONLY": dynamodb.ProjectionType.KEYS_ONLY}


def _keys(key_schema: list[dict]) -> dict:
    """A CreateTable KeySchema as CDK's partition_key / sort_key arguments."""
    types = {a["AttributeName"]: _TYPES[a["AttributeType"]] for a in TABLE_SCHEMA["AttributeDefinitions"]}
    roles = {"HASH": "partition_key", "RANGE": "sort_key"}
    return {
        roles[key["KeyType"]]: dynamodb.Attribute(name=key["AttributeName"], type=types[key["AttributeName"]])
        for key in key_schema
    }


class ControlPlaneTable(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, protected: bool, removal_policy: RemovalPolicy) -> None:
        super().__init__(scope, construct_id)
        self.table = dynamodb.Table(
            self,
            "Table",
            **_keys(TABLE_SCHEMA["KeySchema"]),
            billing_mode=_BILLING[TABLE_SCHEMA["BillingMode"]],
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=dynamodb.TableEncryption.AWS_MANAGED,  # the aws/dynamodb KMS key, visible in CloudTrail
            time_to_live_attribute=TTL_ATTRIBUTE,
            stream=dynamodb.StreamViewType[TABLE_SCHEMA["StreamSpecification"]["StreamViewType"]],
            deletion_protection=protected,
            removal_policy=removal_policy,
        )
        for index in TABLE_SCHEMA["GlobalSecondaryIndexes"]:
            self.table.add_global_secondary_index(
                index_name=index["IndexName"],
                **_keys(index["KeySchema"]),
                projection_type=_PROJECTIONS[index["Projection"]["ProjectionType"]],
            )

    def grant(self, grantee: iam.IGrantable, *actions: str) -> None:
        """Allow ``actions`` on the table, and on its indexes only where one of them reads an index
        (Query: GSI1 and GSI2 are queried). ``table.grant`` always adds ``index/*``, a wildcard that a
        function that only gets and writes items (the events function, the tenant-keys consumer) never uses."""
        if not _INDEX_ACTIONS.intersection(actions):
            iam.Grant.add_to_principal(grantee=grantee, actions=list(actions), resource_arns=[self.table.table_arn])
            return
        self.table.grant(grantee, *actions)
        table_id = Stack.of(self).resolve(Stack.of(self).get_logical_id(self.table.node.default_child))
        Validations.of(grantee).acknowledge(
            Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::<{table_id}.Arn>/index/*]",
                reason="index/* from table.grant: the indexes of this one table, so its GSI1 can be queried.",
            )
        )
