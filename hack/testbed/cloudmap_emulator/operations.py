"""Cloud Map's asynchronous operations: an operation is SUBMITTED, then PENDING, then SUCCESS or FAIL after the
configured delay, and its write becomes visible only then. Operations settle lazily, under the emulator's lock, at the
start of every request, so what a client reads always matches the operation statuses it can see."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from moto.core.exceptions import JsonRESTError
from moto.core.utils import unix_time
from moto.servicediscovery.models import Operation

from . import settings

# The first quarter of the delay reads SUBMITTED, the rest PENDING.
SUBMITTED_SHARE = 0.25


@dataclass
class Pending:
    operation: Operation
    submitted: float
    due: float
    apply: Callable[[], None]
    # What the operation writes, e.g. ("instance", service id, instance id): one operation at a time per resource.
    resource: tuple[str, ...]


def finish(operation: Operation, apply: Callable[[], None]) -> None:
    try:
        apply()
        operation.status = "SUCCESS"
    except JsonRESTError as err:
        operation.status = "FAIL"
        operation.error_code = err.error_type
        operation.error_message = err.message
    operation.updated = unix_time()


def submit(backend, op_type: str, targets: dict[str, str], apply: Callable[[], None], resource: tuple[str, ...], namespace_id: str) -> str:
    """`namespace_id`: the namespace the operation belongs to, which decides who may read it when it is shared."""
    operation = Operation(operation_type=op_type, targets=targets)
    operation.status = "SUBMITTED"
    operation.namespace_id = namespace_id
    backend.operations[operation.id] = operation
    delay = settings.current().operation_delay_ms / 1000
    if delay <= 0:
        finish(operation, apply)
    else:
        now = time.monotonic()
        backend.emulator.pending[operation.id] = Pending(operation, now, now + delay, apply, resource)
    return operation.id


def settle(backend) -> None:
    """Moves every pending operation of this account and Region on as far as the clock says, oldest due first."""
    now = time.monotonic()
    pending = backend.emulator.pending
    for op_id, p in sorted(pending.items(), key=lambda item: item[1].due):
        if now >= p.due:
            del pending[op_id]
            finish(p.operation, p.apply)
        elif p.operation.status == "SUBMITTED" and now >= p.submitted + (p.due - p.submitted) * SUBMITTED_SHARE:
            p.operation.status = "PENDING"
            p.operation.updated = unix_time()


def in_progress(backend, resource: tuple[str, ...]) -> str | None:
    """The id of the unfinished operation that writes `resource`, if any."""
    for op_id, p in backend.emulator.pending.items():
        if p.resource == resource:
            return op_id
    return None


def pending_of(backend, kind: str) -> list[Pending]:
    return [p for p in backend.emulator.pending.values() if p.resource[0] == kind]


def operation_json(operation: Operation, owner: str | None = None) -> dict:
    """GetOperation's shape, with the namespace owner's account and, on a failed operation, ErrorCode and
    ErrorMessage; without `owner`, ListOperations' summary."""
    if owner is None:
        return {"Id": operation.id, "Status": operation.status}
    out = {
        "Id": operation.id, "OwnerAccount": owner, "Type": operation.operation_type, "Status": operation.status,
        "CreateDate": operation.created, "UpdateDate": operation.updated, "Targets": operation.targets,
    }
    if operation.status == "FAIL":
        out["ErrorCode"] = getattr(operation, "error_code", "")
        out["ErrorMessage"] = getattr(operation, "error_message", "")
    return out
