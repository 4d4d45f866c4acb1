"""The one logger, tracer and metrics of the functions; every other module imports these."""

from aws_lambda_powertools import Logger, Metrics, Tracer

logger = Logger()
tracer = Tracer(patch_modules=("botocore",))  # the only library we call out with; less to patch at cold start
metrics = Metrics()
