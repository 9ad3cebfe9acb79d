"""Request quotas: one token bucket per account, Region and API, refilled continuously at the API's rate up to its
burst ("Handle DiscoverInstances API request throttling" in the Cloud Map developer guide describes the algorithm)."""
from __future__ import annotations

import time


class TokenBucket:
    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.at = now

    def take(self, now: float) -> bool:
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class RequestQuotas:
    def __init__(self) -> None:
        self.buckets: dict[tuple[str, str, str], TokenBucket] = {}

    def allow(self, account: str, region: str, api: str, rate: float, burst: float) -> bool:
        now = time.monotonic()
        key = (account, region, api)
        bucket = self.buckets.get(key)
        if bucket is None or (bucket.rate, bucket.burst) != (rate, burst):
            bucket = self.buckets[key] = TokenBucket(rate, burst, now)
        return bucket.take(now)

    def reset(self) -> None:
        self.buckets.clear()
