"""Shared code of the control-plane functions: schema, keys, models, data layer, HTTP glue."""
