"""Which account's state a request acts on, as the Cloud Map API reference describes shared namespaces: a consumer
names a namespace shared with it by its ARN (CreateService, GetNamespace, ListServices' NAMESPACE_ID filter), a
service in one by the service's ARN (GetService, RegisterInstance, ListInstances, ...), and passes OwnerAccount to
DiscoverInstances, DiscoverInstancesRevision and GetOperation. Those requests act on the owner's state, where the
namespace, its services, instances and operations live; a plain id always means the caller's own account.

A resource of another account that is not (or no longer) shared with the caller answers AccessDeniedException,
whether it exists or not (authorization comes before the lookup, and AWS does not reveal other accounts' resources);
namespace-level writes stay the owner's."""
from __future__ import annotations

import contextvars
import json
from typing import Any

from moto.servicediscovery.models import servicediscovery_backends

from .accounts import Arn, parse_arn
from .errors import access_denied, invalid_input
from .shares import SHARES

# The account the current request comes from (the routed backend may be another account's).
CALLER: contextvars.ContextVar[str | None] = contextvars.ContextVar("cloudmap_emulator_caller", default=None)

# API → (parameter, what it names)
NAMESPACE, SERVICE, OWNER = "namespace", "service", "owner"
REFERENCES: dict[str, tuple[str, str]] = {
    "CreateService": ("NamespaceId", NAMESPACE), "GetNamespace": ("Id", NAMESPACE),
    "DeleteNamespace": ("Id", NAMESPACE), "UpdateHttpNamespace": ("Id", NAMESPACE),
    "UpdatePrivateDnsNamespace": ("Id", NAMESPACE), "UpdatePublicDnsNamespace": ("Id", NAMESPACE),
    "GetService": ("Id", SERVICE), "DeleteService": ("Id", SERVICE), "UpdateService": ("Id", SERVICE),
    **{api: ("ServiceId", SERVICE) for api in (
        "RegisterInstance", "DeregisterInstance", "GetInstance", "GetInstancesHealthStatus", "ListInstances",
        "UpdateInstanceCustomHealthStatus", "GetServiceAttributes", "UpdateServiceAttributes", "DeleteServiceAttributes",
    )},
    "DiscoverInstances": ("OwnerAccount", OWNER), "DiscoverInstancesRevision": ("OwnerAccount", OWNER),
    "GetOperation": ("OwnerAccount", OWNER),
}
# Sharing lets consumers use a namespace, not change or delete it.
OWNER_ONLY = {"DeleteNamespace", "UpdateHttpNamespace", "UpdatePrivateDnsNamespace", "UpdatePublicDnsNamespace"}


def caller() -> str | None:
    return CALLER.get()


def route(response) -> Any:
    """The backend `response`'s request acts on. Rewrites an ARN parameter to the plain id moto looks up."""
    account, region, api = response.current_account, response.region, response._get_action()
    own = servicediscovery_backends[account][region]
    if api not in REFERENCES:
        return own
    name, kind = REFERENCES[api]
    params = json.loads(response.body or "{}")
    value = params.get(name)
    if kind == OWNER:
        if not value or value == account:
            return own
        if not (isinstance(value, str) and len(value) == 12 and value.isdigit()):
            raise invalid_input(f"OwnerAccount must be a 12-digit account id, got {value!r}")
        backend = servicediscovery_backends[value][region]
        if not _owner_shares(backend, api, params, account):
            raise access_denied(account, api, f"account {value}'s {_what(api, params)}")
        return backend
    arn = parse_arn(value)
    if arn is None:
        return own
    _check(arn, kind, region, value)
    params[name] = arn.id
    response.body = json.dumps(params)
    if arn.account == account:
        return own
    backend = servicediscovery_backends[arn.account][region]
    if api in OWNER_ONLY or not shared_with(backend, _namespace_of(backend, arn), account):
        raise access_denied(account, api, value)
    return backend


def shared_with(backend, namespace_id: str | None, account: str) -> bool:
    return namespace_id is not None and SHARES.allows((backend.account_id, backend.region_name, namespace_id), account)


def _check(arn: Arn, kind: str, region: str, value: str) -> None:
    if arn.kind != kind:
        raise invalid_input(f"{value} is a {arn.kind} ARN; this parameter takes a {kind} id or ARN")
    if arn.region != region:
        raise invalid_input(f"{value} is in Region {arn.region}; the request went to {region}")


def _namespace_of(backend, arn: Arn) -> str | None:
    if arn.kind == NAMESPACE:
        return arn.id
    service = backend.services.get(arn.id)
    return service.namespace_id if service else None


def _owner_shares(backend, api: str, params: dict, account: str) -> bool:
    """Whether the owner's namespace the request is about (by name, or the operation's) is shared with `account`."""
    if api == "GetOperation":
        operation = backend.operations.get(params.get("OperationId"))
        return operation is not None and shared_with(backend, getattr(operation, "namespace_id", None), account)
    name = params.get("NamespaceName")
    namespace = next((ns for ns in backend.namespaces.values() if ns.name == name), None)
    return namespace is not None and shared_with(backend, namespace.id, account)


def _what(api: str, params: dict) -> str:
    return f"operation {params.get('OperationId')}" if api == "GetOperation" else f"namespace {params.get('NamespaceName')}"
