"""Cloud Map's modelled errors that moto lacks, with the extra fields the API reference gives them (the SDK exposes
them on the exception, e.g. DuplicateRequest.DuplicateOperationId). Every one is HTTP 400 except where noted."""
from __future__ import annotations

import json

from moto.core.exceptions import JsonRESTError


class CloudMapError(JsonRESTError):
    def __init__(self, code: str, message: str, status: int = 400, **fields: str) -> None:
        super().__init__(code, message)
        self.code = status
        self.description = json.dumps({"__type": code, "message": message, **fields})


def duplicate_request(operation_id: str, what: str) -> CloudMapError:
    return CloudMapError("DuplicateRequest", f"The operation is already in progress: {what}", DuplicateOperationId=operation_id)


def namespace_already_exists(name: str, namespace_id: str, creator_request_id: str | None) -> CloudMapError:
    return CloudMapError("NamespaceAlreadyExists", f"Namespace {name} already exists", NamespaceId=namespace_id,
                         **({"CreatorRequestId": creator_request_id} if creator_request_id else {}))


def service_already_exists(name: str, service_id: str, service_arn: str, creator_request_id: str | None) -> CloudMapError:
    return CloudMapError("ServiceAlreadyExists", f"Service {name} already exists", ServiceId=service_id, ServiceArn=service_arn,
                         **({"CreatorRequestId": creator_request_id} if creator_request_id else {}))


def access_denied(account: str, api: str, resource: str) -> CloudMapError:
    """A request about another account's resource that no share grants ("AccessDeniedException", HTTP 400, in the
    API reference's common errors)."""
    return CloudMapError("AccessDeniedException", f"User: arn:aws:iam::{account}:root is not authorized to perform: "
                         f"servicediscovery:{api} on resource: {resource} because no resource share allows it")


def resource_in_use(what: str) -> CloudMapError:
    return CloudMapError("ResourceInUse", f"The specified resource can't be deleted because it contains other resources: {what}")


def resource_limit_exceeded(quota: str, limit: int) -> CloudMapError:
    return CloudMapError("ResourceLimitExceeded", f"The resource can't be created because you've reached the quota {quota} ({limit})")


def invalid_input(message: str) -> CloudMapError:
    return CloudMapError("InvalidInput", message)


def throttled(api: str) -> CloudMapError:
    """DiscoverInstances(Revision) answer RequestLimitExceeded (developer guide, throttling page); the other APIs
    ThrottlingException "Rate exceeded" (common errors of the API reference)."""
    if api.startswith("DiscoverInstances"):
        return CloudMapError("RequestLimitExceeded", f"The operation can't be completed because you've reached the quota for the number of requests ({api})")
    return CloudMapError("ThrottlingException", "Rate exceeded")


def internal_failure(status: int) -> CloudMapError:
    if status == 503:
        return CloudMapError("ServiceUnavailable", "The request has failed due to a temporary failure of the server.", status=503)
    return CloudMapError("InternalFailure", "The request processing has failed because of an unknown error, exception or failure.", status=500)
