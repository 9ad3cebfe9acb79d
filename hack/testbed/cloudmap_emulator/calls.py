"""The call log benchmarks read: requests counted at the wire, per API and outcome, and per access key, account and
Region by API."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Caller:
    access_key: str
    account: str
    region: str


class CallLog:
    def __init__(self) -> None:
        self.by_api: dict[str, Counter] = defaultdict(Counter)
        self.by_access_key: dict[str, Counter] = defaultdict(Counter)
        self.by_account: dict[str, Counter] = defaultdict(Counter)
        self.by_region: dict[str, Counter] = defaultdict(Counter)

    def record(self, api: str, caller: Caller, outcome: str) -> None:
        """outcome: ok, throttled (a request quota), fault (the fault switch) or the error code the API answered."""
        self.by_api[api][outcome] += 1
        self.by_access_key[caller.access_key][api] += 1
        self.by_account[caller.account][api] += 1
        self.by_region[caller.region][api] += 1

    def to_json(self) -> dict[str, Any]:
        def table(counts: dict[str, Counter]) -> dict[str, dict[str, int]]:
            return {key: dict(c) for key, c in sorted(counts.items())}

        return {
            "total": sum(sum(c.values()) for c in self.by_api.values()),
            "byApi": table(self.by_api), "byAccessKey": table(self.by_access_key),
            "byAccount": table(self.by_account), "byRegion": table(self.by_region),
        }

    def reset(self) -> None:
        for counts in (self.by_api, self.by_access_key, self.by_account, self.by_region):
            counts.clear()
