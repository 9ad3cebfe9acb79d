"""What the emulator does, chosen by flags or environment at start and changed at run time via /_emulator/config."""
from __future__ import annotations

import argparse
import threading
from dataclasses import dataclass, field
from typing import Any

# Requests per second and bucket size per API, per account and Region (docs/testbed.md cites each figure).
# DiscoverInstances and DiscoverInstancesRevision: Cloud Map developer guide, "Cloud Map service quotas" and
# "Handle DiscoverInstances API request throttling". AWS publishes no figure for the control-plane APIs: these are the
# limits AWS's own MCS controller (v0.3.x pkg/common/ratelimiter.go) keeps to, and ListInstances' 50/s from an AWS
# account team quoted in kubernetes-sigs/external-dns issue 2505.
DEFAULT_RATES: dict[str, tuple[float, float]] = {
    "DiscoverInstances": (1000, 2000),
    "DiscoverInstancesRevision": (3000, 3000),
    "RegisterInstance": (50, 100),
    "DeregisterInstance": (50, 100),
    "GetOperation": (100, 200),
    "ListInstances": (50, 100),
    "ListServices": (2, 10),
    "ListNamespaces": (0.5, 5),
    "CreateService": (5, 50),
    "CreateHttpNamespace": (0.5, 5),
    "*": (10, 20),
}

# Cloud Map service quotas (developer guide, "Cloud Map service quotas"); servicesPerNamespace is not documented, so
# it is off (0) unless set.
DEFAULT_QUOTAS: dict[str, int] = {
    "instancesPerService": 1000,
    "instancesPerNamespace": 2000,
    "namespacesPerRegion": 50,
    "customAttributesPerInstance": 30,
    "servicesPerNamespace": 0,
}

# realistic: operations take OPERATION_DELAY_MS and requests are throttled; fast: unit-like, everything at once.
MODES: dict[str, dict[str, Any]] = {
    "realistic": {"operation_delay_ms": 1000, "throttling": True},
    "fast": {"operation_delay_ms": 0, "throttling": False},
}


@dataclass
class Faults:
    """The fault switch: shares of requests (0..1) answered with a 5xx error, a throttling error, held until
    timeoutMs, or dropped without an answer (disconnect: what an unreachable Region looks like to a client);
    latencyMs added to every request. `apis`, `regions` and `accounts` limit all of it to requests of those APIs, to
    those Regions, from those accounts (empty: any)."""

    error_rate: float = 0.0
    throttle_rate: float = 0.0
    timeout_rate: float = 0.0
    disconnect_rate: float = 0.0
    latency_ms: float = 0.0
    timeout_ms: float = 30_000.0
    apis: list[str] = field(default_factory=list)
    regions: list[str] = field(default_factory=list)
    accounts: list[str] = field(default_factory=list)

    def applies_to(self, api: str, region: str, account: str) -> bool:
        return all(not only or value in only for only, value in ((self.apis, api), (self.regions, region), (self.accounts, account)))

    def to_json(self) -> dict[str, Any]:
        return {
            "errorRate": self.error_rate, "throttleRate": self.throttle_rate, "timeoutRate": self.timeout_rate,
            "disconnectRate": self.disconnect_rate, "latencyMs": self.latency_ms, "timeoutMs": self.timeout_ms,
            "apis": list(self.apis), "regions": list(self.regions), "accounts": list(self.accounts),
        }

    @staticmethod
    def from_json(body: dict[str, Any]) -> "Faults":
        known = {"errorRate", "throttleRate", "timeoutRate", "disconnectRate", "latencyMs", "timeoutMs", "apis", "regions", "accounts"}
        unknown = set(body) - known
        if unknown:
            raise ValueError(f"unknown fault fields {sorted(unknown)}; known: {sorted(known)}")
        faults = Faults(
            error_rate=float(body.get("errorRate", 0)), throttle_rate=float(body.get("throttleRate", 0)),
            timeout_rate=float(body.get("timeoutRate", 0)), disconnect_rate=float(body.get("disconnectRate", 0)),
            latency_ms=float(body.get("latencyMs", 0)), timeout_ms=float(body.get("timeoutMs", 30_000)),
            apis=_strings(body, "apis"), regions=_strings(body, "regions"), accounts=_strings(body, "accounts"),
        )
        rates = ("error_rate", "throttle_rate", "timeout_rate", "disconnect_rate")
        for name in rates:
            if not 0 <= getattr(faults, name) <= 1:
                raise ValueError(f"{name} must be between 0 and 1")
        if sum(getattr(faults, name) for name in rates) > 1:
            raise ValueError("errorRate + throttleRate + timeoutRate + disconnectRate must not exceed 1")
        return faults


def _strings(body: dict[str, Any], name: str) -> list[str]:
    values = body.get(name, [])
    if not isinstance(values, list):
        raise ValueError(f"{name} must be a list of strings")
    return [str(v) for v in values]


@dataclass
class Settings:
    mode: str = "realistic"
    operation_delay_ms: float = MODES["realistic"]["operation_delay_ms"]
    throttling: bool = MODES["realistic"]["throttling"]
    rates: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_RATES))
    quotas: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_QUOTAS))
    faults: Faults = field(default_factory=Faults)
    seed: int = 42
    # Where the DNS namespaces' zone files are written (dns_zones.py); empty: none are written.
    zone_dir: str = ""

    def rate(self, api: str) -> tuple[float, float]:
        return self.rates.get(api) or self.rates["*"]

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode, "operationDelayMs": self.operation_delay_ms, "throttling": self.throttling,
            "rates": {api: {"rate": r, "burst": b} for api, (r, b) in self.rates.items()},
            "quotas": dict(self.quotas), "faults": self.faults.to_json(),
        }

    def update(self, body: dict[str, Any]) -> None:
        """Applies a partial configuration (the JSON of /_emulator/config); `mode` first, so explicit fields win."""
        known = {"mode", "operationDelayMs", "throttling", "rates", "quotas", "faults"}
        unknown = set(body) - known
        if unknown:
            raise ValueError(f"unknown configuration fields {sorted(unknown)}; known: {sorted(known)}")
        if "mode" in body:
            self.set_mode(str(body["mode"]))
        if "operationDelayMs" in body:
            self.operation_delay_ms = _non_negative("operationDelayMs", body["operationDelayMs"])
        if "throttling" in body:
            self.throttling = bool(body["throttling"])
        for api, spec in (body.get("rates") or {}).items():
            self.rates[api] = (_non_negative(f"rates.{api}.rate", spec["rate"]), _non_negative(f"rates.{api}.burst", spec["burst"]))
        for name, value in (body.get("quotas") or {}).items():
            if name not in DEFAULT_QUOTAS:
                raise ValueError(f"unknown quota {name!r}; known: {sorted(DEFAULT_QUOTAS)}")
            self.quotas[name] = int(_non_negative(f"quotas.{name}", value))
        if "faults" in body:
            self.faults = Faults.from_json(body["faults"])

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; use one of {sorted(MODES)}")
        self.mode = mode
        self.operation_delay_ms = MODES[mode]["operation_delay_ms"]
        self.throttling = MODES[mode]["throttling"]


def _non_negative(name: str, value: Any) -> float:
    number = float(value)
    if number < 0:
        raise ValueError(f"{name} must not be negative")
    return number


def _pairs(text: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"{what}: expected NAME=VALUE, got {item!r}")
        out[name] = value
    return out


def parse(argv: list[str], env: dict[str, str]) -> tuple[str, int, Settings]:
    """Host, port and settings from flags, falling back to CLOUDMAP_EMULATOR_* environment variables."""
    p = argparse.ArgumentParser(prog="cloudmap_emulator", description="moto's Cloud Map with the documented behaviour")
    p.add_argument("-H", "--host", default="127.0.0.1")
    p.add_argument("-p", "--port", type=int, required=True)
    p.add_argument("--mode", default=env.get("CLOUDMAP_EMULATOR_MODE", "realistic"), choices=sorted(MODES))
    p.add_argument("--operation-delay-ms", type=float, default=env.get("CLOUDMAP_EMULATOR_OPERATION_DELAY_MS"))
    p.add_argument("--throttling", choices=["on", "off"], default=env.get("CLOUDMAP_EMULATOR_THROTTLING"))
    p.add_argument("--rates", default=env.get("CLOUDMAP_EMULATOR_RATES", ""), help="Api=rate/burst,... (* = other APIs)")
    p.add_argument("--quotas", default=env.get("CLOUDMAP_EMULATOR_QUOTAS", ""), help="name=value,...")
    p.add_argument("--seed", type=int, default=int(env.get("CLOUDMAP_EMULATOR_SEED", "42")))
    p.add_argument("--zone-dir", default=env.get("CLOUDMAP_EMULATOR_ZONE_DIR", ""),
                   help="write each DNS namespace's records as the zone file db.<namespace name> here")
    args = p.parse_args(argv)
    s = Settings(seed=args.seed, zone_dir=args.zone_dir)
    s.set_mode(args.mode)
    body: dict[str, Any] = {}
    if args.operation_delay_ms is not None:
        body["operationDelayMs"] = args.operation_delay_ms
    if args.throttling is not None:
        body["throttling"] = args.throttling == "on"
    rates = {}
    for api, spec in _pairs(args.rates, "--rates").items():
        rate, _, burst = spec.partition("/")
        rates[api] = {"rate": rate, "burst": burst or rate}
    body["rates"] = rates
    body["quotas"] = _pairs(args.quotas, "--quotas")
    s.update(body)
    return args.host, args.port, s


# The running emulator's settings; every request thread reads them under LOCK.
CURRENT = Settings()
LOCK = threading.RLock()


def install(settings: Settings) -> None:
    global CURRENT
    CURRENT = settings


def current() -> Settings:
    return CURRENT
