"""What `make run` serves besides the API: the OpenAPI document at /openapi.json and Swagger UI at
/docs, with its assets from the installed Powertools (no CDN), and no favicon to miss."""

import json
from pathlib import Path

from aws_lambda_powertools.event_handler.openapi import swagger_ui
from aws_lambda_powertools.event_handler.openapi.swagger_ui.html import generate_swagger_html

from local import openapi

ASSETS = {
    "/docs/swagger-ui-bundle.min.js": "text/javascript",
    "/docs/swagger-ui.min.css": "text/css",
}
JSON = "application/json"
Answer = tuple[int, list[tuple[str, str]], bytes]


def serves(method: str, path: str) -> bool:
    return method == "GET" and (path in ("/openapi.json", "/docs", "/favicon.ico") or path in ASSETS)


def answer(path: str, query: dict[str, list[str]]) -> Answer:
    if path == "/favicon.ico":
        return 204, [], b""  # no icon, and no 404 in the browser's console
    # Swagger UI's link under its title is /docs?format=json, Powertools' own way to the document.
    if path == "/openapi.json" or query.get("format") == ["json"]:
        return 200, [("Content-Type", JSON)], json.dumps(openapi.document()).encode()
    if path == "/docs":
        html = generate_swagger_html(
            spec=json.dumps(openapi.document()),
            swagger_js="/docs/swagger-ui-bundle.min.js",
            swagger_css="/docs/swagger-ui.min.css",
            swagger_base_url="/docs",
            oauth2_config=None,
            persist_authorization=True,  # the pasted token survives a reload
        ).replace("<head>", "<head>\n    <link rel='icon' href='data:,'>", 1)  # no icon to fetch
        return 200, [("Content-Type", "text/html; charset=utf-8")], html.encode()
    asset = Path(swagger_ui.__file__).parent / path.rsplit("/", 1)[-1]
    return 200, [("Content-Type", ASSETS[path]), ("Cache-Control", "max-age=3600")], asset.read_bytes()
