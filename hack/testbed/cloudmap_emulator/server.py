"""The emulator's WSGI front: the control endpoints under /_emulator/, then for each Cloud Map request the fault
switch, the request quotas, the call log, and moto (patched by backend.py) under one lock."""
from __future__ import annotations

import copy
import io
import json
import re
import socket
import time
from urllib.parse import parse_qs
from typing import Any, Callable, Iterable, NoReturn

from moto.servicediscovery.models import servicediscovery_backends

from . import dns_zones, operations, settings
from .accounts import account_of, parse_arn
from .backend import find_instance
from .calls import Caller, CallLog, Request
from .errors import CloudMapError, internal_failure, throttled
from .faults import FaultSwitch
from .quotas import RequestQuotas
from .shares import SHARES, account_id, account_list

TARGET_PREFIX = "Route53AutoNaming_v20170314."
CREDENTIAL = re.compile(r"Credential=([^/]+)/[^/]+/([^/]+)/")
APP_ID = re.compile(r"(?:^|\s)app/(\S+)")
StartResponse = Callable[..., Any]


def _json(start_response: StartResponse, status: int, body: Any) -> list[bytes]:
    data = json.dumps(body).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}.get(status, "")
    start_response(f"{status} {reason}", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]


def _error(start_response: StartResponse, err: CloudMapError) -> list[bytes]:
    data = err.description.encode()
    start_response(f"{err.code} Error", [
        ("Content-Type", "application/x-amz-json-1.1"), ("X-Amzn-ErrorType", err.error_type),
        ("Content-Length", str(len(data))),
    ])
    return [data]


def _drop(environ: dict) -> NoReturn:
    """Closes the client's connection without an answer, as an unreachable endpoint would: the SDK sees a network
    error (Node: ECONNRESET, "socket hang up"), never an HTTP status. Werkzeug treats the error raised here as a
    connection the client dropped and logs nothing."""
    # Read the body first, or the server would take what is left of it for the next request.
    environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    sock = environ.get("werkzeug.socket")
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    raise ConnectionResetError("fault switch: connection dropped")


class Emulator:
    def __init__(self, moto_app: Callable[[dict, StartResponse], Iterable[bytes]], initial: settings.Settings) -> None:
        self.moto_app = moto_app
        # What POST /_emulator/reset returns to.
        self.initial = copy.deepcopy(initial)
        self.calls = CallLog()
        self.quotas = RequestQuotas()
        self.faults = FaultSwitch(initial.seed)

    def __call__(self, environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO", "").startswith("/_emulator/"):
            return self.control(environ, start_response)
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        if not target.startswith(TARGET_PREFIX):
            return self.moto_app(environ, start_response)
        return self.cloud_map(environ, start_response, target[len(TARGET_PREFIX):])

    def cloud_map(self, environ: dict, start_response: StartResponse, api: str) -> Iterable[bytes]:
        match = CREDENTIAL.search(environ.get("HTTP_AUTHORIZATION", ""))
        access_key, region = (match.group(1), match.group(2)) if match else ("anonymous", "us-east-1")
        # Read here for the request log, then handed on to moto unchanged.
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(raw)
        request = self._request(environ, raw, api, access_key)
        account = account_of(access_key)
        # moto reads the account from this header; a client's own value is overwritten, never trusted.
        environ["HTTP_X_MOTO_ACCOUNT_ID"] = account
        caller = Caller(access_key, account, region)
        if region not in servicediscovery_backends[account]:
            # Real AWS has no endpoint for it at all; an answer that says so helps the test's author more.
            return self._refuse(start_response, request, caller, "UnknownRegion", CloudMapError(
                "UnknownRegion", f"The Cloud Map emulator serves the Regions moto knows; {region!r} is not one"))
        with settings.LOCK:
            config = settings.current()
            draw = self.faults.draw(config.faults, api, region, account)
            rate, burst = config.rate(api)
            throttling = config.throttling
        # Latency and timeouts hold this request only, never the lock.
        if draw.latency_s:
            time.sleep(draw.latency_s)
        if draw.kind == "disconnect":
            self._record(request, caller, "fault")
            return _drop(environ)
        if draw.kind == "timeout":
            time.sleep(draw.timeout_s)
            return self._refuse(start_response, request, caller, "fault", CloudMapError("RequestTimeout", "The request timed out", status=504))
        if draw.kind == "error":
            return self._refuse(start_response, request, caller, "fault", internal_failure(draw.status))
        if draw.kind == "throttle":
            return self._refuse(start_response, request, caller, "fault", throttled(api))
        with settings.LOCK:
            if throttling and not self.quotas.allow(account, region, api, rate, burst):
                return self._refuse(start_response, request, caller, "throttled", throttled(api))
            # A consumer's writes to a shared namespace are pending in its owner's account: settle every account.
            for owner in list(servicediscovery_backends):
                operations.settle(servicediscovery_backends[owner][region])
            if api == "DeregisterInstance":
                found = (find_instance(servicediscovery_backends[owner][region], request.service_id, request.instance_id)
                         for owner in list(servicediscovery_backends))
                instance = next((i for i in found if i is not None), None)
                request.cluster_id = (instance.attributes or {}).get("CLUSTER_ID", "") if instance else ""
            captured: dict[str, Any] = {}

            def capture(status: str, headers: list, exc_info: Any = None) -> Callable[[bytes], Any]:
                captured["status"], captured["headers"] = status, headers
                return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)

            result = self.moto_app(environ, capture)
            try:
                body = b"".join(result)
            finally:
                getattr(result, "close", lambda: None)()
        error_type = dict((k.lower(), v) for k, v in captured.get("headers", [])).get("x-amzn-errortype")
        self._record(request, caller, error_type.split(":")[0] if error_type else "ok")
        return [body]

    @staticmethod
    def _request(environ: dict, raw: bytes, api: str, access_key: str) -> Request:
        """The request log's entry, its outcome still to come. Writes name their service, instance and cluster."""
        agent = f"{environ.get('HTTP_USER_AGENT', '')} {environ.get('HTTP_X_AMZ_USER_AGENT', '')}"
        app = APP_ID.search(agent)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        body = body if isinstance(body, dict) else {}
        attributes = body.get("Attributes") if isinstance(body.get("Attributes"), dict) else {}
        return Request(
            start=time.time(), end=0.0, api=api, access_key=access_key, app=app.group(1) if app else "", outcome="",
            service_id=str(body.get("ServiceId", "")),
            service_name=f"{body['NamespaceName']}/{body['ServiceName']}" if "NamespaceName" in body and "ServiceName" in body else "",
            instance_id=str(body.get("InstanceId", "")),
            cluster_id=str(attributes.get("CLUSTER_ID", "")),
        )

    def _record(self, request: Request, caller: Caller, outcome: str) -> None:
        request.outcome, request.end = outcome, time.time()
        with settings.LOCK:
            self.calls.record(request, caller)

    def _refuse(self, start_response: StartResponse, request: Request, caller: Caller, outcome: str, err: CloudMapError) -> list[bytes]:
        self._record(request, caller, outcome)
        return _error(start_response, err)

    def control(self, environ: dict, start_response: StartResponse) -> list[bytes]:
        """GET/POST /_emulator/config, GET/POST/DELETE /_emulator/faults, GET/DELETE /_emulator/calls,
        GET /_emulator/requests?since=<epoch s>&apis=<Api,...>, GET/POST/DELETE /_emulator/shares, GET /_emulator/dns
        (every DNS namespace's records, dns_zones.py), POST /_emulator/reset
        (state, shares, quotas, calls and configuration back to the start). Bodies are JSON; see docs/testbed.md."""
        path, method = environ["PATH_INFO"].rstrip("/"), environ["REQUEST_METHOD"]
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = json.loads(environ["wsgi.input"].read(length) or b"{}") if length else {}
            with settings.LOCK:
                config = settings.current()
                if path == "/_emulator/config" and method in ("POST", "PATCH"):
                    config.update(body)
                elif path == "/_emulator/faults" and method in ("POST", "PUT"):
                    config.update({"faults": body})
                elif path == "/_emulator/faults" and method == "DELETE":
                    config.update({"faults": {}})
                elif path == "/_emulator/calls" and method == "DELETE":
                    self.calls.reset()
                elif path == "/_emulator/shares" and method in ("POST", "DELETE"):
                    _change_share(body, method == "POST")
                elif path == "/_emulator/reset" and method == "POST":
                    settings.install(copy.deepcopy(self.initial))
                    config = settings.current()
                    servicediscovery_backends.reset()
                    SHARES.reset()
                    self.quotas.reset()
                    self.calls.reset()
                elif method != "GET" or path not in ("/_emulator/config", "/_emulator/faults", "/_emulator/calls", "/_emulator/requests", "/_emulator/shares", "/_emulator/dns"):
                    return _json(start_response, 404, {"message": f"no control endpoint {method} {path}"})
                if path == "/_emulator/requests":
                    query = parse_qs(environ.get("QUERY_STRING", ""))
                    since = float(query.get("since", ["0"])[0])
                    apis = {a for a in query.get("apis", [""])[0].split(",") if a}
                    return _json(start_response, 200, self.calls.requests_json(since, apis))
                if path == "/_emulator/shares":
                    return _json(start_response, 200, {"shares": SHARES.to_json()})
                if path == "/_emulator/dns":
                    return _json(start_response, 200, dns_zones.zones_json())
                if path == "/_emulator/calls":
                    return _json(start_response, 200, self.calls.to_json())
                if path == "/_emulator/faults":
                    return _json(start_response, 200, config.faults.to_json())
                return _json(start_response, 200, config.to_json())
        except (ValueError, KeyError, TypeError) as err:
            return _json(start_response, 400, {"message": str(err)})


def _change_share(body: dict[str, Any], share: bool) -> None:
    """{ ownerAccount, region, namespaceId (id or ARN), withAccounts } shares a namespace that exists (its creation
    finished) with those accounts; without withAccounts, DELETE stops sharing it with anyone."""
    owner, region = account_id(body, "ownerAccount"), body.get("region")
    if not isinstance(region, str) or not region:
        raise ValueError(f"region must be a Region name, got {region!r}")
    reference = str(body.get("namespaceId") or "")
    arn = parse_arn(reference)
    if arn is not None and (arn.kind, arn.account, arn.region) != ("namespace", owner, region):
        raise ValueError(f"{reference} is not a namespace of account {owner} in {region}")
    namespace_id = arn.id if arn else reference
    key = (owner, region, namespace_id)
    if not share:
        SHARES.unshare(key, account_list(body, "withAccounts") if "withAccounts" in body else None)
        return
    backend = servicediscovery_backends[owner][region]
    operations.settle(backend)
    if namespace_id not in backend.namespaces:
        raise ValueError(f"account {owner} has no namespace {namespace_id!r} in {region} (or its creation has not finished)")
    SHARES.share(key, account_list(body, "withAccounts"))
