"""A typed Python client for the control-plane API (``cpctl.client``) and the ``cpctl`` command line."""

import sys
from pathlib import Path

# The API's models live with the functions (functions/controlplane). An editable install maps them
# as the package ``controlplane``; from a plain checkout (pytest, python -m cpctl) this finds them.
_FUNCTIONS = Path(__file__).resolve().parent.parent / "functions"
if _FUNCTIONS.is_dir() and str(_FUNCTIONS) not in sys.path:
    sys.path.append(str(_FUNCTIONS))
