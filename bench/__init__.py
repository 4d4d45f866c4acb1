"""Benchmarks of the functions against DynamoDB Local: ``make bench`` (``python -m bench --help``)."""
