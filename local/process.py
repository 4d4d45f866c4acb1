"""``make run``'s server as a child process on free ports: for the tests and the e2e suite."""

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from local import ROOT
from local.dynamodb_local import free_port

READY_TIMEOUT = 90.0


class ServerProcess:
    """``python -m local.server`` on a free port, its DynamoDB Local on another, with its data in
    ``data`` and its output in ``log``. Raises RuntimeError, with the output, if it does not come up."""

    def __init__(self, log: Path, data: Path, **env: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.env = {**os.environ, "PORT": str(self.port), "PYTHONUNBUFFERED": "1"}
        self.env |= {"DYNAMODB_PORT": str(free_port()), "DYNAMODB_DATA_DIR": str(data)}
        # Its own record of where it serves (local.running), never the developer's make run's.
        self.env["LOCAL_API_FILE"] = str(data / "api.json")
        self.env["LOCAL_EVENTS_FILE"] = str(data / "events.jsonl")  # and its own events, not make events-log's
        # The server's own defaults, not those of a test session that started it.
        self.env.pop("AWS_ENDPOINT_URL_DYNAMODB", None)
        self.env.pop("TABLE_NAME", None)
        self.env |= env
        with self.log.open("w") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "local.server"], cwd=ROOT, env=self.env, stdout=output, stderr=output
            )
        deadline = time.monotonic() + READY_TIMEOUT
        while self.process.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/openapi.json", timeout=10):
                    return
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the local server did not come up:\n{self.output()}")

    @property
    def dynamodb_endpoint(self) -> str:
        """Its DynamoDB Local, where its table (control-plane-local) is."""
        return f"http://127.0.0.1:{self.env['DYNAMODB_PORT']}"

    def output(self) -> str:
        return self.log.read_text()

    def stop(self) -> int:
        """Ctrl-C, as a terminal sends it; the server stops its DynamoDB Local."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
