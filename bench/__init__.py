"""Benchmarks of the functions against DynamoDB Local: ``make bench`` (``python -m bench --help``).

``local`` puts functions/ on sys.path, as Lambda does, before any module here imports ``controlplane``.
"""

import local  # noqa: F401
