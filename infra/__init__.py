"""The CDK app's constructs: one stack of a table, the API functions and their Lambda authorizer, the
events and tenant-keys functions, a REST API with usage plans, the bus and the console."""
