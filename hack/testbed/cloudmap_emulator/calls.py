"""The call log benchmarks and fault tests read: requests counted at the wire, per API and outcome, and per access
key, account and Region by API; and the recent requests one by one (when, which API, which client, which instance of
which cluster, outcome)."""
from __future__ import annotations

from collections import Counter, defaultdict, deque
from dataclasses import dataclass
from typing import Any

# Enough for a fault run of a few minutes; the oldest go first.
MAX_REQUESTS = 500_000


@dataclass
class Request:
    # Seconds since the epoch when the request arrived and when it was answered.
    start: float
    end: float
    api: str
    access_key: str
    # The client's `app/<id>` from its user agent (the AWS SDK's AWS_SDK_UA_APP_ID), or "".
    app: str
    outcome: str
    service_id: str
    # `<NamespaceName>/<ServiceName>` of the discovery calls (DiscoverInstances, DiscoverInstancesRevision), which name
    # the service instead of its id; "" otherwise.
    service_name: str
    instance_id: str
    # CLUSTER_ID of the instance written: from the request's attributes (RegisterInstance) or of the instance the
    # request names as it was when it arrived (DeregisterInstance); "" when there is none.
    cluster_id: str

    def to_json(self) -> dict[str, Any]:
        return {
            "start": self.start, "end": self.end, "api": self.api, "accessKey": self.access_key, "app": self.app,
            "outcome": self.outcome, "serviceId": self.service_id, "serviceName": self.service_name, "instanceId": self.instance_id, "clusterId": self.cluster_id,
        }


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
        self.requests: deque[Request] = deque(maxlen=MAX_REQUESTS)

    def record(self, request: Request, caller: Caller) -> None:
        """outcome: ok, throttled (a request quota), fault (the fault switch) or the error code the API answered."""
        api, outcome = request.api, request.outcome
        self.by_api[api][outcome] += 1
        self.by_access_key[caller.access_key][api] += 1
        self.by_account[caller.account][api] += 1
        self.by_region[caller.region][api] += 1
        self.requests.append(request)

    def to_json(self) -> dict[str, Any]:
        def table(counts: dict[str, Counter]) -> dict[str, dict[str, int]]:
            return {key: dict(c) for key, c in sorted(counts.items())}

        return {
            "total": sum(sum(c.values()) for c in self.by_api.values()),
            "byApi": table(self.by_api), "byAccessKey": table(self.by_access_key),
            "byAccount": table(self.by_account), "byRegion": table(self.by_region),
        }

    def requests_json(self, since: float, apis: set[str]) -> dict[str, Any]:
        return {"requests": [r.to_json() for r in self.requests if r.start >= since and (not apis or r.api in apis)]}

    def reset(self) -> None:
        for counts in (self.by_api, self.by_access_key, self.by_account, self.by_region):
            counts.clear()
        self.requests.clear()
