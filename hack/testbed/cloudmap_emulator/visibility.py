"""What a caller sees across accounts, and the ownership fields moto lacks: ListNamespaces and ListServices show the
caller's own namespaces and services plus those of namespaces shared with it (API ListNamespaces: "created by the
current account and shared with the current account"); ResourceOwner names the namespace's owner and
CreatedByAccount the account that created a service or registered an instance (developer guide, "Identifying a shared
namespace")."""
from __future__ import annotations

from moto.servicediscovery.models import Namespace, Service, ServiceInstance, servicediscovery_backends

from . import routing
from .accounts import owner_of
from .shares import SHARES


def namespaces(account: str, region: str) -> list:
    own = list(servicediscovery_backends[account][region].namespaces.values())
    shared = [servicediscovery_backends[owner][region].namespaces.get(ns) for owner, ns in SHARES.shared_with(account, region)]
    return own + [ns for ns in shared if ns is not None]


def services(account: str, region: str) -> list:
    own = list(servicediscovery_backends[account][region].services.values())
    shared = [
        service for owner, ns in SHARES.shared_with(account, region)
        for service in servicediscovery_backends[owner][region].services.values() if service.namespace_id == ns
    ]
    return own + shared


def resource_owner(resource) -> str:
    """RESOURCE_OWNER filter value: SELF for the caller's own, OTHER_ACCOUNTS for what is shared with it."""
    return "SELF" if owner_of(resource) == routing.caller() else "OTHER_ACCOUNTS"


def namespace_references(service) -> tuple[str, ...]:
    """What a NAMESPACE_ID filter may name a service's namespace by: its ARN, and for the caller's own also its id
    (API ServiceFilter: "Specify the namespace ARN for namespaces that are shared with your account")."""
    arn = f"{service.arn.rsplit(':', 1)[0]}:namespace/{service.namespace_id}"
    return (arn, service.namespace_id) if owner_of(service) == routing.caller() else (arn,)


_namespace_json = Namespace.to_json
_service_json = Service.to_json
_instance_json = ServiceInstance.to_json


def namespace_json(self) -> dict:
    return {**_namespace_json(self), "ResourceOwner": owner_of(self)}


def service_json(self) -> dict:
    return {**_service_json(self), "ResourceOwner": owner_of(self), "CreatedByAccount": getattr(self, "created_by_account", self.account_id)}


def instance_json(self) -> dict:
    created_by = getattr(self, "created_by_account", None)
    return {**_instance_json(self), **({"CreatedByAccount": created_by} if created_by else {})}


def apply_patches() -> None:
    Namespace.to_json = namespace_json
    Service.to_json = service_json
    ServiceInstance.to_json = instance_json
