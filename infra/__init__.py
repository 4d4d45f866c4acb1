"""The CDK app's constructs: one stack of a table, three functions and a REST API."""
