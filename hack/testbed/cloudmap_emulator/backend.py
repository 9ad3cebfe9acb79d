"""Patches moto's servicediscovery backend and responses in place so that they behave as the Cloud Map API reference
documents (docs/testbed.md lists each behaviour with its source). moto keeps the state; this module decides when a
write becomes visible and which requests are refused."""
from __future__ import annotations

import ipaddress
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from moto.servicediscovery.exceptions import CustomHealthNotFound, InstanceNotFound, NamespaceNotFound, ServiceNotFound
from moto.servicediscovery.models import Namespace, ServiceDiscoveryBackend, ServiceInstance, servicediscovery_backends
from moto.servicediscovery.responses import ServiceDiscoveryResponse

from . import dns_zones, listing, operations, routing, settings, visibility
from .accounts import parse_arn
from .errors import (
    duplicate_request, invalid_input, namespace_already_exists, resource_in_use, resource_limit_exceeded,
    service_already_exists,
)
from .shares import SHARES


@dataclass
class EmulatorState:
    """What moto does not keep: unfinished operations, CreatorRequestIds seen, the revision counter."""

    pending: dict[str, operations.Pending] = field(default_factory=dict)
    # (scope, CreatorRequestId) → (what the request asked for, its result)
    requests: dict[tuple[str, str], tuple[Any, str]] = field(default_factory=dict)
    revision: int = 0


def _replay(backend, scope: str, token: str | None, request: Any) -> str | None:
    """The earlier result when `token` was used for this very request (a retry); DuplicateRequest when it was used for
    a different one; None when it is new."""
    if not token:
        return None
    seen = backend.emulator.requests.get((scope, token))
    if seen is None:
        return None
    if seen[0] != request:
        raise duplicate_request(seen[1], f"CreatorRequestId {token} was used for a different request")
    return seen[1]


def _remember(backend, scope: str, token: str | None, request: Any, result: str) -> None:
    if token:
        backend.emulator.requests[(scope, token)] = (request, result)


def _bump_revision(backend, service) -> None:
    """DiscoverInstancesRevision changes exactly when the service's instances change; one counter per account and
    Region, so a service deleted and created again never repeats a revision."""
    backend.emulator.revision += 1
    service.emulator_revision = backend.emulator.revision


def _quota(name: str) -> int:
    return settings.current().quotas[name]


# ---------- namespaces ----------

def create_http_namespace(self, name: str, creator_request_id: str, description: str, tags: list[dict[str, str]]) -> str:
    return _create_namespace(self, "HTTP", name, creator_request_id, description, tags)


def create_private_dns_namespace(self, name: str, creator_request_id: str, description: str, vpc: str,
                                 tags: list[dict[str, str]], properties: dict[str, Any] | None) -> str:
    """As Cloud Map's CreatePrivateDnsNamespace: asynchronous like CreateHttpNamespace, the name a DNS name (its
    records are `<service>.<name>`), a VPC required; moto's own version creates at once and refuses a second namespace
    in the same VPC, which Cloud Map allows (docs/testbed.md)."""
    problem = dns_zones.name_problem(name or "")
    if problem is not None:
        raise invalid_input(f"Namespace name {name!r} {problem}")
    if not vpc:
        raise invalid_input("Vpc is required for a private DNS namespace")
    return _create_namespace(self, "DNS_PRIVATE", name, creator_request_id, description, tags, vpc=vpc,
                             properties=properties)


def _create_namespace(self, kind: str, name: str, creator_request_id: str, description: str,
                      tags: list[dict[str, str]], vpc: str | None = None, properties: dict[str, Any] | None = None) -> str:
    request = (kind, name, vpc)
    replay = _replay(self, "namespace", creator_request_id, request)
    if replay is not None:
        return replay
    for ns in self.namespaces.values():
        if ns.name == name:
            raise namespace_already_exists(name, ns.id, ns.creator_request_id)
    creating = operations.in_progress(self, ("namespace-name", name))
    if creating is not None:
        raise duplicate_request(creating, f"namespace {name} is being created")
    limit = _quota("namespacesPerRegion")
    if limit and len(self.namespaces) + len(operations.pending_of(self, "namespace-name")) >= limit:
        raise resource_limit_exceeded("Namespaces per Region", limit)
    dns_properties = {"SOA": {}} if kind == "HTTP" else {
        **((properties or {}).get("DnsProperties") or {}), "HostedZoneId": f"Z{random_hosted_zone_suffix()}"}
    namespace = Namespace(
        account_id=self.account_id, region=self.region_name, name=name, ns_type=kind,
        creator_request_id=creator_request_id, description=description, dns_properties=dns_properties,
        http_properties={"HttpName": name}, vpc=vpc,
    )

    def apply() -> None:
        self.namespaces[namespace.id] = namespace
        if tags:
            self.tagger.tag_resource(namespace.arn, tags)

    op_id = operations.submit(self, "CREATE_NAMESPACE", {"NAMESPACE": namespace.id}, apply, ("namespace-name", name), namespace.id)
    _remember(self, "namespace", creator_request_id, request, op_id)
    return op_id


def random_hosted_zone_suffix() -> str:
    return uuid.uuid4().hex[:20].upper()


def delete_namespace(self, namespace_id: str) -> str:
    if namespace_id not in self.namespaces:
        raise NamespaceNotFound(namespace_id)
    busy = operations.in_progress(self, ("namespace", namespace_id))
    if busy is not None:
        raise duplicate_request(busy, f"namespace {namespace_id} is being deleted")
    if _services_of(self, namespace_id):
        raise resource_in_use(f"namespace {namespace_id} still holds services")

    def apply() -> None:
        if _services_of(self, namespace_id):
            raise resource_in_use(f"namespace {namespace_id} still holds services")
        self.namespaces.pop(namespace_id, None)
        SHARES.forget((self.account_id, self.region_name, namespace_id))

    return operations.submit(self, "DELETE_NAMESPACE", {"NAMESPACE": namespace_id}, apply, ("namespace", namespace_id), namespace_id)


def _services_of(backend, namespace_id: str) -> list:
    return [s for s in backend.services.values() if s.namespace_id == namespace_id]


# ---------- services (synchronous in Cloud Map too) ----------

_original_create_service = ServiceDiscoveryBackend.create_service


def create_service(self, name: str, namespace_id: str, creator_request_id: str, **rest: Any):
    request = ("service", namespace_id, name)
    # Consumers of a shared namespace create services in its owner's state: tokens are the caller's own.
    scope = f"service/{_caller(self)}"
    replay = _replay(self, scope, creator_request_id, request)
    if replay is not None and replay in self.services:
        return self.services[replay]
    if namespace_id not in self.namespaces:
        raise NamespaceNotFound(namespace_id)
    problem = dns_zones.service_problem(self.namespaces[namespace_id], name, rest.get("dns_config"))
    if problem is not None:
        raise invalid_input(problem)
    for service in _services_of(self, namespace_id):
        if service.name == name:
            raise service_already_exists(name, service.id, service.arn, service.creator_request_id)
    limit = _quota("servicesPerNamespace")
    if limit and len(_services_of(self, namespace_id)) >= limit:
        raise resource_limit_exceeded("Services per namespace", limit)
    service = _original_create_service(self, name=name, namespace_id=namespace_id, creator_request_id=creator_request_id, **rest)
    service.emulator_revision = 0
    service.created_by_account = _caller(self)
    _remember(self, scope, creator_request_id, request, service.id)
    return service


def _caller(backend) -> str:
    """The account the current request comes from; the backend is its namespace owner's."""
    return routing.caller() or backend.account_id


def delete_service(self, service_id: str) -> None:
    service = self.get_service(service_id)
    if service.instances:
        raise resource_in_use(f"service {service_id} still holds {len(service.instances)} instances")
    del self.services[service_id]


# ---------- instances ----------

# The API reference (RegisterInstance, Attributes: https://docs.aws.amazon.com/cloud-map/latest/api/API_RegisterInstance.html)
# defines AWS_INSTANCE_IPV4 as the IPv4 address of an A record and AWS_INSTANCE_IPV6 as the IPv6 address of an AAAA
# record, and lets a service have an A record, an AAAA record or both: one instance may carry both addresses.
ADDRESS_ATTRIBUTES = {"AWS_INSTANCE_IPV4": ipaddress.IPv4Address, "AWS_INSTANCE_IPV6": ipaddress.IPv6Address}


def _check_addresses(instance_id: str, attributes: dict[str, str]) -> None:
    """Refuses, as InvalidInput, an address attribute whose value is not an address of its family."""
    for key, family in ADDRESS_ATTRIBUTES.items():
        if key not in attributes:
            continue
        try:
            family(attributes[key])
        except ValueError:
            raise invalid_input(f"Instance {instance_id}: {key} \"{attributes[key]}\" is not an {family.__name__[:4]} address") from None


def register_instance(self, service_id: str, instance_id: str, creator_request_id: str, attributes: dict[str, str]) -> str:
    service = self.get_service(service_id)
    attributes = dict(attributes or {})
    request = ("register", instance_id, tuple(sorted(attributes.items())))
    registrant = _caller(self)
    scope = f"instances/{service_id}/{registrant}"
    replay = _replay(self, scope, creator_request_id, request)
    if replay is not None:
        return replay
    resource = ("instance", service_id, instance_id)
    busy = operations.in_progress(self, resource)
    if busy is not None:
        # "One RegisterInstance request must complete before you can submit another request and specify the same
        # service ID and instance ID" (API reference, RegisterInstance).
        raise duplicate_request(busy, f"instance {instance_id} of service {service_id} has an operation in progress")
    _check_addresses(instance_id, attributes)
    custom = [k for k in attributes if not k.startswith("AWS_")]
    limit = _quota("customAttributesPerInstance")
    if limit and len(custom) > limit:
        raise invalid_input(f"Instance {instance_id} has {len(custom)} custom attributes; at most {limit} are allowed")
    if _find(service, instance_id) is None:
        _check_instance_quotas(self, service)

    def apply() -> None:
        current = self.get_service(service_id)
        existing = _find(current, instance_id)
        changed = existing is None or existing.attributes != attributes
        if existing is None:
            existing = ServiceInstance(service_id, instance_id, creator_request_id, attributes)
            existing.health_status = _initial_health(current, attributes)
            current.instances.append(existing)
        elif changed:
            existing.attributes = attributes
            existing.creator_request_id = creator_request_id or existing.creator_request_id
        # CreatedByAccount: the account whose registration created or last replaced the instance.
        existing.created_by_account = registrant
        if changed:
            _bump_revision(self, current)

    op_id = operations.submit(self, "REGISTER_INSTANCE", {"INSTANCE": instance_id, "SERVICE": service_id}, apply, resource, service.namespace_id)
    _remember(self, scope, creator_request_id, request, op_id)
    return op_id


def _initial_health(service, attributes: dict[str, str]) -> str:
    """With a custom health check, AWS_INIT_HEALTH_STATUS (HEALTHY or UNHEALTHY, default HEALTHY) is the first status
    of a new instance (API reference, RegisterInstance "Attributes"); a re-registration keeps the current status."""
    if service.health_check_custom_config is None:
        return "HEALTHY"
    return "UNHEALTHY" if attributes.get("AWS_INIT_HEALTH_STATUS") == "UNHEALTHY" else "HEALTHY"


def update_instance_custom_health_status(self, service_id: str, instance_id: str, status: str) -> None:
    """Only for a service with HealthCheckCustomConfig: any other is refused with CustomHealthNotFound (API reference,
    UpdateInstanceCustomHealthStatus). Health changes do not move InstancesRevision (DiscoverInstances response)."""
    service = self.get_service(service_id)
    if service.health_check_custom_config is None:
        raise CustomHealthNotFound(service_id)
    _original_update_health(self, service_id, instance_id, status)


def _find(service, instance_id: str):
    return next((i for i in service.instances if i.instance_id == instance_id), None)


def find_instance(backend, service_id: str, instance_id: str):
    """The instance as it is now, or None (unknown service or instance); for the request log. A consumer account names
    the service by its ARN (shared namespaces), so the log can say whose instance it deregistered."""
    arn = parse_arn(service_id)
    service = backend.services.get(arn.id if arn is not None and arn.kind == "service" else service_id)
    return _find(service, instance_id) if service is not None else None


def _check_instance_quotas(backend, service) -> None:
    """Counts the instances there are plus those being registered, so concurrent registrations cannot overshoot."""
    coming = [p.resource[1] for p in operations.pending_of(backend, "instance")
              if p.operation.operation_type == "REGISTER_INSTANCE" and p.resource[1] in backend.services
              and _find(backend.services[p.resource[1]], p.resource[2]) is None]
    per_service = _quota("instancesPerService")
    if per_service and len(service.instances) + coming.count(service.id) >= per_service:
        raise resource_limit_exceeded("Instances per service", per_service)
    per_namespace = _quota("instancesPerNamespace")
    siblings = _services_of(backend, service.namespace_id)
    in_namespace = sum(len(s.instances) for s in siblings) + sum(coming.count(s.id) for s in siblings)
    if per_namespace and in_namespace >= per_namespace:
        raise resource_limit_exceeded("Instances per namespace", per_namespace)


def deregister_instance(self, service_id: str, instance_id: str) -> str:
    service = self.get_service(service_id)
    resource = ("instance", service_id, instance_id)
    busy = operations.in_progress(self, resource)
    if busy is not None:
        raise duplicate_request(busy, f"instance {instance_id} of service {service_id} has an operation in progress")
    if _find(service, instance_id) is None:
        raise InstanceNotFound(instance_id)

    def apply() -> None:
        current = self.get_service(service_id)
        instance = _find(current, instance_id)
        if instance is None:
            raise InstanceNotFound(instance_id)
        current.instances.remove(instance)
        _bump_revision(self, current)

    return operations.submit(self, "DEREGISTER_INSTANCE", {"INSTANCE": instance_id, "SERVICE": service_id}, apply, resource, service.namespace_id)


def _service_by_names(backend, namespace_name: str, service_name: str):
    """The service by its names, through an index of ids: the discovery calls are the hot path (every reader, every
    second), and a worker's first read asks for every service once, so a scan per call made that read cost
    O(services²). Names are unique, so a hit whose service still exists under these names is the answer; a miss
    rebuilds the whole index in one pass."""
    index = backend.__dict__.setdefault("emulator_service_ids", {})
    key = (namespace_name, service_name)

    def indexed():
        hit = backend.services.get(index.get(key, ""))
        namespace = backend.namespaces.get(hit.namespace_id) if hit is not None else None
        return hit if namespace is not None and hit.name == service_name and namespace.name == namespace_name else None

    found = indexed()
    if found is not None:
        return found
    index.clear()
    for service in backend.services.values():
        namespace = backend.namespaces.get(service.namespace_id)
        if namespace is not None:
            index[(namespace.name, service.name)] = service.id
    found = indexed()
    if found is not None:
        return found
    if not any(ns.name == namespace_name for ns in backend.namespaces.values()):
        raise NamespaceNotFound(namespace_name)
    raise ServiceNotFound(service_name)


def discover_instances_revision(self, namespace_name: str, service_name: str) -> int:
    return getattr(_service_by_names(self, namespace_name, service_name), "emulator_revision", 0)


# ---------- responses: filters, paging, revisions, operation errors ----------

def _params(self) -> dict:
    return json.loads(self.body or "{}")


_ANY = {"EQ", "IN"}
NAMESPACE_FILTERS = {
    "TYPE": (lambda ns: ns.type, _ANY),
    "NAME": (lambda ns: ns.name, {"EQ", "BEGINS_WITH"}),
    "HTTP_NAME": (lambda ns: (ns.http_properties or {}).get("HttpName", ""), {"EQ", "BEGINS_WITH"}),
    "RESOURCE_OWNER": (visibility.resource_owner, {"EQ"}),
}
SERVICE_FILTERS = {
    "NAMESPACE_ID": (visibility.namespace_references, _ANY),
    "RESOURCE_OWNER": (visibility.resource_owner, {"EQ"}),
}


def _operation_field(target: str):
    return lambda op: op.targets.get(target, "")


OPERATION_FILTERS = {
    "NAMESPACE_ID": (_operation_field("NAMESPACE"), _ANY),
    "SERVICE_ID": (_operation_field("SERVICE"), _ANY),
    "STATUS": (lambda op: op.status, _ANY),
    "TYPE": (lambda op: op.operation_type, _ANY),
    "UPDATE_DATE": (lambda op: op.updated, {"BETWEEN"}),
}


def list_namespaces(self) -> str:
    params = _params(self)
    items = listing.filtered(visibility.namespaces(self.current_account, self.region), params.get("Filters"), NAMESPACE_FILTERS)
    return _page_json(items, params, "Namespaces", lambda ns: ns.to_json())


def list_services(self) -> str:
    params = _params(self)
    items = listing.filtered(visibility.services(self.current_account, self.region), params.get("Filters"), SERVICE_FILTERS)
    return _page_json(items, params, "Services", lambda s: s.to_json())


def list_operations(self) -> str:
    params = _params(self)
    items = listing.filtered(self.servicediscovery_backend.operations.values(), params.get("Filters"), OPERATION_FILTERS)
    return _page_json(items, params, "Operations", operations.operation_json)


def list_instances(self) -> str:
    params = _params(self)
    backend = self.servicediscovery_backend
    items = list(backend.get_service(params.get("ServiceId")).instances)
    return _page_json(items, params, "Instances", lambda i: i.to_json(), ResourceOwner=backend.account_id)


def get_instance(self) -> str:
    params = _params(self)
    backend = self.servicediscovery_backend
    instance = backend.get_instance(service_id=params.get("ServiceId"), instance_id=params.get("InstanceId"))
    return json.dumps({"ResourceOwner": backend.account_id, "Instance": instance.to_json()})


def _page_json(items: list, params: dict, key: str, to_json, **extra: str) -> str:
    chunk, token = listing.page(list(items), params)
    out: dict[str, Any] = {key: [to_json(item) for item in chunk], **extra}
    if token:
        out["NextToken"] = token
    return json.dumps(out)


def get_operation(self) -> str:
    backend = self.servicediscovery_backend
    operation = backend.get_operation(operation_id=_params(self).get("OperationId"))
    return json.dumps({"Operation": operations.operation_json(operation, owner=backend.account_id)})


DISCOVER_DEFAULT, DISCOVER_MAX = 100, 1000


def discover_instances(self) -> str:
    """At most MaxResults (default 100, at most 1000) instances, with the service's InstancesRevision."""
    params = _params(self)
    size = params.get("MaxResults") or DISCOVER_DEFAULT
    if not 1 <= int(size) <= DISCOVER_MAX:
        raise invalid_input(f"MaxResults must be between 1 and {DISCOVER_MAX}")
    backend = self.servicediscovery_backend
    namespace_name, service_name = params.get("NamespaceName"), params.get("ServiceName")
    service = _service_by_names(backend, namespace_name, service_name)
    health = params.get("HealthStatus")
    if health not in (None, "HEALTHY", "UNHEALTHY", "ALL", "HEALTHY_OR_ELSE_ALL"):
        raise invalid_input(f"Invalid HealthStatus {health}")
    found = backend._filter_instances(service.instances, params.get("QueryParameters"), params.get("OptionalParameters"), health)
    return json.dumps({
        "Instances": [{
            "InstanceId": i.instance_id, "NamespaceName": namespace_name, "ServiceName": service_name,
            "Attributes": i.attributes, "HealthStatus": i.health_status,
        } for i in found[: int(size)]],
        "InstancesRevision": getattr(service, "emulator_revision", 0),
    })


_original_init = ServiceDiscoveryBackend.__init__


def __init__(self, region_name: str, account_id: str) -> None:
    _original_init(self, region_name, account_id)
    self.emulator = EmulatorState()


_original_call_action = ServiceDiscoveryResponse.call_action
_original_update_health = ServiceDiscoveryBackend.update_instance_custom_health_status


def call_action(self):
    """Routes the request to the account whose state it acts on (routing.py) and remembers who asked."""
    self.emulator_backend = routing.route(self)
    token = routing.CALLER.set(self.current_account)
    try:
        return _original_call_action(self)
    finally:
        routing.CALLER.reset(token)


def _routed_backend(self):
    return getattr(self, "emulator_backend", None) or servicediscovery_backends[self.current_account][self.region]


def apply_patches() -> None:
    """Installs the documented behaviour into moto's classes; call once, before the server starts."""
    visibility.apply_patches()
    ServiceDiscoveryResponse.call_action = call_action
    ServiceDiscoveryResponse.servicediscovery_backend = property(_routed_backend)
    for name, fn in {
        "__init__": __init__, "create_http_namespace": create_http_namespace,
        "create_private_dns_namespace": create_private_dns_namespace, "delete_namespace": delete_namespace,
        "create_service": create_service, "delete_service": delete_service, "register_instance": register_instance,
        "deregister_instance": deregister_instance, "discover_instances_revision": discover_instances_revision,
        "update_instance_custom_health_status": update_instance_custom_health_status,
    }.items():
        setattr(ServiceDiscoveryBackend, name, fn)
    for name, fn in {
        "list_namespaces": list_namespaces, "list_services": list_services, "list_operations": list_operations,
        "list_instances": list_instances, "get_instance": get_instance, "get_operation": get_operation,
        "discover_instances": discover_instances,
    }.items():
        setattr(ServiceDiscoveryResponse, name, fn)
