"""Private DNS namespaces' records, as Route 53 keeps them for Cloud Map (docs/testbed.md, "DNS namespaces"): one zone
per DNS namespace, holding for every service with a DnsConfig the A, AAAA or SRV records of its instances. GET
/_emulator/dns shows them, and with --zone-dir the emulator writes each zone as an RFC 1035 zone file `db.<zone>` that
the testbed's CoreDNS serves (hack/testbed/namespace-dns.ts), so a client outside every cluster resolves
`<service>.<namespace>` as a resolver in the VPC would."""
from __future__ import annotations

import ipaddress
import os
import re
import threading
import time
from dataclasses import dataclass
from typing import Any

from moto.servicediscovery.models import servicediscovery_backends

from . import operations, settings

LABEL = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$")
# Cloud Map's record combinations (API reference, DnsRecord: Type).
RECORD_SETS = [{"A"}, {"AAAA"}, {"A", "AAAA"}, {"SRV"}, {"CNAME"}]
# What Route 53 puts in a new hosted zone's SOA, apart from the serial (Route 53 developer guide, "NS and SOA records
# that Amazon Route 53 creates for a public hosted zone"): refresh, retry, expire, minimum.
SOA_TIMERS = "7200 900 1209600 86400"
SOA_TTL = 900


def name_problem(name: str) -> str | None:
    """What makes `name` unfit for a DNS namespace, or None: dot-separated labels, 253 characters at most."""
    if len(name) > 253:
        return "is longer than 253 characters"
    bad = next((label for label in name.split(".") if not LABEL.match(label)), None)
    return None if bad is None else f"has the label {bad!r}, which is not a DNS label"


def service_problem(namespace, name: str, dns_config: dict[str, Any] | None) -> str | None:
    """Why CreateService refuses this service in `namespace`, or None."""
    if not dns_config:
        return None
    if namespace.type == "HTTP":
        # The wording Cloud Map answers with (hashicorp/terraform-provider-aws issue 7016).
        return "When you specify an HTTP service, you can't include a DnsConfig element."
    if not LABEL.match(name):
        return f"Service name {name!r} is not a DNS label, which a service with DNS records in namespace {namespace.name} needs"
    types = {r.get("Type") for r in dns_config.get("DnsRecords") or []}
    if types not in RECORD_SETS:
        return f"DnsRecords types {sorted(types)} are not one of A, AAAA, A and AAAA, SRV, CNAME"
    policy = dns_config.get("RoutingPolicy", "MULTIVALUE")
    if types == {"CNAME"} and policy != "WEIGHTED":
        return "A CNAME record needs the WEIGHTED routing policy"
    return None


@dataclass(frozen=True, order=True)
class Record:
    name: str
    type: str
    ttl: int
    value: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "ttl": self.ttl, "value": self.value}


def _answers(service, instance) -> bool:
    """Route 53 leaves out an unhealthy instance's records when the service has a health check (RegisterInstance:
    "If the health check is unhealthy ..."); without one, every instance's records are answered."""
    checked = service.health_check_config or service.health_check_custom_config
    return not checked or instance.health_status != "UNHEALTHY"


def _address(family, value: str | None) -> str | None:
    try:
        return str(family(value)) if value else None
    except ValueError:
        return None


def service_records(namespace, service) -> list[Record]:
    config = service.dns_config or {}
    fqdn = f"{service.name}.{namespace.name}."
    out: list[Record] = []
    for spec in config.get("DnsRecords") or []:
        kind, ttl = spec.get("Type"), int(spec.get("TTL", 0))
        for instance in service.instances:
            if not _answers(service, instance):
                continue
            attrs = instance.attributes or {}
            ipv4 = _address(ipaddress.IPv4Address, attrs.get("AWS_INSTANCE_IPV4"))
            ipv6 = _address(ipaddress.IPv6Address, attrs.get("AWS_INSTANCE_IPV6"))
            if kind == "A" and ipv4:
                out.append(Record(fqdn, "A", ttl, ipv4))
            elif kind == "AAAA" and ipv6:
                out.append(Record(fqdn, "AAAA", ttl, ipv6))
            elif kind == "CNAME" and attrs.get("AWS_INSTANCE_CNAME"):
                out.append(Record(fqdn, "CNAME", ttl, attrs["AWS_INSTANCE_CNAME"].rstrip(".") + "."))
            elif kind == "SRV" and attrs.get("AWS_INSTANCE_PORT") and LABEL.match(instance.instance_id):
                # priority 1, weight 1, the instance's port, and <instance id>.<service>.<namespace>, which gets the
                # instance's addresses (API reference, DnsRecord: SRV).
                host = f"{instance.instance_id}.{fqdn}"
                out.append(Record(fqdn, "SRV", ttl, f"1 1 {attrs['AWS_INSTANCE_PORT']} {host}"))
                out += [Record(host, "A", ttl, ipv4)] if ipv4 else []
                out += [Record(host, "AAAA", ttl, ipv6)] if ipv6 else []
    return sorted(set(out))


def _backends():
    for account in list(servicediscovery_backends):
        for region, backend in list(servicediscovery_backends[account].items()):
            yield account, region, backend


def zones() -> dict[str, list[Record]]:
    """Every DNS namespace's records, by zone name (the namespace's name); settles due operations first."""
    out: dict[str, list[Record]] = {}
    for _, _, backend in _backends():
        operations.settle(backend)
        for namespace in list(backend.namespaces.values()):
            if namespace.type not in ("DNS_PRIVATE", "DNS_PUBLIC"):
                continue
            records = out.setdefault(namespace.name, [])
            for service in backend.services.values():
                if service.namespace_id == namespace.id and service.dns_config:
                    records += service_records(namespace, service)
    return out


def zone_text(zone: str, records: list[Record], serial: int) -> str:
    origin = f"{zone}."
    lines = [
        f"$ORIGIN {origin}",
        f"@ {SOA_TTL} IN SOA ns-1536.awsdns-00.co.uk. awsdns-hostmaster.amazon.com. {serial} {SOA_TIMERS}",
        "@ 172800 IN NS ns-1536.awsdns-00.co.uk.",
    ]
    lines += [f"{r.name} {r.ttl} IN {r.type} {r.value}" for r in records]
    return "\n".join(lines) + "\n"


class ZoneWriter:
    """Writes `db.<zone>` per DNS namespace into `directory` whenever its records change, with a higher SOA serial
    (CoreDNS reloads a zone when its serial grows), and removes the file of a namespace that is gone."""

    def __init__(self, directory: str, interval_s: float = 0.2) -> None:
        self.directory = directory
        self.interval_s = interval_s
        self.serial = int(time.time())
        self.written: dict[str, list[Record]] = {}
        os.makedirs(directory, exist_ok=True)

    def write_changes(self) -> None:
        with settings.LOCK:
            current = zones()
        for zone, records in current.items():
            if self.written.get(zone) == records:
                continue
            self.serial += 1
            path = os.path.join(self.directory, f"db.{zone}")
            with open(f"{path}.tmp", "w", encoding="utf-8") as out:
                out.write(zone_text(zone, records, self.serial))
            os.replace(f"{path}.tmp", path)
            self.written[zone] = records
        for zone in set(self.written) - set(current):
            os.remove(os.path.join(self.directory, f"db.{zone}"))
            del self.written[zone]

    def start(self) -> None:
        def loop() -> None:
            while True:
                self.write_changes()
                time.sleep(self.interval_s)

        threading.Thread(target=loop, name="zone-writer", daemon=True).start()


def zones_json() -> dict[str, Any]:
    with settings.LOCK:
        return {"zones": {zone: [r.to_json() for r in records] for zone, records in zones().items()}}
