"""python -m cloudmap_emulator -p PORT [--mode realistic|fast] [...]: moto's server with the Cloud Map patches."""
from __future__ import annotations

import os
import signal
import sys

from moto import backends as moto_backends
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import run_simple

from . import backend, dns_zones, settings
from .server import Emulator


class RequestHandler(MotoRequestHandler):
    """moto's handler without werkzeug's access-log line: /_emulator/requests records every Cloud Map call with more
    detail, and writing the line cost a sixth of the server's time when the workers read thousands of services."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


def _cache_moto_modules() -> None:
    """moto routes each request by listing its package directory (a stat per entry); the list cannot change while
    the server runs, and reading it took a quarter of the server's time under a worker's first read."""
    modules = tuple(moto_backends.list_of_moto_modules())
    moto_backends.list_of_moto_modules = lambda: iter(modules)


def main() -> None:
    try:
        host, port, config = settings.parse(sys.argv[1:], dict(os.environ))
    except ValueError as err:
        sys.exit(f"cloudmap_emulator: {err}")
    settings.install(config)
    backend.apply_patches()
    _cache_moto_modules()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    os.environ.setdefault("MOTO_PORT", str(port))
    print(f"cloudmap_emulator: {config.to_json()}", flush=True)
    if config.zone_dir:
        dns_zones.ZoneWriter(config.zone_dir).start()
    app = Emulator(DomainDispatcherApplication(create_backend_app), config)
    run_simple(host, port, app, threaded=True, request_handler=RequestHandler)


main()
