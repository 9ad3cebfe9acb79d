"""The fault switch's draw for one request: added latency, and at most one of a 5xx error, a throttling error, a
timeout or a dropped connection, chosen with a seeded generator so that runs repeat."""
from __future__ import annotations

import random
from dataclasses import dataclass

from .settings import Faults

# In the order the shares are stacked on the draw's [0, 1) roll.
KINDS = (("error", "error_rate"), ("throttle", "throttle_rate"), ("timeout", "timeout_rate"), ("disconnect", "disconnect_rate"))


@dataclass
class Draw:
    latency_s: float
    # None, "error", "throttle", "timeout" or "disconnect"
    kind: str | None
    timeout_s: float
    status: int


class FaultSwitch:
    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def draw(self, faults: Faults, api: str, region: str, account: str) -> Draw:
        if not faults.applies_to(api, region, account):
            return Draw(0.0, None, 0.0, 0)
        roll = self.random.random()
        kind, edge = None, 0.0
        for name, rate in KINDS:
            edge += getattr(faults, rate)
            if roll < edge:
                kind = name
                break
        status = self.random.choice((500, 503)) if kind == "error" else 0
        return Draw(faults.latency_ms / 1000, kind, faults.timeout_ms / 1000, status)
