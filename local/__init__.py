"""Run the API on a laptop: API Gateway's proxy events, built from plain HTTP requests."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The functions' asset root, as in Lambda: ``import controlplane`` works from every local module.
if str(ROOT / "functions") not in sys.path:
    sys.path.insert(0, str(ROOT / "functions"))
