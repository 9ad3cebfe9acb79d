"""Cloud Map emulator for the testbed: moto's servicediscovery backend with the documented behaviour of the real
service added in process (asynchronous operations, uniqueness, idempotency, revisions, filters, paging, request and
resource quotas, a fault switch and a call log). docs/testbed.md describes each behaviour and where it is documented."""
