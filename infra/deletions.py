"""The deletions queue: org deletes that outgrow an API request finish from here, with the other jobs
of the organizations function and a deleted user's ticket sweep, sent by the users function
(controlplane.logic.deletions); and, by a rule on the lifecycle bus, the org's status changes, each of
which starts the job that brings its users' sign-ins in line (controlplane.logic.signins).

A message that fails ``DELETIONS_MAX_RECEIVE_COUNT`` times moves to a dead-letter queue, and an alarm
goes off as soon as one is there: each is an org whose data is half deleted, or whose job did not
finish; an event EventBridge could not queue (retried for a day) lands there too.
"""

from aws_cdk import RemovalPolicy
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from controlplane.lifecycle.contract import SOURCE
from controlplane.logic import signins
from infra.constants import (
    DELETIONS_MAX_CONCURRENCY,
    DELETIONS_MAX_RECEIVE_COUNT,
    DELETIONS_VISIBILITY_TIMEOUT,
    RULE_MAX_EVENT_AGE,
    RULE_RETRY_ATTEMPTS,
)
from infra.dead_end import dead_end_queue


class DeletionsQueue(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, removal_policy: RemovalPolicy) -> None:
        super().__init__(scope, construct_id)
        self.dead_letters = dead_end_queue(
            self,
            "DeadLetters",
            alarm_id="DeadLettersAlarm",
            alarm_description="An org delete, or another job of the deletions queue (sign-ins of a status change, "
            "a unit move, a user import, a ticket sweep), failed repeatedly and waits in the dead-letter queue: "
            "an org half deleted, say. Find the cause in the organizations function's logs, then redrive the message.",
            removal_policy=removal_policy,
        )
        self.queue = sqs.Queue(
            self,
            "Queue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=DELETIONS_VISIBILITY_TIMEOUT,
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letters, max_receive_count=DELETIONS_MAX_RECEIVE_COUNT
            ),
            removal_policy=removal_policy,
        )

    def attach(self, function: lambda_.Function, target: lambda_.IFunction) -> None:
        """``function`` consumes the queue one org at a time, reporting a failed message rather than the
        batch, and may send to it: a delete that runs short of time queues the rest of itself. The
        event source invokes ``target``: the function, or with SnapStart its alias."""
        source = event_sources.SqsEventSource(
            self.queue, batch_size=1, report_batch_item_failures=True, max_concurrency=DELETIONS_MAX_CONCURRENCY
        )
        target.add_event_source(source)
        self.allow_sending(function)

    def allow_sending(self, function: lambda_.Function) -> None:
        """``function`` may queue jobs (the users function: the sweep of a deleted user's tickets)."""
        self.queue.grant_send_messages(function)
        function.add_environment("DELETIONS_QUEUE_URL", self.queue.queue_url)

    def follow(self, bus: events.IEventBus) -> None:
        """An org's status change (its lifecycle event) starts its sign-ins job here. The stream retries
        until the event is published and EventBridge until it is queued (what still fails waits in a
        dead end, with its alarm), so a status written gets its job: a request that queued the job
        itself, after its write, could fail to and leave no trace. The queue's
        SQS-managed encryption takes EventBridge's sends (a KMS key would need a key policy); CDK adds
        the queue policy that lets this rule, and only it, send here."""
        events.Rule(
            self,
            "StatusChanges",
            event_bus=bus,
            description="Suspensions and reactivations: bring the org's sign-ins in line with its status",
            event_pattern=events.EventPattern(source=[SOURCE], detail_type=list(signins.events())),
            targets=[
                targets.SqsQueue(
                    self.queue,
                    dead_letter_queue=self.dead_letters,
                    retry_attempts=RULE_RETRY_ATTEMPTS,
                    max_event_age=RULE_MAX_EVENT_AGE,
                )
            ],
        )
