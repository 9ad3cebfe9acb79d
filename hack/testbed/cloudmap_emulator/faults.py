"""The fault switch's draw for one request: added latency, and at most one of a 5xx error, a throttling error or a
timeout, chosen with a seeded generator so that runs repeat."""
from __future__ import annotations

import random
from dataclasses import dataclass

from .settings import Faults


@dataclass
class Draw:
    latency_s: float
    # None, "error", "throttle" or "timeout"
    kind: str | None
    timeout_s: float
    status: int


class FaultSwitch:
    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def draw(self, faults: Faults, api: str) -> Draw:
        if faults.apis and api not in faults.apis:
            return Draw(0.0, None, 0.0, 0)
        roll = self.random.random()
        kind = None
        if roll < faults.error_rate:
            kind = "error"
        elif roll < faults.error_rate + faults.throttle_rate:
            kind = "throttle"
        elif roll < faults.error_rate + faults.throttle_rate + faults.timeout_rate:
            kind = "timeout"
        status = self.random.choice((500, 503)) if kind == "error" else 0
        return Draw(faults.latency_ms / 1000, kind, faults.timeout_ms / 1000, status)
