"""Alarms reach someone: every alarm's actions may publish to the alarm topic under the topic's own
policy, evaluated statement by statement (tests/infra/iam_policy.py) as SNS would on AWS."""

import pytest

from tests.infra.iam_policy import ACCOUNT, REGION, Decision, Request, arn_of, decide, resolve, topic_policy

CLOUDWATCH = ("Service", "cloudwatch.amazonaws.com")


def _alarms(template: dict) -> dict[str, dict]:
    return {k: r["Properties"] for k, r in template["Resources"].items() if r["Type"] == "AWS::CloudWatch::Alarm"}


def _publish(topic_arn: str, alarm_arn: str, *, tls: bool = True, account: str = ACCOUNT) -> Request:
    """What CloudWatch sends when ``alarm_arn`` changes state: a Publish on the alarm's behalf."""
    context = {
        "aws:SourceArn": alarm_arn,
        "aws:SourceAccount": account,
        "aws:SourceOwner": account,
        "aws:SecureTransport": str(tls).lower(),
    }
    return Request(principal=CLOUDWATCH, action="sns:Publish", resource=topic_arn, context=context)


@pytest.mark.parametrize("stage", ["dev", "prod", "shared"])
def test_every_alarm_action_may_publish_to_its_topic(templates, stage):
    # Given each alarm of the stack and the topics its state changes notify
    template = templates[stage].to_json()
    alarms = _alarms(template)
    assert len(alarms) >= 2  # the deletions' dead letters and the events' failures

    for alarm_id, alarm in alarms.items():
        for action in alarm["AlarmActions"] + alarm["OKActions"]:
            # When CloudWatch publishes to the topic for that alarm, over TLS
            topic_arn = resolve(template, action)
            request = _publish(topic_arn, arn_of(template, alarm_id))

            # Then the topic's policy lets it
            assert decide(template, topic_policy(template, topic_arn), request) is Decision.ALLOW, alarm_id


def _one_alarm_and_its_topic(template: dict) -> tuple[str, str]:
    alarm_id, alarm = next(iter(_alarms(template).items()))
    return arn_of(template, alarm_id), resolve(template, alarm["AlarmActions"][0])


def test_a_publish_without_tls_is_refused_even_from_an_alarm(dev):
    alarm_arn, topic_arn = _one_alarm_and_its_topic(dev)

    decision = decide(dev, topic_policy(dev, topic_arn), _publish(topic_arn, alarm_arn, tls=False))

    assert decision is Decision.EXPLICIT_DENY


def test_another_accounts_alarm_cannot_publish_to_the_topic(dev):
    # CloudWatch is one principal for every account: the policy must name this account's alarms
    _, topic_arn = _one_alarm_and_its_topic(dev)
    elsewhere = "444455556666"
    alarm_arn = f"arn:aws:cloudwatch:{REGION}:{elsewhere}:alarm:theirs"

    decision = decide(dev, topic_policy(dev, topic_arn), _publish(topic_arn, alarm_arn, account=elsewhere))

    assert decision is Decision.IMPLICIT_DENY


def test_no_other_principal_may_publish_to_the_topic(dev):
    alarm_arn, topic_arn = _one_alarm_and_its_topic(dev)
    someone = ("AWS", f"arn:aws:iam::{ACCOUNT}:role/anyone")
    request = Request(someone, "sns:Publish", topic_arn, _publish(topic_arn, alarm_arn).context)

    assert decide(dev, topic_policy(dev, topic_arn), request) is Decision.IMPLICIT_DENY
