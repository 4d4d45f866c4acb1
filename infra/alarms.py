"""Who hears an alarm: one SNS topic that every alarm of the stack notifies, with an optional e-mail
subscription (context key ``alarm_email``). Subscribe anything else (a pager, a chat hook) to the topic."""

import jsii
from aws_cdk import Acknowledgment, ArnFormat, Aws, IAspect, Stack, Validations
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct, IConstruct


class AlarmTopic(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, email: str | None) -> None:
        super().__init__(scope, construct_id)
        self.topic = sns.Topic(self, "Topic", display_name=f"{Stack.of(self).stack_name} alarms", enforce_ssl=True)
        # enforce_ssl writes a topic policy, and a topic policy replaces SNS's default one, which is what
        # let the account's CloudWatch publish: with the Deny alone, no alarm would ever reach the topic.
        # So CloudWatch may publish again, for this account's alarms only (no confused deputy); the Deny
        # still refuses any publish without TLS, CloudWatch's included.
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AlarmsPublish",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                conditions={
                    "ArnLike": {"aws:SourceArn": alarms_arn(self)},
                    "StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID},
                },
            )
        )
        if email:
            self.topic.add_subscription(subscriptions.EmailSubscription(email))
        Validations.of(self.topic).acknowledge(
            Acknowledgment(
                id="AwsSolutions-SNS2",
                reason="CloudWatch alarms cannot publish to a topic encrypted with the AWS-managed SNS key, and "
                "a notification carries only the alarm's name, state and description, no customer data.",
            )
        )


def alarms_arn(scope: Construct) -> str:
    """Every CloudWatch alarm of the stack's account and region."""
    return Stack.of(scope).format_arn(
        service="cloudwatch", resource="alarm", resource_name="*", arn_format=ArnFormat.COLON_RESOURCE_NAME
    )


@jsii.implements(IAspect)
class NotifyOnAlarm:
    """Every alarm in the scope it is applied to notifies ``topic`` when it goes off and when it recovers,
    including alarms added later by other constructs."""

    def __init__(self, topic: sns.ITopic) -> None:
        self.action = cloudwatch_actions.SnsAction(topic)

    def visit(self, node: IConstruct) -> None:
        if isinstance(node, cloudwatch.Alarm):
            node.add_alarm_action(self.action)
            node.add_ok_action(self.action)
