"""The call log benchmarks read: requests counted at the wire, per API and outcome and per access key."""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any


class CallLog:
    def __init__(self) -> None:
        self.by_api: dict[str, Counter] = defaultdict(Counter)
        self.by_access_key: dict[str, Counter] = defaultdict(Counter)

    def record(self, api: str, access_key: str, outcome: str) -> None:
        """outcome: ok, throttled (a request quota), fault (the fault switch) or the error code the API answered."""
        self.by_api[api][outcome] += 1
        self.by_access_key[access_key][api] += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "total": sum(sum(c.values()) for c in self.by_api.values()),
            "byApi": {api: dict(c) for api, c in sorted(self.by_api.items())},
            "byAccessKey": {key: dict(c) for key, c in sorted(self.by_access_key.items())},
        }

    def reset(self) -> None:
        self.by_api.clear()
        self.by_access_key.clear()
