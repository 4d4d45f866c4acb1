"""Run the API on a laptop: API Gateway's proxy events, built from plain HTTP requests."""
