"""Run the API on a laptop: API Gateway's proxy events, built from plain HTTP requests."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
