"""A pace for calls whose AWS quota is per account and small (Cognito's UserUpdate category, API
Gateway's CreateApiKey and DeleteApiKey): spend part of it, so other callers keep the rest."""

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Throttle:
    """Spaces calls at most ``rate`` a second apart (the clock and the sleep are the tests' to replace)."""

    rate: float
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    _next: float = field(default=-math.inf)

    def wait(self) -> None:
        now = self.clock()
        if now < self._next:
            self.sleep(self._next - now)
            now = self._next
        self._next = now + 1 / self.rate
