"""Public on-demand prices the cost model (bench.cost) uses: one region, read on one date, in US dollars.

Sources, as read on READ_ON: the AWS Lambda, Amazon API Gateway, Amazon DynamoDB and Amazon CloudWatch
pricing pages. Each price is the first tier, without the free tier, Savings Plans or reserved
capacity: what the next call costs an account that has used its free tier. Change a price here and
nowhere else.
"""

REGION = "us-east-1"
READ_ON = "2026-11-24"

# AWS Lambda, arm64 (infra.constants.ARCHITECTURE): duration per GB-second (first 7.5 billion
# GB-seconds a month) and requests.
LAMBDA_GB_SECOND = 0.0000133334
LAMBDA_PER_MILLION_REQUESTS = 0.20
# Amazon API Gateway, REST APIs: per million calls received, first 333 million a month.
API_GATEWAY_REST_PER_MILLION = 3.50
# Amazon DynamoDB on-demand (since the price cut of November 2024): per million request units. A
# write request unit is a 1 KB write (a transactional one takes two), a read request unit a strongly
# consistent read of up to 4 KB (eventually consistent: half).
DYNAMODB_PER_MILLION_WRITE_UNITS = 0.625
DYNAMODB_PER_MILLION_READ_UNITS = 0.125
# Amazon CloudWatch Logs, standard log class: ingestion per GB.
CLOUDWATCH_LOGS_PER_GB = 0.50
