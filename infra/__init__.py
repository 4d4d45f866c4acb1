"""The CDK app's constructs: one stack of a table, the API functions and their Lambda authorizer, the
events and tenant-keys functions, a REST API with usage plans, the bus and the console."""

import os

# jsii, under aws_cdk, runs on Node and prints a banner of "!!" lines when it calls the Node release
# end-of-life or deprecated: on Node 20, which the README supports, at every import of aws_cdk. This
# package is imported before aws_cdk wherever the project starts from it (make install's
# `python -m infra.authorizer`, which fetches the authorizer's wheels); app.py imports aws_cdk first,
# so cdk.json's app command sets the same, as tests/conftest.py does for pytest.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
